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

// Tensor cores (device_vocabulary.hpp): compute capability 8.0 and later; empty below, where the
// GEMM plan never calls them.
__device__ inline void kiln_mma_m16n8k16_f16(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ inline void kiln_mma_m16n8k16_bf16(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ inline void kiln_mma_m8n8k4_f64(double* d, const double* a, const double* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a[0]), "d"(b[0]));
#endif
}
// Compute capability 9.0 and later.
__device__ inline void kiln_mma_m16n8k8_f64(double* d, const double* a, const double* b) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
}

// Floats rounded to TF32 (to nearest, ties away: cvt.rna), float accumulation.
__device__ inline void kiln_mma_m16n8k8_tf32(float* d, const float* a, const float* b) {
#if __CUDA_ARCH__ >= 800
    asm("{\n.reg .b32 a0, a1, a2, a3, b0, b1;\n"
        "cvt.rna.tf32.f32 a0, %4;\ncvt.rna.tf32.f32 a1, %5;\ncvt.rna.tf32.f32 a2, %6;\n"
        "cvt.rna.tf32.f32 a3, %7;\ncvt.rna.tf32.f32 b0, %8;\ncvt.rna.tf32.f32 b1, %9;\n"
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {a0, a1, a2, a3}, "
        "{b0, b1}, {%0, %1, %2, %3};\n}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "f"(a[0]), "f"(a[1]), "f"(a[2]), "f"(a[3]), "f"(b[0]), "f"(b[1]));
#endif
}

__device__ inline void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
#if __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
#endif
}
__device__ inline void kiln_ldmatrix_x4_trans(unsigned* r, const unsigned short* p) {
#if __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
#endif
}

__device__ inline void kiln_copy_async_16(unsigned short* to, const unsigned short* from,
                                          unsigned bytes) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     static_cast<unsigned>(__cvta_generic_to_shared(to))),
                 "l"(from), "r"(bytes)
                 : "memory");
#endif
}
__device__ inline void kiln_copy_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_0() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_1() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_2() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 2;" ::: "memory");
#endif
}
