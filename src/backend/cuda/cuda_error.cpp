// SPDX-License-Identifier: Apache-2.0
// Symbolic names for CUDA and NVRTC results, and the sticky-error distinction.
#include "backend/cuda/cuda_error.hpp"

#include "backend/backend.hpp"
#include "backend/cuda/cuda_api.hpp"

namespace kiln::detail::cuda {

bool is_sticky(CUresult result) noexcept {
    switch (result) {
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_LAUNCH_TIMEOUT:
        case CUDA_ERROR_ASSERT:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_LAUNCH_FAILED:
            return true;
        default:
            return false;
    }
}

std::string driver_error_name(CUresult result) {
    const char* name = nullptr;
    if (const auto* api = driver();
        api != nullptr && api->cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
        return name;
    return "CUDA_ERROR_" + std::to_string(static_cast<int>(result));
}

void throw_driver_error(CUresult result, const char* call, const std::string& detail,
                        std::source_location where) {
    std::string description;
    const char* text = nullptr;
    if (const auto* api = driver();
        api != nullptr && api->cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
        description = text;
    if (!detail.empty()) description = description.empty() ? detail : detail + ": " + description;
    const std::string name = driver_error_name(result);
    if (is_sticky(result)) {
        throw sticky_device_error(call, result, name,
                                  description +
                                      " (sticky error: the device's CUDA context is now unusable, "
                                      "every later call on this device fails too)",
                                  where);
    }
    throw_api_error(call, result, name.c_str(), description, where);
}

void throw_nvrtc_error(nvrtcResult result, const char* call, const std::string& detail,
                       std::source_location where) {
    const auto* api = nvrtc();
    const char* name = api != nullptr ? api->nvrtcGetErrorString(result) : "NVRTC_ERROR";
    throw_api_error(call, result, name, detail, where);
}

}  // namespace kiln::detail::cuda
