// SPDX-License-Identifier: Apache-2.0
// OpenCL C's half loads and stores and kiln's 16-bit helpers for NVRTC.
#line 4 "src/backend/cuda/opencl_c_binary16.cuh"
//
// Included by the prelude (opencl_c_prelude.cuh). OpenCL C without cl_khr_fp16 keeps half in
// memory only: pointers to it, read with vload_half and written with vstore_half(_rte). Here half
// is the 16 bits themselves, and the conversions are PTX's cvt (exact widening; narrowing rounds
// to nearest even), as on OpenCL devices. bfloat16 values travel as ushort bits. Its narrowing
// is sm_80's cvt.rn.bf16.f32 where the architecture has it, except for NaN, whose bits follow the
// integer operations of the OpenCL version (src/backend/opencl/binary16.cl): the results are the
// same on every device.

namespace kiln_opencl {

struct half {
    unsigned short kiln_bits;
};

__device__ inline float kiln_half_to_float(ushort bits) {
    float value;
    asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
    return value;
}
__device__ inline ushort kiln_float_to_half(float value) {
    ushort bits;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(value));
    return bits;
}

__device__ inline float vload_half(size_t offset, const half* p) {
    return kiln_half_to_float(p[offset].kiln_bits);
}
__device__ inline void vstore_half_rte(float value, size_t offset, half* p) {
    p[offset].kiln_bits = kiln_float_to_half(value);
}
// OpenCL's default rounding mode is to nearest even, and kernels cannot change it.
__device__ inline void vstore_half(float value, size_t offset, half* p) {
    vstore_half_rte(value, offset, p);
}

// The vector forms vload_halfN and vstore_halfN(_rte) (N = 2, 3, 4, 8, 16), which CPU devices'
// chunked loops use and forced strategies bring to GPUs: N consecutive halves past offset * N,
// as OpenCL C has them (vload_half3 reads at offset * 3 too; the aligned vloada forms are absent).
template <int N>
__device__ inline detail::vec<float, N> kiln_vload_halves(size_t offset, const half* p) {
    detail::vec<float, N> v;
    for (int i = 0; i < N; ++i) v[i] = vload_half(offset * N + i, p);
    return v;
}
template <int N>
__device__ inline void kiln_vstore_halves(const detail::vec<float, N>& v, size_t offset, half* p) {
    for (int i = 0; i < N; ++i) vstore_half_rte(v[i], offset * N + i, p);
}
#define KILN_HALF_VECTOR_FORMS(N)                                                              \
    __device__ inline detail::vec<float, N> vload_half##N(size_t offset, const half* p) {      \
        return kiln_vload_halves<N>(offset, p);                                                \
    }                                                                                          \
    __device__ inline void vstore_half##N##_rte(const detail::vec<float, N>& v, size_t offset, \
                                                half* p) {                                     \
        kiln_vstore_halves<N>(v, offset, p);                                                   \
    }                                                                                          \
    __device__ inline void vstore_half##N(const detail::vec<float, N>& v, size_t offset,       \
                                          half* p) {                                           \
        kiln_vstore_halves<N>(v, offset, p);                                                   \
    }
KILN_HALF_VECTOR_FORMS(2)
KILN_HALF_VECTOR_FORMS(3)
KILN_HALF_VECTOR_FORMS(4)
KILN_HALF_VECTOR_FORMS(8)
KILN_HALF_VECTOR_FORMS(16)
#undef KILN_HALF_VECTOR_FORMS

__device__ inline float kiln_bf16_to_float(ushort bits) {
    return __uint_as_float(static_cast<unsigned>(bits) << 16);
}
// Rounds to nearest even; overflow gives infinity; a NaN stays NaN (quiet, its payload's top).
__device__ inline ushort kiln_float_to_bf16(float value) {
    const unsigned bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<ushort>((bits >> 16) | 0x40u);
#if __CUDA_ARCH__ >= 800
    ushort rounded;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(rounded) : "f"(value));
    return rounded;
#else
    return static_cast<ushort>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
#endif
}

// The vector forms of the bfloat16 conversions (binary16.cl's, N = 2, 4, 8, 16), lane by lane.
#define KILN_BF16_VECTOR_FORMS(N)                                                                 \
    __device__ inline detail::vec<float, N> kiln_bf16x##N##_to_float(                             \
        const detail::vec<ushort, N>& bits) {                                                     \
        detail::vec<float, N> v;                                                                  \
        for (int i = 0; i < N; ++i) v[i] = kiln_bf16_to_float(bits[i]);                           \
        return v;                                                                                 \
    }                                                                                             \
    __device__ inline detail::vec<ushort, N> kiln_float_to_bf16x##N(                              \
        const detail::vec<float, N>& value) {                                                     \
        detail::vec<ushort, N> bits;                                                              \
        for (int i = 0; i < N; ++i) bits[i] = kiln_float_to_bf16(value[i]);                       \
        return bits;                                                                              \
    }                                                                                             \
    __device__ inline void kiln_bf16x##N##_store(const detail::vec<float, N>& value, ushort* p) { \
        for (int i = 0; i < N; ++i) p[i] = kiln_float_to_bf16(value[i]);                          \
    }
KILN_BF16_VECTOR_FORMS(2)
KILN_BF16_VECTOR_FORMS(4)
KILN_BF16_VECTOR_FORMS(8)
KILN_BF16_VECTOR_FORMS(16)
#undef KILN_BF16_VECTOR_FORMS

}  // namespace kiln_opencl
