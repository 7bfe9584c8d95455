// SPDX-License-Identifier: Apache-2.0
// Classes of devices that tables of numbers are keyed by (the algorithms' tuning rows, the
// element-wise launches): a row applies to every device its class matches.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <string_view>

namespace kiln::detail {

/// Which devices a row applies to; unset fields match every device.
struct device_class {
    std::optional<backend_kind> backend;
    std::optional<device_type> type;
    std::string_view vendor;         ///< case-insensitive substring of the vendor or platform name
    int min_compute_capability = 0;  ///< major * 10 + minor (CUDA devices)
    std::size_t sub_group_size = 0;  ///< 0: any
};

inline constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
inline constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
inline constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};
/// Through CUDA or NVIDIA's OpenCL alike: the platform or vendor name says NVIDIA.
inline constexpr device_class nvidia_gpus{std::nullopt, device_type::gpu, "nvidia", 0, 0};
inline constexpr device_class nvidia_cuda{backend_kind::cuda, device_type::gpu, "nvidia", 0, 0};
inline constexpr device_class nvidia_opencl{backend_kind::opencl, device_type::gpu, "nvidia", 0, 0};

bool matches(const device_class& c, const device_properties& props);
/// The sub-group (warp) size kiln assumes for a device: 32 on NVIDIA GPUs, else 0 (unknown).
std::size_t sub_group_size_of(const device_properties& props);

}  // namespace kiln::detail
#pragma GCC visibility pop
