// SPDX-License-Identifier: Apache-2.0
// What the histogram module's strategies share (histogram_kernels.hpp).
#include "histogram_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/detail/temporary_pool.hpp>
#include <limits>

namespace kiln::detail {
namespace {

std::string num(std::size_t value) {
    return std::to_string(value);
}

/// How even bins of floating-point values scale x - lo into [0, bins), computed by the host in
/// the values' type T: scale = bins / (hi - lo), or where that overflows T (a span below bins /
/// T's largest value: [0, 1e-36) in 1000 float bins), x - lo is first multiplied by magnify =
/// 2^p, p bringing hi - lo to [1, 2) or as near as T's largest power of two does (a span of
/// subnormals), and scale = bins / ((hi - lo) magnify). Both products by magnify are exact, so
/// the bin is as close to the exact one as where scale fits.
template <class T>
struct even_scale {
    T scale, magnify = 1;
    bool magnified = false;

    even_scale(std::size_t bins, T lo, T hi) : scale(T(bins) / (hi - lo)) {
        if (!std::isinf(scale)) return;
        const T span = hi - lo;
        magnify =
            std::ldexp(T(1), std::min(std::numeric_limits<T>::max_exponent - 1, -std::ilogb(span)));
        scale = T(bins) / (span * magnify);
        magnified = true;
    }
};

bool magnified(const histogram_input& input) {
    if (input.binning != histogram_binning::even || !input.floating) return false;
    if (input.value_type == "double")
        return even_scale<double>(input.bins, input.lo, input.hi).magnified;
    return even_scale<float>(input.bins, static_cast<float>(input.lo), static_cast<float>(input.hi))
        .magnified;
}

/// kiln_histogram_bin(value, bins, bounds...): the bin, or bins where the value is not counted.
/// Even bins of floating-point values: (x - lo) * scale in the values' type (or ((x - lo) *
/// magnify) * scale, even_scale), the last bin where rounding reaches bins (x just below hi); of
/// integers: (x - lo) bins / (hi - lo) exactly, in 64 bits.
std::string bin_function(const histogram_shape& s) {
    const std::string& v = s.value_type;
    if (s.binning == histogram_binning::indexed) {
        const std::string inside = s.is_signed ? "x >= 0 && (ulong)x < bins" : "(ulong)x < bins";
        return "uint kiln_histogram_bin(" + v + " x, uint bins) {\n    return " + inside +
               " ? (uint)x : bins;\n}";
    }
    if (s.floating)
        return "uint kiln_histogram_bin(" + v + " x, uint bins, " + v + " lo, " + v + " hi, " + v +
               " scale" + (s.magnified ? ", " + v + " magnify" : "") +
               ") {\n"
               "    if (!(x >= lo && x < hi)) return bins;\n"
               "    const " +
               v + " f = " + (s.magnified ? "((x - lo) * magnify)" : "(x - lo)") +
               " * scale;\n"
               "    return f < (" +
               v + ")bins ? (uint)f : bins - 1u;\n}";
    return "uint kiln_histogram_bin(" + v +
           " x, uint bins, long lo, long hi, ulong span) {\n"
           "    if ((long)x < lo || (long)x >= hi) return bins;\n"
           "    return (uint)((ulong)((long)x - lo) * bins / span);\n}";
}

/// Lines that compute `unroll` bins, b0 .. b<unroll - 1>, of the elements at `first` + u
/// `step`, bins where past n.
void emit_element_bins(source_builder& b, const histogram_shape& shape, const element_input& x,
                       const std::string& first, const std::string& step) {
    // Every element's load is issued before any is counted: one load in flight per work-item
    // leaves the atomics waiting on memory.
    for (std::size_t u = 0; u < shape.unroll; ++u) {
        const std::string bin = "b" + num(u);
        b.line("uint " + bin + " = bins;");
        b.open("");
        b.line("const ulong idx = " + first + " + " + num(u) + " * " + step + ";");
        b.open("if (idx < n)");
        for (const std::string& statement : x.statements) b.line(statement);
        b.line(bin + " = " + histogram_bin(shape, x.value) + ";");
        b.close();
        b.close();
    }
}

/// The text of load `load` of the 16-byte loads at `first` + u `step`, by u: a load of its own
/// (kiln_q the load's index), or the register that loaded it a step ahead.
using wide_load_text = std::function<std::string(const wide_load& load, std::size_t u)>;

/// The register that holds load `load` of the loads at u `step` past the next step's first (the
/// next step's, loaded while this step counts).
std::string ahead(const wide_load& load, std::size_t u) {
    return load.name + "_ahead" + num(u);
}
/// The register that holds load `load` of this step's u-th loads, while the next step's loads
/// are in flight.
std::string now(const wide_load& load, std::size_t u) {
    return load.name + "_now" + num(u);
}

/// Lines that load the `unroll` 16-byte loads at `first` + u `step` into their ahead registers,
/// where they are before the last whole load.
void emit_loads_ahead(source_builder& b, const histogram_shape& shape, const wide_input& x,
                      const std::string& first, const std::string& step) {
    for (std::size_t u = 0; u < shape.unroll; ++u) {
        b.open("");
        b.line("const ulong kiln_q = " + first + " + " + num(u) + " * " + step + ";");
        b.open("if (kiln_q < kiln_loads)");
        for (const wide_load& load : x.loads)
            b.line(ahead(load, u) + " = ((global const " + load.wide_type + "*)" + load.name +
                   ")[kiln_q];");
        b.close();
        b.close();
    }
}

/// Lines that compute unroll x lanes bins, b0 .. b<unroll lanes - 1>, of the elements of the
/// 16-byte loads at `first` + u `step` (elements lanes (first + u step) onwards), each load's
/// text given by `loaded`, bins where the load is past the last whole one.
void emit_wide_bins(source_builder& b, const histogram_shape& shape, const wide_input& x,
                    const std::string& first, const std::string& step,
                    const wide_load_text& loaded) {
    const std::size_t lanes = x.lanes.size();
    for (std::size_t u = 0; u < shape.unroll; ++u) {
        for (std::size_t lane = 0; lane < lanes; ++lane)
            b.line("uint b" + num(u * lanes + lane) + " = bins;");
        b.open("");
        b.line("const ulong kiln_q = " + first + " + " + num(u) + " * " + step + ";");
        b.open("if (kiln_q < kiln_loads)");
        for (const wide_load& load : x.loads)
            b.line("const " + load.wide_type + " " + load.name + "_in = " + loaded(load, u) + ";");
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            b.open("");
            b.line("const ulong idx = " + num(lanes) + " * kiln_q + " + num(lane) + ";");
            for (const std::string& statement : x.lanes[lane].statements) b.line(statement);
            b.line("b" + num(u * lanes + lane) + " = " + histogram_bin(shape, x.lanes[lane].value) +
                   ";");
            b.close();
        }
        b.close();
        b.close();
    }
}

/// Lines that add b0 .. b<count - 1> to their counters by atomic_add of values of `type`, one
/// atomic per run of equal bins, or one per bin where shape.single_adds.
void emit_counted_runs(source_builder& b, const histogram_shape& shape, std::size_t count,
                       const std::function<std::string(const std::string& bin)>& counter,
                       const std::string& type) {
    if (shape.single_adds) {
        for (std::size_t u = 0; u < count; ++u) {
            const std::string bin = "b" + num(u);
            b.line("if (" + bin + " < bins) atomic_add(" + counter(bin) + ", (" + type + ")1);");
        }
        return;
    }
    const auto add = [&](const std::string& bin) {
        b.line("if (" + bin + " < bins) atomic_add(" + counter(bin) + ", (" + type + ")run);");
    };
    b.line("uint run = 1;");
    for (std::size_t u = 0; u + 1 < count; ++u) {
        const std::string bin = "b" + num(u), next = "b" + num(u + 1);
        b.open("if (" + bin + " != " + next + ")");
        add(bin);
        b.line("run = 0;");
        b.close();
        b.line("++run;");
    }
    add("b" + num(count - 1));
}

/// Lines that run `count_step(first, step)` for each step the group claims from kiln_queue,
/// shape.claimed_steps at a time, until none of the `units` (elements or loads) is left: a
/// step's u-th load of work-item t at the step's first + u work_group_size + t, so that each of
/// the group's loads coalesces.
void emit_claimed_steps(
    source_builder& b, const histogram_shape& shape, const std::string& units,
    const std::function<void(const std::string& first, const std::string& step)>& count_step) {
    const std::string G = num(shape.work_group_size),
                      per_step = num(shape.work_group_size * shape.unroll),
                      K = num(shape.claimed_steps);
    b.local_array("uint", "kiln_claim", "1");
    b.line("const ulong kiln_steps = (" + units + " + " + per_step + " - 1) / " + per_step + ";");
    b.open("for (;;)");
    b.line("if (get_local_id(0) == 0) kiln_claim[0] = atomic_add(kiln_queue, " + K + "u);");
    b.local_barrier();
    b.line("const ulong claim = kiln_claim[0];");
    // Every work-item reads the claim before the next overwrites it.
    b.local_barrier();
    b.line("if (claim >= kiln_steps) break;");
    b.line("const ulong claim_end = claim + " + K + " < kiln_steps ? claim + " + K +
           " : kiln_steps;");
    b.open("for (ulong kiln_step = claim; kiln_step < claim_end; ++kiln_step)");
    b.line("const ulong first = kiln_step * " + per_step + " + get_local_id(0);");
    count_step("first", G);
    b.close();
    b.close();
}

}  // namespace

