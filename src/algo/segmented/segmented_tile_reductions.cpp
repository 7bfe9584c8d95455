// SPDX-License-Identifier: Apache-2.0
// The reduction's strategy for long segments: independent tiles, then a fix pass, with no chain
// between the tiles (a scan's look-back serialises them; a reduction needs no prefix).
// - pieces: each group reduces a tile of work_group_size * tile_items consecutive elements,
//   their loads all issued before the tile looks its segments up. A tile inside one segment
//   (the common case where segments are long) folds its items in registers and the group's
//   partials as a tree. A tile holding several segment pieces stages its elements in local
//   memory: each whole segment no longer than a work-item's share of the tile is folded by one
//   work-item, each other piece by the whole group. A segment inside the tile goes to out; a
//   piece of a segment that crosses the tile's first edge goes to the tile's first scratch slot,
//   one that crosses its last edge to its last slot, and a tile inside one segment writes its
//   total to both.
// - fix: a team per segment folds, for a segment that crosses tiles, the last slot of the tile
//   it starts in and the first slots of the tiles after it, and writes empty segments'
//   identities; it also checks every segment's offsets.
// x is read once and out written once; the scratch holds two values per tile.
#include <cstdint>
#include <kiln/detail/temporary_pool.hpp>
#include <string>
#include <vector>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

std::string tile_reductions_number(std::size_t value) {
    return std::to_string(value) + "u";
}

/// The first pass's kernel: n, segment_slots, and the scratch `pieces` (two values per tile:
/// the piece of its first segment at 2 tile, of its last at 2 tile + 1).
kernel_description tile_reductions_pieces_kernel(const segmented_shape& shape) {
    kernel_description kernel =
        segmented_kernel(segmented_kernel_name(shape, "tile_pieces"), shape);
    kernel.global(shape.value_type, "pieces");
    return kernel;
}

/// The fix pass's kernel: n, segment_slots, and the pieces the first pass wrote.
kernel_description tile_reductions_fix_kernel(const segmented_shape& shape) {
    kernel_description kernel = segmented_kernel(segmented_kernel_name(shape, "tile_fix"), shape);
    kernel.global_const(shape.value_type, "pieces");
    return kernel;
}

/// Lines that write the group's fold of `acc` where the piece of segment `s` in the tile ends:
/// out where the segment lies in the tile, else the slot of the tile's edge it crosses.
void emit_tile_reductions_piece_store(source_builder& b, const segmented_input& input,
                                      const std::string& group, const std::string& s) {
    b.line("const uint lane = t;");
    emit_team_fold(b, input, group);
    b.open("if (t == 0u)");
    b.line("const ulong seg_begin = (ulong)offsets[" + s + "], seg_end = (ulong)offsets[" + s +
           " + 1];");
    b.line("const " + input.value_type + " total = kiln_partials[0];");
    b.open("if (seg_begin >= tile_begin && seg_end <= tile_end)");
    b.line("out[" + s + "] = total;");
    b.close();
    b.open("else");
    b.line("if (seg_begin < tile_begin) pieces[2u * tile] = total;");
    b.line("if (seg_end > tile_end) pieces[2u * tile + 1u] = total;");
    b.close();
    b.close();
}

