// kiln's device vocabulary (src/codegen/device_vocabulary.hpp) on CUDA warps.
#line 3 "src/backend/cuda/kiln_vocabulary.cuh"
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
