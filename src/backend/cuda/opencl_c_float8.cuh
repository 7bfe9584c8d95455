// SPDX-License-Identifier: Apache-2.0
// kiln's FP8 helpers for NVRTC (src/backend/opencl/float8.cl's, for the OpenCL C translation).
#line 4 "src/backend/cuda/opencl_c_float8.cuh"
//
// Included by the prelude (opencl_c_prelude.cuh). FP8 values travel as uchar bits. The
// conversions are the host types' (include/kiln/detail/narrow_float.hpp) in integer operations,
// so every device gives the host's bits: float to FP8 rounds to nearest even and saturates, the
// infinities too, and a NaN gives the format's quiet NaN of its sign, which is what
// cvt.rn.satfinite.e4m3x2.f32 and .e5m2x2 give but for the NaNs' signs.

namespace kiln_opencl {
namespace detail {

// A format of `bias` and `mantissa_bits` whose bits from `first_special` up (sign aside) are
// infinities or NaNs, whose largest finite value has the bits `largest` and quiet NaN `nan`.
template <unsigned bias, int mantissa_bits, unsigned first_special, unsigned largest, unsigned nan>
struct float8_format {
    __device__ static float to_float(uchar bits) {
        const unsigned magnitude = bits & 0x7fu, sign = static_cast<unsigned>(bits & 0x80u) << 24;
        const unsigned mantissa = magnitude & ((1u << mantissa_bits) - 1u);
        const unsigned exponent = magnitude >> mantissa_bits;
        if (magnitude >= first_special)
            return __uint_as_float(sign | 0x7f800000u | (mantissa << (23 - mantissa_bits)));
        if (exponent == 0) {
            // Exact: at most 3 significant bits, scaled into float's normal range.
            const float unit = __uint_as_float((128u - bias - mantissa_bits) << 23);
            return __uint_as_float(sign | __float_as_uint(static_cast<float>(mantissa) * unit));
        }
        return __uint_as_float(sign | ((exponent + (127u - bias)) << 23) |
                               (mantissa << (23 - mantissa_bits)));
    }
    __device__ static uchar from_float(float value) {
        const unsigned bits = __float_as_uint(value);
        const unsigned sign = (bits >> 24) & 0x80u, magnitude = bits & 0x7fffffffu;
        if (magnitude > 0x7f800000u) return static_cast<uchar>(sign | nan);
        const unsigned exponent = magnitude >> 23;
        if (exponent >= 128u - bias) {
            const unsigned rounded = magnitude + ((1u << (22 - mantissa_bits)) - 1u) +
                                     ((magnitude >> (23 - mantissa_bits)) & 1u);
            const unsigned narrow =
                (rounded >> (23 - mantissa_bits)) - ((127u - bias) << mantissa_bits);
            return static_cast<uchar>(sign | (narrow < largest ? narrow : largest));
        }
        const unsigned shift = (151u - bias - mantissa_bits) - exponent;
        if (shift > 24) return static_cast<uchar>(sign);
        const unsigned significand = (magnitude & 0x7fffffu) | 0x800000u;
        const unsigned kept = significand >> shift, rest = significand & ((1u << shift) - 1u);
        const unsigned half_unit = 1u << (shift - 1u);
        const bool up = rest > half_unit || (rest == half_unit && (kept & 1u));
        return static_cast<uchar>(sign | (kept + (up ? 1u : 0u)));
    }
};
using e4m3_format = float8_format<7u, 3, 0x7fu, 0x7eu, 0x7fu>;
using e5m2_format = float8_format<15u, 2, 0x7cu, 0x7bu, 0x7eu>;

}  // namespace detail

__device__ inline float kiln_e4m3_to_float(uchar bits) {
    return detail::e4m3_format::to_float(bits);
}
__device__ inline uchar kiln_float_to_e4m3(float value) {
    return detail::e4m3_format::from_float(value);
}
__device__ inline float kiln_e5m2_to_float(uchar bits) {
    return detail::e5m2_format::to_float(bits);
}
__device__ inline uchar kiln_float_to_e5m2(float value) {
    return detail::e5m2_format::from_float(value);
}

// The vector forms (float8.cl's, N = 2, 4, 8, 16), lane by lane.
#define KILN_FLOAT8_VECTOR_FORMS(format, N)                                                \
    __device__ inline detail::vec<float, N> kiln_##format##x##N##_to_float(                \
        const detail::vec<uchar, N>& bits) {                                               \
        detail::vec<float, N> v;                                                           \
        for (int i = 0; i < N; ++i) v[i] = kiln_##format##_to_float(bits[i]);              \
        return v;                                                                          \
    }                                                                                      \
    __device__ inline detail::vec<uchar, N> kiln_float_to_##format##x##N(                  \
        const detail::vec<float, N>& value) {                                              \
        detail::vec<uchar, N> bits;                                                        \
        for (int i = 0; i < N; ++i) bits[i] = kiln_float_to_##format(value[i]);            \
        return bits;                                                                       \
    }                                                                                      \
    __device__ inline void kiln_##format##x##N##_store(const detail::vec<float, N>& value, \
                                                       uchar* p) {                         \
        for (int i = 0; i < N; ++i) p[i] = kiln_float_to_##format(value[i]);               \
    }
KILN_FLOAT8_VECTOR_FORMS(e4m3, 2)
KILN_FLOAT8_VECTOR_FORMS(e4m3, 4)
KILN_FLOAT8_VECTOR_FORMS(e4m3, 8)
KILN_FLOAT8_VECTOR_FORMS(e4m3, 16)
KILN_FLOAT8_VECTOR_FORMS(e5m2, 2)
KILN_FLOAT8_VECTOR_FORMS(e5m2, 4)
KILN_FLOAT8_VECTOR_FORMS(e5m2, 8)
KILN_FLOAT8_VECTOR_FORMS(e5m2, 16)
#undef KILN_FLOAT8_VECTOR_FORMS

}  // namespace kiln_opencl
