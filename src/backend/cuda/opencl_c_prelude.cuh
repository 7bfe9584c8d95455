// kiln's OpenCL C prelude for NVRTC: OpenCL C types and builtins on top of CUDA C++.
#line 3 "src/backend/cuda/opencl_c_prelude.cuh"
//
// Embedded in kiln at build time (kiln_embed_sources) and handed to NVRTC as the header
// kiln_opencl_prelude.h. The translator (opencl_c_translation.cpp) wraps every OpenCL C source in
// `namespace kiln_opencl { ... }` after this header, so the vector types declared here (float4,
// int2, ...) hide CUDA's own builtin vector types of the same names, and OpenCL's builtins
// (sqrt, min, atomic_add, get_global_id, ...) are found by ordinary lookup. Keep this text free of
// warnings: -Werror builds fail on any warning NVRTC prints. Its contents are part of the CUDA
// compiler identity, so every change here invalidates cached binaries. The #line above makes
// NVRTC's messages name this file and its own line numbers (tests/cuda/prelude_test.cpp checks).
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

// --- vectors --------------------------------------------------------------------------------
// Aligned to their size like OpenCL's (3-component vectors take the room of 4), so buffers of
// cl_float4 or cl_float3 written by the host have the same layout here.
template <class T, int N>
struct vec_data;
template <class T>
struct alignas(2 * sizeof(T)) vec_data<T, 2> {
    T x, y;
    constexpr T& at(int i) { return i == 0 ? x : y; }
    constexpr const T& at(int i) const { return i == 0 ? x : y; }
};
template <class T>
struct alignas(4 * sizeof(T)) vec_data<T, 3> {
    T x, y, z;
    constexpr T& at(int i) { return i == 0 ? x : i == 1 ? y : z; }
    constexpr const T& at(int i) const { return i == 0 ? x : i == 1 ? y : z; }
};
template <class T>
struct alignas(4 * sizeof(T)) vec_data<T, 4> {
    T x, y, z, w;
    constexpr T& at(int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    constexpr const T& at(int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
};
template <class T>
struct alignas(8 * sizeof(T)) vec_data<T, 8> {
    T s[8];
    constexpr T& at(int i) { return s[i]; }
    constexpr const T& at(int i) const { return s[i]; }
};
template <class T>
struct alignas(16 * sizeof(T)) vec_data<T, 16> {
    T s[16];
    constexpr T& at(int i) { return s[i]; }
    constexpr const T& at(int i) const { return s[i]; }
};

template <class T, int N>
struct vec;
template <class V, int M>
struct component_ref;

template <class P>
inline constexpr int component_count = 1;
template <class T, int N>
inline constexpr int component_count<vec<T, N>> = N;

template <class T>
inline constexpr bool is_vec_v = false;
template <class T, int N>
inline constexpr bool is_vec_v<vec<T, N>> = true;

template <class T, int N>
struct vec : vec_data<T, N> {
    using element_type = T;
    static constexpr int size = N;
    static constexpr int half_size = N == 3 ? 2 : N / 2;
    using half_type = conditional_t<half_size == 1, T, vec<T, half_size>>;

    vec() = default;
    /// OpenCL converts a scalar to a vector implicitly by repeating it.
    template <class S, enable_if_t<is_scalar_v<S>, int> = 0>
    constexpr vec(S value) : vec_data<T, N>{} {
        for (int i = 0; i < N; ++i) this->at(i) = T(value);
    }
    /// The vector literal (float4)(a, b.xy, c): scalars and vectors whose components add up to N.
    template <
        class... Parts,
        enable_if_t<(sizeof...(Parts) >= 2) && ((component_count<Parts> + ...) == N), int> = 0>
    constexpr vec(const Parts&... parts) : vec_data<T, N>{} {
        int next = 0;
        (append(next, parts), ...);
    }

    constexpr T& operator[](int i) { return this->at(i); }
    constexpr const T& operator[](int i) const { return this->at(i); }

    /// .s0 ... .sF
    template <int I>
    constexpr T& kiln_s() {
        static_assert(I >= 0 && I < N, "vector component out of range");
        return this->at(I);
    }
    template <int I>
    constexpr const T& kiln_s() const {
        static_assert(I >= 0 && I < N, "vector component out of range");
        return this->at(I);
    }
    /// .xy, .s01, .wzyx ... read.
    template <int... I>
    constexpr vec<T, sizeof...(I)> kiln_swizzle() const {
        static_assert(((I >= 0 && I < N) && ...), "vector component out of range");
        return vec<T, sizeof...(I)>(this->at(I)...);
    }
    /// .xy = ... and friends.
    template <int... I>
    constexpr component_ref<vec, sizeof...(I)> kiln_swizzle_ref() {
        static_assert(((I >= 0 && I < N) && ...), "vector component out of range");
        return {*this, {I...}};
    }
    constexpr half_type kiln_lo() const { return part(0, 1); }
    constexpr half_type kiln_hi() const { return part(half_size, 1); }
    constexpr half_type kiln_even() const { return part(0, 2); }
    constexpr half_type kiln_odd() const { return part(1, 2); }
    constexpr decltype(auto) kiln_lo_ref() { return part_ref(0, 1); }
    constexpr decltype(auto) kiln_hi_ref() { return part_ref(half_size, 1); }
    constexpr decltype(auto) kiln_even_ref() { return part_ref(0, 2); }
    constexpr decltype(auto) kiln_odd_ref() { return part_ref(1, 2); }

  private:
    template <class P>
    constexpr void append(int& next, const P& part) {
        if constexpr (is_vec_v<P>) {
            for (int i = 0; i < P::size; ++i) this->at(next++) = T(part[i]);
        } else {
            this->at(next++) = T(part);
        }
    }
    // A 3-component vector's hi and odd halves read past the end: the missing component is 0.
    constexpr half_type part(int first, int stride) const {
        if constexpr (half_size == 1) {
            return this->at(first);
        } else {
            half_type result{};
            for (int i = 0; i < half_size; ++i) {
                const int index = first + i * stride;
                result[i] = index < N ? this->at(index) : T(0);
            }
            return result;
        }
    }
    constexpr decltype(auto) part_ref(int first, int stride) {
        if constexpr (half_size == 1) {
            return (this->at(first));
        } else {
            component_ref<vec, half_size> ref{*this, {}};
            for (int i = 0; i < half_size; ++i) ref.index[i] = first + i * stride;
            return ref;
        }
    }
};

/// Assignable view of some components of a vector: the target of `v.xy = ...`.
template <class V, int M>
struct component_ref {
    using element_type = typename V::element_type;
    using value_type = vec<element_type, M>;
    V& target;
    int index[M];

    constexpr operator value_type() const {
        value_type result{};
        for (int i = 0; i < M; ++i)
            result[i] = index[i] < V::size ? target[index[i]] : element_type(0);
        return result;
    }
    constexpr component_ref& operator=(const value_type& value) {
        for (int i = 0; i < M; ++i)
            if (index[i] < V::size) target[index[i]] = value[i];
        return *this;
    }
    template <class R>
    constexpr component_ref& operator+=(const R& r) {
        return *this = value_type(*this) + r;
    }
    template <class R>
    constexpr component_ref& operator-=(const R& r) {
        return *this = value_type(*this) - r;
    }
    template <class R>
    constexpr component_ref& operator*=(const R& r) {
        return *this = value_type(*this) * r;
    }
    template <class R>
    constexpr component_ref& operator/=(const R& r) {
        return *this = value_type(*this) / r;
    }
    template <class R>
    constexpr component_ref& operator%=(const R& r) {
        return *this = value_type(*this) % r;
    }
    template <class R>
    constexpr component_ref& operator&=(const R& r) {
        return *this = value_type(*this) & r;
    }
    template <class R>
    constexpr component_ref& operator|=(const R& r) {
        return *this = value_type(*this) | r;
    }
    template <class R>
    constexpr component_ref& operator^=(const R& r) {
        return *this = value_type(*this) ^ r;
    }
    template <class R>
    constexpr component_ref& operator<<=(const R& r) {
        return *this = value_type(*this) << r;
    }
    template <class R>
    constexpr component_ref& operator>>=(const R& r) {
        return *this = value_type(*this) >> r;
    }
};

// Element-wise operators, vector with vector and vector with scalar (the scalar is repeated).
#define KILN_VECTOR_BINARY_OPERATOR(op)                                       \
    template <class T, int N>                                                 \
    constexpr vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) { \
        vec<T, N> r{};                                                        \
        for (int i = 0; i < N; ++i) r[i] = T(a[i] op b[i]);                   \
        return r;                                                             \
    }                                                                         \
    template <class T, int N, class S, enable_if_t<is_scalar_v<S>, int> = 0>  \
    constexpr vec<T, N> operator op(const vec<T, N>& a, S b) {                \
        return a op vec<T, N>(b);                                             \
    }                                                                         \
    template <class T, int N, class S, enable_if_t<is_scalar_v<S>, int> = 0>  \
    constexpr vec<T, N> operator op(S a, const vec<T, N>& b) {                \
        return vec<T, N>(a) op b;                                             \
    }                                                                         \
    template <class T, int N, class R>                                        \
    constexpr vec<T, N>& operator op##=(vec<T, N>& a, const R& b) {           \
        return a = a op b;                                                    \
    }
