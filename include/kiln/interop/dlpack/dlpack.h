// SPDX-License-Identifier: Apache-2.0
/*
 * DLPack 1.0's header with 1.1's FP8 type codes: the structs, enums and macros that libraries
 * exchange tensors through, with DLPack's names, values and layouts exactly
 * (https://github.com/dmlc/dlpack, include/dlpack/dlpack.h), written for kiln from DLPack's
 * specification. A program that has DLPack's own header (1.1 or later, for the FP8 codes) may
 * include it instead, before kiln's: both guard on DLPACK_DLPACK_H_.
 * Debian's libdlpack-dev (0.6) predates DLManagedTensorVersioned, which kiln exchanges.
 *
 * Copyright (c) 2017 by Contributors (DLPack)
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

/* The version of DLPack this header describes. */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

#ifndef DLPACK_DLL
#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the DLPack ABI a tensor follows: a consumer refuses another major version. */
typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

/* Where a tensor's memory is. */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
    kDLCPU = 1,          /* host memory */
    kDLCUDA = 2,         /* CUDA device memory */
    kDLCUDAHost = 3,     /* page-locked host memory from cudaMallocHost */
    kDLOpenCL = 4,       /* OpenCL memory: `data` is a cl_mem */
    kDLVulkan = 7,       /* Vulkan buffers */
    kDLMetal = 8,        /* Metal buffers */
    kDLVPI = 9,          /* Verilog simulators */
    kDLROCM = 10,        /* ROCm (AMD) device memory */
    kDLROCMHost = 11,    /* page-locked host memory from hipMallocHost */
    kDLExtDev = 12,      /* reserved for extensions */
    kDLCUDAManaged = 13, /* CUDA managed memory */
    kDLOneAPI = 14,      /* oneAPI unified shared memory */
    kDLWebGPU = 15,      /* WebGPU */
    kDLHexagon = 16,     /* Qualcomm Hexagon DSP */
    kDLMAIA = 17,        /* Microsoft MAIA */
} DLDeviceType;

/* A device: its type, and its number among the devices of that type. */
typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

/* The kind of number an element is. */
typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U, /* opaque handles, as pointers */
    kDLBfloat = 4U,       /* bfloat16 */
    kDLComplex = 5U,      /* complex numbers: pairs of floats, `bits` for the pair */
    kDLBool = 6U,
    /* DLPack 1.1's FP8 formats, `bits` 8. e4m3fn is OCP's E4M3 (kiln::float8_e4m3), e5m2 OCP's
       E5M2 (kiln::float8_e5m2); the others kiln does not exchange. */
    kDLFloat8_e3m4 = 7U,
    kDLFloat8_e4m3 = 8U,
    kDLFloat8_e4m3b11fnuz = 9U,
    kDLFloat8_e4m3fn = 10U,
    kDLFloat8_e4m3fnuz = 11U,
    kDLFloat8_e5m2 = 12U,
    kDLFloat8_e5m2fnuz = 13U,
    kDLFloat8_e8m0fnu = 14U,
} DLDataTypeCode;

/* An element type: code, bits per lane and lanes (1 for a scalar). float is {kDLFloat, 32, 1}. */
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

/* A tensor: `ndim` extents in `shape`, element strides in `strides` (NULL: compact and
 * row-major), its first element `byte_offset` bytes past `data`. */
typedef struct {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
} DLTensor;

/* A tensor and who owns its memory, before DLPack 1.0 (no version, no flags). */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

/* The tensor's memory must not be written. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* The tensor's memory is a copy the producer made for the consumer. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

/* A tensor and who owns its memory: the producer's `manager_ctx`, released by calling `deleter`
 * once, when the consumer is done with it. */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned* self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}  // DLPACK_EXTERN_C
#endif
#endif  // DLPACK_DLPACK_H_
