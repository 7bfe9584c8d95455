// SPDX-License-Identifier: Apache-2.0
// The GPU strategy for short segments: a work-group takes one segment per work-item. The group's
// keys, one contiguous span, come into local memory by coalesced loads; each work-item then holds
// its segment in registers, each key's order beside its position (the pair one 64-bit word, so
// that equal keys keep their order), pads it to the tile with keys after every other, and sorts
// it by Batcher's merging network, unrolled. The sorted keys (or, with values, their sources) go
// back through local memory and leave by coalesced stores. A segment of T keys costs under
// T log^2(T) / 4 compare-exchanges in registers, where group_tile spends as many in local
// memory, behind a barrier each.
#include <string>
#include <utility>
#include <vector>

#include "segmented_sort_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* lane_sort_kernel_name = "kiln_segmented_lane_sort";

/// The compare-exchanges of Batcher's odd-even merge sort of `n` items (a power of 2), in order.
std::vector<std::pair<std::size_t, std::size_t>> merging_network(std::size_t n) {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t p = 1; p < n; p *= 2)
        for (std::size_t k = p; k >= 1; k /= 2)
            for (std::size_t j = k % p; j + k < n; j += 2 * k)
                for (std::size_t i = 0; i < k && i + j + k < n; ++i)
                    if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
                        pairs.emplace_back(i + j, i + j + k);
    return pairs;
}

std::string write_lane_sort_source(const segmented_sort_shape& shape) {
    const std::size_t tile = shape.tile;
    const std::string G = std::to_string(shape.work_group_size), bits = shape.key_bits();
    // A spare word after every 32 puts the keys of a warp's segments, T apart, in distinct banks
    // when T is a power of 2 (and the coalesced copies stay conflict-free).
    const std::size_t span = shape.work_group_size * tile;
    source_builder b;
    define_key_order(b, shape);
    b.define("kiln_lane_at", "uint kiln_lane_at(uint i) {\n    return i + (i >> 5);\n}");
    b.begin_kernel(lane_sort_kernel_name, shape.work_group_size);
    segment_tiles_kernel(lane_sort_kernel_name, shape).declare(b);
    b.begin_body();
    b.local_array("uint", "kiln_staged", std::to_string(span + span / 32));
    b.line("const uint t = get_local_id(0);");
    b.line("const ulong first = get_group_id(0) * " + G + "UL;");
    b.line("const ulong last = min(first + " + G + "UL, segments);");
    b.line("const ulong base = (ulong)offsets[first];");
    b.line("const uint span = (uint)((ulong)offsets[last] - base);");
    b.line("const ulong segment = first + t;");
    b.line("const uint begin = segment < segments ? (uint)((ulong)offsets[segment] - base) : 0u;");
    b.line(
        "const uint length = segment < segments ? (uint)((ulong)offsets[segment + 1] - base) - "
        "begin : 0u;");
    b.open("for (uint i = t; i < span; i += " + G + "u)");
    b.line("kiln_staged[kiln_lane_at(i)] = keys[base + i];");
    b.close();
    b.local_barrier();
    // Key bits above, position below: past the segment's end, keys after every other (an equal
    // key of the segment comes first by its position).
    for (std::size_t j = 0; j < tile; ++j) {
        const std::string J = std::to_string(j);
        b.line("ulong r" + J + " = " + J + "u < length ? (ulong)kiln_segment_key_order((" + bits +
               ")kiln_staged[kiln_lane_at(begin + " + J + "u)]) << 32 | " + J +
               "UL : 0xffffffff00000000UL | " + J + "UL;");
    }
    for (const auto& [a, c] : merging_network(tile)) {
        const std::string A = "r" + std::to_string(a), C = "r" + std::to_string(c);
        b.line("{ const ulong low = min(" + A + ", " + C + "); " + C + " = max(" + A + ", " + C +
               "); " + A + " = low; }");
    }
    // Unsigned keys alone leave as their order's bits, other keys alone as their own bits, read
    // back from where they were staged (every NaN orders alike); with values, every key and
    // value leaves from its source.
    const bool own_bits = shape.keys.kind == sort_key_kind::unsigned_integer;
    const bool by_source = shape.value_bytes != 0;
    if (!own_bits && !by_source)
        for (std::size_t j = 0; j < tile; ++j) {
            const std::string J = std::to_string(j), r = "r" + J;
            b.line("if (" + J + "u < length) " + r + " = kiln_staged[kiln_lane_at(begin + (uint)" +
                   r + ")];");
        }
    b.local_barrier();
    for (std::size_t j = 0; j < tile; ++j) {
        const std::string J = std::to_string(j), r = "r" + J;
        b.line("if (" + J + "u < length) kiln_staged[kiln_lane_at(begin + " + J + "u)] = " +
               (by_source  ? "begin + (uint)" + r
                : own_bits ? "(uint)(" + r + " >> 32)"
                           : "(uint)" + r) +
               ";");
    }
    b.local_barrier();
    if (!by_source) {
        b.open("for (uint i = t; i < span; i += " + G + "u)");
        b.line("keys[base + i] = (" + bits + ")kiln_staged[kiln_lane_at(i)];");
        b.close();
        b.end_kernel();
        return b.str();
    }
    write_moves_from_sources(b, shape, true,
                             {.steps = tile,
                              .exists = "i < span",
                              .from = "base + kiln_staged[kiln_lane_at(i)]",
                              .to = "base + i"});
    b.end_kernel();
    return b.str();
}

}  // namespace

void run_lane_tile_segmented_sort(const queue& q, const segmented_sort_input& input,
                                  const segmented_sort_plan& plan, const std::string& offset_type) {
    const segmented_sort_shape shape = segmented_sort_shape_of(input, plan, offset_type);
    run_segment_tiles(q, input, shape, lane_sort_kernel_name,
                      [&] { return write_lane_sort_source(shape); });
}

}  // namespace kiln::detail
