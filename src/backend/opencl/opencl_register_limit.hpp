// SPDX-License-Identifier: Apache-2.0
// A register limit for every kernel of an NVIDIA OpenCL program, through its PTX.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::detail::opencl {

/// N of "-cl-nv-maxrregcount=N" in `options`, or none. NVIDIA's OpenCL compiler takes the
/// option (cl_nv_compiler_options) but holds only kernels without reqd_work_group_size to it:
/// on an H100 (driver 580.159, 2026-11-27) a kernel of 60 registers with the attribute kept 60
/// under "=32", the same kernel without it took 32. The option's other spelling, "-cl-nv-
/// maxrregcount N", does not build there.
std::optional<unsigned> register_limit_in(std::string_view options);

/// `ptx` with a `.maxnreg limit` directive on every `.entry`, which ptxas honours beside
/// `.reqntid` (the same card: both kernels took the limit, loaded as a binary). Throws
/// kiln::error when the text has no entry, or one whose body does not follow its parameters.
std::string with_register_limit(std::string_view ptx, unsigned limit);

}  // namespace kiln::detail::opencl
