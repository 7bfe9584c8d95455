// The GPU strategy for segments that fit a tile: a work-group loads one segment per tile into
// local memory with the keys' positions, sorts every tile's pairs by one bitonic network (a
// position breaks ties, so equal keys keep their order), and writes the keys back in order,
// each value fetched from its key's position. The tile is the smallest power of 2 that holds the
// longest segment, and a group holds as many tiles as its work-items' items fill (short
// segments: many per group, so that few work-items idle), so a segment costs
// tile log^2(tile) / 4 compare-exchanges in local memory and one read and one write of its keys
// and values.
#include <cstdint>
#include <string>

#include "segmented_sort_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* group_sort_kernel_name = "kiln_segmented_group_sort";

kernel_description group_sort_kernel(const segmented_sort_shape& shape) {
    kernel_description kernel(group_sort_kernel_name);
    kernel.global(shape.key_bits(), "keys");
    if (shape.value_bytes) kernel.global(radix_bits_type(shape.value_bytes), "values");
    kernel.global_const(shape.offset_type, "offsets").scalar<std::uint64_t>("segments");
    return kernel;
}

/// The padding past a segment's end: a key whose order is the largest (after every NaN too,
/// by its position).
std::string padding_key(const segmented_sort_shape& shape) {
    const std::string bits = shape.key_bits();
    return shape.keys.kind == sort_key_kind::signed_integer
               ? "(" + bits + ")(~(" + bits + ")0 >> 1)"
               : "(" + bits + ")~(" + bits + ")0";
}

std::string write_group_sort_source(const segmented_sort_shape& shape) {
    const std::size_t tiles = shape.tile * shape.segments_per_group;
    const std::string T = std::to_string(shape.tile), G = std::to_string(shape.work_group_size),
                      S = std::to_string(shape.segments_per_group), all = std::to_string(tiles);
    const std::size_t per_item = (tiles + shape.work_group_size - 1) / shape.work_group_size;
    const std::string bits = shape.key_bits();
    source_builder b;
    define_key_order(b, shape);
    b.begin_kernel(group_sort_kernel_name, shape.work_group_size);
    group_sort_kernel(shape).declare(b);
    b.begin_body();
    b.local_array(bits, "kiln_keys", all);
    b.local_array("uint", "kiln_positions", all);
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
    b.line("kiln_keys[i] = j < kiln_length[s] ? keys[kiln_begin[s] + j] : " + padding_key(shape) +
           ";");
    b.line("kiln_positions[i] = j;");
    b.close();
    // Every tile is sorted by the same network at once: tile s's pairs start at s * T, so a
    // pair's place within its tile gives its direction (the last merge, size T, ascends in
    // every tile).
    b.open("for (uint size = 2; size <= " + T + "u; size <<= 1)");
    b.open("for (uint stride = size >> 1; stride > 0; stride >>= 1)");
    b.local_barrier();
    b.open("for (uint p = t; p < " + all + "u / 2; p += " + G + "u)");
    b.line("const uint a = 2 * p - (p & (stride - 1)), c = a + stride;");
    b.line("const " + bits +
           " ka = kiln_segment_key_order(kiln_keys[a]), kc = "
           "kiln_segment_key_order(kiln_keys[c]);");
    b.line("const uint pa = kiln_positions[a], pc = kiln_positions[c];");
    b.line("const bool after = ka > kc || (ka == kc && pa > pc);");
    b.open("if (after == (((a % " + T + "u) & size) == 0))");
    b.line("const " + bits + " k = kiln_keys[a];");
    b.line("kiln_keys[a] = kiln_keys[c];");
    b.line("kiln_keys[c] = k;");
    b.line("kiln_positions[a] = pc;");
    b.line("kiln_positions[c] = pa;");
    b.close();
    b.close();
    b.close();
    b.close();
    b.local_barrier();
    if (shape.value_bytes) {
        // Every value is read before any is written: the segments are sorted in place.
        const std::string value = radix_bits_type(shape.value_bytes);
        b.line(value + " kiln_moved[" + std::to_string(per_item) + "];");
        b.open("for (uint j = 0; j < " + std::to_string(per_item) + "u; ++j)");
        b.line("const uint i = t + j * " + G + "u, s = i / " + T + "u;");
        b.line("if (i < " + all + "u && i % " + T +
               "u < kiln_length[s]) kiln_moved[j] = values[kiln_begin[s] + kiln_positions[i]];");
        b.close();
        b.line("barrier(CLK_GLOBAL_MEM_FENCE);");
        b.open("for (uint j = 0; j < " + std::to_string(per_item) + "u; ++j)");
        b.line("const uint i = t + j * " + G + "u, s = i / " + T + "u;");
        b.line("if (i < " + all + "u && i % " + T +
               "u < kiln_length[s]) values[kiln_begin[s] + i % " + T + "u] = kiln_moved[j];");
        b.close();
    }
    b.open("for (uint i = t; i < " + all + "u; i += " + G + "u)");
    b.line("const uint s = i / " + T + "u, j = i % " + T + "u;");
    b.line("if (j < kiln_length[s]) keys[kiln_begin[s] + j] = kiln_keys[i];");
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

void run_group_tile_segmented_sort(const queue& q, const segmented_sort_input& input,
                                   const segmented_sort_plan& plan,
                                   const std::string& offset_type) {
    const segmented_sort_shape shape = segmented_sort_shape_of(input, plan, offset_type);
    const algorithm_program& program = algorithm_program_for(
        q.device(), shape.key(), [&] { return std::vector{group_sort_kernel(shape)}; },
        [&] { return write_group_sort_source(shape); });
    kernel_binding sort = program.binding(group_sort_kernel_name);
    sort.argument("keys", input.keys.memory->memory);
    if (input.values) sort.argument("values", input.values->memory->memory);
    const std::size_t segments = input.offsets.size - 1;
    sort.argument("offsets", input.offsets.memory->memory)
        .scalar<std::uint64_t>("segments", segments);
    const std::size_t groups = (segments + plan.segments_per_group - 1) / plan.segments_per_group;
    program.bind(std::move(sort))
        .launch(q, groups * plan.work_group_size, plan.work_group_size)
        .wait();
}

}  // namespace kiln::detail
