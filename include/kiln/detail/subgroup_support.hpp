// What a device offers kernels of sub-group (warp) and work-group collective functions.
#pragma once

#include <kiln/runtime/device.hpp>
#include <span>
#include <string>

namespace kiln::detail {

/// Which families of OpenCL C's sub-group and work-group collective functions kernel source may
/// call on a device, so that generators choose a sub-group path or a local-memory one. Under
/// CUDA every family is there (warp intrinsics in the prelude); on OpenCL what the device
/// reports natively (docs/runtime.md has the table).
struct subgroup_features {
    /// Work-items per sub-group as the hardware runs them (warp, wavefront, SIMD width): 32
    /// under CUDA, the vendor's query on OpenCL, 0 when the device does not say. A size does not
    /// mean the functions below exist (NVIDIA's OpenCL reports 32 and has none of them).
    unsigned size = 0;
    /// cl_khr_subgroups: get_sub_group_*, sub_group_barrier, _broadcast, _reduce_*, _scan_*,
    /// _any and _all.
    bool core = false;
    bool ballot = false;            ///< cl_khr_subgroup_ballot: sub_group_ballot and friends
    bool shuffle = false;           ///< cl_khr_subgroup_shuffle: sub_group_shuffle, _shuffle_xor
    bool shuffle_relative = false;  ///< cl_khr_subgroup_shuffle_relative: _shuffle_up, _down
    /// work_group_reduce_*, work_group_scan_*, work_group_broadcast, work_group_any and _all.
    bool work_group_collectives = false;
};

subgroup_features subgroup_support(const device_properties& props);
inline subgroup_features subgroup_support(const kiln::device& dev) {
    return subgroup_support(dev.properties());
}

/// For an OpenCL build: throws build_error (code name KILN_KERNEL_FEATURE_UNSUPPORTED) naming
/// the device, the missing extension and the first call that needs it when the sources call a
/// sub-group or work-group collective function the device lacks. Otherwise returns what the
/// build needs for the functions they call: the extension pragmas to put before the sources,
/// and an -cl-std option when `options` has none and the functions need OpenCL C 2.0.
struct kernel_feature_setup {
    std::string pragmas;
    std::string extra_options;
};
kernel_feature_setup prepare_kernel_features(const device_properties& props,
                                             std::span<const std::string> sources,
                                             const std::string& options);

}  // namespace kiln::detail
