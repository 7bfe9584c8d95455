// The kernel language's 16-bit helpers on OpenCL devices: kiln prepends them when a program's
// source names one (the CUDA prelude has them as well, opencl_c_binary16.cuh). OpenCL C has no
// bfloat16, so its values travel as their ushort bits; half values kept as ushort (KILN_STRUCT
// fields) convert through the core vload_half and vstore_half_rte, which need no cl_khr_fp16.
// Integer operations only: the results do not depend on a device's denormal or rounding modes.
float kiln_bf16_to_float(ushort bits) {
    return as_float((uint)bits << 16);
}
// Rounds to nearest even; overflow gives infinity; a NaN stays NaN (quiet, its payload's top).
// NVIDIA devices of compute capability 8.0 on (KILN_PTX_BF16_CONVERSION, set by the backend)
// round with their one cvt instruction, which gives the same bits for every value but NaN.
ushort kiln_float_to_bf16(float value) {
    const uint bits = as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (ushort)((bits >> 16) | 0x40u);
#ifdef KILN_PTX_BF16_CONVERSION
    ushort rounded;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(rounded) : "f"(value));
    return rounded;
#else
    return (ushort)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
#endif
}
float kiln_half_to_float(ushort bits) {
    return vload_half(0, (const half*)&bits);
}
ushort kiln_float_to_half(float value) {
    ushort bits;
    vstore_half_rte(value, 0, (half*)&bits);
    return bits;
}
// The vector forms of the bfloat16 conversions (N = 2, 4, 8, 16), for CPU devices' chunked
// loops: the same integer operations lane by lane, which vectorise where calls of the scalar
// helpers would not. The store writes through a vector type aligned like its elements, valid at
// any element's address: PoCL 3.1 (LLVM 15) turns vstoreN of ushort into N separate 2-byte
// stores, sixteen stores and extracts where AVX-512 needs one vpmovdw.
#define KILN_BF16_VECTOR_FORMS(N)                                                          \
    float##N kiln_bf16x##N##_to_float(ushort##N bits) {                                   \
        return as_float##N(convert_uint##N(bits) << 16);                                  \
    }                                                                                     \
    ushort##N kiln_float_to_bf16x##N(float##N value) {                                    \
        const uint##N bits = as_uint##N(value);                                           \
        const uint##N rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;             \
        return convert_ushort##N(                                                         \
            select(rounded, (bits >> 16) | 0x40u, (bits & 0x7fffffffu) > 0x7f800000u));   \
    }                                                                                     \
    typedef ushort##N kiln_ushort##N##_at_any_element __attribute__((aligned(2)));        \
    void kiln_bf16x##N##_store(float##N value, global ushort* p) {                        \
        *(global kiln_ushort##N##_at_any_element*)p = kiln_float_to_bf16x##N(value);      \
    }
KILN_BF16_VECTOR_FORMS(2)
KILN_BF16_VECTOR_FORMS(4)
KILN_BF16_VECTOR_FORMS(8)
KILN_BF16_VECTOR_FORMS(16)
#undef KILN_BF16_VECTOR_FORMS
