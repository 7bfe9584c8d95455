// The kernel language's FP8 helpers on OpenCL devices: kiln prepends them when a program's
// source names one (the CUDA prelude has them as well, opencl_c_float8.cuh). OpenCL C has no FP8
// types, so values travel as their uchar bits. The conversions are those of the host types
// (include/kiln/detail/narrow_float.hpp), in integer operations but for the exact scaling of a
// subnormal's mantissa, so that every device gives the host's bits whatever its denormal mode:
// float to FP8 rounds to nearest even and saturates (the infinities too), a NaN gives the
// format's quiet NaN of its sign. Each is written once for scalars and OpenCL C vectors alike:
// select() and comparisons only, no branches, so that CPU devices' chunked loops vectorise them.
//
// KILN_FLOAT8_CONVERSIONS(name, N, ...) defines kiln_<name>_to_float and kiln_float_to_<name>
// on uchar<N> and float<N> (N empty for scalars) for a format of `bias` and `mantissa_bits`
// whose bits from `first_special` up (sign aside) are infinities or NaNs, whose subnormals are
// multiples of `subnormal_unit`, whose largest finite value has the bits `largest` and whose
// quiet NaN `nan`.
#define KILN_FLOAT8_CONVERSIONS(name, N, bias, mantissa_bits, first_special, subnormal_unit,    \
                                largest, nan)                                                   \
    float##N kiln_##name##_to_float(uchar##N bits) {                                            \
        const uint##N u = convert_uint##N(bits);                                                \
        const uint##N mantissa = u & ((1u << mantissa_bits) - 1u);                              \
        const uint##N exponent = (u & 0x7fu) >> mantissa_bits;                                  \
        const uint##N normal =                                                                  \
            ((exponent + (127u - bias)) << 23) | (mantissa << (23 - mantissa_bits));            \
        const uint##N special = 0x7f800000u | (mantissa << (23 - mantissa_bits));               \
        const uint##N subnormal = as_uint##N(convert_float##N(mantissa) * subnormal_unit);      \
        uint##N magnitude = select(normal, subnormal, exponent == 0u);                          \
        magnitude = select(magnitude, special, (u & 0x7fu) >= first_special);                   \
        return as_float##N(magnitude | ((u & 0x80u) << 24));                                   \
    }                                                                                           \
    uchar##N kiln_float_to_##name(float##N value) {                                             \
        const uint##N bits = as_uint##N(value);                                                 \
        const uint##N magnitude = bits & 0x7fffffffu;                                           \
        const uint##N exponent = magnitude >> 23;                                               \
        /* Normal numbers: half a unit of the kept bits, less one, plus the lowest kept bit,  \
           carries exactly when rounding goes up; past the largest finite value it saturates. \
         */                                                                                     \
        const uint##N rounded = magnitude + ((1u << (22 - mantissa_bits)) - 1u) +               \
                                ((magnitude >> (23 - mantissa_bits)) & 1u);                     \
        const uint##N normal =                                                                  \
            min((rounded >> (23 - mantissa_bits)) - ((127u - bias) << mantissa_bits), largest); \
        /* Subnormals: the significand shifted to the smallest normal's exponent, rounded by  \
           what was shifted out; 25 places or more leave nothing but zero. */                 \
        const uint##N shift = min((151u - bias - mantissa_bits) - exponent, 25u);               \
        const uint##N significand = (magnitude & 0x7fffffu) | 0x800000u;                        \
        const uint##N kept = significand >> shift;                                              \
        const uint##N rest = significand & (((uint##N)(1u) << shift) - 1u);                     \
        const uint##N half_unit = (uint##N)(1u) << (shift - 1u);                                \
        const uint##N subnormal =                                                               \
            select(kept, kept + 1u,                                                             \
                   (rest > half_unit) | ((rest == half_unit) & ((kept & 1u) == 1u)));           \
        uint##N narrow = select(subnormal, normal, exponent >= 128u - bias);                    \
        narrow = select(narrow, (uint##N)(nan), magnitude > 0x7f800000u);                       \
        return convert_uchar##N(narrow | ((bits >> 24) & 0x80u));                              \
    }
#define KILN_E4M3_CONVERSIONS(name, N) \
    KILN_FLOAT8_CONVERSIONS(name, N, 7u, 3, 0x7fu, 0x1p-9f, 0x7eu, 0x7fu)
#define KILN_E5M2_CONVERSIONS(name, N) \
    KILN_FLOAT8_CONVERSIONS(name, N, 15u, 2, 0x7cu, 0x1p-16f, 0x7bu, 0x7eu)
KILN_E4M3_CONVERSIONS(e4m3, )
KILN_E5M2_CONVERSIONS(e5m2, )
// The vector forms (N = 2, 4, 8, 16) for CPU devices' chunked loops, and their stores through a
// vector type aligned like its elements, valid at any element's address (as binary16.cl's
// bfloat16 stores, for the same reason).
#define KILN_FLOAT8_VECTOR_FORMS(N)                                                 \
    KILN_E4M3_CONVERSIONS(e4m3x##N, N)                                              \
    KILN_E5M2_CONVERSIONS(e5m2x##N, N)                                              \
    typedef uchar##N kiln_uchar##N##_at_any_element __attribute__((aligned(1)));    \
    void kiln_e4m3x##N##_store(float##N value, global uchar* p) {                   \
        *(global kiln_uchar##N##_at_any_element*)p = kiln_float_to_e4m3x##N(value); \
    }                                                                               \
    void kiln_e5m2x##N##_store(float##N value, global uchar* p) {                   \
        *(global kiln_uchar##N##_at_any_element*)p = kiln_float_to_e5m2x##N(value); \
    }
KILN_FLOAT8_VECTOR_FORMS(2)
KILN_FLOAT8_VECTOR_FORMS(4)
KILN_FLOAT8_VECTOR_FORMS(8)
KILN_FLOAT8_VECTOR_FORMS(16)
#undef KILN_FLOAT8_VECTOR_FORMS
#undef KILN_E5M2_CONVERSIONS
#undef KILN_E4M3_CONVERSIONS
#undef KILN_FLOAT8_CONVERSIONS
