// SPDX-License-Identifier: Apache-2.0
// The GPU strategy for segments that fit a tile: a work-group loads one segment per tile into
// local memory with the keys' positions, sorts every tile's pairs by one bitonic network (a
// position breaks ties, so equal keys keep their order; the keys held as their order's bits),
// and writes the keys back in order, each value (and each signed or floating key) fetched from
// its key's position. The tile is the smallest power of 2 that holds the longest segment, and a
// group holds as many tiles as its work-items' items fill (short segments: many per group, so
// that few work-items idle), so a segment costs tile log^2(tile) / 4 compare-exchanges in local
// memory and one read and one write of its keys and values (a second read of signed and
// floating keys, from the cache).
#include <string>

#include "algo/ceil_div.hpp"
#include "segmented_sort_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* group_sort_kernel_name = "kiln_segmented_group_sort";

/// The padding past a segment's end, in the order's bits: the largest (after every NaN too, by
/// its position).
std::string padding_key(const segmented_sort_shape& shape) {
    const std::string bits = shape.key_bits();
    return "(" + bits + ")~(" + bits + ")0";
}

/// The items of a warp's compare-exchange step that lie less than 32 apart fall two to a bank of
/// local memory (H100: 1.8-1.9-way conflicts, a third of the kernel's time waiting on local
/// memory). So every other block of `span` items lies reversed: a step's first items of one block
/// and of the next then meet distinct banks, as do consecutive items. A span is the items of one
/// phase of the local memory's 32 banks: 32 of 4 bytes, 16 of 8; items of 2 bytes or fewer do not
/// conflict there. Returns the span, and defines `name`(i), item i's place.
std::size_t define_swizzle(source_builder& b, const std::string& name, std::size_t item_bytes) {
    const std::size_t span = item_bytes >= 8 ? 16 : item_bytes == 4 ? 32 : 1;
    const std::string mask = std::to_string(span - 1);
    b.define(name,
             "uint " + name + "(uint i) {\n    return " +
                 (span == 1 ? std::string("i")
                            : "i ^ (i & " + std::to_string(span) + "u ? " + mask + "u : 0u)") +
                 ";\n}");
    return span;
}

std::string write_group_sort_source(const segmented_sort_shape& shape) {
    const std::size_t tiles = shape.tile * shape.segments_per_group;
    const std::string T = std::to_string(shape.tile), G = std::to_string(shape.work_group_size),
                      S = std::to_string(shape.segments_per_group), all = std::to_string(tiles);
    const std::size_t per_item = (tiles + shape.work_group_size - 1) / shape.work_group_size;
    const std::string bits = shape.key_bits();
    source_builder b;
    define_key_order(b, shape);
    const std::size_t key_span = define_swizzle(b, "kiln_key_at", shape.keys.bytes);
    const std::size_t position_span = define_swizzle(b, "kiln_position_at", 4);
    b.begin_kernel(group_sort_kernel_name, shape.work_group_size);
    segment_tiles_kernel(group_sort_kernel_name, shape).declare(b);
    b.begin_body();
    b.local_array(bits, "kiln_keys", std::to_string(ceil_div(tiles, key_span) * key_span));
    b.local_array("uint", "kiln_positions",
                  std::to_string(ceil_div(tiles, position_span) * position_span));
    b.local_array("ulong", "kiln_begin", S);
    b.local_array("uint", "kiln_length", S);
    b.line("const uint t = get_local_id(0);");
    // Segment first + s in tile s; a group past the last segment fills its tiles with padding.
    b.line("const ulong first = get_group_id(0) * " + S + "UL;");
    b.open("for (uint s = t; s < " + S + "u; s += " + G + "u)");
    b.line("const ulong segment = first + s;");
    b.line("const ulong begin = segment < segments ? (ulong)offsets[segment] : 0;");
    b.line("kiln_begin[s] = begin;");
    b.line(
        "kiln_length[s] = segment < segments ? (uint)((ulong)offsets[segment + 1] - begin) "
        ": 0u;");
    b.close();
    b.local_barrier();
    b.open("for (uint i = t; i < " + all + "u; i += " + G + "u)");
    b.line("const uint s = i / " + T + "u, j = i % " + T + "u;");
    // Each key is held as its order's bits, so that the network compares them as they are.
    b.line(
        "kiln_keys[kiln_key_at(i)] = j < kiln_length[s] ? "
        "kiln_segment_key_order(keys[kiln_begin[s] + j]) : " +
        padding_key(shape) + ";");
    b.line("kiln_positions[kiln_position_at(i)] = j;");
    b.close();
    // Every tile is sorted by the same network at once: tile s's pairs start at s * T, so a
    // pair's place within its tile gives its direction (the last merge, size T, ascends in
    // every tile).
    b.open("for (uint size = 2; size <= " + T + "u; size <<= 1)");
    b.open("for (uint stride = size >> 1; stride > 0; stride >>= 1)");
    b.local_barrier();
    b.open("for (uint p = t; p < " + all + "u / 2; p += " + G + "u)");
    b.line("const uint a = 2 * p - (p & (stride - 1)), c = a + stride;");
    b.line("const uint ka_at = kiln_key_at(a), kc_at = kiln_key_at(c);");
    b.line("const uint pa_at = kiln_position_at(a), pc_at = kiln_position_at(c);");
    b.line("const " + bits + " ka = kiln_keys[ka_at], kc = kiln_keys[kc_at];");
    b.line("const uint pa = kiln_positions[pa_at], pc = kiln_positions[pc_at];");
    b.line("const bool after = ka > kc || (ka == kc && pa > pc);");
    b.open("if (after == (((a % " + T + "u) & size) == 0))");
    b.line("const " + bits + " k = kiln_keys[ka_at];");
    b.line("kiln_keys[ka_at] = kiln_keys[kc_at];");
    b.line("kiln_keys[kc_at] = k;");
    b.line("kiln_positions[pa_at] = pc;");
    b.line("kiln_positions[pc_at] = pa;");
    b.close();
    b.close();
    b.close();
    b.close();
    b.local_barrier();
    // Keys whose order's bits are not their own (signed and floating: every NaN orders alike)
    // come back through their positions, as values do; every key and value is read before any
    // is written, since the segments are sorted in place.
    const bool gather_keys = shape.keys.kind != sort_key_kind::unsigned_integer;
    if (shape.value_bytes || gather_keys)
        write_moves_from_sources(
            b, shape, gather_keys,
            {.steps = per_item,
             .exists = "i < " + all + "u && i % " + T + "u < kiln_length[i / " + T + "u]",
             .from = "kiln_begin[i / " + T + "u] + kiln_positions[kiln_position_at(i)]",
             .to = "kiln_begin[i / " + T + "u] + i % " + T + "u"});
    if (!gather_keys) {
        b.open("for (uint i = t; i < " + all + "u; i += " + G + "u)");
        b.line("const uint s = i / " + T + "u, j = i % " + T + "u;");
        b.line("if (j < kiln_length[s]) keys[kiln_begin[s] + j] = kiln_keys[kiln_key_at(i)];");
        b.close();
    }
    b.end_kernel();
    return b.str();
}

}  // namespace

void run_group_tile_segmented_sort(const queue& q, const segmented_sort_input& input,
                                   const segmented_sort_plan& plan,
                                   const std::string& offset_type) {
    const segmented_sort_shape shape = segmented_sort_shape_of(input, plan, offset_type);
    run_segment_tiles(q, input, shape, group_sort_kernel_name,
                      [&] { return write_group_sort_source(shape); });
}

}  // namespace kiln::detail
