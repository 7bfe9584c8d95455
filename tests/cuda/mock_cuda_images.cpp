// SPDX-License-Identifier: Apache-2.0
// The mock libcuda.so.1's images (part of mock_cuda_driver.cpp's library): CUDA arrays are host
// memory, copies between them and the host run at once, and texture and surface objects are
// counted and named after their array, so a launch's image parameter can be traced to it.
#include <cuda.h>

#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

#include "mock_cuda_driver.hpp"

namespace {

std::mutex mutex;
kiln_mock::state& mock() {
    return *kiln_mock_state();
}

/// A CUDA array: its descriptor, then its rows, packed.
struct array_object {
    CUDA_ARRAY3D_DESCRIPTOR descriptor;
    std::vector<std::byte> pixels;
    std::size_t row_bytes() const {
        const std::size_t element = descriptor.Format == CU_AD_FORMAT_FLOAT ? 4 : 1;
        return descriptor.Width * descriptor.NumChannels * element;
    }
};

}  // namespace

extern "C" {

CUresult CUDAAPI cuArray3DCreate(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* descriptor) {
    CUcontext current = nullptr;
    if (cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (descriptor->Depth != 0 || (descriptor->Flags & CUDA_ARRAY3D_SURFACE_LDST) == 0)
        return CUDA_ERROR_INVALID_VALUE;
    auto* object = new array_object{*descriptor, {}};
    object->pixels.resize(object->row_bytes() * descriptor->Height);
    std::lock_guard lock(mutex);
    ++mock().live_arrays;
    *array = reinterpret_cast<CUarray>(object);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuArrayDestroy(CUarray array) {
    delete reinterpret_cast<array_object*>(array);
    std::lock_guard lock(mutex);
    --mock().live_arrays;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream) {
    const bool upload =
        copy->srcMemoryType == CU_MEMORYTYPE_HOST && copy->dstMemoryType == CU_MEMORYTYPE_ARRAY;
    const bool download =
        copy->srcMemoryType == CU_MEMORYTYPE_ARRAY && copy->dstMemoryType == CU_MEMORYTYPE_HOST;
    if (!upload && !download) return CUDA_ERROR_INVALID_VALUE;
    auto* array = reinterpret_cast<array_object*>(upload ? copy->dstArray : copy->srcArray);
    if (copy->WidthInBytes > array->row_bytes() || copy->Height > array->descriptor.Height)
        return CUDA_ERROR_INVALID_VALUE;
    for (std::size_t row = 0; row < copy->Height; ++row) {
        std::byte* pixels = array->pixels.data() + row * array->row_bytes();
        if (upload)
            std::memcpy(pixels, static_cast<const std::byte*>(copy->srcHost) + row * copy->srcPitch,
                        copy->WidthInBytes);
        else
            std::memcpy(static_cast<std::byte*>(copy->dstHost) + row * copy->dstPitch, pixels,
                        copy->WidthInBytes);
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTexObjectCreate(CUtexObject* texture, const CUDA_RESOURCE_DESC* resource,
                                   const CUDA_TEXTURE_DESC* description,
                                   const CUDA_RESOURCE_VIEW_DESC*) {
    if (resource->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex);
    ++mock().live_textures;
    mock().texture_filters.push_back(description->filterMode);
    *texture = reinterpret_cast<CUtexObject>(resource->res.array.hArray);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTexObjectDestroy(CUtexObject) {
    std::lock_guard lock(mutex);
    --mock().live_textures;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject* surface, const CUDA_RESOURCE_DESC* resource) {
    if (resource->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex);
    ++mock().live_surfaces;
    *surface = reinterpret_cast<CUsurfObject>(resource->res.array.hArray);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject) {
    std::lock_guard lock(mutex);
    --mock().live_surfaces;
    return CUDA_SUCCESS;
}

}  // extern "C"
