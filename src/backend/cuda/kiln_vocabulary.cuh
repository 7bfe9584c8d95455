// SPDX-License-Identifier: Apache-2.0
// kiln's device vocabulary (src/codegen/device_vocabulary.hpp) on CUDA warps.
#line 4 "src/backend/cuda/kiln_vocabulary.cuh"
//
// Included by the prelude (opencl_c_prelude.cuh), yet standing alone: CUDA's intrinsics only.
// A sub-group is a warp, and every lane of it calls these (kiln's generators launch whole warps),
// so the masks are full: no vote first for the lanes that run, as OpenCL's sub_group_* need for
// partial warps (opencl_c_subgroups.cuh).

__device__ inline unsigned kiln_ballot(unsigned predicate) {
    return __ballot_sync(0xffffffffu, predicate);
}
__device__ inline void kiln_sub_group_sync() {
    __syncwarp(0xffffffffu);
}
// The lanes whose x has `bit` (a one-bit mask) as this lane's x has it. One tested bit serves the
// vote and the complement: a select over a second test of the bit compiled to seven instructions
// a bit (the radix sort's ranking, eight bits a key; H100).
__device__ inline unsigned kiln_ballot_agree(unsigned x, unsigned bit) {
    unsigned lanes;
    asm("{ .reg .pred set; .reg .b32 masked; and.b32 masked, %1, %2; setp.ne.u32 set, masked, 0; "
        "vote.sync.ballot.b32 %0, set, 0xffffffff; @!set not.b32 %0, %0; }"
        : "=r"(lanes)
        : "r"(x), "r"(bit));
    return lanes;
}

__device__ inline unsigned kiln_shuffle_up(unsigned x, unsigned delta) {
    return __shfl_up_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned kiln_shuffle_down(unsigned x, unsigned delta) {
    return __shfl_down_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned long long kiln_shuffle_up_64(unsigned long long x, unsigned delta) {
    return __shfl_up_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned long long kiln_shuffle_down_64(unsigned long long x, unsigned delta) {
    return __shfl_down_sync(0xffffffffu, x, delta);
}

// The lanes whose x equals this lane's (use_match_any_vocabulary): compute capability 7.0 and
// later; below, each lane alone, where the radix plan never calls it.
__device__ inline unsigned kiln_match_any(unsigned x) {
#if __CUDA_ARCH__ >= 700
    return __match_any_sync(0xffffffffu, x);
#else
    return 1u << (threadIdx.x % 32u);
#endif
}

__device__ inline void kiln_fence_acq_rel() {
    __threadfence();
}

template <class T>
__device__ inline T kiln_load_streaming(const T* p) {
    return *p;
}
template <class T>
__device__ inline void kiln_store_streaming(T* p, T v) {
    *p = v;
}

// x itself, never fused with the arithmetic around it (use_rounding_vocabulary): NVRTC's
// --fmad=true would otherwise join a multiply of one fused statement to an add of the next.
__device__ inline float kiln_rounded_float(float x) {
    float y;
    asm volatile("add.rn.f32 %0, %1, 0f80000000;" : "=f"(y) : "f"(x));
    return y;
}
__device__ inline double kiln_rounded_double(double x) {
    double y;
    asm volatile("add.rn.f64 %0, %1, 0d8000000000000000;" : "=d"(y) : "d"(x));
    return y;
}

// A tile map (include/kiln/detail/tile_map.hpp): the driver's 128 opaque bytes. A kernel takes it
// by value; the translation declares the entry point's parameter __grid_constant__ and hands the
// body a reference, so that the copies below read the launch's own bytes.
struct __align__(64) kiln_tile_map {
    unsigned long long bits[16];
};

// Hopper's warpgroup tensor-core instructions (wgmma), in sm_90a cubins only (nvrtc_compiler.hpp):
// the GEMM plan calls them on compute capability 9.0 through CUDA alone. A warpgroup is four
// warps that issue each one together; A and B come from local memory through descriptors
// (gemm_warpgroup.cpp), D is the float accumulator of m64 x nN, N / 2 registers per lane.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ inline unsigned kiln_shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif

// The tensor cores' PTX (mma.sync, ldmatrix, cp.async from compute capability 8.0; wgmma, mbarrier
// and the tensor memory accelerator in sm_90a cubins), written from the instruction table
// (include/kiln/detail/ptx_instructions.hpp) as the OpenCL inline-asm vocabulary is.
#include "kiln_tensor_cores.h"
