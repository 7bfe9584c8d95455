// SPDX-License-Identifier: Apache-2.0
// The segmented module's tuning: its strategies, its type and its rows (segmented_tuning.cpp).
// A row's numbers are compile-time constants of the kernels or the launch's shape, so the ones
// the kernels read are part of every segmented program's key.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// How a segmented reduction runs; the plan chooses (segmented_plan.hpp).
enum class segmented_strategy {
    automatic,
    /// A work-item per segment, reading it alone (segmented_thread_per_segment.cpp): GPUs where
    /// segments are a few elements long, as CUB's small-segment policy.
    thread_per_segment,
    /// A team of lanes per segment (a power of two up to the whole group), the lanes reading
    /// the segment by their stride and folding their results in local memory
    /// (segmented_team_per_segment.cpp): GPUs, teams as long as the segments (CUB's
    /// warp-per-segment for medium segments, block-per-segment for long ones).
    team_per_segment,
    /// One work-item per chunk of consecutive segments, each folded in a plain loop
    /// (segmented_cpu_chunks.cpp): CPU devices.
    cpu_chunks,
    /// One flat scan of every element in tiles of a group each, of (head, value) pairs that
    /// restart at each segment's head, the tiles chained by the scan family's look-back
    /// (segmented_flat_tiles.cpp): GPUs, the scan's segments long or of uneven lengths, which it
    /// spreads over every group whatever their lengths (the reduction's only where forced).
    flat_tiles,
    /// The reduction's strategy for long segments: independent tiles of a group each, every
    /// segment piece of a tile folded by the group, with no chain between tiles; a piece of a
    /// segment that crosses the tile's edge goes to a scratch slot, and a fix pass folds those
    /// slots per segment (segmented_tile_reductions.cpp): GPUs, segments long. It reads x once,
    /// as a plain reduction does. A scan forced to it takes flat_tiles, its counterpart.
    tile_reductions,
    /// Reproducible mode's floating-point sums: a team of lanes per segment, each lane's
    /// elements summed exactly, the team's states combined exactly and each result rounded once
    /// (segmented_reproducible.cpp): every device, only in that mode, which it follows whatever
    /// strategy is forced.
    reproducible,
};
std::string_view to_string(segmented_strategy s) noexcept;

struct segmented_tuning {
    /// What the device's row prefers. On GPUs the plan refines it from the segments' mean
    /// length: teams of one lane run thread_per_segment.
    segmented_strategy strategy = segmented_strategy::team_per_segment;
    /// The GPU strategies: work-items per group.
    std::size_t work_group_size = 256;
    /// team_per_segment: lanes per team are the power of two that gives each lane about this
    /// many elements of a segment of the mean length, at most the group.
    std::size_t elements_per_lane = 8;
    /// The GPU strategies: independent accumulators per work-item, each loading before any is
    /// combined, so that a lane keeps that many loads in flight on long segments.
    std::size_t unroll = 4;
    /// team_per_segment's reduction: the lanes read each segment's whole 16-byte loads (four
    /// floats, two doubles) by their stride, and the elements before the first and past the
    /// last (fewer than a load's each) one by one, so that a lane has unroll x 16 bytes in
    /// flight; false, or values of other sizes: element by element.
    bool wide_loads = false;
    /// team_per_segment's reduction: a team folds its lanes' results by sub-group shuffles,
    /// then across its sub-groups through local memory behind one barrier (CUB's warp reduce,
    /// then its block reduce's), rather than as a tree in local memory (a barrier a level).
    /// Devices without sub-groups of a size fixed when the kernel is written shuffle through
    /// local memory (sub-groups of 32), so that a tuning sums in one order on every device.
    bool shuffle_fold = false;
    /// cpu_chunks: elements and segments per chunk at least, and chunks per compute unit at
    /// most.
    std::size_t chunk_elements = 16 * 1024, chunks_per_compute_unit = 4;
    /// cpu_chunks' scan: elements a block, whose prefix is taken apart from the segment's
    /// running total, so that the total waits on one combination a block rather than one an
    /// element; segments shorter than it on average are scanned by one loop across the
    /// chunk's elements instead.
    std::size_t scan_block = 8;
    /// tile_reductions: items per work-item, the tile being the group's (fewer where the tile
    /// and the group's partials would not fit the device's local memory).
    std::size_t tile_items = 16;
    /// GPUs: the segments' mean length from which the reduction takes tile_reductions, and the
    /// scan flat_tiles, rather than a thread or a team per segment.
    std::size_t tile_reduce_from = 65536, flat_scan_from = 256;
    /// The reproducible strategy: lanes per team are the power of two that gives each lane about
    /// this many elements of a segment of the mean length, at most the group (GPUs; CPUs take
    /// one lane unless a tuning is forced), for the reduction and for the scan. Exact states
    /// cost more to combine than sums, so a reduction's teams are thinner than
    /// team_per_segment's; a scan's lanes walk their elements one after another, rounding each
    /// prefix, so its teams are wider (H200, segments of 0-1999, x 16 to 128: the reduction
    /// 0.21x to 0.52x the default under CUDA, the scan 0.26x to 0.18x).
    std::size_t exact_elements_per_lane = 128, exact_scan_elements_per_lane = 16;

    /// Every field, as KILN_SEGMENTED_TUNING takes them (parse_segmented_tuning):
    /// "team_per_segment g256 e8 u4 b16384 k4 c8 i16 r65536 s256 x128 y16", " wide" added where
    /// wide_loads, " shuffle" where shuffle_fold.
    std::string key() const;
};
/// The tuning `key` gives in key()'s form, its strategy first and then any fields in any order,
/// those left out keeping segmented_tuning's defaults; nothing where `key` is not of that form
/// or a number is 0.
std::optional<segmented_tuning> parse_segmented_tuning(std::string_view key);

namespace algorithm {

/// The segmented module's key in the generic tuning table (tuning_table<segmented_reduce_rows>),
/// under which scoped_algorithm_policy(algorithm::segmented_reduce, tuning) forces a tuning.
struct segmented_reduce_rows {
    using tuning = segmented_tuning;
    static constexpr std::string_view name = "segmented_reduce";
    /// Searched from the top; the last matches every device.
    static std::span<const tuning_row<segmented_tuning>> rows();
};
inline constexpr segmented_reduce_rows segmented_reduce{};

}  // namespace algorithm

}  // namespace kiln::detail
