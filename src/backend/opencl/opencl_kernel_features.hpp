// SPDX-License-Identifier: Apache-2.0
// Sub-group and work-group collective calls in OpenCL sources, checked against the device
// before the driver compiles them.
#pragma once

#include <cstdint>
#include <kiln/runtime/device.hpp>
#include <span>
#include <string>
#include <vector>

namespace kiln::detail::opencl {

/// What a build needs for the sub-group and collective functions its sources call.
struct kernel_feature_setup {
    std::string prologue;              ///< extension pragmas, kiln's collectives: a first source
    std::vector<std::string> sources;  ///< the sources, with kernel scratch arrays where needed
    std::string extra_options;         ///< -cl-std when the native functions need OpenCL C 2.0+
};

/// A hash of every helper text prepare_kernel_features may put in a prologue: part of the
/// compiler identity that keys cached binaries, so that a library whose helpers changed does not
/// load the binaries built with the old ones.
std::uint64_t prologue_helpers_hash();

/// Throws build_error (code name KILN_KERNEL_FEATURE_UNSUPPORTED) naming the device, the missing
/// extension and the first call needing it when the sources call sub-group functions the device
/// lacks. Work-group collectives the device lacks come from kiln's local-memory helper
/// (work_group_collectives.cl), with a scratch array declared at the top of every kernel.
kernel_feature_setup prepare_kernel_features(const device_properties& props,
                                             std::span<const std::string> sources,
                                             const std::string& options);

}  // namespace kiln::detail::opencl
