// SPDX-License-Identifier: Apache-2.0
// The CUDA C++ headers that give translated OpenCL C its types and builtins under NVRTC.
#pragma once

#include <span>
#include <string_view>

namespace kiln::detail::cuda {

/// One header of the prelude: the name NVRTC knows it by, and its text. The texts are the .cuh
/// files of src/backend/cuda, embedded at build time; their data() is terminated, so NVRTC can
/// take them as C strings.
struct prelude_header {
    std::string_view name;
    std::string_view text;
};

/// Name under which translated sources include the prelude (its first header).
inline constexpr std::string_view opencl_c_prelude_name = "kiln_opencl_prelude.h";

/// Every header of the prelude, the one named opencl_c_prelude_name first; it includes the others.
std::span<const prelude_header> opencl_c_prelude() noexcept;

}  // namespace kiln::detail::cuda