std::string write_tile_reductions_pieces(const segmented_shape& shape,
                                         const segmented_input& input) {
    const kernel_description kernel = tile_reductions_pieces_kernel(shape);
    const std::string& v = shape.value_type;
    const std::size_t items = shape.tile_items, accumulators = std::min(shape.unroll, items);
    const std::string WG = tile_reductions_number(shape.work_group_size),
                      TILE = tile_reductions_number(shape.work_group_size * items);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(v, "kiln_partials", WG);
    b.local_array(v, "kiln_tile", TILE);
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const ulong tile = (ulong)get_group_id(0);");
    b.line("const ulong tile_begin = tile * " + TILE + ";");
    b.line("const ulong tile_end = n - tile_begin > " + TILE + " ? tile_begin + " + TILE + " : n;");
    // Striped, so that each of the group's loads coalesces; past n, the identity.
    for (std::size_t j = 0; j < items; ++j) {
        const std::string at =
            "tile_begin + " + tile_reductions_number(j * shape.work_group_size) + " + t";
        b.line("const " + v + " item" + std::to_string(j) + " = " + at + " < tile_end ? x[" + at +
               "] : identity;");
    }
    b.line("ulong first_segment = 0;");
    emit_segment_search(b, "first_segment", "0", "segments", "tile_begin");
    // Where segments are long the tile's first segment holds its last element too: one load
    // tells, rather than a second search.
    b.line("ulong last_segment = first_segment;");
    b.open("if (first_segment < segments && (ulong)offsets[first_segment + 1] < tile_end)");
    emit_segment_search(b, "last_segment", "first_segment + 1", "segments", "tile_end - 1");
    b.close();
    // Past the last offset: elements of no segment.
    b.line("if (first_segment >= segments) return;");
    b.open("if (first_segment == last_segment)");
    // Accumulators from the identity, as every strategy starts a segment, item j into j mod
    // accumulators, then pairwise.
    for (std::size_t u = 0; u < accumulators; ++u)
        b.line(v + " acc" + std::to_string(u) + " = identity;");
    for (std::size_t j = 0; j < items; ++j) {
        const std::string acc = "acc" + std::to_string(j % accumulators);
        b.line(acc + " = " + input.combine(b, acc, "item" + std::to_string(j)) + ";");
    }
    for (std::size_t width = 1; width < accumulators; width *= 2)
        for (std::size_t u = 0; u + width < accumulators; u += 2 * width) {
            const std::string acc = "acc" + std::to_string(u);
            b.line(acc + " = " + input.combine(b, acc, "acc" + std::to_string(u + width)) + ";");
        }
    b.line("const " + v + " acc = acc0;");
    emit_tile_reductions_piece_store(b, input, WG, "first_segment");
    b.line("return;");
    b.close();
    for (std::size_t j = 0; j < items; ++j)
        b.line("kiln_tile[" + tile_reductions_number(j * shape.work_group_size) + " + t] = item" +
               std::to_string(j) + ";");
    b.local_barrier();
    const std::string short_piece = tile_reductions_number(items);
    // Whole segments of a work-item's share of the tile or fewer elements: a work-item each.
    b.open("for (ulong s = first_segment + t; s <= last_segment && s < segments; s += " + WG + ")");
    b.line("const ulong seg_begin = (ulong)offsets[s], seg_end = (ulong)offsets[s + 1];");
    b.open(
        "if (seg_begin >= tile_begin && seg_end <= tile_end && seg_end > seg_begin && seg_end - "
        "seg_begin <= " +
        short_piece + ")");
    b.line(v + " acc = identity;");
    b.open("for (ulong i = seg_begin; i < seg_end; ++i)");
    b.line("acc = " + input.combine(b, "acc", "kiln_tile[i - tile_begin]") + ";");
    b.close();
    b.line("out[s] = acc;");
    b.close();
    b.close();
    // The others, the edges' pieces among them: the group each, in turn (every work-item reads
    // the same offsets, so all reach the fold's barriers).
    b.open("for (ulong s = first_segment; s <= last_segment && s < segments; ++s)");
    b.line("const ulong seg_begin = (ulong)offsets[s], seg_end = (ulong)offsets[s + 1];");
    b.line("if (seg_begin >= tile_begin && seg_end <= tile_end && seg_end - seg_begin <= " +
           short_piece + ") continue;");
    b.line("const ulong piece_begin = seg_begin > tile_begin ? seg_begin : tile_begin;");
    b.line("const ulong piece_end = seg_end < tile_end ? seg_end : tile_end;");
    b.line(v + " acc = identity;");
    b.open("for (ulong i = piece_begin + t; i < piece_end; i += " + WG + ")");
    b.line("acc = " + input.combine(b, "acc", "kiln_tile[i - tile_begin]") + ";");
    b.close();
    emit_tile_reductions_piece_store(b, input, WG, "s");
    b.close();
    b.end_kernel();
    return b.str();
}

std::string write_tile_reductions_fix(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = tile_reductions_fix_kernel(shape);
    const std::string G = tile_reductions_number(shape.work_group_size),
                      L = tile_reductions_number(shape.team_lanes),
                      TILE = tile_reductions_number(shape.work_group_size * shape.tile_items);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(shape.value_type, "kiln_partials", G);
    emit_team_segment(b, shape, G, L);
    b.line("const ulong first_tile = begin / " + TILE + ", last_tile = (end - 1) / " + TILE + ";");
    b.line("const int crosses = end > begin && first_tile != last_tile;");
    b.line(shape.value_type + " acc = identity;");
    b.open("if (crosses)");
    b.open("for (ulong p = first_tile + lane; p <= last_tile; p += " + L + ")");
    b.line("acc = " + input.combine(b, "acc", "pieces[p == first_tile ? 2u * p + 1u : 2u * p]") +
           ";");
    b.close();
    b.close();
    emit_team_fold(b, input, L);
    // A segment inside one tile was written by its tile.
    b.line(
        "if (lane == 0u && s < segments && (end == begin || crosses)) out[s] = "
        "kiln_partials[t];");
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_tile_reductions(const segmented_run& run) {
    const segmented_shape shape = segmented_shape_of(run.algorithm, run.input, run.plan);
    const kernel_description pieces_kernel = tile_reductions_pieces_kernel(shape);
    const kernel_description fix_kernel = tile_reductions_fix_kernel(shape);
    const algorithm_program& program = segmented_program(
        run.q.device(), shape,
        [&] {
            return std::vector{pieces_kernel, fix_kernel};
        },
        [&] {
            return write_tile_reductions_pieces(shape, run.input) +
                   write_tile_reductions_fix(shape, run.input);
        });
    temporary_lease pieces =
        temporary_pool::acquire(run.q, 2 * run.plan.groups * run.input.value_bytes);
    const kernel_argument pieces_memory = make_argument(kiln::reinterpret(pieces.bytes()));
    const std::size_t group = shape.work_group_size;
    kernel_binding pieces_args =
        bind_segments(program, pieces_kernel.name(), run.input, run.status);
    pieces_args.argument("pieces", pieces_memory);
    const event tiled = program.bind(std::move(pieces_args))
                            .launch(run.q, run.plan.groups * group, group, {}, run.after);
    kernel_binding fix_args = bind_segments(program, fix_kernel.name(), run.input, run.status);
    fix_args.argument("pieces", pieces_memory);
    const event fixed = program.bind(std::move(fix_args))
                            .launch(run.q, run.plan.fix_groups * group, group, {}, tiled);
    pieces.release_after(run.q, fixed);
    return fixed;
}

}  // namespace kiln::detail
