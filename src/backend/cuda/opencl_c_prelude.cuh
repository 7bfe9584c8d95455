// SPDX-License-Identifier: Apache-2.0
// kiln's OpenCL C prelude for NVRTC: OpenCL C types and builtins on top of CUDA C++.
#line 4 "src/backend/cuda/opencl_c_prelude.cuh"
//
// Embedded in kiln at build time (kiln_embed_sources) and handed to NVRTC as the header
// kiln_opencl_prelude.h. The translator (opencl_c_translation.cpp) wraps every OpenCL C source in
// `namespace kiln_opencl { ... }` after this header, so the vector types declared here (float4,
// int2, ...) hide CUDA's own builtin vector types of the same names, and OpenCL's builtins
// (sqrt, min, atomic_add, get_global_id, ...) are found by ordinary lookup. Keep this text free of
// warnings: -Werror builds fail on any warning NVRTC prints. Its contents are part of the CUDA
// compiler identity, so every change here invalidates cached binaries. The #line above makes
// NVRTC's messages name this file and its own line numbers (tests/cuda/prelude_test.cpp checks). It
// includes the rest of the prelude at its end: opencl_c_vectors.cuh, opencl_c_work_items.cuh,
// opencl_c_math.cuh, opencl_c_geometric_relational.cuh, opencl_c_subgroups.cuh,
// kiln_vocabulary.cuh, opencl_c_images.cuh, opencl_c_binary16.cuh and opencl_c_float8.cuh.
#define __OPENCL_VERSION__ 120
#define CL_VERSION_1_0 100
#define CL_VERSION_1_1 110
#define CL_VERSION_1_2 120
#define CL_VERSION_2_0 200
#define CL_VERSION_3_0 300
#define __ENDIAN_LITTLE__ 1
#define __KILN_CUDA__ 1
#define FP_FAST_FMA 1
#define FP_FAST_FMAF 1
#define cl_khr_fp64 1
#define cl_khr_byte_addressable_store 1
#define cl_khr_global_int32_base_atomics 1
#define cl_khr_global_int32_extended_atomics 1
#define cl_khr_local_int32_base_atomics 1
#define cl_khr_local_int32_extended_atomics 1
#define cl_khr_int64_base_atomics 1
#define cl_khr_int64_extended_atomics 1
#define cl_khr_subgroups 1
#define cl_khr_subgroup_ballot 1
#define cl_khr_subgroup_shuffle 1
#define cl_khr_subgroup_shuffle_relative 1

#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 0xffffffffu
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL - 1)
#define ULONG_MAX 0xffffffffffffffffUL

#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_10_EXP 38
#define FLT_MAX_EXP 128
#define FLT_MIN_10_EXP (-37)
#define FLT_MIN_EXP (-125)
#define FLT_RADIX 2
#define FLT_MAX 0x1.fffffep127f
#define FLT_MIN 0x1.0p-126f
#define FLT_EPSILON 0x1.0p-23f
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define DBL_MAX_10_EXP 308
#define DBL_MAX_EXP 1024
#define DBL_MIN_10_EXP (-307)
#define DBL_MIN_EXP (-1021)
#define DBL_MAX 0x1.fffffffffffffp1023
#define DBL_MIN 0x1.0p-1022
#define DBL_EPSILON 0x1.0p-52
#define MAXFLOAT FLT_MAX
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000u))
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#define INFINITY HUGE_VALF
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
// OpenCL C's as_type for the scalars kiln's text reinterprets: a NaN of fixed bits, for one.
__device__ inline float as_float(unsigned v) {
    return __builtin_bit_cast(float, v);
}
__device__ inline double as_double(unsigned long v) {
    return __builtin_bit_cast(double, v);
}

#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
#define M_E 2.71828182845904523536
#define M_LOG2E 1.44269504088896340736
#define M_LOG10E 0.434294481903251827651
#define M_LN2 0.693147180559945309417
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.785398163397448309616
#define M_1_PI 0.318309886183790671538
#define M_2_PI 0.636619772367581343076
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.707106781186547524401