KILN_VECTOR_BINARY_OPERATOR(+)
KILN_VECTOR_BINARY_OPERATOR(-)
KILN_VECTOR_BINARY_OPERATOR(*)
KILN_VECTOR_BINARY_OPERATOR(/)
KILN_VECTOR_BINARY_OPERATOR(%)
KILN_VECTOR_BINARY_OPERATOR(&)
KILN_VECTOR_BINARY_OPERATOR(|)
KILN_VECTOR_BINARY_OPERATOR(^)
KILN_VECTOR_BINARY_OPERATOR(<<)
KILN_VECTOR_BINARY_OPERATOR(>>)
#undef KILN_VECTOR_BINARY_OPERATOR

// Comparisons give -1 (all bits set) or 0 per component, in a signed vector of the same width.
#define KILN_VECTOR_COMPARISON(op)                                                            \
    template <class T, int N>                                                                 \
    constexpr vec<mask_element_t<T>, N> operator op(const vec<T, N>& a, const vec<T, N>& b) { \
        vec<mask_element_t<T>, N> r{};                                                        \
        for (int i = 0; i < N; ++i) r[i] = a[i] op b[i] ? -1 : 0;                             \
        return r;                                                                             \
    }                                                                                         \
    template <class T, int N, class S, enable_if_t<is_scalar_v<S>, int> = 0>                  \
    constexpr vec<mask_element_t<T>, N> operator op(const vec<T, N>& a, S b) {                \
        return a op vec<T, N>(b);                                                             \
    }                                                                                         \
    template <class T, int N, class S, enable_if_t<is_scalar_v<S>, int> = 0>                  \
    constexpr vec<mask_element_t<T>, N> operator op(S a, const vec<T, N>& b) {                \
        return vec<T, N>(a) op b;                                                             \
    }
KILN_VECTOR_COMPARISON(==)
KILN_VECTOR_COMPARISON(!=)
KILN_VECTOR_COMPARISON(<)
KILN_VECTOR_COMPARISON(<=)
KILN_VECTOR_COMPARISON(>)
KILN_VECTOR_COMPARISON(>=)
KILN_VECTOR_COMPARISON(&&)
KILN_VECTOR_COMPARISON(||)
#undef KILN_VECTOR_COMPARISON

template <class T, int N>
constexpr vec<T, N> operator+(const vec<T, N>& a) {
    return a;
}
template <class T, int N>
constexpr vec<T, N> operator-(const vec<T, N>& a) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = T(-a[i]);
    return r;
}
template <class T, int N>
constexpr vec<T, N> operator~(const vec<T, N>& a) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = T(~a[i]);
    return r;
}
template <class T, int N>
constexpr vec<mask_element_t<T>, N> operator!(const vec<T, N>& a) {
    vec<mask_element_t<T>, N> r{};
    for (int i = 0; i < N; ++i) r[i] = a[i] == T(0) ? -1 : 0;
    return r;
}
template <class T, int N>
constexpr vec<T, N>& operator++(vec<T, N>& a) {
    return a += T(1);
}
template <class T, int N>
constexpr vec<T, N>& operator--(vec<T, N>& a) {
    return a -= T(1);
}
template <class T, int N>
constexpr vec<T, N> operator++(vec<T, N>& a, int) {
    vec<T, N> old = a;
    a += T(1);
    return old;
}
template <class T, int N>
constexpr vec<T, N> operator--(vec<T, N>& a, int) {
    vec<T, N> old = a;
    a -= T(1);
    return old;
}

/// Applies f to each component (or to the scalar itself).
template <class T, int N, class F>
constexpr auto map(const vec<T, N>& a, F f) {
    using R = decltype(f(a[0]));
    vec<R, N> r{};
    for (int i = 0; i < N; ++i) r[i] = f(a[i]);
    return r;
}
template <class T, int N, class F>
constexpr auto map(const vec<T, N>& a, const vec<T, N>& b, F f) {
    using R = decltype(f(a[0], b[0]));
    vec<R, N> r{};
    for (int i = 0; i < N; ++i) r[i] = f(a[i], b[i]);
    return r;
}
template <class T, int N, class F>
constexpr auto map(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c, F f) {
    using R = decltype(f(a[0], b[0], c[0]));
    vec<R, N> r{};
    for (int i = 0; i < N; ++i) r[i] = f(a[i], b[i], c[i]);
    return r;
}

// --- work-item geometry ---------------------------------------------------------------------
/// Hidden first parameter of every kernel; the host side (cuda_launch_info) has the same layout.
struct launch_info {
    unsigned long long global_offset[3];
    unsigned long long global_size[3];
    unsigned int work_dim;
};

__device__ inline unsigned pick(unsigned x, unsigned y, unsigned z, unsigned dimension) {
    return dimension == 0 ? x : dimension == 1 ? y : z;
}
__device__ inline size_t local_id(unsigned d) {
    return d < 3 ? pick(threadIdx.x, threadIdx.y, threadIdx.z, d) : 0;
}
__device__ inline size_t group_id(unsigned d) {
    return d < 3 ? pick(blockIdx.x, blockIdx.y, blockIdx.z, d) : 0;
}
__device__ inline size_t num_groups(unsigned d) {
    return d < 3 ? pick(gridDim.x, gridDim.y, gridDim.z, d) : 1;
}
__device__ inline size_t enqueued_local_size(unsigned d) {
    return d < 3 ? pick(blockDim.x, blockDim.y, blockDim.z, d) : 1;
}
__device__ inline size_t global_index_without_offset(unsigned d) {
    return group_id(d) * enqueued_local_size(d) + local_id(d);
}
__device__ inline size_t global_id(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_offset[d] + global_index_without_offset(d) : 0;
}
__device__ inline size_t global_size(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_size[d] : 1;
}
__device__ inline size_t global_offset(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_offset[d] : 0;
}
/// The last group along a dimension is partial when kiln rounded the grid up (OpenCL 2.0's
/// non-uniform work-groups).
__device__ inline size_t local_size(const launch_info& launch, unsigned d) {
    if (d >= 3) return 1;
    const size_t first = group_id(d) * enqueued_local_size(d);
    const size_t rest = launch.global_size[d] - first;
    return rest < enqueued_local_size(d) ? rest : enqueued_local_size(d);
}
__device__ inline bool inside_global_range(const launch_info& launch) {
    return global_index_without_offset(0) < launch.global_size[0] &&
           global_index_without_offset(1) < launch.global_size[1] &&
           global_index_without_offset(2) < launch.global_size[2];
}
__device__ inline size_t global_linear_id(const launch_info& launch) {
    return (global_index_without_offset(2) * launch.global_size[1] +
            global_index_without_offset(1)) *
               launch.global_size[0] +
           global_index_without_offset(0);
}

