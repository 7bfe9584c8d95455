// SPDX-License-Identifier: Apache-2.0
// The CUDA driver and NVRTC entry points, loaded with dlopen so kiln runs without them.
//
// Each table is resolved once, on first use. The members are declared through cuda.h's own
// names, whose macros map them to the versioned symbols (cuMemAlloc -> cuMemAlloc_v2), so
// `driver()->cuMemAlloc(...)` calls the entry point matching the header kiln was built with.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <string>

namespace kiln::detail::cuda {

#define KILN_CUDA_DRIVER_FUNCTIONS(X) \
    X(cuInit)                         \
    X(cuDriverGetVersion)             \
    X(cuGetErrorName)                 \
    X(cuGetErrorString)               \
    X(cuDeviceGetCount)               \
    X(cuDeviceGet)                    \
    X(cuDeviceGetName)                \
    X(cuDeviceGetAttribute)           \
    X(cuDeviceTotalMem)               \
    X(cuDevicePrimaryCtxRetain)       \
    X(cuDevicePrimaryCtxRelease)      \
    X(cuCtxGetCurrent)                \
    X(cuCtxSetCurrent)                \
    X(cuMemAlloc)                     \
    X(cuMemFree)                      \
    X(cuMemHostAlloc)                 \
    X(cuMemFreeHost)                  \
    X(cuPointerGetAttributes)         \
    X(cuMemcpyHtoDAsync)              \
    X(cuMemcpyDtoHAsync)              \
    X(cuMemcpyDtoDAsync)              \
    X(cuMemcpyPeerAsync)              \
    X(cuDeviceCanAccessPeer)          \
    X(cuCtxEnablePeerAccess)          \
    X(cuMemsetD8Async)                \
    X(cuMemsetD16Async)               \
    X(cuMemsetD32Async)               \
    X(cuStreamCreate)                 \
    X(cuStreamDestroy)                \
    X(cuStreamWaitEvent)              \
    X(cuStreamSynchronize)            \
    X(cuStreamQuery)                  \
    X(cuLaunchHostFunc)               \
    X(cuEventCreate)                  \
    X(cuEventDestroy)                 \
    X(cuEventRecord)                  \
    X(cuEventQuery)                   \
    X(cuEventSynchronize)             \
    X(cuEventElapsedTime)             \
    X(cuModuleLoadData)               \
    X(cuModuleUnload)                 \
    X(cuModuleGetFunction)            \
    X(cuModuleGetGlobal)              \
    X(cuMemcpyHtoD)                   \
    X(cuCtxSynchronize)               \
    X(cuCtxSetLimit)                  \
    X(cuFuncGetAttribute)             \
    X(cuFuncSetAttribute)             \
    X(cuLaunchKernel)                 \
    X(cuArray3DCreate)                \
    X(cuArrayDestroy)                 \
    X(cuMemcpy2DAsync)                \
    X(cuTexObjectCreate)              \
    X(cuTexObjectDestroy)             \
    X(cuSurfObjectCreate)             \
    X(cuSurfObjectDestroy)

/// CUDA graphs (kiln::graph's native form): a table of its own, so that a driver without them
/// leaves graphs replayed launch by launch rather than the whole backend unusable.
#define KILN_CUDA_GRAPH_FUNCTIONS(X) \
    X(cuGraphCreate)                 \
    X(cuGraphDestroy)                \
    X(cuGraphAddKernelNode)          \
    X(cuGraphAddMemcpyNode)          \
    X(cuGraphAddMemsetNode)          \
    X(cuGraphInstantiate)            \
    X(cuGraphExecDestroy)            \
    X(cuGraphLaunch)

/// Tile maps (include/kiln/detail/tile_map.hpp), from CUDA 12.0's driver on: a table of its own,
/// so that an older driver leaves only the GEMM strategy that uses them unusable.
#define KILN_CUDA_TILE_MAP_FUNCTIONS(X) X(cuTensorMapEncodeTiled)

/// What kiln/interop asks of the driver about objects made elsewhere: a table of its own, so that
/// a driver without one of them leaves only interop unusable.
#define KILN_CUDA_INTEROP_FUNCTIONS(X) \
    X(cuMemGetAddressRange)            \
    X(cuStreamGetCtx)                  \
    X(cuCtxGetDevice)                  \
    X(cuCtxPushCurrent)                \
    X(cuCtxPopCurrent)                 \
    X(cuCtxDestroy)

#define KILN_NVRTC_FUNCTIONS(X)  \
    X(nvrtcGetErrorString)       \
    X(nvrtcVersion)              \
    X(nvrtcGetNumSupportedArchs) \
    X(nvrtcGetSupportedArchs)    \
    X(nvrtcCreateProgram)        \
    X(nvrtcDestroyProgram)       \
    X(nvrtcCompileProgram)       \
    X(nvrtcGetProgramLogSize)    \
    X(nvrtcGetProgramLog)        \
    X(nvrtcGetCUBINSize)         \
    X(nvrtcGetCUBIN)             \
    X(nvrtcGetPTXSize)           \
    X(nvrtcGetPTX)

#define KILN_CUDA_DECLARE_ENTRY_POINT(name) decltype(&::name) name = nullptr;

struct driver_api {
    KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_DECLARE_ENTRY_POINT)
};

struct graph_api {
    KILN_CUDA_GRAPH_FUNCTIONS(KILN_CUDA_DECLARE_ENTRY_POINT)
};

struct tile_map_api {
    KILN_CUDA_TILE_MAP_FUNCTIONS(KILN_CUDA_DECLARE_ENTRY_POINT)
};

struct interop_api {
    KILN_CUDA_INTEROP_FUNCTIONS(KILN_CUDA_DECLARE_ENTRY_POINT)
};

struct nvrtc_api {
    KILN_NVRTC_FUNCTIONS(KILN_CUDA_DECLARE_ENTRY_POINT)
};

#undef KILN_CUDA_DECLARE_ENTRY_POINT

/// libcuda's entry points, or nullptr when there is no usable NVIDIA driver (no libcuda.so.1,
/// or one too old to export what kiln calls).
const driver_api* driver();

/// libcuda's CUDA graph entry points, or nullptr where the driver lacks one of them.
const graph_api* graph_driver();

/// libcuda's tile map entry point, or nullptr where the driver lacks it.
const tile_map_api* tile_map_driver();

/// libcuda's entry points for kiln/interop, or nullptr where the driver lacks one of them.
const interop_api* interop_driver();

/// libnvrtc's entry points, or nullptr when NVRTC cannot be loaded.
const nvrtc_api* nvrtc();

/// Why nvrtc() is null: the libraries tried and dlopen's answers.
const std::string& nvrtc_load_failure();

}  // namespace kiln::detail::cuda
