// SPDX-License-Identifier: Apache-2.0
// The sort family's tuning (the radix sort and the merge sort of comparator sorts): its numbers'
// types, its keys in the tuning table (rows in src/algo/sort/sort_tuning.cpp) and its plans.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/device.hpp>
#include <span>
#include <string_view>

namespace kiln::detail {

/// How the single pass's histogram kernel spreads its local counters over copies of every
/// pass's digit counts. Float keys' digits crowd into few values, and work-items that count one
/// digit into one counter wait on each other (issue 44: 656 us against uint32 keys' 536 for 2^28
/// keys on an H100). The defaults are what the rows were measured with.
struct radix_histogram_tuning {
    /// Copies of the counters (0: one per 32 work-items, as far as 32 KB of them allow);
    /// plan_radix_sort keeps them within 32 KB.
    unsigned copies = 0;
    /// Work-item t counts into copy (t / 32) % copies, a sub-histogram per sub-group; false:
    /// copy t % copies, a sub-group's lanes spread over the copies.
    bool per_sub_group = false;
    /// A digit's copies side by side (CUB's bins[pass][digit][part]), each in a bank of its
    /// own; false: one copy after another, a digit's copies in one bank.
    bool digit_major = false;
    /// The lanes of a sub-group that hold one digit add their count once, through the lowest
    /// of them: peers found by match.any on NVIDIA GPUs, through local memory elsewhere.
    bool aggregated = false;
    bool operator==(const radix_histogram_tuning&) const = default;
};

/// Radix sort rows; plan_radix_sort turns one into the sort's shape (radix_sort_policy).
struct radix_sort_tuning {
    std::size_t work_group_size = 256;
    /// For 4-byte keys alone; plan_radix_sort scales them down for wider elements (and keeps
    /// them for 16-bit keys).
    std::size_t items_per_work_item = 8;
    unsigned radix_bits = 8;
    /// Rank each tile by a sub-group multi-split (every sub-group of 32 work-items counts its
    /// keys per digit, peers found by ballots, or through local memory where the device has no
    /// sub-groups) instead of counting rounds of 4 bits per work-item.
    bool multi_split = false;
    /// Sorts by key with the multi-split: each tile's values are loaded as its keys take their
    /// places and ranked into a local array of their own, then leave with their keys. false:
    /// they follow in a second round through the keys' array once the keys have left (as
    /// Onesweep does; half the local memory). Either way a tile of pairs holds as many items as
    /// a tile of keys; plan_radix_sort keeps to the second round where both arrays would pass
    /// CUDA's 48 KB.
    bool values_beside_keys = false;
    /// 0 for the tile kernels (the GPU shape); else the chunk kernels (the CPU shape,
    /// radix_chunks.cpp): one work-item per chunk of at least this many bytes of keys, at most
    /// 4 chunks per compute unit.
    std::size_t chunk_bytes = 0;
    /// The single pass's histogram kernel.
    radix_histogram_tuning histogram{};
    /// The multi-split finds a key's peers with one match.any (NVIDIA GPUs, compute capability
    /// 7.0 on) instead of a ballot per digit bit; plan_radix_sort keeps it where the kernels
    /// reach warps through PTX or the CUDA prelude.
    bool match_any = false;
    /// The registers a work-item of the tile kernels may hold, 0 for the compiler's choice: on
    /// NVIDIA GPUs (CUDA and NVIDIA's OpenCL, -cl-nv-maxrregcount), so that more groups share a
    /// multiprocessor. plan_radix_sort keeps it for keys alone, and ignores it elsewhere.
    unsigned register_limit = 0;
    /// The same for sorts by key, whose tiles hold their values' registers too (0: the
    /// compiler's choice).
    unsigned register_limit_with_values = 0;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
};

/// Merge sort (comparator sorts) rows: the work-group size is the first run length, each run
/// sorted in local memory at G^2 comparisons.
struct merge_sort_tuning {
    std::size_t work_group_size = 256;
};

namespace algorithm {

struct radix_sort_rows {
    using tuning = radix_sort_tuning;
    static constexpr std::string_view name = "radix_sort";
    static std::span<const tuning_row<radix_sort_tuning>> rows();
};
struct merge_sort_rows {
    using tuning = merge_sort_tuning;
    static constexpr std::string_view name = "merge_sort";
    static std::span<const tuning_row<merge_sort_tuning>> rows();
};
inline constexpr radix_sort_rows radix_sort{};
inline constexpr merge_sort_rows merge_sort{};

}  // namespace algorithm

scoped_algorithm_policy(radix_sort_tuning)->scoped_algorithm_policy<algorithm::radix_sort_rows>;
scoped_algorithm_policy(merge_sort_tuning)->scoped_algorithm_policy<algorithm::merge_sort_rows>;

/// The radix sort's shape on a device, for keys of `key_bytes` and values of `value_bytes` (0:
/// keys alone).
struct radix_sort_policy {
    unsigned work_group_size = 256;
    /// Scaled from the row's (given for 4-byte keys) to the tile's widest element.
    unsigned items_per_work_item = 16;
    unsigned radix_bits = 8;
    std::size_t sub_group_size = 0;
    bool multi_split = false;
    /// What the device vocabulary offers the kernels (ballots and shuffles, radix_sort_shape).
    target_features target;
    /// The multi-split ranks through kiln_ballot (sub-groups of 32 with ballots).
    bool ballots = false;
    bool values_beside_keys = false;
    /// One pass per digit with decoupled look-back (the status words hold 30-bit counts).
    bool single_pass = false;
    /// The chunk strategy, each chunk at least chunk_bytes of keys.
    bool chunks = false;
    std::size_t chunk_bytes = 0;
    /// Chunks per compute unit: tiles' work-groups each walk a chunk of tiles, or the chunk
    /// strategy's work-items a chunk of keys.
    std::size_t chunks_per_compute_unit = 4;
    /// The single pass's histogram kernel: its copies resolved (never 0).
    radix_histogram_tuning histogram{};
    /// The multi-split's peers by kiln_match_any (radix_sort_tuning::match_any).
    bool match_any = false;
    /// radix_sort_tuning::register_limit for keys alone, register_limit_with_values with values,
    /// where the device's compiler takes it; else 0.
    unsigned register_limit = 0;
    /// Groups of the single pass's histogram kernel per compute unit.
    std::size_t histogram_groups_per_compute_unit = 8;
    /// Floating-point keys go to the host sort instead (the device's float radix sort is not
    /// trusted); independent of the values and n.
    bool floats_sorted_on_host = false;
};
radix_sort_policy plan_radix_sort(
    const device_properties& props, std::size_t key_bytes, bool floating_keys,
    std::size_t value_bytes, std::size_t n,
    const tuning_overrides<algorithm::radix_sort_rows>& overrides = {});

/// The merge sort's run length is its work-group size.
merge_sort_tuning plan_merge_sort(
    const device_properties& props,
    const tuning_overrides<algorithm::merge_sort_rows>& overrides = {});

/// The radix sort's row on `dev` (or the override in force), before plan_radix_sort scales it.
inline radix_sort_tuning radix_sort_tuning_for(const device& dev) {
    using table = tuning_table<algorithm::radix_sort_rows>;
    return table::tuning_for(dev.properties(), table::forced());
}

// The plans under the overrides in force, for the callers that hold a device.
inline radix_sort_policy plan_radix_sort(const device& dev, std::size_t key_bytes,
                                         bool floating_keys, std::size_t value_bytes,
                                         std::size_t n) {
    return plan_radix_sort(dev.properties(), key_bytes, floating_keys, value_bytes, n,
                           overrides_in_force<algorithm::radix_sort_rows>());
}
inline merge_sort_tuning plan_merge_sort(const device& dev) {
    return plan_merge_sort(dev.properties(), overrides_in_force<algorithm::merge_sort_rows>());
}

}  // namespace kiln::detail
#pragma GCC visibility pop
