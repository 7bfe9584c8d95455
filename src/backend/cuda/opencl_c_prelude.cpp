// SPDX-License-Identifier: Apache-2.0
// The prelude's texts, from the .cuh files that CMake embeds (see opencl_c_prelude.hpp), and the
// tensor cores' wrappers from the PTX instruction table.
#include "backend/cuda/opencl_c_prelude.hpp"

#include <array>
#include <kiln/detail/ptx_instructions.hpp>
#include <string>

#include "cuda_prelude.hpp"

namespace kiln::detail::cuda {
namespace {

// Its errors name it and its own lines, as the .cuh files' do.
std::string tensor_core_header() {
    return "// The PTX instruction table's wrappers (include/kiln/detail/ptx_instructions.hpp).\n"
           "#line 3 \"kiln_tensor_cores.h\"\n" +
           ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::tensor_cores) +
           "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n" +
           ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::warpgroup) + "#endif\n";
}

}  // namespace

std::span<const prelude_header> opencl_c_prelude() noexcept {
    static const std::string tensor_cores = tensor_core_header();
    static const std::array headers{
        prelude_header{opencl_c_prelude_name, embedded::opencl_c_prelude_cuh},
        prelude_header{"kiln_opencl_vectors.h", embedded::opencl_c_vectors_cuh},
        prelude_header{"kiln_opencl_work_items.h", embedded::opencl_c_work_items_cuh},
        prelude_header{"kiln_opencl_math.h", embedded::opencl_c_math_cuh},
        prelude_header{"kiln_opencl_geometric_relational.h",
                       embedded::opencl_c_geometric_relational_cuh},
        prelude_header{"kiln_opencl_subgroups.h", embedded::opencl_c_subgroups_cuh},
        prelude_header{"kiln_vocabulary.h", embedded::kiln_vocabulary_cuh},
        prelude_header{"kiln_tensor_cores.h", tensor_cores},
        prelude_header{"kiln_opencl_images.h", embedded::opencl_c_images_cuh},
        prelude_header{"kiln_opencl_binary16.h", embedded::opencl_c_binary16_cuh},
        prelude_header{"kiln_opencl_float8.h", embedded::opencl_c_float8_cuh},
    };
    return headers;
}

}  // namespace kiln::detail::cuda
