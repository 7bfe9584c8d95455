// SPDX-License-Identifier: Apache-2.0
// The strips kernel of 2-D stencils (include/kiln/detail/algo/stencil_2d_streaming.hpp).
//
// Register streaming along the rows, as 2.5-D blocking does along a third dimension: a
// work-item's column meets each input row once, and that row adds its kernel_columns neighbours
// times one coefficient row to each of the kernel_rows outputs it feeds, held as partial sums in
// registers that shift by one output per step. Each output thus sums its terms in the tiled
// kernel's order (coefficient rows, then columns), starting from 0. The tiled kernel loads every
// tile's halo rows again and clamps each load's row and column; here a strip reads
// kernel_rows - 1 rows beyond its own once, each work-item clamps its columns once, and a step
// clamps only its row.
//
// Steps go in batches of KILN_B rows between two barriers, through two row buffers in turn:
// while a batch's sums read one buffer, its neighbouring work-items may already fill the other
// with the next batch, and the next batch's global loads are in flight during the sums.
#include <kiln/detail/algo/stencil_2d_streaming.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>
#include <vector>

#include "algo/ceil_div.hpp"

namespace kiln::detail {
namespace {

/// The batch's loads of rows first_input + s .. + KILN_B - 1 (clamped), into registers.
void load_batch(source_builder& b, const std::string& t, const std::string& step, bool halo) {
    b.line("#pragma unroll");
    b.open("for (uint k = 0; k < KILN_B; ++k)");
    b.line("const long r = clamp(first_input + (long)(" + step +
           ") + (long)k, (long)0, last_row);");
    b.line("global const " + t + "* row = x + r * (long)columns;");
    b.line("own_next[k] = row[own_column];");
    if (halo) {
        b.line("#pragma unroll");
        b.open("for (uint j = 0; j < KILN_HALO_SLOTS; ++j)");
        b.line("if (halo_loads[j]) halo_next[k * KILN_HALO_SLOTS + j] = row[halo_column[j]];");
        b.close();
    }
    b.close();
}

}  // namespace

kernel_description stencil_strips_kernel(const tiled_2d_shape& shape) {
    return tiled_stencil_2d_kernel(shape, "kiln_stencil_2d_strips");
}

std::string stencil_strips_source(const tiled_2d_shape& shape) {
    source_builder b;
    const std::string& t = shape.type;
    const stencil_tuning& policy = shape.tuning;
    const kernel_description kernel = stencil_strips_kernel(shape);
    // Halo columns a work-item loads: kernel_columns - 1 of them over the group's work-items.
    const std::size_t halo = shape.kernel_columns - 1;
    const bool has_halo = halo > 0;
    b.constant("KILN_G", policy.work_group_size);
    b.constant("KILN_H", policy.strip_rows);
    b.constant("KILN_B", policy.items_per_work_item);
    b.constant("KILN_KR", shape.kernel_rows);
    b.constant("KILN_KC", shape.kernel_columns);
    b.constant("KILN_CR", shape.center_row);
    b.constant("KILN_CC", shape.center_column);
    // A buffered row: entry e holds column column0 - KILN_CC + e, so work-item i's own column
    // sits at KILN_CC + i and its window at i .. i + KILN_KC - 1.
    b.constant("KILN_ROW", policy.work_group_size + halo);
    if (has_halo) {
        b.constant("KILN_HALO", halo);
        b.constant("KILN_HALO_SLOTS", ceil_div(halo, policy.work_group_size));
    }
    b.begin_kernel(kernel.name(), policy.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(t, "buffered", "2 * KILN_B * KILN_ROW");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const ulong groups_across = (columns + KILN_G - 1) / KILN_G;");
    b.line("const ulong strip = get_group_id(0) / groups_across;");
    b.line("const long column0 = (long)(get_group_id(0) - strip * groups_across) * KILN_G;");
    b.line("const long row0 = (long)strip * KILN_H;");
    b.line("const long last_row = (long)rows - 1, last_column = (long)columns - 1;");
    b.line("const long column = column0 + lid;");
    // Past the right border a work-item loads the last column: what the clamped stencil reads
    // there, as the right halo of the last real column.
    b.line("const long own_column = min(column, last_column);");
    if (has_halo) {
        // Halo entry h: the KILN_CC columns left of the group, then those right of it.
        b.line("long halo_column[KILN_HALO_SLOTS];");
        b.line("uint halo_entry[KILN_HALO_SLOTS];");
        b.line("bool halo_loads[KILN_HALO_SLOTS];");
        b.line("#pragma unroll");
        b.open("for (uint j = 0; j < KILN_HALO_SLOTS; ++j)");
        b.line("const uint h = lid + j * KILN_G;");
        b.line("halo_loads[j] = h < KILN_HALO;");
        b.line("halo_entry[j] = h < KILN_CC ? h : h + KILN_G;");
        b.line(
            "halo_column[j] = clamp(column0 - KILN_CC + (long)halo_entry[j], (long)0, "
            "last_column);");
        b.close();
        b.line(t + " halo_next[KILN_B * KILN_HALO_SLOTS];");
    }
    b.line(t + " own_next[KILN_B];");
    b.line(t + " coefficient[KILN_KR * KILN_KC];");
    b.line("for (uint k = 0; k < KILN_KR * KILN_KC; ++k) coefficient[k] = c[k];");
    // Input row s of the strip is grid row first_input + s; it completes output row
    // row0 + s - (KILN_KR - 1), held in sum[0], while sum[j] gathers the row j outputs later.
    b.line("const int steps = (int)min((long)KILN_H, (long)rows - row0) + KILN_KR - 1;");
    b.line("const long first_input = row0 - KILN_CR;");
    b.line(t + " sum[KILN_KR];");
    b.line("for (uint k = 0; k < KILN_KR; ++k) sum[k] = 0;");
    load_batch(b, t, "0", has_halo);
    b.line("uint parity = 0;");
    b.open("for (int s0 = 0; s0 < steps; s0 += KILN_B)");
    b.line("local " + t + "* batch = buffered + parity * (KILN_B * KILN_ROW);");
    b.line("parity ^= 1u;");
    b.line("#pragma unroll");
    b.open("for (uint k = 0; k < KILN_B; ++k)");
    b.line("batch[k * KILN_ROW + KILN_CC + lid] = own_next[k];");
    if (has_halo) {
        b.line("#pragma unroll");
        b.open("for (uint j = 0; j < KILN_HALO_SLOTS; ++j)");
        b.line(
            "if (halo_loads[j]) batch[k * KILN_ROW + halo_entry[j]] = "
            "halo_next[k * KILN_HALO_SLOTS + j];");
        b.close();
    }
    b.close();
    b.local_barrier();
    b.open("if (s0 + KILN_B < steps)");
    load_batch(b, t, "s0 + KILN_B", has_halo);
    b.close();
    b.line("#pragma unroll");
    b.open("for (uint k = 0; k < KILN_B; ++k)");
    b.line("local const " + t + "* window = batch + k * KILN_ROW + lid;");
    b.line("#pragma unroll");
    b.open("for (uint a = 0; a < KILN_KR; ++a)");
    b.line("#pragma unroll");
    b.line("for (uint e = 0; e < KILN_KC; ++e)");
    b.line("    sum[KILN_KR - 1 - a] += coefficient[a * KILN_KC + e] * window[e];");
    b.close();
    b.line("const int s = s0 + (int)k;");
    b.open("if (s >= KILN_KR - 1 && s < steps && column < (long)columns)");
    b.line("y[(row0 + s - (KILN_KR - 1)) * (long)columns + column] = sum[0];");
    b.close();
    b.line("#pragma unroll");
    b.line("for (uint j = 0; j + 1 < KILN_KR; ++j) sum[j] = sum[j + 1];");
    b.line("sum[KILN_KR - 1] = 0;");
    b.close();
    b.close();
    b.end_kernel();
    return b.str();
}

const algorithm_program& stencil_strips_program(const device& dev, tiled_2d_shape& shape) {
    stencil_tuning& tuning = shape.tuning;
    // A group past the device's limit may not even compile (NVRTC refuses such a required size);
    // a kernel's own limit, which may be lower still, is known once it is built.
    const auto halve_past = [&](std::size_t limit) {
        const bool halved =
            tuning.work_group_size > limit && tuning.work_group_size / 2 >= stencil_2d_tile_columns;
        if (halved) tuning.work_group_size /= 2;
        return halved;
    };
    while (halve_past(dev.properties().max_work_group_size)) {
    }
    for (;;) {
        const kernel_description kernel = stencil_strips_kernel(shape);
        const algorithm_program& built = algorithm_program_for(
            dev, shape.key(), [&] { return std::vector<kernel_description>{kernel}; },
            [&] { return stencil_strips_source(shape); });
        if (!halve_past(built.kernel(kernel.name()).max_work_group_size())) return built;
    }
}

void launch_stencil_strips(const algorithm_program& built, const queue& q, std::size_t rows,
                           std::size_t columns, const tiled_2d_shape& shape,
                           kernel_binding&& args) {
    const stencil_tuning& tuning = shape.tuning;
    const std::size_t groups =
        ceil_div(rows, tuning.strip_rows) * ceil_div(columns, tuning.work_group_size);
    built.bind(std::move(args)).launch(q, groups * tuning.work_group_size, tuning.work_group_size);
}

}  // namespace kiln::detail
