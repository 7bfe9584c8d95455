// SPDX-License-Identifier: Apache-2.0
// The mock libcuda.so.1's answers about objects a program made (part of mock_cuda_driver.cpp's
// library), which kiln/interop asks: contexts other than the primary ones, the context each
// stream and allocation belongs to, and where an allocation begins and ends.
#include <cuda.h>

#include <map>
#include <mutex>
#include <vector>

#include "mock_cuda_driver.hpp"

namespace {

std::mutex mutex;
std::map<CUdeviceptr, kiln_mock::internal::allocation> allocations;
thread_local std::vector<CUcontext> pushed;

/// A context made by kiln_mock_create_context; the primary ones are mock_cuda_driver.cpp's, and
/// the same type, whose first member is the device.
struct created_context {
    int device;
};

}  // namespace

namespace kiln_mock::internal {

void record_allocation(const allocation& block) {
    std::lock_guard lock(mutex);
    allocations[block.base] = block;
}

bool forget_allocation(CUdeviceptr base) {
    std::lock_guard lock(mutex);
    return allocations.erase(base) == 1;
}

std::optional<allocation> allocation_holding(CUdeviceptr address) {
    std::lock_guard lock(mutex);
    auto block = allocations.upper_bound(address);
    if (block == allocations.begin()) return std::nullopt;
    --block;
    if (address >= block->first + block->second.bytes) return std::nullopt;
    return block->second;
}

}  // namespace kiln_mock::internal

extern "C" {

CUcontext kiln_mock_create_context(int device) {
    std::lock_guard lock(mutex);
    ++kiln_mock_state()->live_created_contexts;
    return reinterpret_cast<CUcontext>(new created_context{device});
}

// Only contexts from kiln_mock_create_context: destroying a primary context is an error in CUDA.
CUresult CUDAAPI cuCtxDestroy(CUcontext context) {
    delete reinterpret_cast<created_context*>(context);
    std::lock_guard lock(mutex);
    --kiln_mock_state()->live_created_contexts;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
    if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext current = nullptr;
    cuCtxGetCurrent(&current);
    pushed.push_back(current);
    return cuCtxSetCurrent(context);
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
    if (pushed.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) cuCtxGetCurrent(context);
    cuCtxSetCurrent(pushed.back());
    pushed.pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    CUcontext current = nullptr;
    cuCtxGetCurrent(&current);
    if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *device = kiln_mock::internal::device_of(current);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* base, size_t* bytes, CUdeviceptr address) {
    const auto block = kiln_mock::internal::allocation_holding(address);
    if (!block) return CUDA_ERROR_NOT_FOUND;
    if (base != nullptr) *base = block->base;
    if (bytes != nullptr) *bytes = block->bytes;
    return CUDA_SUCCESS;
}

// The special streams belong to whichever context is current.
CUresult CUDAAPI cuStreamGetCtx(CUstream stream, CUcontext* context) {
    if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
        return cuCtxGetCurrent(context);
    *context = reinterpret_cast<const kiln_mock::internal::stream_object*>(stream)->context;
    return CUDA_SUCCESS;
}

}  // extern "C"
