// SPDX-License-Identifier: Apache-2.0
// The GPU strategy for medium segments: a team of lanes per segment (a power of two, up to the
// whole group; CUB's warp-per-segment, or block-per-segment where the team is the group). The
// plan sizes the teams from the segments' mean length. Both algorithms share the frame (each
// team's segment and bounds, every team reaching every barrier) and differ in the body:
// - reduce: the lanes read the segment by their stride, so that neighbouring lanes load
//   neighbouring elements (or neighbouring 16-byte loads, where the row asks for them), then
//   fold their results as a tree in local memory, or (where the row asks for it) by sub-group
//   shuffles and then across the team's sub-groups in local memory, behind one barrier;
// - scan: the team walks the segment a tile of `lanes` elements at a time, scans each tile in
//   local memory (Hillis and Steele's log-step scan) and adds the carry of the tiles before;
//   every team of a group runs as many tiles as the group's longest segment needs. Each lane
//   reads its element before it writes the element's result, so y may be x.
// A segment scans or reduces at one group's pace at most: long ones take flat_tiles.
#include <algorithm>
#include <kiln/detail/target_features.hpp>
#include <string>

#include "codegen/device_vocabulary.hpp"
#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

/// Lines that declare `acc` as the fold of a lane's share of its segment read by 16-byte loads:
/// the whole loads inside the segment by the team's stride, shape.unroll of them (and the fewer
/// left at the end) issued before any is combined, then the elements before the first whole load
/// and past the last (fewer than a load's each, and the whole segment where it holds no whole load)
/// one by one. x is a whole allocation, so a load of the elements from a multiple of shape.lanes is
/// aligned.
void emit_wide_fold(source_builder& b, const segmented_shape& shape, const segmented_input& input,
                    const std::string& T) {
    const std::string& v = shape.value_type;
    const std::string L = std::to_string(shape.lanes) + "u", wide = v + std::to_string(shape.lanes);
    const std::size_t U = shape.unroll;
    const auto acc = [](std::size_t u) { return "acc" + std::to_string(u); };
    b.line("const ulong kiln_up = (begin + " + L + " - 1u) / " + L + " * " + L + ";");
    b.line("const ulong head_end = kiln_up < end ? kiln_up : end;");
    b.line("const ulong kiln_down = end / " + L + " * " + L + ";");
    b.line("const ulong tail_begin = kiln_down > head_end ? kiln_down : head_end;");
    b.line("const ulong loads_end = tail_begin / " + L + ";");
    for (std::size_t u = 0; u < U; ++u) b.line(v + " " + acc(u) + " = identity;");
    const auto load = [&](std::size_t u, const std::string& index) {
        b.line("const " + wide + " kiln_in" + std::to_string(u) + " = ((global const " + wide +
               "*)x)[" + index + "];");
    };
    // Load u's elements into accumulator u, in order.
    const auto fold_load = [&](std::size_t u) {
        for (std::size_t lane = 0; lane < shape.lanes; ++lane)
            b.line(acc(u) + " = " +
                   input.combine(b, acc(u),
                                 "kiln_in" + std::to_string(u) + ".s" + std::to_string(lane)) +
                   ";");
    };
    b.line("ulong q = head_end / " + L + " + lane;");
    if (U > 1) {
        b.open("for (; q + " + std::to_string(U - 1) + " * " + T +
               " < loads_end; q += " + std::to_string(U) + " * " + T + ")");
        for (std::size_t u = 0; u < U; ++u) load(u, "q + " + std::to_string(u) + " * " + T);
        for (std::size_t u = 0; u < U; ++u) fold_load(u);
        b.close();
    }
    if (U == 1) {
        b.open("for (; q < loads_end; q += " + T + ")");
        load(0, "q");
        fold_load(0);
        b.close();
    } else {
        // Fewer than unroll loads are left to the lane: all issued before any is combined, so
        // that a segment's last loads cost one memory latency, not one each.
        const auto more = [](std::size_t u) { return "kiln_more" + std::to_string(u); };
        for (std::size_t u = 0; u + 1 < U; ++u) {
            b.line("const bool " + more(u) + " = q + " + std::to_string(u) + " * " + T +
                   " < loads_end;");
            b.line(wide + " kiln_in" + std::to_string(u) + ";");
            b.line("if (" + more(u) + ") kiln_in" + std::to_string(u) + " = ((global const " +
                   wide + "*)x)[q + " + std::to_string(u) + " * " + T + "];");
        }
        for (std::size_t u = 0; u + 1 < U; ++u) {
            b.open("if (" + more(u) + ")");
            fold_load(u);
            b.close();
        }
    }
    b.open("for (ulong i = begin + lane; i < head_end; i += " + T + ")");
    b.line(acc(0) + " = " + input.combine(b, acc(0), "x[i]") + ";");
    b.close();
    b.open("for (ulong i = tail_begin + lane; i < end; i += " + T + ")");
    b.line(acc(0) + " = " + input.combine(b, acc(0), "x[i]") + ";");
    b.close();
    emit_accumulator_tree(b, input, v, U);
}

/// Text of `value` (of the shape's value type, 4 or 8 bytes) from the lane `delta` above in
/// the sub-group, through the device vocabulary (emulated: its local-memory fallback, whose
/// scratch is kiln_shuffle_scratch).
std::string shuffled_down(const segmented_shape& shape, const std::string& value,
                          const std::string& delta) {
    const std::string bits = shape.value_bytes == 8 ? "ulong" : "uint";
    const std::string call = std::string("kiln_shuffle_down") +
                             (shape.value_bytes == 8 ? "_64" : "") +
                             (shape.emulated_shuffles ? "_local(kiln_shuffle_scratch, " : "(");
    return "as_" + shape.value_type + "(" + call + "as_" + bits + "(" + value + "), " + delta +
           "))";
}