extern __shared__ __align__(16) unsigned char dynamic_shared_memory[];

// --- conversions ----------------------------------------------------------------------------
enum rounding { round_default, round_to_nearest_even, round_toward_zero, round_up, round_down };

__device__ inline float round_float(float x, int mode) {
    return mode == round_to_nearest_even ? ::rintf(x)
           : mode == round_up            ? ::ceilf(x)
           : mode == round_down          ? ::floorf(x)
                                         : ::truncf(x);
}
__device__ inline double round_float(double x, int mode) {
    return mode == round_to_nearest_even ? ::rint(x)
           : mode == round_up            ? ::ceil(x)
           : mode == round_down          ? ::floor(x)
                                         : ::trunc(x);
}

template <class To, bool Saturate, int Mode, class From>
__device__ inline To convert_scalar(From x) {
    if constexpr (is_integer_v<To> && is_floating_v<From>) {
        x = round_float(x, Mode);
        if constexpr (Saturate) {
            if (x != x) return To(0);
            if (x <= From(lowest_value<To>())) return lowest_value<To>();
            if (x >= From(highest_value<To>())) return highest_value<To>();
        }
        return To(x);
    } else if constexpr (is_integer_v<To> && is_integer_v<From> && Saturate) {
        if constexpr (is_signed_v<From> && !is_signed_v<To>) {
            if (x < 0) return To(0);
        }
        if constexpr (is_signed_v<From> && is_signed_v<To> && sizeof(From) > sizeof(To)) {
            if (x < From(lowest_value<To>())) return lowest_value<To>();
        }
        using wide = unsigned long long;
        if (x > 0 && wide(x) > wide(highest_value<To>())) return highest_value<To>();
        return To(x);
    } else if constexpr (is_same_v<To, float> && Mode != round_default &&
                         Mode != round_to_nearest_even) {
        if constexpr (is_same_v<From, double>) {
            return Mode == round_toward_zero ? __double2float_rz(x)
                   : Mode == round_up        ? __double2float_ru(x)
                                             : __double2float_rd(x);
        } else if constexpr (is_integer_v<From> && is_signed_v<From>) {
            return Mode == round_toward_zero ? __ll2float_rz(x)
                   : Mode == round_up        ? __ll2float_ru(x)
                                             : __ll2float_rd(x);
        } else if constexpr (is_integer_v<From>) {
            return Mode == round_toward_zero ? __ull2float_rz(x)
                   : Mode == round_up        ? __ull2float_ru(x)
                                             : __ull2float_rd(x);
        } else {
            return To(x);
        }
    } else {
        return To(x);
    }
}

template <class To, bool Saturate, int Mode, class From>
__device__ inline To convert(const From& x) {
    if constexpr (is_vec_v<To>) {
        static_assert(is_vec_v<From> && component_count<From> == To::size,
                      "convert_<type>N needs a vector of N components");
        To r{};
        for (int i = 0; i < To::size; ++i)
            r[i] = convert_scalar<typename To::element_type, Saturate, Mode>(x[i]);
        return r;
    } else {
        static_assert(!is_vec_v<From>, "convert_<type> of a vector needs the vector type");
        return convert_scalar<To, Saturate, Mode>(x);
    }
}

/// as_<type>: the same bits as another type of the same size.
template <class To, class From>
constexpr To as(const From& x) {
    static_assert(sizeof(To) == sizeof(From), "as_<type> needs types of the same size");
    return __builtin_bit_cast(To, x);
}

template <int N, class T>
constexpr vec<remove_cv_t<T>, N> vload(size_t offset, const T* p) {
    vec<remove_cv_t<T>, N> r{};
    for (int i = 0; i < N; ++i) r[i] = p[offset * N + i];
    return r;
}
template <int N, class T, class U>
constexpr void vstore(const vec<T, N>& data, size_t offset, U* p) {
    for (int i = 0; i < N; ++i) p[offset * N + i] = data[i];
}

}  // namespace detail

// --- vector type names ----------------------------------------------------------------------
#define KILN_VECTOR_TYPES(scalar)             \
    typedef detail::vec<scalar, 2> scalar##2; \
    typedef detail::vec<scalar, 3> scalar##3; \
    typedef detail::vec<scalar, 4> scalar##4; \
    typedef detail::vec<scalar, 8> scalar##8; \
    typedef detail::vec<scalar, 16> scalar##16;
KILN_VECTOR_TYPES(char)
KILN_VECTOR_TYPES(uchar)
KILN_VECTOR_TYPES(short)
KILN_VECTOR_TYPES(ushort)
KILN_VECTOR_TYPES(int)
KILN_VECTOR_TYPES(uint)
KILN_VECTOR_TYPES(long)
KILN_VECTOR_TYPES(ulong)
KILN_VECTOR_TYPES(float)
KILN_VECTOR_TYPES(double)
#undef KILN_VECTOR_TYPES

// --- work-item functions --------------------------------------------------------------------
// Those that need the launch's global size or offset read `kiln_launch`: inside a kernel the
// kernel's own parameter, elsewhere the copy the kernel left in shared memory.
__shared__ detail::launch_info kiln_launch;
#define get_global_id(dimension) ::kiln_opencl::detail::global_id(kiln_launch, (dimension))
#define get_global_size(dimension) ::kiln_opencl::detail::global_size(kiln_launch, (dimension))
#define get_global_offset(dimension) ::kiln_opencl::detail::global_offset(kiln_launch, (dimension))
#define get_local_size(dimension) ::kiln_opencl::detail::local_size(kiln_launch, (dimension))
#define get_work_dim() (kiln_launch.work_dim)
#define get_global_linear_id() ::kiln_opencl::detail::global_linear_id(kiln_launch)
__device__ inline size_t get_local_id(uint d) {
    return detail::local_id(d);
}
__device__ inline size_t get_group_id(uint d) {
    return detail::group_id(d);
}
__device__ inline size_t get_num_groups(uint d) {
    return detail::num_groups(d);
}
__device__ inline size_t get_enqueued_local_size(uint d) {
    return detail::enqueued_local_size(d);
}
__device__ inline size_t get_local_linear_id() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// --- synchronisation ------------------------------------------------------------------------
// __syncthreads() also orders global memory for the block, so both fences are covered.
__device__ inline void barrier(uint) {
    __syncthreads();
}
__device__ inline void work_group_barrier(uint) {
    __syncthreads();
}
__device__ inline void work_group_barrier(uint, int) {
    __syncthreads();
}
__device__ inline void mem_fence(uint flags) {
    if (flags & CLK_GLOBAL_MEM_FENCE)
        __threadfence();
    else
        __threadfence_block();
}
__device__ inline void read_mem_fence(uint flags) {
    mem_fence(flags);
}
__device__ inline void write_mem_fence(uint flags) {
    mem_fence(flags);
}

/// Work-group copies done by the whole group at once; the wait is the barrier that publishes them.
template <class T>
__device__ inline event_t async_work_group_copy(T* dst, const T* src, size_t count, event_t) {
    const size_t group_size = blockDim.x * blockDim.y * blockDim.z;
    for (size_t i = get_local_linear_id(); i < count; i += group_size) dst[i] = src[i];
    return 0;
}
template <class T>
__device__ inline event_t async_work_group_strided_copy(T* dst, const T* src, size_t count,
                                                        size_t stride, event_t) {
    // The stride applies to the global side: the source when it is global, else the destination.
    const size_t group_size = blockDim.x * blockDim.y * blockDim.z;
    const bool source_is_global = !__isShared(src);
    for (size_t i = get_local_linear_id(); i < count; i += group_size) {
        if (source_is_global)
            dst[i] = src[i * stride];
        else
            dst[i * stride] = src[i];
    }
    return 0;
}
__device__ inline void wait_group_events(int, event_t*) {
    __syncthreads();
}
template <class T>
__device__ inline void prefetch(const T*, size_t) {}

