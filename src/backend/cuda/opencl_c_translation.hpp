// SPDX-License-Identifier: Apache-2.0
// Translation of OpenCL C sources into CUDA C++ that NVRTC compiles on top of the prelude.
//
// The rewrite is lexical and keeps every source line where it was (the output says `#line 1
// "source_N"` once per source), so NVRTC's messages point at the original lines. It rewrites what
// the prelude cannot express: kernel signatures (a hidden launch-geometry parameter first, `local`
// pointer parameters turned into offsets into one dynamic shared memory block), address space
// qualifiers, vector literals `(float4)(a, b, c, d)`, swizzles `.xy` / `.s01` / `.lo`,
// convert_* / as_* / vloadN / vstoreN, C++ keywords used as names, and `#include`s (inlined,
// so they are translated too). Unsupported OpenCL C features become identifiers that NVRTC
// reports as undefined on the right line; explain_compiler_log() turns those into plain words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"

namespace kiln::detail::cuda {

/// The hidden first kernel parameter; the prelude's kiln_opencl::detail::launch_info is the same.
struct launch_info {
    std::uint64_t global_offset[3];
    std::uint64_t global_size[3];
    std::uint32_t work_dim;
    /// Nonzero when the grid covers more work-items than the range: only then must the kernel's
    /// prologue drop those past its end (the check costs memory-bound kernels measurably).
    std::uint32_t overhang;
    /// This launch's first work-group and the range's work-groups: CUDA allows at most 65535
    /// blocks in y and z, so kiln splits larger ranges into several launches.
    std::uint32_t group_offset[3];
    std::uint32_t num_groups[3];
};
static_assert(sizeof(launch_info) == 80 && alignof(launch_info) == 8);

struct kernel_signature {
    std::string name;    ///< as the OpenCL C source names it
    std::string symbol;  ///< the CUDA symbol (differs when the name is a C++ keyword)
    std::vector<parameter_info> parameters;
};

struct translation_options {
    std::vector<std::filesystem::path> include_directories;
    /// -D definitions, value "1" when none was given; they also reach NVRTC.
    std::vector<std::pair<std::string, std::string>> macros;
    /// -cl-single-precision-constant: unsuffixed floating literals become float.
    bool single_precision_constants = false;
    /// -cl-nv-maxrregcount: kernels get no launch bounds from reqd_work_group_size, since NVRTC
    /// would size their registers by the bounds and ignore --maxrregcount.
    bool register_limit = false;
};

struct translation {
    std::string source;  ///< CUDA C++; includes the prelude by opencl_c_prelude_name
    std::vector<kernel_signature> kernels;
    /// The source said `#pragma OPENCL FP_CONTRACT OFF`: NVRTC must not fuse a*b+c either.
    /// NVRTC has no per-region switch, so the whole program compiles with --fmad=false.
    bool contraction_off = false;
};

/// CUDA keeps a module's `__constant__` data in one bank of 64 KiB, read through the constant
/// cache. Each `constant` pointer parameter of a kernel gets an area of it, a `__constant__` array
/// that every launch fills from the argument buffer first (cuda_queue::launch). The areas of one
/// program share a budget evenly: 32 KiB when the program also declares program-scope `constant`
/// variables (they keep the other half), else 60 KiB (4 KiB stay for the compiler's own tables,
/// such as the math library's); each area is a multiple of 16 bytes.
inline constexpr std::size_t constant_areas_with_variables_bytes = 32 * 1024;
inline constexpr std::size_t constant_areas_alone_bytes = 60 * 1024;
std::size_t constant_area_bytes(std::size_t constant_parameters, bool program_scope_constants);
/// The area's symbol, which cuModuleGetGlobal finds: kiln_constant_<kernel symbol>_<position>.
std::string constant_area_symbol(const std::string& kernel_symbol, std::size_t position);

/// Translates sources that form one OpenCL C program, in order. Throws build_error (with a log
/// in NVRTC's format) on input it cannot translate, e.g. an #include that is not found.
translation translate_opencl_c(std::span<const std::string> sources,
                               const translation_options& options);

/// The file name a source has in compiler messages: "source_1" for the first.
std::string source_file_name(std::size_t index);

/// Rewrites NVRTC's messages about the translator's placeholders into plain words: an
/// unsupported feature, named with its line.
std::string explain_compiler_log(std::string log);

}  // namespace kiln::detail::cuda
