// SPDX-License-Identifier: Apache-2.0
// What a device offers kernels of sub-group (warp) and work-group collective functions.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/runtime/device.hpp>
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
    /// work_group_reduce_*, work_group_scan_*, work_group_broadcast, work_group_any and _all may
    /// be called: on every device, natively or through kiln's local-memory helper on OpenCL
    /// devices without them (then in kernel bodies only; docs/runtime.md).
    bool work_group_collectives = true;
    /// The device's own collectives (OpenCL 2.x, OpenCL 3.0 ones reporting them, and CUDA's
    /// prelude on warp intrinsics), rather than kiln's local-memory tree.
    bool native_work_group_collectives = false;
};

subgroup_features subgroup_support(const device_properties& props);
inline subgroup_features subgroup_support(const kiln::device& dev) {
    return subgroup_support(dev.properties());
}

}  // namespace kiln::detail
#pragma GCC visibility pop