/// Lines that write out[s], the fold of every lane's `acc` in its team of `lanes` (a power of
/// two): within each sub-group by shuffles (lane i takes lane i + d's, d halving from the
/// smaller of the team and the sub-group), then the team's sub-group totals in order from
/// local memory. Every work-item of the group calls the shuffles and reaches the barrier.
void emit_shuffle_team_fold(source_builder& b, const segmented_shape& shape,
                            const segmented_input& input) {
    const std::string& v = shape.value_type;
    const std::size_t S = shape.fold_sub_group, T = shape.team_lanes;
    b.line(v + " kiln_folded = acc;");
    for (std::size_t d = std::min(T, S) / 2; d > 0; d /= 2)
        b.line("kiln_folded = " +
               input.combine(b, "kiln_folded",
                             shuffled_down(shape, "kiln_folded", std::to_string(d) + "u")) +
               ";");
    if (T <= S) {
        b.line("if (lane == 0u && s < segments) out[s] = kiln_folded;");
        return;
    }
    const std::string sg = std::to_string(S) + "u";
    b.line("if (t % " + sg + " == 0u) kiln_partials[t / " + sg + "] = kiln_folded;");
    b.local_barrier();
    b.open("if (lane == 0u && s < segments)");
    b.line(v + " kiln_team = kiln_partials[t / " + sg + "];");
    b.line("for (uint w = 1u; w < " + std::to_string(T / S) + "u; ++w) kiln_team = " +
           input.combine(b, "kiln_team", "kiln_partials[t / " + sg + " + w]") + ";");
    b.line("out[s] = kiln_team;");
    b.close();
}

void write_reduce_body(source_builder& b, const segmented_shape& shape,
                       const segmented_input& input, const std::string& T) {
    if (shape.lanes > 1)
        emit_wide_fold(b, shape, input, T);
    else
        emit_fold(b, shape, input, "begin + lane", T);
    if (shape.fold_sub_group > 0) {
        emit_shuffle_team_fold(b, shape, input);
        return;
    }
    emit_team_fold(b, input, T);
    b.line("if (lane == 0u && s < segments) out[s] = kiln_partials[t];");
}

void write_scan_body(source_builder& b, const segmented_shape& shape, const segmented_input& input,
                     const std::string& T) {
    const std::string& v = shape.value_type;
    b.line("const uint last_lane = t - lane + " + T + " - 1u;");
    // The group's tile count: its longest segment's, so that every team reaches every barrier.
    b.line("if (t == 0u) kiln_tiles[0] = 0u;");
    b.local_barrier();
    b.line("if (lane == 0u) atomic_max(&kiln_tiles[0], (uint)((end - begin + " + T + " - 1u) / " +
           T + "));");
    b.local_barrier();
    b.line("const uint tiles = kiln_tiles[0];");
    b.line(v + " carry = identity;");
    b.open("for (uint tile = 0u; tile < tiles; ++tile)");
    b.line("const ulong i = begin + (ulong)tile * " + T + " + lane;");
    b.line("kiln_partials[t] = i < end ? x[i] : identity;");
    b.local_barrier();
    b.open("for (uint shift = 1u; shift < " + T + "; shift *= 2u)");
    b.line("const " + v + " before = lane >= shift ? kiln_partials[t - shift] : identity;");
    b.local_barrier();
    b.line("kiln_partials[t] = " + input.combine(b, "before", "kiln_partials[t]") + ";");
    b.local_barrier();
    b.close();
    b.line("if (i < end) out[i] = " + input.combine(b, "carry", "kiln_partials[t]") + ";");
    b.line("carry = " + input.combine(b, "carry", "kiln_partials[last_lane]") + ";");
    // The next tile overwrites the tile only once every lane has read its last lane.
    b.local_barrier();
    b.close();
}

/// `target`: the device's, whose vocabulary a shuffle fold that is not emulated calls.
std::string team_per_segment_source(const segmented_shape& shape, const segmented_input& input,
                                    const std::string& name, const target_features& target) {
    const kernel_description kernel = segmented_kernel(name, shape);
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      T = std::to_string(shape.team_lanes) + "u";
    const bool reduce = shape.algorithm == segmented_algorithm::reduce;
    const std::size_t S = shape.fold_sub_group;
    source_builder b;
    // The emulation is the local-memory target's vocabulary.
    if (S > 0) use_device_vocabulary(b, shape.emulated_shuffles ? target_features{} : target);
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    // The tree keeps a value per work-item; a shuffle fold a total per sub-group, where a team
    // spans several.
    if (S == 0)
        b.local_array(shape.value_type, "kiln_partials", G);
    else if (shape.team_lanes > S)
        b.local_array(shape.value_type, "kiln_partials", std::to_string(shape.work_group_size / S));
    if (shape.emulated_shuffles) b.local_array("uint", "kiln_shuffle_scratch", G);
    if (!reduce) b.local_array("uint", "kiln_tiles", "1");
    emit_team_segment(b, shape, G, T);
    if (reduce)
        write_reduce_body(b, shape, input, T);
    else
        write_scan_body(b, shape, input, T);
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_team_per_segment(const segmented_run& run) {
    return run_in_groups(run, "teams", [&](const segmented_shape& shape, const std::string& name) {
        return team_per_segment_source(shape, run.input, name, target_features_for(run.q.device()));
    });
}

}  // namespace kiln::detail
