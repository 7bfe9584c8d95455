// SPDX-License-Identifier: Apache-2.0
// The prelude's texts, from the .cuh files that CMake embeds (see opencl_c_prelude.hpp).
#include "backend/cuda/opencl_c_prelude.hpp"

#include <array>

#include "cuda_prelude.hpp"

namespace kiln::detail::cuda {

std::span<const prelude_header> opencl_c_prelude() noexcept {
    static constexpr std::array headers{
        prelude_header{opencl_c_prelude_name, embedded::opencl_c_prelude_cuh},
        prelude_header{"kiln_opencl_vectors.h", embedded::opencl_c_vectors_cuh},
        prelude_header{"kiln_opencl_work_items.h", embedded::opencl_c_work_items_cuh},
        prelude_header{"kiln_opencl_math.h", embedded::opencl_c_math_cuh},
        prelude_header{"kiln_opencl_geometric_relational.h",
                       embedded::opencl_c_geometric_relational_cuh},
        prelude_header{"kiln_opencl_subgroups.h", embedded::opencl_c_subgroups_cuh},
        prelude_header{"kiln_vocabulary.h", embedded::kiln_vocabulary_cuh},
        prelude_header{"kiln_opencl_images.h", embedded::opencl_c_images_cuh},
        prelude_header{"kiln_opencl_binary16.h", embedded::opencl_c_binary16_cuh},
    };
    return headers;
}

}  // namespace kiln::detail::cuda
