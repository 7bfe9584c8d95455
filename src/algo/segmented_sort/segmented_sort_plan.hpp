// SPDX-License-Identifier: Apache-2.0
// The segmented sort module's plan: from a device's properties and what the offsets check found
// on the device (the segments, the sorted elements, the longest segment), the whole strategy and
// its launch. Pure: it reads nothing but its arguments, so a test writes the properties by hand.
#pragma once

#include <cstddef>
#include <kiln/runtime/device.hpp>
#include <optional>

#include "segmented_sort_tuning.hpp"

namespace kiln::detail {

struct segmented_sort_plan {
    segmented_sort_strategy strategy = segmented_sort_strategy::radix_twice;
    /// The elements up to the last offset: those sorted.
    std::size_t elements = 0;
    /// group_tile: the tile (a power of 2 at least the longest segment), the group and the
    /// tiles it sorts at once (as many as its work-items' items fill, within the largest tile);
    /// lane_tile: the tile, and a segment per work-item of the group.
    std::size_t tile = 0, work_group_size = 1, segments_per_group = 1;
    /// cpu_chunks: the chunks and the elements each covers (by where segments begin).
    std::size_t chunks = 1, chunk_elements = 0;
    /// What the plan was made from: the device's row, or a test's (scoped_algorithm_policy).
    segmented_sort_tuning tuning;
};

struct segmented_sort_plan_input {
    /// The elements up to the last offset, and the longest segment's length.
    std::size_t elements = 0, longest = 0;
    std::size_t key_bytes = 4, value_bytes = 0;
    /// A test's or KILN_SEGMENTED_SORT_STRATEGY's choice (automatic: none). group_tile where the
    /// longest segment passes the tile runs radix_twice, and lane_tile where the keys or the
    /// longest segment pass what it holds runs group_tile's choice, so that forcing it is always
    /// valid.
    segmented_sort_strategy forced = segmented_sort_strategy::automatic;
    /// A test's or benchmark's tuning (scoped_algorithm_policy), in place of the device's row.
    std::optional<segmented_sort_tuning> tuning{};
};

/// The longest segment lane_tile sorts: its network holds a segment's keys in registers.
inline constexpr std::size_t largest_lane_tile = 32;

segmented_sort_plan plan_segmented_sort(const device_properties& props,
                                        const segmented_sort_plan_input& input);

/// Test and benchmark only: while alive, segmented sorts on every device take `strategy`
/// (automatic: the plan's choice). KILN_SEGMENTED_SORT_STRATEGY (group_tile, lane_tile,
/// radix_twice or cpu_chunks) does the same for a process.
class scoped_segmented_sort_strategy {
  public:
    explicit scoped_segmented_sort_strategy(segmented_sort_strategy strategy);
    ~scoped_segmented_sort_strategy();
    scoped_segmented_sort_strategy(const scoped_segmented_sort_strategy&) = delete;
    scoped_segmented_sort_strategy& operator=(const scoped_segmented_sort_strategy&) = delete;

  private:
    segmented_sort_strategy previous_;
};
/// scoped_segmented_sort_strategy's, else KILN_SEGMENTED_SORT_STRATEGY's, else automatic.
segmented_sort_strategy segmented_sort_strategy_in_force();
/// A test's or benchmark's tuning: scoped_algorithm_policy's, else KILN_SEGMENTED_SORT_TUNING's
/// (a segmented_sort_tuning::key(), which segmented_sort_bench sets to compare tunings), else
/// none.
std::optional<segmented_sort_tuning> segmented_sort_tuning_in_force();

}  // namespace kiln::detail