namespace kiln_opencl {

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef decltype(sizeof(int)) size_t;
typedef decltype((int*)0 - (int*)0) ptrdiff_t;
typedef ptrdiff_t intptr_t;
typedef size_t uintptr_t;
typedef int event_t;

namespace detail {

// --- minimal type traits (NVRTC has no standard library) ------------------------------------
template <bool B, class T = void>
struct enable_if {};
template <class T>
struct enable_if<true, T> {
    using type = T;
};
template <bool B, class T = void>
using enable_if_t = typename enable_if<B, T>::type;
template <bool B, class T, class F>
struct conditional {
    using type = T;
};
template <class T, class F>
struct conditional<false, T, F> {
    using type = F;
};
template <bool B, class T, class F>
using conditional_t = typename conditional<B, T, F>::type;
template <class A, class B>
inline constexpr bool is_same_v = false;
template <class A>
inline constexpr bool is_same_v<A, A> = true;
template <class T>
struct remove_cv {
    using type = T;
};
template <class T>
struct remove_cv<const T> {
    using type = T;
};
template <class T>
struct remove_cv<volatile T> {
    using type = T;
};
template <class T>
struct remove_cv<const volatile T> {
    using type = T;
};
template <class T>
using remove_cv_t = typename remove_cv<T>::type;

template <class T>
inline constexpr bool is_integer_v = false;
template <>
inline constexpr bool is_integer_v<char> = true;
template <>
inline constexpr bool is_integer_v<signed char> = true;
template <>
inline constexpr bool is_integer_v<unsigned char> = true;
template <>
inline constexpr bool is_integer_v<short> = true;
template <>
inline constexpr bool is_integer_v<unsigned short> = true;
template <>
inline constexpr bool is_integer_v<int> = true;
template <>
inline constexpr bool is_integer_v<unsigned int> = true;
template <>
inline constexpr bool is_integer_v<long> = true;
template <>
inline constexpr bool is_integer_v<unsigned long> = true;
template <>
inline constexpr bool is_integer_v<long long> = true;
template <>
inline constexpr bool is_integer_v<unsigned long long> = true;
template <class T>
inline constexpr bool is_floating_v = is_same_v<T, float> || is_same_v<T, double>;
template <class T>
inline constexpr bool is_scalar_v = is_integer_v<T> || is_floating_v<T> || is_same_v<T, bool>;
template <class T>
inline constexpr bool is_signed_v = T(-1) < T(0);

template <class T>
struct make_unsigned {
    using type = T;
};
template <>
struct make_unsigned<char> {
    using type = unsigned char;
};
template <>
struct make_unsigned<signed char> {
    using type = unsigned char;
};
template <>
struct make_unsigned<short> {
    using type = unsigned short;
};
template <>
struct make_unsigned<int> {
    using type = unsigned int;
};
template <>
struct make_unsigned<long> {
    using type = unsigned long;
};
template <>
struct make_unsigned<long long> {
    using type = unsigned long long;
};
template <class T>
using make_unsigned_t = typename make_unsigned<T>::type;

/// OpenCL's result element type of a vector comparison: a signed integer of the same width.
template <class T>
using mask_element_t =
    conditional_t<sizeof(T) == 1, signed char,
                  conditional_t<sizeof(T) == 2, short, conditional_t<sizeof(T) == 4, int, long>>>;

/// Integer limits, for saturating conversions and arithmetic.
template <class T>
constexpr T lowest_value() {
    if constexpr (is_signed_v<T>)
        return T(T(1) << (sizeof(T) * 8 - 1));
    else
        return T(0);
}
template <class T>
constexpr T highest_value() {
    if constexpr (is_signed_v<T>)
        return T(~lowest_value<T>());
    else
        return T(~T(0));
}

}  // namespace detail
}  // namespace kiln_opencl

// The rest of the prelude, in this order: each file uses what the ones before it declare.
// clang-format off
#include "kiln_opencl_vectors.h"
#include "kiln_opencl_work_items.h"
#include "kiln_opencl_math.h"
#include "kiln_opencl_geometric_relational.h"
#include "kiln_opencl_subgroups.h"
#include "kiln_vocabulary.h"
#include "kiln_opencl_images.h"
#include "kiln_opencl_binary16.h"
#include "kiln_opencl_float8.h"
// clang-format on

// printf's %vN conversions: the translator turns the vector argument v into its N components.
#define KILN_PRINTF_C(v, i) (v).template kiln_s<i>()
#define KILN_PRINTF_COMPONENTS2(...) \
    KILN_PRINTF_C((__VA_ARGS__), 0), KILN_PRINTF_C((__VA_ARGS__), 1)
#define KILN_PRINTF_COMPONENTS3(...) \
    KILN_PRINTF_COMPONENTS2(__VA_ARGS__), KILN_PRINTF_C((__VA_ARGS__), 2)
#define KILN_PRINTF_COMPONENTS4(...) \
    KILN_PRINTF_COMPONENTS3(__VA_ARGS__), KILN_PRINTF_C((__VA_ARGS__), 3)
#define KILN_PRINTF_COMPONENTS8(...)                                       \
    KILN_PRINTF_COMPONENTS4(__VA_ARGS__), KILN_PRINTF_C((__VA_ARGS__), 4), \
        KILN_PRINTF_C((__VA_ARGS__), 5), KILN_PRINTF_C((__VA_ARGS__), 6),  \
        KILN_PRINTF_C((__VA_ARGS__), 7)
#define KILN_PRINTF_COMPONENTS16(...)                                       \
    KILN_PRINTF_COMPONENTS8(__VA_ARGS__), KILN_PRINTF_C((__VA_ARGS__), 8),  \
        KILN_PRINTF_C((__VA_ARGS__), 9), KILN_PRINTF_C((__VA_ARGS__), 10),  \
        KILN_PRINTF_C((__VA_ARGS__), 11), KILN_PRINTF_C((__VA_ARGS__), 12), \
        KILN_PRINTF_C((__VA_ARGS__), 13), KILN_PRINTF_C((__VA_ARGS__), 14), \
        KILN_PRINTF_C((__VA_ARGS__), 15)

// Qualifiers that reach the compiler through a macro expansion were not seen by the translator:
// the harmless ones vanish, the others stop the build with a message that names them. The bare
// spellings (global, local, constant) cannot be macros: CUDA's own __global__, __constant__ and
// __shared__ expand to attributes with those names. Expanded, they are undefined identifiers.
#define __global
#define __private
#define restrict __restrict__
#define __kernel kiln_unsupported__kernel_from_macro
#define __local kiln_unsupported__local_from_macro
#define __constant kiln_unsupported__constant_from_macro
