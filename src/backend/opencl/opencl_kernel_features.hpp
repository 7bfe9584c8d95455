// Sub-group and work-group collective calls in OpenCL sources, checked against the device
// before the driver compiles them.
#pragma once

#include <cstddef>
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

/// Throws build_error (code name KILN_KERNEL_FEATURE_UNSUPPORTED) naming the device, the missing
/// extension and the first call needing it when the sources call sub-group functions the device
/// lacks. Work-group collectives the device lacks come from kiln's local-memory helper
/// (work_group_collectives.cl), with a scratch array declared at the top of every kernel.
kernel_feature_setup prepare_kernel_features(const device_properties& props,
                                             std::span<const std::string> sources,
                                             const std::string& options);

/// The largest work-group that a kernel of `sources` requires (the product of the numbers of a
/// `reqd_work_group_size(x, y, z)` attribute), or 0 where none does. Sizes spelled as macros
/// are not seen.
std::size_t largest_required_work_group(std::span<const std::string> sources);

/// ` -cl-nv-maxrregcount=N` where the device takes NVIDIA's compiler options
/// (cl_nv_compiler_options) and a kernel of `sources` requires a work-group whose work-items
/// could otherwise take more registers than `registers_per_group`
/// (CL_DEVICE_REGISTERS_PER_BLOCK_NV; 0: unknown, 65536) leaves each; else empty. Under CUDA,
/// __launch_bounds__ does the same.
std::string register_cap_option(const device_properties& props, std::uint64_t registers_per_group,
                                std::span<const std::string> sources);

}  // namespace kiln::detail::opencl
