// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's program binary: the cubin (or PTX) plus what kiln parsed from the sources.
//
// Kernel parameter descriptions come from kiln's own parse of the OpenCL C signatures, which a
// cubin does not carry, so binary() stores them beside the image and load() reads them back.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "backend/cuda/opencl_c_translation.hpp"

namespace kiln::detail::cuda {

struct program_binary {
    int architecture = 0;  ///< 90 for sm_90 (cubin) or compute_90 (PTX)
    bool is_cubin = true;
    std::vector<kernel_signature> kernels;
    std::vector<std::byte> image;
};

std::vector<std::byte> pack_binary(const program_binary& binary);

/// nullopt when the bytes are not a binary of this format and version, or are truncated.
std::optional<program_binary> unpack_binary(std::span<const std::byte> bytes);

}  // namespace kiln::detail::cuda
