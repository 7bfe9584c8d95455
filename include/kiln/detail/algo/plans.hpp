// The plans: one pure function per algorithm from a device's properties (and the element types)
// to the shape its kernels take, in src/algo/plans.cpp beside the tables that are not rows of
// tuning.hpp's table.
//
// A plan reads nothing but its arguments: no device object, no queue, no global state. The test
// overrides reach it as a tuning_overrides argument, which the device-taking overloads fill with
// the overrides in force; a test of a plan writes a device's properties by hand (tests/algo/
// plan_test.cpp). Vendor facts come from the properties too (device_quirks_for).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/detail/algo/sparse_format.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/runtime/device.hpp>
#include <string>

namespace kiln::detail {

/// Scan family (scan; reduce_by_key below): the row's policy, items per work-item halved for
/// 8-byte values so that a tile takes the same local memory. reduce_by_key's runs in registers
/// write directly where the device's local memory cannot stage them (staged_writes cleared).
scan_policy plan_scan(const device_properties& props, std::size_t value_bytes,
                      const tuning_overrides& overrides = {});
scan_policy plan_reduce_by_key(const device_properties& props, std::size_t value_bytes,
                               const tuning_overrides& overrides = {});

/// How one part of a stream compaction (copy_if, unique) is done: the tuning, the count's width
/// and the count it starts from.
struct compaction_plan {
    scan_policy policy;
    /// 32-bit counts (uint, one-word look-back states with the flag in the high half) where the
    /// part's counts stay below 2^31 and the tiles stage their writes or chunks are used; else
    /// 64-bit counts (62 bits beside the flag).
    bool narrow = false;
    /// The count before the part's first element (0 but under scoped_compaction_count_base).
    std::uint64_t base = 0;
    std::string count_type() const { return narrow ? "uint" : "ulong"; }
    /// The program cache's key: the fields the kernels are written from (base travels as the
    /// scan's carry argument).
    std::string key() const { return policy.key() + (narrow ? " u32" : " u64"); }
};
/// Tiles hold a count and (staged) a value per element, so 8-byte counts or values halve the
/// items per work-item, as plan_scan does.
compaction_plan plan_compaction(const device_properties& props, std::size_t value_bytes,
                                std::size_t n, std::uint64_t count_base,
                                const tuning_overrides& overrides = {});

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
    /// Groups of the single pass's histogram kernel per compute unit.
    std::size_t histogram_groups_per_compute_unit = 8;
    /// Floating-point keys go to the host sort instead (the device's float radix sort is not
    /// trusted); independent of the values and n.
    bool floats_sorted_on_host = false;
};
radix_sort_policy plan_radix_sort(const device_properties& props, std::size_t key_bytes,
                                  bool floating_keys, std::size_t value_bytes, std::size_t n,
                                  const tuning_overrides& overrides = {});

/// The merge sort's run length is its work-group size.
merge_sort_tuning plan_merge_sort(const device_properties& props,
                                  const tuning_overrides& overrides = {});

/// Stencils of 1 or 2 dimensions; work_group_size 0 for 1-D: the per-element kernel. 2-D groups
/// are whole rows of stencil_2d_tile_columns work-items.
stencil_tuning plan_stencil(const device_properties& props, unsigned dimensions,
                            const tuning_overrides& overrides = {});

/// How FFT passes fit a device: local memory per group (bytes, and complex elements of the
/// plan's precision), the elements a group takes when its lines are short, work-items per group
/// (the policy's, and the device's most), and how many lines a group must take so that its loads
/// across lines fill whole memory transactions.
struct fft_pass_limits {
    std::size_t local_bytes = 0, local_elements = 0, group_elements = 0, work_group_size = 0,
                max_work_group_size = 0, coalesced_lines = 0;
    bool double_precision = false;
    bool radix_per_pass = false;  ///< one stage per pass, from one shared program
    bool register_passes = true;  ///< lines may take fft_register_pass
};
struct fft_policy {
    fft_pass_limits passes;
    fft_pipeline_policy pipeline;
    /// Work-items per group of the steps that are not passes (halves, chirps, copies).
    std::size_t step_work_group_size = 64;
};
fft_policy plan_fft(const device_properties& props, bool double_precision,
                    const tuning_overrides& overrides = {});

/// The sparse format rule's numbers for a device (choose_sparse_layout applies them per matrix).
const sparse_rule& plan_spmv(const device_properties& props);

/// How element-wise (generated expression) kernels are launched.
launch_policy plan_elementwise_launch(const device_properties& props);

// The plans under the overrides in force, for the callers that hold a device.
inline scan_policy plan_scan(const device& dev, std::size_t value_bytes) {
    return plan_scan(dev.properties(), value_bytes, overrides_in_force(algorithm::scan));
}
inline scan_policy plan_reduce_by_key(const device& dev, std::size_t value_bytes) {
    return plan_reduce_by_key(dev.properties(), value_bytes,
                              overrides_in_force(algorithm::reduce_by_key));
}
inline radix_sort_policy plan_radix_sort(const device& dev, std::size_t key_bytes,
                                         bool floating_keys, std::size_t value_bytes,
                                         std::size_t n) {
    return plan_radix_sort(dev.properties(), key_bytes, floating_keys, value_bytes, n,
                           overrides_in_force(algorithm::radix_sort));
}
inline merge_sort_tuning plan_merge_sort(const device& dev) {
    return plan_merge_sort(dev.properties(), overrides_in_force(algorithm::merge_sort));
}
inline stencil_tuning plan_stencil(const device& dev, unsigned dimensions) {
    return plan_stencil(
        dev.properties(), dimensions,
        overrides_in_force(dimensions == 1 ? algorithm::stencil_1d : algorithm::stencil_2d));
}
inline fft_policy plan_fft(const device& dev, bool double_precision) {
    return plan_fft(dev.properties(), double_precision, overrides_in_force(algorithm::fft));
}

}  // namespace kiln::detail
#pragma GCC visibility pop
