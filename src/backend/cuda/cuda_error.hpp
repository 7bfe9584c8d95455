// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's one error path: every failed driver or NVRTC call goes through check().
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <source_location>
#include <string>

namespace kiln::detail::cuda {

/// Errors after which the context is unusable: every later call on the device fails too.
bool is_sticky(CUresult result) noexcept;

/// Throws kiln::sticky_device_error for sticky errors, else the error throw_api_error builds.
[[noreturn]] void throw_driver_error(CUresult result, const char* call, const std::string& detail,
                                     std::source_location where);
[[noreturn]] void throw_nvrtc_error(nvrtcResult result, const char* call, const std::string& detail,
                                    std::source_location where);

inline void check(CUresult result, const char* call, const std::string& detail = {},
                  std::source_location where = std::source_location::current()) {
    if (result != CUDA_SUCCESS) throw_driver_error(result, call, detail, where);
}

inline void check(nvrtcResult result, const char* call, const std::string& detail = {},
                  std::source_location where = std::source_location::current()) {
    if (result != NVRTC_SUCCESS) throw_nvrtc_error(result, call, detail, where);
}

/// CUDA_ERROR_... name of a driver result (the driver's own words when it is loaded).
std::string driver_error_name(CUresult result);

}  // namespace kiln::detail::cuda
