// SPDX-License-Identifier: Apache-2.0
// What the segmented module's strategies share: the shape of a program (its key), the slots
// every kernel takes, a segment's bounds with the check of its offsets, the search of the
// segment holding an element, a lane's fold of its elements and a segment's serial reduction or
// scan as kernel text, the program of a shape with the binding of those slots, and the dispatch
// to the strategies, a file each, each serving the reduction and the scan.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/algo/segmented.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>
#include <vector>

#include "segmented_plan.hpp"

namespace kiln::detail {

/// Everything a segmented program's text depends on.
struct segmented_shape {
    segmented_algorithm algorithm = segmented_algorithm::reduce;
    segmented_strategy strategy = segmented_strategy::team_per_segment;
    std::string value_type = "float", offset_type = "uint";
    std::size_t value_bytes = 4;  ///< value_type's, which it determines
    /// The operation's name (segmented_input::operation).
    std::string operation = "sum";
    /// The GPU strategies' group size and lanes per segment; every strategy's accumulators per
    /// work-item.
    std::size_t work_group_size = 1, team_lanes = 1, unroll = 1;
    /// team_per_segment's reduction: elements per 16-byte load (1: element by element).
    std::size_t lanes = 1;
    /// team_per_segment's reduction: the plan's fold_sub_group and emulated_shuffles.
    std::size_t fold_sub_group = 0;
    bool emulated_shuffles = false;
    /// flat_tiles: the tiles' scan_policy::key(); empty for the other strategies.
    std::string tiles;
    /// tile_reductions: items per work-item (team_lanes: its fix pass's); 0 for the others.
    std::size_t tile_items = 0;
    /// cpu_chunks' scan: the plan's scan_block (1: one loop across the chunk's segments).
    std::size_t scan_block = 1;

    /// "segmented reduce team_per_segment float offsets uint sum g256 t32 u4", for the program
    /// cache (flat tiles: their policy's key added; tile reductions: i<tile_items>; 16-byte
    /// loads: l<lanes>; shuffle folds: f<fold_sub_group>, " emulated" added where emulated).
    std::string key() const;
};
segmented_shape segmented_shape_of(segmented_algorithm algorithm, const segmented_input& input,
                                   const segmented_plan& plan);

/// Adds the slots every segmented kernel takes: x, offsets, out (y for scans; it may be x),
/// status (the first segment whose offsets are bad, atomic_min'd), identity and segments. n,
/// x's elements, comes from the kernel's frame: segmented_kernel's, or the scan family's.
void segment_slots(kernel_description& kernel, const segmented_shape& shape);
/// A per-segment strategy's kernel `name`: n, then segment_slots.
kernel_description segmented_kernel(const std::string& name, const segmented_shape& shape);
/// The name of a strategy's kernel: kiln_segmented_reduce_`strategy` or
/// kiln_segmented_scan_`strategy`, after shape's algorithm.
std::string segmented_kernel_name(const segmented_shape& shape, const std::string& strategy);

/// Lines that set `begin` and `end` (ulongs the caller declared 0) to segment `s`'s bounds where
/// its offsets are good (offsets[0] is 0, offsets[s] <= offsets[s + 1] <= n), else report s in
/// status and leave the segment empty, so that bad offsets never index x. Every segment checks its
/// own pair, so that a launch that visits every segment checks them all.
void emit_segment_bounds(source_builder& b, const segmented_shape& shape, const std::string& s);
/// Teams of `lanes` work-items (a uint literal) in groups of `group`, a segment each: t, lane
/// within the team, the team's segment s and its begin and end (emit_segment_bounds). Teams past
/// the last segment, or whose offsets are bad, have no elements but still reach every barrier.
void emit_team_segment(source_builder& b, const segmented_shape& shape, const std::string& group,
                       const std::string& lanes);
/// Lines that fold every work-item's `acc` within its team of `lanes` (a power of two, the
/// team's lanes consecutive) as a tree in kiln_partials; the team's first lane then finds the
/// result at kiln_partials[t]. Every work-item of the group reaches every barrier.
void emit_team_fold(source_builder& b, const segmented_input& input, const std::string& lanes);

/// Lines that set `result` (declared) to the first segment from `lo` below `hi` whose end is past
/// `idx`, else `hi`: the segment holding element idx, past the empty ones ending there (where
/// segments <= hi, the segments' count where idx is past the last offset). Kernel expressions.
void emit_segment_search(source_builder& b, const std::string& result, const std::string& lo,
                         const std::string& hi, const std::string& idx);

/// Lines that declare `acc` as the fold, by the input's operation from the identity, of the
/// elements first, first + step, ... below end (kernel expressions): shape.unroll accumulators,
/// whose loads are all issued before any is combined, then combined into one.
void emit_fold(source_builder& b, const segmented_shape& shape, const segmented_input& input,
               const std::string& first, const std::string& step);
/// Combines accumulators acc0 .. acc<accumulators - 1> pairwise into `const value_type acc`.
void emit_accumulator_tree(source_builder& b, const segmented_input& input,
                           const std::string& value_type, std::size_t accumulators);

/// Lines that write segment `s` (begin .. end - 1) serially, as shape's algorithm says: its
/// fold (emit_fold) to out[s], or its inclusive scan to out, in blocks of shape.scan_block
/// elements (then one by one), each block read before its results are written, so that out
/// may be x.
void emit_serial_segment(source_builder& b, const segmented_shape& shape,
                         const segmented_input& input, const std::string& s);

/// The program of `kernels`, written by `write` on a miss, under shape.key().
const algorithm_program& segmented_program(
    const device& dev, const segmented_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write);
/// Binds segment_slots; `status` is a uint the caller set to UINT_MAX.
void bind_segment_slots(kernel_binding& args, const segmented_input& input,
                        const buffer<std::byte>& status);
/// A segmented_kernel's binding: n and segment_slots.
kernel_binding bind_segments(const algorithm_program& program, const std::string& kernel,
                             const segmented_input& input, const buffer<std::byte>& status);

/// What every strategy runs from: on `q` after `after`, `algorithm` over every segment of
/// `input` as `plan` says, bad offsets reported in `status`.
struct segmented_run {
    const queue& q;
    segmented_algorithm algorithm;
    const segmented_input& input;
    const segmented_plan& plan;
    const buffer<std::byte>& status;
    const event& after;
};

/// Launches one segmented_kernel, named for `strategy`, in the plan's groups (the GPU
/// per-segment strategies); `write(shape, name)` writes its program on a miss.
event run_in_groups(
    const segmented_run& run, const std::string& strategy,
    const std::function<std::string(const segmented_shape& shape, const std::string& name)>& write);

/// Runs the strategy run.plan chooses; returns its last event.
event run_segmented_strategy(const segmented_run& run);
/// Each strategy, a file each, for both algorithms.
event run_thread_per_segment(const segmented_run& run);
event run_team_per_segment(const segmented_run& run);
event run_cpu_chunks(const segmented_run& run);
event run_flat_tiles(const segmented_run& run);
event run_tile_reductions(const segmented_run& run);
event run_reproducible_segments(const segmented_run& run);

}  // namespace kiln::detail
