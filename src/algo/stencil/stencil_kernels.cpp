// SPDX-License-Identifier: Apache-2.0
// Sources and launches of the tiled stencil kernels (include/kiln/detail/algo/stencil_kernels.hpp).
//
// Both kernels give each work-group one tile of outputs: the group reads the tile and its halo
// from global memory once, with neighbouring work-items on neighbouring words, into local memory;
// after a barrier each work-item computes several outputs, items a group's size apart so that
// the local reads of neighbouring work-items fall in different banks and the stores stay
// coalesced. Widths, centres, group size and outputs per work-item are compile-time constants,
// so the coefficient loops unroll and the coefficients sit in registers.
#include <algorithm>
#include <cstdint>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <string>
#include <vector>

#include "algo/ceil_div.hpp"

namespace kiln::detail {
namespace {

/// The program of describe(shape) that generate(shape) writes, its group halved (down to
/// `smallest_group`) while the device allows the kernel fewer work-items.
template <class Shape>
const algorithm_program& tiled_program(const device& dev, Shape& shape, std::size_t smallest_group,
                                       kernel_description (*describe)(const Shape&),
                                       std::string (*generate)(const Shape&)) {
    for (;;) {
        const kernel_description kernel = describe(shape);
        const algorithm_program& built = algorithm_program_for(
            dev, shape.key(), [&] { return std::vector<kernel_description>{kernel}; },
            [&] { return generate(shape); });
        stencil_tuning& tuning = shape.tuning;
        if (built.kernel(kernel.name()).max_work_group_size() >= tuning.work_group_size ||
            tuning.work_group_size / 2 < smallest_group)
            return built;
        tuning.work_group_size /= 2;
        tuning.items_per_work_item *= 2;
    }
}

}  // namespace

std::string define_stencil_load(source_builder& b, const std::string& type) {
    const std::string name = "kiln_stencil_load_" + type;
    b.define(name, type + " " + name + "(global const " + type + "* xs, global const " + type +
                       "* before, long before_count, global const " + type +
                       "* after, long j, long m, uint at_start, uint at_end) {\n"
                       "    if (j < 0) return at_start ? xs[0] : before[before_count + j];\n"
                       "    if (j >= m) return at_end ? xs[m - 1] : after[j - m];\n"
                       "    return xs[j];\n"
                       "}\n");
    return name;
}

kernel_description tiled_stencil_1d_kernel(const tiled_1d_shape& shape, const char* name) {
    kernel_description kernel(name);
    kernel.scalar<std::uint64_t>("m")
        .global_const(shape.type, "xs")
        .global_const(shape.type, "before")
        .global_const(shape.type, "after")
        .scalar<std::uint32_t>("at_start")
        .scalar<std::uint32_t>("at_end")
        .global(shape.type, "y")
        .global_const(shape.type, "c");
    return kernel;
}

std::string tiled_stencil_1d_source(const tiled_1d_shape& shape) {
    source_builder b;
    const std::string& t = shape.type;
    const stencil_tuning& policy = shape.tuning;
    const kernel_description kernel = tiled_stencil_1d_kernel(shape);
    const std::string load = define_stencil_load(b, t);
    b.constant("KILN_G", policy.work_group_size);
    b.constant("KILN_P", policy.items_per_work_item);
    b.constant("KILN_W", shape.width);
    b.constant("KILN_C", shape.center);
    b.begin_kernel(kernel.name(), policy.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(t, "tile", "KILN_G * KILN_P + KILN_W - 1");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const long first = (long)get_group_id(0) * (KILN_G * KILN_P);");
    b.open("for (uint k = lid; k < KILN_G * KILN_P + KILN_W - 1; k += KILN_G)");
    b.line("tile[k] = " + load +
           "(xs, before, KILN_C, after, first + (long)k - KILN_C, (long)m, at_start, at_end);");
    b.close();
    b.local_barrier();
    if (shape.body.empty()) {
        b.line(t + " coefficient[KILN_W];");
        b.line("for (uint k = 0; k < KILN_W; ++k) coefficient[k] = c[k];");
    }
    b.open("for (uint r = 0; r < KILN_P; ++r)");
    b.line("const uint at = lid + r * KILN_G;");
    b.line("const long i = first + at;");
    b.line("if (i >= (long)m) break;");
    if (shape.body.empty()) {
        b.line(t + " sum = 0;");
        b.line("for (uint k = 0; k < KILN_W; ++k) sum += coefficient[k] * tile[at + k];");
        b.line("y[i] = sum;");
    } else {
        // The user's body reads x[-center] .. x[width - 1 - center] around the element.
        b.line("local const " + t + "* x = tile + at + KILN_C;");
        b.line("y[i] = (" + shape.body + ");");
    }
    b.close();
    b.end_kernel();
    return b.str();
}

const algorithm_program& tiled_stencil_program(const device& dev, tiled_1d_shape& shape) {
    return tiled_program(
        dev, shape, 1, +[](const tiled_1d_shape& s) { return tiled_stencil_1d_kernel(s); },
        &tiled_stencil_1d_source);
}

void launch_tiled_stencil_1d(const algorithm_program& built, const queue& q, std::size_t m,
                             const tiled_1d_shape& shape, kernel_binding&& args) {
    const std::size_t group = shape.tuning.work_group_size;
    built.bind(std::move(args)).launch(q, ceil_div(m, shape.tuning.tile_size()) * group, group);
}

kernel_description tiled_stencil_2d_kernel(const tiled_2d_shape& shape, const char* name) {
    kernel_description kernel(name);
    kernel.scalar<std::uint64_t>("rows")
        .scalar<std::uint64_t>("columns")
        .global_const(shape.type, "x")
        .global(shape.type, "y")
        .global_const(shape.type, "c");
    return kernel;
}

std::string tiled_stencil_2d_source(const tiled_2d_shape& shape) {
    source_builder b;
    const std::string& t = shape.type;
    const stencil_tuning& policy = shape.tuning;
    const kernel_description kernel = tiled_stencil_2d_kernel(shape);
    const std::size_t item_rows = policy.work_group_size / stencil_2d_tile_columns;
    b.constant("KILN_G", policy.work_group_size);
    b.constant("KILN_P", policy.items_per_work_item);
    b.constant("KILN_TX", stencil_2d_tile_columns);
    b.constant("KILN_TY", item_rows * policy.items_per_work_item);
    b.constant("KILN_KR", shape.kernel_rows);
    b.constant("KILN_KC", shape.kernel_columns);
    b.constant("KILN_CR", shape.center_row);
    b.constant("KILN_CC", shape.center_column);
    // The tile with its halo; its rows are KILN_TX + KILN_KC - 1 words apart, so a work-item
    // reading one row further than its neighbour still lands in another bank.
    b.constant("KILN_PITCH", stencil_2d_tile_columns + shape.kernel_columns - 1);
    b.constant("KILN_TILE_ROWS", item_rows * policy.items_per_work_item + shape.kernel_rows - 1);
    b.begin_kernel(kernel.name(), policy.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(t, "tile", "KILN_TILE_ROWS * KILN_PITCH");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const ulong tiles_across = (columns + KILN_TX - 1) / KILN_TX;");
    b.line("const long row0 = (long)(get_group_id(0) / tiles_across) * KILN_TY;");
    b.line("const long column0 = (long)(get_group_id(0) % tiles_across) * KILN_TX;");
    b.open("for (uint k = lid; k < KILN_TILE_ROWS * KILN_PITCH; k += KILN_G)");
    b.line("const uint tr = k / KILN_PITCH, tc = k - tr * KILN_PITCH;");
    b.line("const long r = clamp(row0 + (long)tr - KILN_CR, (long)0, (long)rows - 1);");
    b.line("const long col = clamp(column0 + (long)tc - KILN_CC, (long)0, (long)columns - 1);");
    b.line("tile[k] = x[r * (long)columns + col];");
    b.close();
    b.local_barrier();
    b.line(t + " coefficient[KILN_KR * KILN_KC];");
    b.line("for (uint k = 0; k < KILN_KR * KILN_KC; ++k) coefficient[k] = c[k];");
    b.line("const uint tc = lid % KILN_TX;");
    b.line("const long col = column0 + tc;");
    b.open("for (uint p = 0; p < KILN_P; ++p)");
    b.line("const uint tr = lid / KILN_TX + p * (KILN_G / KILN_TX);");
    b.line("const long r = row0 + tr;");
    b.line("if (r >= (long)rows || col >= (long)columns) break;");
    b.line(t + " sum = 0;");
    b.open("for (uint a = 0; a < KILN_KR; ++a)");
    b.line("for (uint e = 0; e < KILN_KC; ++e)");
    b.line("    sum += coefficient[a * KILN_KC + e] * tile[(tr + a) * KILN_PITCH + tc + e];");
    b.close();
    b.line("y[r * (long)columns + col] = sum;");
    b.close();
    b.end_kernel();
    return b.str();
}

const algorithm_program& tiled_stencil_program(const device& dev, tiled_2d_shape& shape) {
    return tiled_program(
        dev, shape, stencil_2d_tile_columns,
        +[](const tiled_2d_shape& s) { return tiled_stencil_2d_kernel(s); },
        &tiled_stencil_2d_source);
}

void launch_tiled_stencil_2d(const algorithm_program& built, const queue& q, std::size_t rows,
                             std::size_t columns, const tiled_2d_shape& shape,
                             kernel_binding&& args) {
    const stencil_tuning& tuning = shape.tuning;
    const std::size_t tile_rows =
        tuning.work_group_size / stencil_2d_tile_columns * tuning.items_per_work_item;
    const std::size_t groups =
        ceil_div(rows, tile_rows) * ceil_div(columns, stencil_2d_tile_columns);
    built.bind(std::move(args)).launch(q, groups * tuning.work_group_size, tuning.work_group_size);
}

stencil_tuning stencil_2d_tuning(const device& dev) {
    return plan_stencil(dev, 2);
}

// The body, free text, comes last so that no two shapes share a key.
std::string tiled_1d_shape::key() const {
    return "kiln_stencil_1d:" + type + ":" + std::to_string(width) + ":" + std::to_string(center) +
           ":" + tuning.key() + ":" + body;
}

std::string tiled_2d_shape::key() const {
    return "kiln_stencil_2d:" + type + ":" + std::to_string(kernel_rows) + "x" +
           std::to_string(kernel_columns) + ":" + std::to_string(center_row) + "," +
           std::to_string(center_column) + ":" + tuning.key();
}

}  // namespace kiln::detail