std::string histogram_shape::key() const {
    return "histogram " + std::string(to_string(strategy)) +
           (binning == histogram_binning::even ? " even " : " indexed ") + value_type +
           (floating ? " floating" : " integer") + (is_signed ? " signed" : " unsigned") +
           " counts " + counts_type() + " g" + num(work_group_size) + " u" + num(unroll) + " l" +
           num(lanes) + " c" + num(copies) + (single_adds ? " single" : "") +
           (load_ahead ? " ahead" : "") + (claimed_steps ? " q" + num(claimed_steps) : "") +
           (magnified ? " magnified" : "") + " " + expression;
}

histogram_shape histogram_shape_of(const histogram_input& input, const histogram_plan& plan) {
    histogram_shape shape{.strategy = plan.strategy,
                          .binning = input.binning,
                          .value_type = input.value_type,
                          .floating = input.floating,
                          .is_signed = input.is_signed,
                          .counts_signed = input.counts_signed,
                          .magnified = magnified(input),
                          .expression = input.expression};
    if (plan.strategy != histogram_strategy::cpu_chunks) {
        shape.work_group_size = plan.work_group_size;
        shape.unroll = plan.unroll;
        shape.lanes = plan.lanes;
        shape.single_adds = plan.single_adds;
        shape.load_ahead = plan.load_ahead;
        shape.claimed_steps = plan.claimed_steps;
    }
    shape.copies = plan.copies;
    return shape;
}