// --- atomics --------------------------------------------------------------------------------
// OpenCL's atomic_inc/dec always step by one, unlike CUDA's wrapping atomicInc/atomicDec.
#define KILN_ATOMICS_32(T)                                          \
    __device__ inline T atomic_add(volatile T* p, T v) {            \
        return atomicAdd((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_sub(volatile T* p, T v) {            \
        return atomicSub((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_xchg(volatile T* p, T v) {           \
        return atomicExch((T*)p, v);                                \
    }                                                               \
    __device__ inline T atomic_inc(volatile T* p) {                 \
        return atomicAdd((T*)p, T(1));                              \
    }                                                               \
    __device__ inline T atomic_dec(volatile T* p) {                 \
        return atomicSub((T*)p, T(1));                              \
    }                                                               \
    __device__ inline T atomic_cmpxchg(volatile T* p, T cmp, T v) { \
        return atomicCAS((T*)p, cmp, v);                            \
    }                                                               \
    __device__ inline T atomic_min(volatile T* p, T v) {            \
        return atomicMin((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_max(volatile T* p, T v) {            \
        return atomicMax((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_and(volatile T* p, T v) {            \
        return atomicAnd((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_or(volatile T* p, T v) {             \
        return atomicOr((T*)p, v);                                  \
    }                                                               \
    __device__ inline T atomic_xor(volatile T* p, T v) {            \
        return atomicXor((T*)p, v);                                 \
    }
KILN_ATOMICS_32(int)
KILN_ATOMICS_32(uint)
#undef KILN_ATOMICS_32
__device__ inline float atomic_add(volatile float* p, float v) {
    return atomicAdd((float*)p, v);
}
__device__ inline double atomic_add(volatile double* p, double v) {
    return atomicAdd((double*)p, v);
}
__device__ inline float atomic_xchg(volatile float* p, float v) {
    return atomicExch((float*)p, v);
}

// 64-bit: CUDA has them on unsigned long long (two's complement makes add/sub/xchg/cas/and/or/xor
// the same for signed), and signed min/max on long long.
#define KILN_ATOMICS_64(T, MINMAX)                                                              \
    __device__ inline T atom_add(volatile T* p, T v) {                                          \
        return T(atomicAdd((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atom_sub(volatile T* p, T v) {                                          \
        return T(atomicAdd((unsigned long long*)p, (unsigned long long)(T(0) - v)));            \
    }                                                                                           \
    __device__ inline T atom_xchg(volatile T* p, T v) {                                         \
        return T(atomicExch((unsigned long long*)p, (unsigned long long)v));                    \
    }                                                                                           \
    __device__ inline T atom_inc(volatile T* p) {                                               \
        return atom_add(p, T(1));                                                               \
    }                                                                                           \
    __device__ inline T atom_dec(volatile T* p) {                                               \
        return atom_sub(p, T(1));                                                               \
    }                                                                                           \
    __device__ inline T atom_cmpxchg(volatile T* p, T cmp, T v) {                               \
        return T(                                                                               \
            atomicCAS((unsigned long long*)p, (unsigned long long)cmp, (unsigned long long)v)); \
    }                                                                                           \
    __device__ inline T atom_min(volatile T* p, T v) {                                          \
        return T(atomicMin((MINMAX*)p, (MINMAX)v));                                             \
    }                                                                                           \
    __device__ inline T atom_max(volatile T* p, T v) {                                          \
        return T(atomicMax((MINMAX*)p, (MINMAX)v));                                             \
    }                                                                                           \
    __device__ inline T atom_and(volatile T* p, T v) {                                          \
        return T(atomicAnd((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atom_or(volatile T* p, T v) {                                           \
        return T(atomicOr((unsigned long long*)p, (unsigned long long)v));                      \
    }                                                                                           \
    __device__ inline T atom_xor(volatile T* p, T v) {                                          \
        return T(atomicXor((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atomic_add(volatile T* p, T v) {                                        \
        return atom_add(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_sub(volatile T* p, T v) {                                        \
        return atom_sub(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_xchg(volatile T* p, T v) {                                       \
        return atom_xchg(p, v);                                                                 \
    }                                                                                           \
    __device__ inline T atomic_inc(volatile T* p) {                                             \
        return atom_inc(p);                                                                     \
    }                                                                                           \
    __device__ inline T atomic_dec(volatile T* p) {                                             \
        return atom_dec(p);                                                                     \
    }                                                                                           \
    __device__ inline T atomic_cmpxchg(volatile T* p, T cmp, T v) {                             \
        return atom_cmpxchg(p, cmp, v);                                                         \
    }                                                                                           \
    __device__ inline T atomic_min(volatile T* p, T v) {                                        \
        return atom_min(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_max(volatile T* p, T v) {                                        \
        return atom_max(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_and(volatile T* p, T v) {                                        \
        return atom_and(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_or(volatile T* p, T v) {                                         \
        return atom_or(p, v);                                                                   \
    }                                                                                           \
    __device__ inline T atomic_xor(volatile T* p, T v) {                                        \
        return atom_xor(p, v);                                                                  \
    }
KILN_ATOMICS_64(long, long long)
KILN_ATOMICS_64(ulong, unsigned long long)
#undef KILN_ATOMICS_64
// The cl_khr_*_int32_*_atomics extensions spell the 32-bit ones atom_*.
#define KILN_ATOM_ALIASES_32(T)                                   \
    __device__ inline T atom_add(volatile T* p, T v) {            \
        return atomic_add(p, v);                                  \
    }                                                             \
    __device__ inline T atom_sub(volatile T* p, T v) {            \
        return atomic_sub(p, v);                                  \
    }                                                             \
    __device__ inline T atom_xchg(volatile T* p, T v) {           \
        return atomic_xchg(p, v);                                 \
    }                                                             \
    __device__ inline T atom_inc(volatile T* p) {                 \
        return atomic_inc(p);                                     \
    }                                                             \
    __device__ inline T atom_dec(volatile T* p) {                 \
        return atomic_dec(p);                                     \
    }                                                             \
    __device__ inline T atom_cmpxchg(volatile T* p, T cmp, T v) { \
        return atomic_cmpxchg(p, cmp, v);                         \
    }                                                             \
    __device__ inline T atom_min(volatile T* p, T v) {            \
        return atomic_min(p, v);                                  \
    }                                                             \
    __device__ inline T atom_max(volatile T* p, T v) {            \
        return atomic_max(p, v);                                  \
    }                                                             \
    __device__ inline T atom_and(volatile T* p, T v) {            \
        return atomic_and(p, v);                                  \
    }                                                             \
    __device__ inline T atom_or(volatile T* p, T v) {             \
        return atomic_or(p, v);                                   \
    }                                                             \
    __device__ inline T atom_xor(volatile T* p, T v) {            \
        return atomic_xor(p, v);                                  \
    }
KILN_ATOM_ALIASES_32(int)
KILN_ATOM_ALIASES_32(uint)
#undef KILN_ATOM_ALIASES_32

// --- math -----------------------------------------------------------------------------------
#define KILN_VECTORISE_1(name)                                \
    template <class T, int N>                                 \
    __device__ inline auto name(const detail::vec<T, N>& a) { \
        return detail::map(a, [](T x) { return name(x); });   \
    }
#define KILN_VECTORISE_2(name)                                                            \
    template <class T, int N>                                                             \
    __device__ inline auto name(const detail::vec<T, N>& a, const detail::vec<T, N>& b) { \
        return detail::map(a, b, [](T x, T y) { return name(x, y); });                    \
    }
#define KILN_VECTORISE_3(name)                                                          \
    template <class T, int N>                                                           \
    __device__ inline auto name(const detail::vec<T, N>& a, const detail::vec<T, N>& b, \
                                const detail::vec<T, N>& c) {                           \
        return detail::map(a, b, c, [](T x, T y, T z) { return name(x, y, z); });       \
    }
#define KILN_FLOAT_FUNCTION_1(name, float_impl, double_impl) \
    __device__ inline float name(float x) {                  \
        return float_impl(x);                                \
    }                                                        \
    __device__ inline double name(double x) {                \
        return double_impl(x);                               \
    }                                                        \
    KILN_VECTORISE_1(name)
#define KILN_FLOAT_FUNCTION_2(name, float_impl, double_impl) \
    __device__ inline float name(float x, float y) {         \
        return float_impl(x, y);                             \
    }                                                        \
    __device__ inline double name(double x, double y) {      \
        return double_impl(x, y);                            \
    }                                                        \
    KILN_VECTORISE_2(name)
#define KILN_NATIVE_FUNCTION_1(name, float_impl) \
    __device__ inline float name(float x) {      \
        return float_impl(x);                    \
    }                                            \
    KILN_VECTORISE_1(name)
#define KILN_NATIVE_FUNCTION_2(name, float_impl)     \
    __device__ inline float name(float x, float y) { \
        return float_impl(x, y);                     \
    }                                                \
    KILN_VECTORISE_2(name)

KILN_FLOAT_FUNCTION_1(acos, ::acosf, ::acos)
KILN_FLOAT_FUNCTION_1(acosh, ::acoshf, ::acosh)
KILN_FLOAT_FUNCTION_1(asin, ::asinf, ::asin)
KILN_FLOAT_FUNCTION_1(asinh, ::asinhf, ::asinh)
KILN_FLOAT_FUNCTION_1(atan, ::atanf, ::atan)
KILN_FLOAT_FUNCTION_1(atanh, ::atanhf, ::atanh)
KILN_FLOAT_FUNCTION_1(cbrt, ::cbrtf, ::cbrt)
KILN_FLOAT_FUNCTION_1(ceil, ::ceilf, ::ceil)
KILN_FLOAT_FUNCTION_1(cos, ::cosf, ::cos)
KILN_FLOAT_FUNCTION_1(cosh, ::coshf, ::cosh)
KILN_FLOAT_FUNCTION_1(cospi, ::cospif, ::cospi)
KILN_FLOAT_FUNCTION_1(erf, ::erff, ::erf)
KILN_FLOAT_FUNCTION_1(erfc, ::erfcf, ::erfc)
KILN_FLOAT_FUNCTION_1(exp, ::expf, ::exp)
KILN_FLOAT_FUNCTION_1(exp2, ::exp2f, ::exp2)
KILN_FLOAT_FUNCTION_1(exp10, ::exp10f, ::exp10)
KILN_FLOAT_FUNCTION_1(expm1, ::expm1f, ::expm1)
KILN_FLOAT_FUNCTION_1(fabs, ::fabsf, ::fabs)
KILN_FLOAT_FUNCTION_1(floor, ::floorf, ::floor)
KILN_FLOAT_FUNCTION_1(lgamma, ::lgammaf, ::lgamma)
KILN_FLOAT_FUNCTION_1(log, ::logf, ::log)
KILN_FLOAT_FUNCTION_1(log2, ::log2f, ::log2)
KILN_FLOAT_FUNCTION_1(log10, ::log10f, ::log10)
KILN_FLOAT_FUNCTION_1(log1p, ::log1pf, ::log1p)
KILN_FLOAT_FUNCTION_1(logb, ::logbf, ::logb)
KILN_FLOAT_FUNCTION_1(rint, ::rintf, ::rint)
KILN_FLOAT_FUNCTION_1(round, ::roundf, ::round)
KILN_FLOAT_FUNCTION_1(rsqrt, ::rsqrtf, ::rsqrt)
KILN_FLOAT_FUNCTION_1(sin, ::sinf, ::sin)
KILN_FLOAT_FUNCTION_1(sinh, ::sinhf, ::sinh)
KILN_FLOAT_FUNCTION_1(sinpi, ::sinpif, ::sinpi)
KILN_FLOAT_FUNCTION_1(sqrt, ::sqrtf, ::sqrt)
KILN_FLOAT_FUNCTION_1(tan, ::tanf, ::tan)
KILN_FLOAT_FUNCTION_1(tanh, ::tanhf, ::tanh)
KILN_FLOAT_FUNCTION_1(tgamma, ::tgammaf, ::tgamma)
KILN_FLOAT_FUNCTION_1(trunc, ::truncf, ::trunc)
KILN_FLOAT_FUNCTION_2(atan2, ::atan2f, ::atan2)
KILN_FLOAT_FUNCTION_2(copysign, ::copysignf, ::copysign)
KILN_FLOAT_FUNCTION_2(fdim, ::fdimf, ::fdim)
KILN_FLOAT_FUNCTION_2(fmod, ::fmodf, ::fmod)
KILN_FLOAT_FUNCTION_2(hypot, ::hypotf, ::hypot)
KILN_FLOAT_FUNCTION_2(nextafter, ::nextafterf, ::nextafter)
KILN_FLOAT_FUNCTION_2(pow, ::powf, ::pow)
KILN_FLOAT_FUNCTION_2(powr, ::powf, ::pow)
KILN_FLOAT_FUNCTION_2(remainder, ::remainderf, ::remainder)

__device__ inline float acospi(float x) {
    return ::acosf(x) * M_1_PI_F;
}
__device__ inline double acospi(double x) {
    return ::acos(x) * M_1_PI;
}
__device__ inline float asinpi(float x) {
    return ::asinf(x) * M_1_PI_F;
}
__device__ inline double asinpi(double x) {
    return ::asin(x) * M_1_PI;
}
__device__ inline float atanpi(float x) {
    return ::atanf(x) * M_1_PI_F;
}
__device__ inline double atanpi(double x) {
    return ::atan(x) * M_1_PI;
}
__device__ inline float tanpi(float x) {
    return ::sinpif(x) / ::cospif(x);
}
__device__ inline double tanpi(double x) {
    return ::sinpi(x) / ::cospi(x);
}
__device__ inline float atan2pi(float y, float x) {
    return ::atan2f(y, x) * M_1_PI_F;
}
__device__ inline double atan2pi(double y, double x) {
    return ::atan2(y, x) * M_1_PI;
}
__device__ inline float maxmag(float x, float y) {
    return ::fabsf(x) > ::fabsf(y) ? x : ::fabsf(y) > ::fabsf(x) ? y : ::fmaxf(x, y);
}
__device__ inline double maxmag(double x, double y) {
    return ::fabs(x) > ::fabs(y) ? x : ::fabs(y) > ::fabs(x) ? y : ::fmax(x, y);
}
__device__ inline float minmag(float x, float y) {
    return ::fabsf(x) < ::fabsf(y) ? x : ::fabsf(y) < ::fabsf(x) ? y : ::fminf(x, y);
}
__device__ inline double minmag(double x, double y) {
    return ::fabs(x) < ::fabs(y) ? x : ::fabs(y) < ::fabs(x) ? y : ::fmin(x, y);
}
KILN_VECTORISE_1(acospi)
KILN_VECTORISE_1(asinpi)
KILN_VECTORISE_1(atanpi)
KILN_VECTORISE_1(tanpi)
KILN_VECTORISE_2(atan2pi)
KILN_VECTORISE_2(maxmag)
KILN_VECTORISE_2(minmag)

__device__ inline float fma(float a, float b, float c) {
    return ::fmaf(a, b, c);
}
__device__ inline double fma(double a, double b, double c) {
    return ::fma(a, b, c);
}
__device__ inline float mad(float a, float b, float c) {
    return ::fmaf(a, b, c);
}
__device__ inline double mad(double a, double b, double c) {
    return ::fma(a, b, c);
}
KILN_VECTORISE_3(fma)
KILN_VECTORISE_3(mad)

// fmin/fmax and friends also take a vector with a scalar.
#define KILN_FLOAT_FUNCTION_2_WITH_SCALAR(name, float_impl, double_impl)                     \
    KILN_FLOAT_FUNCTION_2(name, float_impl, double_impl)                                     \
    template <class T, int N, class S, detail::enable_if_t<detail::is_scalar_v<S>, int> = 0> \
    __device__ inline detail::vec<T, N> name(const detail::vec<T, N>& a, S b) {              \
        return name(a, detail::vec<T, N>(b));                                                \
    }
KILN_FLOAT_FUNCTION_2_WITH_SCALAR(fmin, ::fminf, ::fmin)
KILN_FLOAT_FUNCTION_2_WITH_SCALAR(fmax, ::fmaxf, ::fmax)
#undef KILN_FLOAT_FUNCTION_2_WITH_SCALAR

__device__ inline float pown(float x, int n) {
    return ::powf(x, float(n));
}
__device__ inline double pown(double x, int n) {
    return ::pow(x, double(n));
}
// An odd root of a negative number is real: rootn(-8, 3) == -2.
__device__ inline float rootn(float x, int n) {
    return x < 0.0f && (n & 1) ? -::powf(-x, 1.0f / float(n)) : ::powf(x, 1.0f / float(n));
}
__device__ inline double rootn(double x, int n) {
    return x < 0.0 && (n & 1) ? -::pow(-x, 1.0 / double(n)) : ::pow(x, 1.0 / double(n));
}
__device__ inline float ldexp(float x, int n) {
    return ::ldexpf(x, n);
}
__device__ inline double ldexp(double x, int n) {
    return ::ldexp(x, n);
}
#define KILN_VECTORISE_WITH_INT(name)                                             \
    template <class T, int N>                                                     \
    __device__ inline detail::vec<T, N> name(const detail::vec<T, N>& a,          \
                                             const detail::vec<int, N>& n) {      \
        detail::vec<T, N> r{};                                                    \
        for (int i = 0; i < N; ++i) r[i] = name(a[i], n[i]);                      \
        return r;                                                                 \
    }                                                                             \
    template <class T, int N>                                                     \
    __device__ inline detail::vec<T, N> name(const detail::vec<T, N>& a, int n) { \
        return name(a, detail::vec<int, N>(n));                                   \
    }
KILN_VECTORISE_WITH_INT(pown)
KILN_VECTORISE_WITH_INT(rootn)
KILN_VECTORISE_WITH_INT(ldexp)
#undef KILN_VECTORISE_WITH_INT

__device__ inline float fract(float x, float* whole) {
    *whole = ::floorf(x);
    return ::fminf(x - *whole, 0x1.fffffep-1f);
}
__device__ inline double fract(double x, double* whole) {
    *whole = ::floor(x);
    return ::fmin(x - *whole, 0x1.fffffffffffffp-1);
}
__device__ inline float modf(float x, float* whole) {
    return ::modff(x, whole);
}
__device__ inline double modf(double x, double* whole) {
    return ::modf(x, whole);
}
__device__ inline float sincos(float x, float* cosine) {
    float sine;
    ::sincosf(x, &sine, cosine);
    return sine;
}
__device__ inline double sincos(double x, double* cosine) {
    double sine;
    ::sincos(x, &sine, cosine);
    return sine;
}

// native_* and half_* trade accuracy for speed: CUDA's intrinsics where there is one.
KILN_NATIVE_FUNCTION_1(native_cos, ::__cosf)
KILN_NATIVE_FUNCTION_1(native_sin, ::__sinf)
KILN_NATIVE_FUNCTION_1(native_tan, ::__tanf)
KILN_NATIVE_FUNCTION_1(native_exp, ::__expf)
KILN_NATIVE_FUNCTION_1(native_exp2, ::exp2f)
KILN_NATIVE_FUNCTION_1(native_exp10, ::__exp10f)
KILN_NATIVE_FUNCTION_1(native_log, ::__logf)
KILN_NATIVE_FUNCTION_1(native_log2, ::__log2f)
KILN_NATIVE_FUNCTION_1(native_log10, ::__log10f)
KILN_NATIVE_FUNCTION_1(native_sqrt, ::sqrtf)
KILN_NATIVE_FUNCTION_1(native_rsqrt, ::rsqrtf)
KILN_NATIVE_FUNCTION_2(native_powr, ::__powf)
KILN_NATIVE_FUNCTION_2(native_divide, ::__fdividef)
__device__ inline float native_recip(float x) {
    return ::__fdividef(1.0f, x);
}
KILN_VECTORISE_1(native_recip)
KILN_NATIVE_FUNCTION_1(half_cos, ::__cosf)
KILN_NATIVE_FUNCTION_1(half_sin, ::__sinf)
KILN_NATIVE_FUNCTION_1(half_tan, ::__tanf)
KILN_NATIVE_FUNCTION_1(half_exp, ::__expf)
KILN_NATIVE_FUNCTION_1(half_exp2, ::exp2f)
KILN_NATIVE_FUNCTION_1(half_exp10, ::__exp10f)
KILN_NATIVE_FUNCTION_1(half_log, ::__logf)
KILN_NATIVE_FUNCTION_1(half_log2, ::__log2f)
KILN_NATIVE_FUNCTION_1(half_log10, ::__log10f)
KILN_NATIVE_FUNCTION_1(half_sqrt, ::sqrtf)
KILN_NATIVE_FUNCTION_1(half_rsqrt, ::rsqrtf)
KILN_NATIVE_FUNCTION_2(half_powr, ::__powf)
KILN_NATIVE_FUNCTION_2(half_divide, ::__fdividef)
__device__ inline float half_recip(float x) {
    return ::__fdividef(1.0f, x);
}
KILN_VECTORISE_1(half_recip)

// --- common functions (floating point) ------------------------------------------------------
template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T degrees(T radians) {
    return radians * T(57.295779513082320876798154814105);
}
template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T radians(T degrees) {
    return degrees * T(0.017453292519943295769236907684886);
}
template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T sign(T x) {
    return x > T(0) ? T(1) : x < T(0) ? T(-1) : x != x ? T(0) : x;
}
KILN_VECTORISE_1(degrees)
KILN_VECTORISE_1(radians)
KILN_VECTORISE_1(sign)

template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T mix(T x, T y, T a) {
    return x + (y - x) * a;
}
template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T step(T edge, T x) {
    return x < edge ? T(0) : T(1);
}
template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>
__device__ inline T smoothstep(T edge0, T edge1, T x) {
    T t = (x - edge0) / (edge1 - edge0);
    t = t < T(0) ? T(0) : t > T(1) ? T(1) : t;
    return t * t * (T(3) - T(2) * t);
}
KILN_VECTORISE_3(mix)
KILN_VECTORISE_2(step)
KILN_VECTORISE_3(smoothstep)
template <class T, int N>
__device__ inline detail::vec<T, N> mix(const detail::vec<T, N>& x, const detail::vec<T, N>& y,
                                        T a) {
    return mix(x, y, detail::vec<T, N>(a));
}
template <class T, int N>
__device__ inline detail::vec<T, N> step(T edge, const detail::vec<T, N>& x) {
    return step(detail::vec<T, N>(edge), x);
}
template <class T, int N>
__device__ inline detail::vec<T, N> smoothstep(T edge0, T edge1, const detail::vec<T, N>& x) {
    return smoothstep(detail::vec<T, N>(edge0), detail::vec<T, N>(edge1), x);
}

// --- min, max, clamp (integer and floating point) -------------------------------------------
// Mixed scalar types meet in their usual arithmetic conversion, as the literal in min(x, 0) needs.
template <class A, class B>
using common_t = detail::conditional_t<detail::is_same_v<A, B>, A, decltype(A() + B())>;
template <class A, class B,
          detail::enable_if_t<detail::is_scalar_v<A> && detail::is_scalar_v<B>, int> = 0>
__device__ constexpr common_t<A, B> min(A a, B b) {
    return common_t<A, B>(b) < common_t<A, B>(a) ? common_t<A, B>(b) : common_t<A, B>(a);
}
template <class A, class B,
          detail::enable_if_t<detail::is_scalar_v<A> && detail::is_scalar_v<B>, int> = 0>
__device__ constexpr common_t<A, B> max(A a, B b) {
    return common_t<A, B>(a) < common_t<A, B>(b) ? common_t<A, B>(b) : common_t<A, B>(a);
}
template <class X, class L, class H,
          detail::enable_if_t<
              detail::is_scalar_v<X> && detail::is_scalar_v<L> && detail::is_scalar_v<H>, int> = 0>
__device__ constexpr X clamp(X x, L lo, H hi) {
    return X(min(max(x, X(lo)), X(hi)));
}
template <class T, int N>
__device__ constexpr detail::vec<T, N> min(const detail::vec<T, N>& a, const detail::vec<T, N>& b) {
    return detail::map(a, b, [](T x, T y) { return T(min(x, y)); });
}
template <class T, int N>
__device__ constexpr detail::vec<T, N> max(const detail::vec<T, N>& a, const detail::vec<T, N>& b) {
    return detail::map(a, b, [](T x, T y) { return T(max(x, y)); });
}
template <class T, int N, class S, detail::enable_if_t<detail::is_scalar_v<S>, int> = 0>
__device__ constexpr detail::vec<T, N> min(const detail::vec<T, N>& a, S b) {
    return min(a, detail::vec<T, N>(b));
}
template <class T, int N, class S, detail::enable_if_t<detail::is_scalar_v<S>, int> = 0>
__device__ constexpr detail::vec<T, N> max(const detail::vec<T, N>& a, S b) {
    return max(a, detail::vec<T, N>(b));
}
template <class T, int N>
__device__ constexpr detail::vec<T, N> clamp(const detail::vec<T, N>& x,
                                             const detail::vec<T, N>& lo,
                                             const detail::vec<T, N>& hi) {
    return min(max(x, lo), hi);
}
template <class T, int N, class S, detail::enable_if_t<detail::is_scalar_v<S>, int> = 0>
__device__ constexpr detail::vec<T, N> clamp(const detail::vec<T, N>& x, S lo, S hi) {
    return clamp(x, detail::vec<T, N>(lo), detail::vec<T, N>(hi));
}

// --- integer functions ----------------------------------------------------------------------
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr detail::make_unsigned_t<T> abs(T x) {
    using U = detail::make_unsigned_t<T>;
    return x < T(0) ? U(U(0) - U(x)) : U(x);
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr detail::make_unsigned_t<T> abs_diff(T x, T y) {
    using U = detail::make_unsigned_t<T>;
    return x > y ? U(U(x) - U(y)) : U(U(y) - U(x));
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr T add_sat(T x, T y) {
    const T sum = T(detail::make_unsigned_t<T>(x) + detail::make_unsigned_t<T>(y));
    if constexpr (detail::is_signed_v<T>) {
        if (x > 0 && y > 0 && sum < 0) return detail::highest_value<T>();
        if (x < 0 && y < 0 && sum >= 0) return detail::lowest_value<T>();
        return sum;
    } else {
        return sum < x ? detail::highest_value<T>() : sum;
    }
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr T sub_sat(T x, T y) {
    const T difference = T(detail::make_unsigned_t<T>(x) - detail::make_unsigned_t<T>(y));
    if constexpr (detail::is_signed_v<T>) {
        if (x >= 0 && y < 0 && difference < 0) return detail::highest_value<T>();
        if (x < 0 && y > 0 && difference >= 0) return detail::lowest_value<T>();
        return difference;
    } else {
        return y > x ? T(0) : difference;
    }
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr T hadd(T x, T y) {
    return T((x >> 1) + (y >> 1) + (x & y & 1));
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr T rhadd(T x, T y) {
    return T((x >> 1) + (y >> 1) + ((x | y) & 1));
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T mul_hi(T x, T y) {
    constexpr bool is_signed = detail::is_signed_v<T>;
    if constexpr (sizeof(T) == 8) {
        if constexpr (is_signed)
            return T(__mul64hi((long long)x, (long long)y));
        else
            return T(__umul64hi((unsigned long long)x, (unsigned long long)y));
    } else if constexpr (sizeof(T) == 4) {
        if constexpr (is_signed)
            return T(__mulhi(int(x), int(y)));
        else
            return T(__umulhi(unsigned(x), unsigned(y)));
    } else {
        return T((int(x) * int(y)) >> (sizeof(T) * 8));
    }
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T mad_hi(T a, T b, T c) {
    return T(mul_hi(a, b) + c);
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T mad_sat(T a, T b, T c) {
    constexpr bool is_signed = detail::is_signed_v<T>;
    if constexpr (sizeof(T) < 8) {
        // Exact in 64 bits: |a * b + c| < 2^63 for every 32-bit operand.
        using wide = detail::conditional_t<is_signed, long long, unsigned long long>;
        const wide result = wide(a) * wide(b) + wide(c);
        return result > wide(detail::highest_value<T>())  ? detail::highest_value<T>()
               : result < wide(detail::lowest_value<T>()) ? detail::lowest_value<T>()
                                                          : T(result);
    } else if constexpr (is_signed) {
        const long long low = (long long)((unsigned long long)a * (unsigned long long)b);
        const long long high = __mul64hi((long long)a, (long long)b);
        if (high != (low >> 63))
            return (a < 0) != (b < 0) ? detail::lowest_value<T>() : detail::highest_value<T>();
        return add_sat(T(low), c);
    } else {
        if (__umul64hi((unsigned long long)a, (unsigned long long)b) != 0)
            return detail::highest_value<T>();
        return add_sat(T(a * b), c);
    }
}
__device__ inline int mul24(int x, int y) {
    return __mul24(x, y);
}
__device__ inline uint mul24(uint x, uint y) {
    return __umul24(x, y);
}
__device__ inline int mad24(int x, int y, int z) {
    return __mul24(x, y) + z;
}
__device__ inline uint mad24(uint x, uint y, uint z) {
    return __umul24(x, y) + z;
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T clz(T x) {
    if constexpr (sizeof(T) == 8)
        return T(__clzll((long long)x));
    else
        return T(__clz(int(detail::make_unsigned_t<T>(x))) - int(32 - sizeof(T) * 8));
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T ctz(T x) {
    if (x == T(0)) return T(sizeof(T) * 8);
    if constexpr (sizeof(T) == 8)
        return T(__ffsll((long long)x) - 1);
    else
        return T(__ffs(int(detail::make_unsigned_t<T>(x))) - 1);
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline T popcount(T x) {
    if constexpr (sizeof(T) == 8)
        return T(__popcll((unsigned long long)x));
    else
        return T(__popc(unsigned(detail::make_unsigned_t<T>(x))));
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ constexpr T rotate(T v, T i) {
    using U = detail::make_unsigned_t<T>;
    constexpr unsigned bits = sizeof(T) * 8;
    const unsigned shift = unsigned(U(i)) % bits;
    return shift == 0 ? v : T(U(U(v) << shift) | U(U(v) >> (bits - shift)));
}
__device__ inline short upsample(signed char hi, uchar lo) {
    return short((short(hi) << 8) | lo);
}
__device__ inline ushort upsample(uchar hi, uchar lo) {
    return ushort((ushort(hi) << 8) | lo);
}
__device__ inline int upsample(short hi, ushort lo) {
    return (int(hi) << 16) | lo;
}
__device__ inline uint upsample(ushort hi, ushort lo) {
    return (uint(hi) << 16) | lo;
}
__device__ inline long upsample(int hi, uint lo) {
    return long((unsigned long)(unsigned)hi << 32 | lo);
}
__device__ inline ulong upsample(uint hi, uint lo) {
    return (ulong(hi) << 32) | lo;
}
KILN_VECTORISE_1(abs)
KILN_VECTORISE_2(abs_diff)
KILN_VECTORISE_2(add_sat)
KILN_VECTORISE_2(sub_sat)
KILN_VECTORISE_2(hadd)
KILN_VECTORISE_2(rhadd)
KILN_VECTORISE_2(mul_hi)
KILN_VECTORISE_3(mad_hi)
KILN_VECTORISE_3(mad_sat)
KILN_VECTORISE_2(mul24)
KILN_VECTORISE_3(mad24)
KILN_VECTORISE_1(clz)
KILN_VECTORISE_1(ctz)
KILN_VECTORISE_1(popcount)
KILN_VECTORISE_2(rotate)

// --- geometric functions --------------------------------------------------------------------
__device__ inline float dot(float a, float b) {
    return a * b;
}
__device__ inline double dot(double a, double b) {
    return a * b;
}
template <class T, int N>
__device__ inline T dot(const detail::vec<T, N>& a, const detail::vec<T, N>& b) {
    T sum = T(0);
    for (int i = 0; i < N; ++i) sum = ::kiln_opencl::fma(a[i], b[i], sum);
    return sum;
}
template <class T>
__device__ inline detail::vec<T, 3> cross(const detail::vec<T, 3>& a, const detail::vec<T, 3>& b) {
    return detail::vec<T, 3>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
template <class T>
__device__ inline detail::vec<T, 4> cross(const detail::vec<T, 4>& a, const detail::vec<T, 4>& b) {
    return detail::vec<T, 4>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x,
                             T(0));
}
template <class V>
__device__ inline auto length(const V& v) {
    return sqrt(dot(v, v));
}
template <class V>
__device__ inline auto distance(const V& a, const V& b) {
    return length(a - b);
}
template <class V>
__device__ inline V normalize(const V& v) {
    const auto squared = dot(v, v);
    return squared == decltype(squared)(0) ? v : V(v * rsqrt(squared));
}
template <class V>
__device__ inline auto fast_length(const V& v) {
    return native_sqrt(dot(v, v));
}
template <class V>
__device__ inline auto fast_distance(const V& a, const V& b) {
    return fast_length(a - b);
}
template <class V>
__device__ inline V fast_normalize(const V& v) {
    return V(v * native_rsqrt(dot(v, v)));
}

// --- relational functions -------------------------------------------------------------------
// Scalars answer 0 or 1, vectors -1 or 0 per component, as OpenCL specifies.
#define KILN_RELATIONAL_1(name, expression)                                                        \
    template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>                     \
    __device__ inline int name(T x) {                                                              \
        return (expression) ? 1 : 0;                                                               \
    }                                                                                              \
    template <class T, int N>                                                                      \
    __device__ inline detail::vec<detail::mask_element_t<T>, N> name(const detail::vec<T, N>& v) { \
        detail::vec<detail::mask_element_t<T>, N> r{};                                             \
        for (int i = 0; i < N; ++i) r[i] = name(v[i]) ? -1 : 0;                                    \
        return r;                                                                                  \
    }
#define KILN_RELATIONAL_2(name, expression)                                                        \
    template <class T, detail::enable_if_t<detail::is_floating_v<T>, int> = 0>                     \
    __device__ inline int name(T x, T y) {                                                         \
        return (expression) ? 1 : 0;                                                               \
    }                                                                                              \
    template <class T, int N>                                                                      \
    __device__ inline detail::vec<detail::mask_element_t<T>, N> name(const detail::vec<T, N>& a,   \
                                                                     const detail::vec<T, N>& b) { \
        detail::vec<detail::mask_element_t<T>, N> r{};                                             \
        for (int i = 0; i < N; ++i) r[i] = name(a[i], b[i]) ? -1 : 0;                              \
        return r;                                                                                  \
    }
KILN_RELATIONAL_1(isnan, x != x)
KILN_RELATIONAL_1(isinf, ::isinf(x))
KILN_RELATIONAL_1(isfinite, ::isfinite(x))
KILN_RELATIONAL_1(isnormal, ::isfinite(x) &&
                                (x < T(0) ? -x : x) >= (sizeof(T) == 4 ? T(FLT_MIN) : T(DBL_MIN)))
KILN_RELATIONAL_1(signbit, ::signbit(x))
KILN_RELATIONAL_2(isequal, x == y)
KILN_RELATIONAL_2(isnotequal, x != y)
KILN_RELATIONAL_2(isgreater, x > y)
KILN_RELATIONAL_2(isgreaterequal, x >= y)
KILN_RELATIONAL_2(isless, x < y)
KILN_RELATIONAL_2(islessequal, x <= y)
KILN_RELATIONAL_2(islessgreater, x<y || x> y)
KILN_RELATIONAL_2(isordered, x == x && y == y)
KILN_RELATIONAL_2(isunordered, x != x || y != y)
#undef KILN_RELATIONAL_1
#undef KILN_RELATIONAL_2

template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline int any(T x) {
    return x < T(0) ? 1 : 0;
}
template <class T, detail::enable_if_t<detail::is_integer_v<T>, int> = 0>
__device__ inline int all(T x) {
    return x < T(0) ? 1 : 0;
}
template <class T, int N>
__device__ inline int any(const detail::vec<T, N>& v) {
    for (int i = 0; i < N; ++i)
        if (v[i] < T(0)) return 1;
    return 0;
}
template <class T, int N>
__device__ inline int all(const detail::vec<T, N>& v) {
    for (int i = 0; i < N; ++i)
        if (!(v[i] < T(0))) return 0;
    return 1;
}
/// Scalars choose by c != 0, vectors by the most significant bit of each component of c.
template <class T, class C,
          detail::enable_if_t<detail::is_scalar_v<T> && detail::is_integer_v<C>, int> = 0>
__device__ inline T select(T a, T b, C c) {
    return c ? b : a;
}
template <class T, class C, int N>
__device__ inline detail::vec<T, N> select(const detail::vec<T, N>& a, const detail::vec<T, N>& b,
                                           const detail::vec<C, N>& c) {
    detail::vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = c[i] < C(0) ? b[i] : a[i];
    return r;
}
template <class T>
__device__ inline T bitselect(T a, T b, T c) {
    if constexpr (detail::is_floating_v<T>) {
        using bits = detail::conditional_t<sizeof(T) == 4, uint, ulong>;
        return detail::as<T>(bits((detail::as<bits>(a) & ~detail::as<bits>(c)) |
                                  (detail::as<bits>(b) & detail::as<bits>(c))));
    } else if constexpr (detail::is_vec_v<T>) {
        T r{};
        for (int i = 0; i < T::size; ++i) r[i] = bitselect(a[i], b[i], c[i]);
        return r;
    } else {
        return T((a & ~c) | (b & c));
    }
}

#undef KILN_VECTORISE_1
#undef KILN_VECTORISE_2
#undef KILN_VECTORISE_3
#undef KILN_FLOAT_FUNCTION_1
#undef KILN_FLOAT_FUNCTION_2
#undef KILN_NATIVE_FUNCTION_1
#undef KILN_NATIVE_FUNCTION_2

}  // namespace kiln_opencl

#include "kiln_opencl_subgroups.h"

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
