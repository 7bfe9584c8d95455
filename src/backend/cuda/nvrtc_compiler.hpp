// SPDX-License-Identifier: Apache-2.0
// OpenCL build options mapped onto NVRTC's, and compiling translated sources with NVRTC.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/opencl_c_prelude.hpp"
#include "backend/cuda/opencl_c_translation.hpp"

namespace kiln::detail::cuda {

/// What an OpenCL build-option string means for the translator and for NVRTC.
struct build_options {
    translation_options translation;
    std::vector<std::string> nvrtc_options;  ///< besides the architecture
    bool warnings_are_errors = false;        ///< -Werror, which NVRTC lacks: kiln checks the log
};

/// Accepts the common OpenCL options; throws build_error naming any other.
build_options parse_build_options(const std::string& options);

struct compiled_image {
    std::vector<std::byte> image;  ///< a cubin, or PTX text when the device is newer than NVRTC
    bool is_cubin = true;
};

/// The architecture NVRTC compiles for: the device's own (compute capability 9.0 -> 90) when
/// NVRTC knows it, else PTX for the newest one it knows, which the driver compiles on load.
/// A cubin for 9.0 is built for sm_90a, which adds Hopper's warpgroup instructions (wgmma) to
/// sm_90: a cubin runs on its own architecture only anyway.
struct target_architecture {
    int number = 0;
    bool cubin = true;
};
target_architecture choose_architecture(int compute_capability);

/// Compiles translated CUDA C++ (translation::source) on top of the prelude's headers (another
/// set only in tests); throws build_error carrying NVRTC's log (with unsupported features
/// explained), or kiln::error when NVRTC cannot be loaded.
compiled_image compile_with_nvrtc(const std::string& source, const build_options& options,
                                  target_architecture arch,
                                  std::span<const prelude_header> prelude = opencl_c_prelude());

/// "NVRTC 13.0", or a note that it is missing.
std::string nvrtc_version_string();

}  // namespace kiln::detail::cuda
