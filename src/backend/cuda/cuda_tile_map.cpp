// SPDX-License-Identifier: Apache-2.0
// Tile maps on CUDA: cuTensorMapEncodeTiled over a buffer's device memory.
#include <kiln/error.hpp>
#include <string>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {
namespace {

constexpr const char* call = "kiln tile map";

CUtensorMapDataType bits_of(std::size_t element_bytes) {
    switch (element_bytes) {
        case 1:
            return CU_TENSOR_MAP_DATA_TYPE_UINT8;
        case 2:
            return CU_TENSOR_MAP_DATA_TYPE_UINT16;
        case 4:
            return CU_TENSOR_MAP_DATA_TYPE_UINT32;
        case 8:
            return CU_TENSOR_MAP_DATA_TYPE_UINT64;
        default:
            throw invalid_argument_error(call, "elements of " + std::to_string(element_bytes) +
                                                   " bytes: tile maps take 1, 2, 4 or 8");
    }
}

CUtensorMapSwizzle swizzle_of(std::size_t bytes) {
    switch (bytes) {
        case 0:
            return CU_TENSOR_MAP_SWIZZLE_NONE;
        case 32:
            return CU_TENSOR_MAP_SWIZZLE_32B;
        case 64:
            return CU_TENSOR_MAP_SWIZZLE_64B;
        case 128:
            return CU_TENSOR_MAP_SWIZZLE_128B;
        default:
            throw invalid_argument_error(call, "a swizzle of " + std::to_string(bytes) +
                                                   " bytes: tile maps take 0, 32, 64 or 128");
    }
}

}  // namespace

tile_map cuda_memory::encode_tile_map(const tile_map_request& request) const {
    const tile_map_api* api = tile_map_driver();
    if (api == nullptr)
        throw error(call, 0, "KILN_FEATURE_UNSUPPORTED",
                    "the CUDA driver has no cuTensorMapEncodeTiled (tile maps need CUDA 12.0's "
                    "driver or later)");
    if (request.offset_bytes >= bytes_)
        throw invalid_argument_error(call, "an offset of " + std::to_string(request.offset_bytes) +
                                               " bytes in a buffer of " + std::to_string(bytes_));
    const cuuint64_t extents[3] = {request.extents[0], request.extents[1], request.extents[2]};
    const cuuint64_t strides[2] = {request.strides_bytes[0], request.strides_bytes[1]};
    const cuuint32_t box[3] = {request.box[0], request.box[1], request.box[2]};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    tile_map map;
    static_assert(sizeof(tile_map) == sizeof(CUtensorMap) && alignof(tile_map) >= 64);
    check(api->cuTensorMapEncodeTiled(
              reinterpret_cast<CUtensorMap*>(map.bits.data()), bits_of(request.element_bytes), 3,
              reinterpret_cast<void*>(address() + request.offset_bytes), extents, strides, box,
              element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_of(request.swizzle_bytes),
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled",
          "extents " + std::to_string(extents[0]) + "x" + std::to_string(extents[1]) + "x" +
              std::to_string(extents[2]) + ", box " + std::to_string(box[0]) + "x" +
              std::to_string(box[1]) + "x" + std::to_string(box[2]));
    return map;
}

}  // namespace kiln::detail::cuda
