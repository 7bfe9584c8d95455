// SPDX-License-Identifier: Apache-2.0
// The segmented sort module's tuning: its strategies, its numbers and its key in the generic
// tuning table (rows in segmented_sort_tuning.cpp).
#pragma once

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// How a segmented sort runs; the plan chooses (segmented_sort_plan.hpp).
enum class segmented_sort_strategy {
    automatic,
    /// One work-group per segment sorts it in local memory by a bitonic network over (key,
    /// position) pairs (segmented_sort_group.cpp), as CUB's DeviceSegmentedSort sorts small and
    /// medium segments in a warp or a block: GPUs, where the longest segment fits a tile.
    group_tile,
    /// One work-item per segment sorts it in registers by a merging network, the group's keys
    /// staged through local memory (segmented_sort_lane.cpp), as CUB sorts small segments in
    /// registers: GPUs, keys of at most 4 bytes in segments of at most 32.
    lane_tile,
    /// Two stable radix sorts of the whole data, by key and then by segment id, with kiln::sort's
    /// passes (segmented_sort_radix.cpp): any segment lengths, at the cost of sorting everything
    /// twice.
    radix_twice,
    /// One work-item per chunk of segments sorts each by insertion runs and merges in global
    /// memory, or long ones by digits (segmented_sort_cpu.cpp): CPU devices.
    cpu_chunks,
};
std::string_view to_string(segmented_sort_strategy s) noexcept;

struct segmented_sort_tuning {
    /// What the device's row prefers; the plan falls back where it cannot run (group_tile where
    /// the longest segment passes max_tile: radix_twice).
    segmented_sort_strategy strategy = segmented_sort_strategy::group_tile;
    /// group_tile: work-items per group at most and at least, keys per work-item, and the
    /// longest segment a tile holds (a power of 2; its keys and positions in local memory).
    std::size_t max_work_group_size = 256, min_work_group_size = 32, items_per_work_item = 8;
    std::size_t max_tile = 2048;
    /// group_tile: tiles of at most this many keys (a power of 2, at most 32) are sorted by
    /// lane_tile instead, where the keys take 4 bytes or fewer; 0: none.
    std::size_t lane_tile_up_to = 0;
    /// cpu_chunks: bytes of keys per chunk at least, and chunks per compute unit at most.
    std::size_t chunk_bytes = 64 * 1024, chunks_per_compute_unit = 4;
    /// cpu_chunks: segments of at least this many keys are sorted by 8-bit digits (one pass
    /// counting every digit, then one moving the keys per digit) instead of by merges; 0: none.
    std::size_t digits_from = 0;

    /// Every field, as KILN_SEGMENTED_SORT_TUNING takes them (parse_segmented_sort_tuning):
    /// "group_tile g256 w32 i8 t2048 l16 b65536 k4 d0".
    std::string key() const;
};

/// The tuning `key` writes (segmented_sort_tuning::key(); fields left out keep their defaults),
/// or none where it is not one.
std::optional<segmented_sort_tuning> parse_segmented_sort_tuning(std::string_view key);

namespace algorithm {
/// Segmented sort rows; plan_segmented_sort turns one into the sort's plan.
struct segmented_sort_rows {
    using tuning = segmented_sort_tuning;
    static constexpr std::string_view name = "segmented_sort";
    static std::span<const tuning_row<segmented_sort_tuning>> rows();
};
inline constexpr segmented_sort_rows segmented_sort{};
}  // namespace algorithm

scoped_algorithm_policy(segmented_sort_tuning)
    ->scoped_algorithm_policy<algorithm::segmented_sort_rows>;

}  // namespace kiln::detail