void input_slots(kernel_description& kernel, const histogram_shape& shape) {
    kernel.scalar<std::uint64_t>("n").scalar<std::uint32_t>("bins");
    if (shape.binning == histogram_binning::even) {
        if (shape.floating) {
            const std::size_t bytes = shape.value_type == "double" ? 8 : 4;
            for (const char* name : {"lo", "hi", "scale"})
                kernel.scalar(shape.value_type, name, bytes);
            if (shape.magnified) kernel.scalar(shape.value_type, "magnify", bytes);
        } else {
            kernel.scalar<std::int64_t>("lo").scalar<std::int64_t>("hi").scalar<std::uint64_t>(
                "span");
        }
    }
    kernel.then_input();
}

histogram_element declare_histogram_kernel(source_builder& b, const kernel_description& kernel,
                                           const histogram_shape& shape,
                                           const histogram_input& input) {
    b.define("kiln_histogram_bin", bin_function(shape));
    histogram_element x;
    kernel.declare(b, [&] {
        x.element = input.declare(b);
        if (shape.lanes > 1) x.wide = input.declare_wide(b);
    });
    return x;
}

std::string histogram_bin(const histogram_shape& shape, const std::string& value) {
    if (shape.binning == histogram_binning::indexed)
        return "kiln_histogram_bin(" + value + ", bins)";
    return "kiln_histogram_bin(" + value + ", bins, lo, hi, " +
           (shape.floating ? "scale" : "span") + (shape.magnified ? ", magnify" : "") + ")";
}

