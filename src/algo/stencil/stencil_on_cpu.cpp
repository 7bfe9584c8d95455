// SPDX-License-Identifier: Apache-2.0
// The stencils' CPU shape (include/kiln/detail/algo/stencil_on_cpu.hpp).
//
// PoCL runs a work-group as a loop over its work-items on one core; with one work-item per group
// the run's own loop is the innermost one, which LLVM's loop vectoriser turns into vector loads
// of neighbouring outputs, as element-wise expressions do (expr/launch.cpp). Local-memory tiles
// would only add a copy and barriers there. Widths and centres are compile-time constants and the
// interior's terms are written out one per coefficient, so the coefficients sit in registers; the
// interior loops read every neighbour without a bounds check, which keeps them vectorisable. The
// 2-D interior is written in explicit vectors instead, which leave nothing to the vectoriser.
#include <algorithm>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_lanes.hpp>
#include <kiln/detail/algo/stencil_on_cpu.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {
namespace {

// As the element-wise table's CPU row (src/expr/launch_plan.cpp): enough runs that cores finishing
// early take more.
constexpr std::size_t runs_per_compute_unit = 16;

// The 2-D interior in explicit vectors of this many elements along a row, one vector FMA a term:
// 256-bit vectors of floats, the width PoCL's LLVM picks for AVX-512 targets too; 16 lanes were
// as fast or slower on the 2-core machine (AMD EPYC, PoCL 3.1; 1 x 3 terms 1.5-1.8 times as
// slow, each load then crossing a cache line).
constexpr std::size_t stencil_2d_lanes = 8;

// Output rows computed together where the stencil has terms enough that their FMAs, not the
// memory, bound a core: each loaded input vector serves every output whose window holds it, and
// the rows' sums are independent chains. 3 x 3 and 5 x 5 over 2048^2 floats on one thread of the
// 2-core machine took 0.6-0.8 and 0.5-0.6 times the time of one row at a time; 1 x 1 and 1 x 3,
// with nothing to share, took 1.5-2.7 times as long, 3 x 1 about as long, 8 rows more than 4.
std::size_t stencil_2d_block_rows(const tiled_2d_shape& shape) {
    return shape.kernel_rows > 1 && shape.kernel_rows * shape.kernel_columns >= 8 ? 4 : 1;
}

kernel_description runs_kernel(const tiled_1d_shape& shape) {
    return tiled_stencil_1d_kernel(shape, "kiln_stencil_1d_runs");
}

kernel_description runs_kernel(const tiled_2d_shape& shape) {
    return tiled_stencil_2d_kernel(shape, "kiln_stencil_2d_runs");
}

/// Declares n, first and last: this group's run of the n outputs, runs being multiples of 16
/// elements (whole vectors) that cover n over the launch's groups.
void declare_run(source_builder& b, const std::string& n) {
    b.line("const long n = " + n + ";");
    b.line("const long groups = (long)get_num_groups(0);");
    b.line("const long run = ((n + groups - 1) / groups + 15) / 16 * 16;");
    b.line("const long first = min((long)get_group_id(0) * run, n);");
    b.line("const long last = min(first + run, n);");
}

void load_coefficients(source_builder& b, const std::string& type, const std::string& count) {
    b.line(type + " coefficient[" + count + "];");
    b.line("for (uint k = 0; k < " + count + "; ++k) coefficient[k] = c[k];");
}

/// The user body over vectors of KILN_LANES elements: kiln_stencil_1d_lanes computes outputs
/// [i, i + count) (count at most KILN_LANES) through the clamped loads, and the interior loop
/// whole vectors through vloadn; every output goes through the same vector body, so that it
/// computes alike on either side of a part's seam.
void define_lane_body(source_builder& b, const tiled_1d_shape& shape, const std::string& load) {
    const std::string& t = shape.type;
    const std::string v = t + "16";
    b.constant("KILN_LANES", 16);
    b.define("kiln_stencil_1d_body", v + " kiln_stencil_1d_body(const " + v +
                                         "* x) {\n    return (" + shape.body + ");\n}\n");
    b.define("kiln_stencil_1d_lanes",
             "void kiln_stencil_1d_lanes(global const " + t + "* xs, global const " + t +
                 "* before, global const " + t + "* after, long m, uint at_start, uint at_end, " +
                 "long i, long count, global " + t + "* y) {\n    " + t +
                 " lanes[KILN_W * KILN_LANES];\n"
                 "    for (uint k = 0; k < KILN_W; ++k)\n"
                 "        for (uint l = 0; l < KILN_LANES; ++l)\n"
                 "            lanes[k * KILN_LANES + l] = " +
                 load +
                 "(xs, before, KILN_C, after, i + min((long)l, count - 1) + (long)k - KILN_C, m, "
                 "at_start, at_end);\n    " +
                 v +
                 " window[KILN_W];\n"
                 "    for (uint k = 0; k < KILN_W; ++k) window[k] = vload16(k, lanes);\n    " +
                 t +
                 " out[KILN_LANES];\n"
                 "    vstore16(kiln_stencil_1d_body(window + KILN_C), 0, out);\n"
                 "    for (long l = 0; l < count; ++l) y[i + l] = out[l];\n}\n");
}

std::string runs_source(const tiled_1d_shape& shape) {
    source_builder b;
    const std::string& t = shape.type;
    const std::string load = define_stencil_load(b, t);
    b.constant("KILN_W", shape.width);
    b.constant("KILN_C", shape.center);
    const bool in_lanes = !shape.body.empty() && body_runs_in_lanes(shape.body, t);
    if (in_lanes) define_lane_body(b, shape, load);
    // Outputs whose window leaves the part, through the clamped loads: the same arithmetic as
    // the interior's on a private copy of the window, so that an element computes alike on
    // either side of a part's seam.
    const std::string edge = "kiln_stencil_1d_edge";
    std::string function = t + " " + edge + "(global const " + t + "* xs, global const " + t +
                           "* before, global const " + t + "* after, long m, uint at_start, " +
                           "uint at_end, global const " + t + "* c, long i) {\n    " + t +
                           " window[KILN_W];\n    for (uint k = 0; k < KILN_W; ++k)\n" +
                           "        window[k] = " + load +
                           "(xs, before, KILN_C, after, i + (long)k - KILN_C, m, at_start, " +
                           "at_end);\n";
    if (shape.body.empty())
        function += "    " + t + " sum = 0;\n    for (uint k = 0; k < KILN_W; ++k) sum += c[k] * " +
                    "window[k];\n    return sum;\n}\n";
    else
        function +=
            "    const " + t + "* x = window + KILN_C;\n    return (" + shape.body + ");\n}\n";
    if (!in_lanes) b.define(edge, function);
    const kernel_description kernel = runs_kernel(shape);
    b.begin_kernel(kernel.name(), 1);
    kernel.declare(b);
    b.begin_body();
    declare_run(b, "(long)m");
    if (in_lanes) {
        // Whole vectors from the first output whose window lies inside the part.
        b.line("const long lo = min(max(first, (long)KILN_C), last);");
        b.line(
            "const long hi = lo + max((long)0, min(last, n - (KILN_W - 1 - KILN_C)) - lo) / "
            "KILN_LANES * KILN_LANES;");
        const std::string lanes = "kiln_stencil_1d_lanes(xs, before, after, n, at_start, at_end, ";
        b.line("for (long i = first; i < lo; i += KILN_LANES)");
        b.line("    " + lanes + "i, min((long)KILN_LANES, lo - i), y);");
        b.open("for (long i = lo; i < hi; i += KILN_LANES)");
        b.line(t + "16 window[KILN_W];");
        b.line(
            "for (uint k = 0; k < KILN_W; ++k) window[k] = vload16(0, xs + (i + (long)k - "
            "KILN_C));");
        b.line("vstore16(kiln_stencil_1d_body(window + KILN_C), 0, y + i);");
        b.close();
        b.line("for (long i = hi; i < last; i += KILN_LANES)");
        b.line("    " + lanes + "i, min((long)KILN_LANES, last - i), y);");
        b.end_kernel();
        return b.str();
    }
    // [lo, hi): the outputs whose whole window lies inside the part.
    b.line("const long lo = min(max(first, (long)KILN_C), last);");
    b.line("const long hi = max(lo, min(last, n - (KILN_W - 1 - KILN_C)));");
    const std::string at_edge = edge + "(xs, before, after, n, at_start, at_end, c, i)";
    b.line("for (long i = first; i < lo; ++i) y[i] = " + at_edge + ";");
    if (shape.body.empty()) {
        load_coefficients(b, t, "KILN_W");
        b.open("for (long i = lo; i < hi; ++i)");
        b.line("global const " + t + "* window = xs + (i - KILN_C);");
        b.line(t + " sum = 0;");
        // Written out, as in 2-D (runs_source of a tiled_2d_shape).
        for (std::size_t k = 0; k < shape.width; ++k)
            b.line("sum += coefficient[" + std::to_string(k) + "] * window[" + std::to_string(k) +
                   "];");
        b.line("y[i] = sum;");
        b.close();
    } else {
        // The user's body reads x[-center] .. x[width - 1 - center] around the element.
        b.open("for (long i = lo; i < hi; ++i)");
        b.line("global const " + t + "* x = xs + i;");
        b.line("y[i] = (" + shape.body + ");");
        b.close();
    }
    b.line("for (long i = hi; i < last; ++i) y[i] = " + at_edge + ";");
    b.end_kernel();
    return b.str();
}

/// Emits the sums sum0 .. sum<count - 1> of `lanes` outputs from column col of `count`
/// consecutive rows, reading input row i of the block (0 <= i < count + KILN_KR - 1) through
/// pointer in<i>; each loaded vector serves every output whose window holds it. Each output adds
/// its terms in the order of the coefficients, as the scalar loops do, so that an output computes
/// alike in either.
void emit_vector_terms(source_builder& b, const tiled_2d_shape& shape, std::size_t count,
                       std::size_t lanes) {
    const std::string vector = shape.type + std::to_string(lanes);
    const std::size_t kr = shape.kernel_rows, kc = shape.kernel_columns;
    for (std::size_t j = 0; j < count; ++j) b.line(vector + " sum" + std::to_string(j) + " = 0;");
    for (std::size_t i = 0; i < count + kr - 1; ++i)
        for (std::size_t e = 0; e < kc; ++e) {
            const std::string v = "v" + std::to_string(i) + "_" + std::to_string(e);
            b.line("const " + vector + " " + v + " = vload" + std::to_string(lanes) + "(0, in" +
                   std::to_string(i) + " + (col + " + std::to_string(e) + " - KILN_CC));");
            for (std::size_t j = 0; j < count; ++j) {
                if (i < j || i - j >= kr) continue;
                b.line("sum" + std::to_string(j) + " += coefficient[" +
                       std::to_string((i - j) * kc + e) + "] * " + v + ";");
            }
        }
}

std::string runs_source(const tiled_2d_shape& shape) {
    source_builder b;
    const std::string& t = shape.type;
    const std::size_t kr = shape.kernel_rows, kc = shape.kernel_columns;
    const std::size_t block = stencil_2d_block_rows(shape), lanes = stencil_2d_lanes;
    b.constant("KILN_KR", kr);
    b.constant("KILN_KC", kc);
    b.constant("KILN_CR", shape.center_row);
    b.constant("KILN_CC", shape.center_column);
    b.constant("KILN_LANES", lanes);
    const kernel_description kernel = runs_kernel(shape);
    b.begin_kernel(kernel.name(), 1);
    kernel.declare(b);
    b.begin_body();
    b.line("const long width = (long)columns;");
    declare_run(b, "(long)rows * width");
    load_coefficients(b, t, "KILN_KR * KILN_KC");
    // The terms of one output written out, as in the vector loop: a loop over the rows'
    // pointers stays rolled in PoCL's LLVM.
    const auto scalar_terms = [&](bool clamped) {
        b.line(t + " sum = 0;");
        for (std::size_t a = 0; a < kr; ++a)
            for (std::size_t e = 0; e < kc; ++e) {
                const std::string column = "col + " + std::to_string(e) + " - KILN_CC";
                b.line("sum += coefficient[" + std::to_string(a * kc + e) + "] * row" +
                       std::to_string(a) + "[" +
                       (clamped ? "clamp(" + column + ", (long)0, width - 1)" : column) + "];");
            }
        b.line("out[col] = sum;");
    };
    // Outputs [c0, c1) of `count` rows from r: [lo, hi) are the columns whose window lies inside
    // the row, [lo, whole) its whole vectors.
    const auto rows_of = [&](std::size_t count) {
        b.line("const long lo = min(max(c0, (long)KILN_CC), c1);");
        b.line("const long hi = max(lo, min(c1, width - (KILN_KC - 1 - KILN_CC)));");
        b.line("const long whole = lo + (hi - lo) / KILN_LANES * KILN_LANES;");
        // One pointer per input row of the block, clamped at the grid's top and bottom.
        for (std::size_t i = 0; i < count + kr - 1; ++i)
            b.line("global const " + t + "* in" + std::to_string(i) + " = x + clamp(r + " +
                   std::to_string(i) + " - KILN_CR, (long)0, (long)rows - 1) * width;");
        // Explicit vectors along the rows, each term one vector FMA, rather than a scalar loop
        // left to LLVM's loop vectoriser: the 16-core machine's one-thread times (PoCL 5; 3 x 3
        // and 5 x 5 at about one scalar FMA a term) suggest that its vectoriser left that loop
        // scalar.
        b.open("for (long col = lo; col < whole; col += KILN_LANES)");
        emit_vector_terms(b, shape, count, lanes);
        for (std::size_t j = 0; j < count; ++j)
            b.line("vstore" + std::to_string(lanes) + "(sum" + std::to_string(j) +
                   ", 0, y + (r + " + std::to_string(j) + ") * width + col);");
        b.close();
        b.open("for (long j = 0; j < " + std::to_string(count) + "; ++j)");
        for (std::size_t a = 0; a < kr; ++a)
            b.line("global const " + t + "* row" + std::to_string(a) + " = x + clamp(r + j + " +
                   std::to_string(a) + " - KILN_CR, (long)0, (long)rows - 1) * width;");
        b.line("global " + t + "* out = y + (r + j) * width;");
        b.open("for (long col = c0; col < lo; ++col)");
        scalar_terms(true);
        b.close();
        b.open("for (long col = whole; col < hi; ++col)");
        scalar_terms(false);
        b.close();
        b.open("for (long col = hi; col < c1; ++col)");
        scalar_terms(true);
        b.close();
        b.close();
    };
    // A run may start and end inside rows; whole rows go in blocks that share their input rows.
    b.open("for (long at = first; at < last;)");
    b.line("const long r = at / width, c0 = at - r * width;");
    if (block > 1) {
        b.open("if (c0 == 0 && last - at >= " + std::to_string(block) + " * width)");
        b.line("const long c1 = width;");
        rows_of(block);
        b.line("at += " + std::to_string(block) + " * width;");
        b.line("continue;");
        b.close();
    }
    b.line("const long c1 = min(width, c0 + (last - at));");
    rows_of(1);
    b.line("at += c1 - c0;");
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

std::size_t stencil_run_count(const device& dev, const stencil_tuning& tuning, std::size_t bytes) {
    const std::size_t most =
        std::max<std::size_t>(dev.properties().compute_units, 1) * runs_per_compute_unit;
    const std::size_t chunk = std::max<std::size_t>(tuning.chunk_bytes, 1);
    return std::clamp<std::size_t>((bytes + chunk - 1) / chunk, 1, most);
}

template <class Shape>
const algorithm_program& stencil_runs_program(const device& dev, const Shape& shape) {
    return algorithm_program_for(
        dev, shape.key(), [&] { return std::vector<kernel_description>{runs_kernel(shape)}; },
        [&] { return runs_source(shape); });
}

template const algorithm_program& stencil_runs_program(const device& dev,
                                                       const tiled_1d_shape& shape);
template const algorithm_program& stencil_runs_program(const device& dev,
                                                       const tiled_2d_shape& shape);

void launch_stencil_runs(const algorithm_program& built, const queue& q, std::size_t elements,
                         std::size_t value_bytes, const stencil_tuning& tuning,
                         kernel_binding&& args) {
    const std::size_t runs = stencil_run_count(q.device(), tuning, elements * value_bytes);
    built.bind(std::move(args)).launch(q, runs, 1);
}

}  // namespace kiln::detail
