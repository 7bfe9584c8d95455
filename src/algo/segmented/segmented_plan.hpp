// SPDX-License-Identifier: Apache-2.0
// The segmented module's plan: from a device's properties and the segments' count and mean
// length, the whole strategy and its launch. Pure: it reads nothing but its arguments, so a
// test writes the properties by hand.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>

#include "segmented_tuning.hpp"

namespace kiln::detail {

/// What a segmented program computes per segment.
enum class segmented_algorithm { reduce, inclusive_scan };

struct segmented_plan {
    segmented_strategy strategy = segmented_strategy::team_per_segment;
    /// The GPU strategies: group size, lanes per segment (thread_per_segment: 1; tile_reductions:
    /// its fix pass's), accumulators per work-item and the groups launched (tile_reductions: its
    /// tiles).
    std::size_t work_group_size = 256, team_lanes = 1, unroll = 1, groups = 1;
    /// team_per_segment's reduction: elements per load, more than 1 where the lanes read
    /// 16-byte loads (the row's wide_loads, values of 4 or 8 bytes).
    std::size_t lanes = 1;
    /// team_per_segment's reduction: the lanes of the sub-groups whose shuffles fold a team
    /// (the row's shuffle_fold, values of 4 or 8 bytes), 0 where a tree in local memory folds
    /// it; emulated where the shuffles go through local memory (the device's sub-groups have no
    /// size fixed when the kernel is written).
    std::size_t fold_sub_group = 0;
    bool emulated_shuffles = false;
    /// tile_reductions: items per work-item (a tile is work_group_size * tile_items elements),
    /// and the fix pass's groups, of work_group_size / team_lanes segments each.
    std::size_t tile_items = 0, fix_groups = 0;
    /// cpu_chunks: the chunks and the segments of each (the last may have fewer), and the
    /// scan's block (the row's scan_block where segments are that long on average; else 1,
    /// where one loop runs across the chunk's elements).
    std::size_t chunks = 1, chunk_segments = 0, scan_block = 1;
    /// flat_tiles: the scan family's tiles of (head, value) pairs, as a scan of such pairs plans
    /// them (plan_scan), in tile kernels on every device.
    scan_policy tiles{};
    /// What the plan was made from: the device's row, or a test's.
    segmented_tuning tuning;
};

struct segmented_plan_input {
    std::size_t elements = 0, segments = 1;
    /// The plan's algorithm, and its values' bytes (4 or 8).
    segmented_algorithm algorithm = segmented_algorithm::reduce;
    std::size_t value_bytes = 4;
    /// segmented_input::reproducible_sum: the reproducible strategy, whatever is forced.
    bool reproducible_sum = false;
    /// A test's or KILN_SEGMENTED_STRATEGY's choice (automatic: none). team_per_segment forced
    /// takes two lanes at least, so that forcing it always runs teams.
    segmented_strategy forced = segmented_strategy::automatic;
    /// A test's or benchmark's tuning (segmented_tuning_in_force), in place of the device's row.
    std::optional<segmented_tuning> tuning{};
    /// The shared overrides in force (scoped_forward_progress): the flat tiles' schedule.
    shared_overrides overrides{};
};

segmented_plan plan_segmented(const device_properties& props, const segmented_plan_input& input);

/// Test and benchmark only: while alive, segmented reductions on every device take `strategy`
/// (automatic: the plan's choice). KILN_SEGMENTED_STRATEGY (thread_per_segment,
/// team_per_segment, cpu_chunks, flat_tiles or tile_reductions) does the same for a process.
class scoped_segmented_strategy {
  public:
    explicit scoped_segmented_strategy(segmented_strategy strategy);
    ~scoped_segmented_strategy();
    scoped_segmented_strategy(const scoped_segmented_strategy&) = delete;
    scoped_segmented_strategy& operator=(const scoped_segmented_strategy&) = delete;

  private:
    segmented_strategy previous_;
};
/// scoped_segmented_strategy's, else KILN_SEGMENTED_STRATEGY's, else automatic.
segmented_strategy segmented_strategy_in_force();

/// Tests force a tuning with scoped_algorithm_policy(algorithm::segmented_reduce, tuning), in
/// place of the device's row (its strategy too, unless a strategy is forced), so that a CPU
/// device runs a GPU row's kernels. KILN_SEGMENTED_TUNING (a segmented_tuning::key()) does the
/// same for a process, which segmented_bench sets to compare tunings.
/// scoped_algorithm_policy's, else KILN_SEGMENTED_TUNING's, else none.
std::optional<segmented_tuning> segmented_tuning_in_force();

}  // namespace kiln::detail