void emit_histogram_walk(source_builder& b, const histogram_shape& shape,
                         const histogram_element& x,
                         const std::function<std::string(const std::string& bin)>& counter,
                         const std::string& type) {
    const std::string U = num(shape.unroll), L = num(shape.lanes);
    const bool wide = shape.lanes > 1;
    // What a step's loads index: elements, or whole 16-byte loads.
    const std::string units = wide ? "kiln_loads" : "n";
    if (shape.claimed_steps == 0) b.line("const ulong stride = get_global_size(0);");
    if (wide) b.line("const ulong kiln_loads = n / " + L + ";");
    const auto count_step = [&](const std::string& first, const std::string& step) {
        if (wide)
            emit_wide_bins(b, shape, x.wide, first, step, [](const wide_load& load, std::size_t) {
                return "((global const " + load.wide_type + "*)" + load.name + ")[kiln_q]";
            });
        else
            emit_element_bins(b, shape, x.element, first, step);
        emit_counted_runs(b, shape, shape.unroll * shape.lanes, counter, type);
    };
    if (shape.claimed_steps > 0) {
        emit_claimed_steps(b, shape, units, count_step);
    } else if (shape.load_ahead) {
        for (std::size_t u = 0; u < shape.unroll; ++u)
            for (const wide_load& load : x.wide.loads)
                b.line(load.wide_type + " " + ahead(load, u) + ";");
        emit_loads_ahead(b, shape, x.wide, "get_global_id(0)", "stride");
        b.open("for (ulong first = get_global_id(0); first < kiln_loads; first += " + U +
               " * stride)");
        // This step's loads move out of the ahead registers before the next step's overwrite
        // them; the next step's are then in flight while this step counts.
        for (std::size_t u = 0; u < shape.unroll; ++u)
            for (const wide_load& load : x.wide.loads)
                b.line("const " + load.wide_type + " " + now(load, u) + " = " + ahead(load, u) +
                       ";");
        emit_loads_ahead(b, shape, x.wide, "first + " + U + " * stride", "stride");
        emit_wide_bins(b, shape, x.wide, "first", "stride",
                       [](const wide_load& load, std::size_t u) { return now(load, u); });
        emit_counted_runs(b, shape, shape.unroll * shape.lanes, counter, type);
        b.close();
    } else {
        b.open("for (ulong first = get_global_id(0); first < " + units + "; first += " + U +
               " * stride)");
        count_step("first", "stride");
        b.close();
    }
    if (!wide) return;
    b.open("");
    b.line("const ulong idx = kiln_loads * " + L + " + get_global_id(0);");
    b.open("if (idx < n)");
    for (const std::string& statement : x.element.statements) b.line(statement);
    b.line("const uint bin = " + histogram_bin(shape, x.element.value) + ";");
    b.line("if (bin < bins) atomic_add(" + counter("bin") + ", (" + type + ")1);");
    b.close();
    b.close();
}

void queue_slot(kernel_description& kernel, const histogram_shape& shape) {
    if (shape.claimed_steps > 0) kernel.global("uint", "kiln_queue");
}

event launch_walk(const queue& q, const algorithm_program& program, kernel_binding args,
                  const histogram_shape& shape, const histogram_plan& plan, const event& after) {
    const std::size_t group = shape.work_group_size;
    if (shape.claimed_steps == 0)
        return program.bind(std::move(args)).launch(q, plan.groups * group, group, {}, after);
    temporary_lease counter = temporary_pool::acquire(q, sizeof(std::uint32_t));
    const event zeroed = counter.zero(q, sizeof(std::uint32_t), {after});
    args.argument("kiln_queue", make_argument(kiln::reinterpret(counter.bytes())));
    const event done =
        program.bind(std::move(args)).launch(q, plan.groups * group, group, {}, zeroed);
    counter.release_after(q, done);
    return done;
}

const algorithm_program& histogram_program(
    const device& dev, const histogram_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write) {
    return algorithm_program_for(dev, shape.key(), kernels, write);
}

kernel_binding bind_input(const algorithm_program& program, const std::string& kernel,
                          const histogram_shape& shape, const histogram_input& input,
                          std::size_t part) {
    const part_extent& extent = input.parts[part];
    kernel_binding args = program.binding(kernel);
    args.scalar<std::uint64_t>("n", extent.size);
    args.scalar<std::uint32_t>("bins", static_cast<std::uint32_t>(input.bins));
    if (shape.binning == histogram_binning::even) {
        const auto bounds = [&](auto lo, auto hi) {
            const even_scale scaling(input.bins, lo, hi);
            args.scalar("lo", lo).scalar("hi", hi).scalar("scale", scaling.scale);
            if (shape.magnified) args.scalar("magnify", scaling.magnify);
        };
        if (shape.floating && shape.value_type == "double") {
            bounds(input.lo, input.hi);
        } else if (shape.floating) {
            bounds(static_cast<float>(input.lo), static_cast<float>(input.hi));
        } else {
            const auto lo = static_cast<std::int64_t>(input.lo),
                       hi = static_cast<std::int64_t>(input.hi);
            args.scalar("lo", lo).scalar("hi", hi);
            args.scalar("span", static_cast<std::uint64_t>(hi - lo));
        }
    }
    args.input(input.arguments(part, extent.begin));
    return args;
}

}  // namespace kiln::detail
