// SPDX-License-Identifier: Apache-2.0
// Host twins of OpenCL C's vector types (float4, int2...): the same size and alignment as on the
// device, so that buffers and structs of them have one layout on both sides.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln {

template <class T, int N>
requires(std::is_arithmetic_v<T> && (N == 2 || N == 3 || N == 4)) struct vec;

namespace detail {

/// A swizzle of several components (v.xy, v.s10, v.lo) as the C++ check of a kernel body sees
/// it: a vector of the components it names, which may be assigned a vector of its size.
/// Swizzles are static members (references, so that their types are complete only where used),
/// so that the host layout stays the components alone; they are declared and never defined, so
/// only kernel bodies, which never run on the host, can use them.
template <class T, int N>
struct swizzle : vec<T, N> {
    swizzle& operator=(const vec<T, N>& value);
};

// M(xyzw name, s-digit name, size) for every swizzle of 2 to N distinct components of an
// N-component vector.
// clang-format off
#define KILN_DETAIL_SWIZZLES_2(M) \
    M(xy, s01, 2) M(yx, s10, 2)

#define KILN_DETAIL_SWIZZLES_3(M) \
    M(xy, s01, 2) M(xz, s02, 2) M(yx, s10, 2) M(yz, s12, 2) M(zx, s20, 2) M(zy, s21, 2) \
    M(xyz, s012, 3) M(xzy, s021, 3) M(yxz, s102, 3) M(yzx, s120, 3) M(zxy, s201, 3) \
    M(zyx, s210, 3)

#define KILN_DETAIL_SWIZZLES_4(M) \
    M(xy, s01, 2) M(xz, s02, 2) M(xw, s03, 2) M(yx, s10, 2) M(yz, s12, 2) M(yw, s13, 2) \
    M(zx, s20, 2) M(zy, s21, 2) M(zw, s23, 2) M(wx, s30, 2) M(wy, s31, 2) M(wz, s32, 2) \
    M(xyz, s012, 3) M(xyw, s013, 3) M(xzy, s021, 3) M(xzw, s023, 3) M(xwy, s031, 3) \
    M(xwz, s032, 3) M(yxz, s102, 3) M(yxw, s103, 3) M(yzx, s120, 3) M(yzw, s123, 3) \
    M(ywx, s130, 3) M(ywz, s132, 3) M(zxy, s201, 3) M(zxw, s203, 3) M(zyx, s210, 3) \
    M(zyw, s213, 3) M(zwx, s230, 3) M(zwy, s231, 3) M(wxy, s301, 3) M(wxz, s302, 3) \
    M(wyx, s310, 3) M(wyz, s312, 3) M(wzx, s320, 3) M(wzy, s321, 3) M(xyzw, s0123, 4) \
    M(xywz, s0132, 4) M(xzyw, s0213, 4) M(xzwy, s0231, 4) M(xwyz, s0312, 4) M(xwzy, s0321, 4) \
    M(yxzw, s1023, 4) M(yxwz, s1032, 4) M(yzxw, s1203, 4) M(yzwx, s1230, 4) M(ywxz, s1302, 4) \
    M(ywzx, s1320, 4) M(zxyw, s2013, 4) M(zxwy, s2031, 4) M(zyxw, s2103, 4) M(zywx, s2130, 4) \
    M(zwxy, s2301, 4) M(zwyx, s2310, 4) M(wxyz, s3012, 4) M(wxzy, s3021, 4) M(wyxz, s3102, 4) \
    M(wyzx, s3120, 4) M(wzxy, s3201, 4) M(wzyx, s3210, 4)
// clang-format on

#define KILN_DETAIL_SWIZZLE_MEMBER(name, s_name, size) \
    static swizzle<T, size>& name;                     \
    static swizzle<T, size>& s_name;

/// The components, named as in OpenCL C. Aligned to their size, and 3-component vectors take
/// the room of 4 (OpenCL C 6.1.5), which is what kiln's CUDA prelude does too. The other names
/// of components (s0, lo, the swizzles) are static members: see swizzle.
template <class T, int N>
struct vec_components;
template <class T>
struct alignas(2 * sizeof(T)) vec_components<T, 2> {
    T x, y;
    static T &s0, &s1, &lo, &hi, &even, &odd;
    KILN_DETAIL_SWIZZLES_2(KILN_DETAIL_SWIZZLE_MEMBER)
};
template <class T>
struct alignas(4 * sizeof(T)) vec_components<T, 3> {
    T x, y, z;
    static T &s0, &s1, &s2;
    // OpenCL C reads a 3-component vector's hi and odd as of 4 components, the 4th undefined.
    static swizzle<T, 2>&lo, &even;
    static const vec<T, 2>&hi, &odd;
    KILN_DETAIL_SWIZZLES_3(KILN_DETAIL_SWIZZLE_MEMBER)
};
template <class T>
struct alignas(4 * sizeof(T)) vec_components<T, 4> {
    T x, y, z, w;
    static T &s0, &s1, &s2, &s3;
    static swizzle<T, 2>&lo, &hi, &even, &odd;
    KILN_DETAIL_SWIZZLES_4(KILN_DETAIL_SWIZZLE_MEMBER)
};

#undef KILN_DETAIL_SWIZZLE_MEMBER
#undef KILN_DETAIL_SWIZZLES_2
#undef KILN_DETAIL_SWIZZLES_3
#undef KILN_DETAIL_SWIZZLES_4

}  // namespace detail

/// An OpenCL C vector of N components of T (N = 2, 3, 4), with element-wise arithmetic.
/// Components are v.x, v.y... or v[i]; {} value-initialises to zero.
template <class T, int N>
requires(std::is_arithmetic_v<T> && (N == 2 || N == 3 || N == 4)) struct vec
    : detail::vec_components<T, N> {
    using value_type = T;           ///< the component type
    static constexpr int size = N;  ///< the number of components

    // The constructors are OpenCL C's vector literals, so that `kiln::float4{2.0f}` means one
    // thing in host code and in kernel bodies (where it becomes `(float4)(2.0f)`): one value
    // for every component, or every component given. Fewer components do not compile, as the
    // device compiler would refuse them too.
    vec() = default;  ///< components left uninitialised (`{}` zeroes them)
    /// Every component `every`: OpenCL C's `(float4)(2.0f)`.
    explicit constexpr vec(T every) : detail::vec_components<T, N>{} {
        for (int i = 0; i < N; ++i) (*this)[i] = every;
    }
    ///@{
    /// Every component given, x first.
    constexpr vec(T x, T y) requires(N == 2) : detail::vec_components<T, N>{x, y} {}
    constexpr vec(T x, T y, T z) requires(N == 3) : detail::vec_components<T, N>{x, y, z} {}
    constexpr vec(T x, T y, T z, T w) requires(N == 4) : detail::vec_components<T, N>{x, y, z, w} {}
    ///@}

    ///@{
    /// Component i: 0 is x, 1 is y, 2 is z, 3 is w.
    constexpr T& operator[](int i) { return component(*this, i); }
    constexpr const T& operator[](int i) const { return component(*this, i); }
    ///@}

  private:
    template <class V>
    static constexpr auto& component(V& v, int i) {
        if constexpr (N == 2) {
            return i == 0 ? v.x : v.y;
        } else if constexpr (N == 3) {
            return i == 0 ? v.x : i == 1 ? v.y : v.z;
        } else {
            return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
        }
    }

  public:
    /// Whole-vector equality, one bool: every component equal (a NaN component never is).
    friend constexpr bool operator==(const vec& a, const vec& b) {
        for (int i = 0; i < N; ++i)
            if (!(a[i] == b[i])) return false;
        return true;
    }
};

///@{
/// OpenCL C's vector types of the same names, laid out as they are on the device.
using float2 = vec<float, 2>;
using float3 = vec<float, 3>;
using float4 = vec<float, 4>;
using double2 = vec<double, 2>;
using double3 = vec<double, 3>;
using double4 = vec<double, 4>;
using int2 = vec<std::int32_t, 2>;
using int3 = vec<std::int32_t, 3>;
using int4 = vec<std::int32_t, 4>;
using uint2 = vec<std::uint32_t, 2>;
using uint3 = vec<std::uint32_t, 3>;
using uint4 = vec<std::uint32_t, 4>;
///@}

namespace detail {

template <class T>
inline constexpr bool is_vec_v = false;
template <class T, int N>
inline constexpr bool is_vec_v<vec<T, N>> = true;

/// Operands of element-wise vector arithmetic: two vectors of one type, or a vector and a
/// scalar of its component type (as OpenCL C widens a scalar to every component).
template <class A, class B>
concept vec_arithmetic_operands = (is_vec_v<A> && std::same_as<A, B>) ||
                                  (is_vec_v<A> && std::same_as<B, typename A::value_type>) ||
                                  (is_vec_v<B> && std::same_as<A, typename B::value_type>);

template <class Op, class T, int N>
constexpr vec<T, N> elementwise(const vec<T, N>& a, const vec<T, N>& b, Op op) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = op(a[i], b[i]);
    return r;
}
template <class T, int N>
constexpr vec<T, N> broadcast(T value) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = value;
    return r;
}

}  // namespace detail

// Scalars of another arithmetic type convert to the component type, as in OpenCL C.
#define KILN_DETAIL_VEC_OPERATOR(op)                                                       \
    template <class T, int N>                                                              \
    constexpr vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {              \
        return detail::elementwise(a, b, [](T l, T r) { return static_cast<T>(l op r); }); \
    }                                                                                      \
    template <class T, int N, class S>                                                     \
    requires std::is_arithmetic_v<S>                                                       \
    constexpr vec<T, N> operator op(const vec<T, N>& a, S b) {                             \
        return a op detail::broadcast<T, N>(static_cast<T>(b));                            \
    }                                                                                      \
    template <class T, int N, class S>                                                     \
    requires std::is_arithmetic_v<S>                                                       \
    constexpr vec<T, N> operator op(S a, const vec<T, N>& b) {                             \
        return detail::broadcast<T, N>(static_cast<T>(a)) op b;                            \
    }                                                                                      \
    template <class T, int N, class B>                                                     \
    constexpr vec<T, N>& operator op##=(vec<T, N>& a, const B& b) {                        \
        return a = a op b;                                                                 \
    }
KILN_DETAIL_VEC_OPERATOR(+)
KILN_DETAIL_VEC_OPERATOR(-)
KILN_DETAIL_VEC_OPERATOR(*)
KILN_DETAIL_VEC_OPERATOR(/)
#undef KILN_DETAIL_VEC_OPERATOR

// The integer operators, for integer components.
#define KILN_DETAIL_VEC_INTEGER_OPERATOR(op)                                               \
    template <std::integral T, int N>                                                      \
    constexpr vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {              \
        return detail::elementwise(a, b, [](T l, T r) { return static_cast<T>(l op r); }); \
    }                                                                                      \
    template <std::integral T, int N, std::integral S>                                     \
    constexpr vec<T, N> operator op(const vec<T, N>& a, S b) {                             \
        return a op detail::broadcast<T, N>(static_cast<T>(b));                            \
    }                                                                                      \
    template <std::integral T, int N, std::integral S>                                     \
    constexpr vec<T, N> operator op(S a, const vec<T, N>& b) {                             \
        return detail::broadcast<T, N>(static_cast<T>(a)) op b;                            \
    }                                                                                      \
    template <std::integral T, int N, class B>                                             \
    constexpr vec<T, N>& operator op##=(vec<T, N>& a, const B& b) {                        \
        return a = a op b;                                                                 \
    }
KILN_DETAIL_VEC_INTEGER_OPERATOR(%)
KILN_DETAIL_VEC_INTEGER_OPERATOR(&)
KILN_DETAIL_VEC_INTEGER_OPERATOR(|)
KILN_DETAIL_VEC_INTEGER_OPERATOR(^)
KILN_DETAIL_VEC_INTEGER_OPERATOR(<<)
KILN_DETAIL_VEC_INTEGER_OPERATOR(>>)
#undef KILN_DETAIL_VEC_INTEGER_OPERATOR

/// Bitwise not of every component.
template <std::integral T, int N>
constexpr vec<T, N> operator~(const vec<T, N>& a) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = static_cast<T>(~a[i]);
    return r;
}

namespace detail {
/// The signed integer of T's size: the components of OpenCL C's comparison results.
template <class T>
using signed_mask_t = std::conditional_t<
    sizeof(T) == 8, std::int64_t,
    std::conditional_t<sizeof(T) == 4, std::int32_t,
                       std::conditional_t<sizeof(T) == 2, std::int16_t, std::int8_t>>>;
}  // namespace detail

// Ordering comparisons component by component, as in OpenCL C: -1 (every bit set) where true and
// 0 where false, in signed integers of the components' size (float4 < float4 is an int4). == and
// != stay whole-vector equality, one bool, which host code relies on; kernels compare component
// by component with isequal and isnotequal (kiln/kernel_builtins.hpp).
#define KILN_DETAIL_VEC_COMPARISON(op)                                                \
    template <class T, int N>                                                         \
    constexpr vec<detail::signed_mask_t<T>, N> operator op(const vec<T, N>& a,        \
                                                           const vec<T, N>& b) {      \
        vec<detail::signed_mask_t<T>, N> r{};                                         \
        for (int i = 0; i < N; ++i) r[i] = a[i] op b[i] ? -1 : 0;                     \
        return r;                                                                     \
    }                                                                                 \
    template <class T, int N, class S>                                                \
    requires std::is_arithmetic_v<S>                                                  \
    constexpr vec<detail::signed_mask_t<T>, N> operator op(const vec<T, N>& a, S b) { \
        return a op detail::broadcast<T, N>(static_cast<T>(b));                       \
    }                                                                                 \
    template <class T, int N, class S>                                                \
    requires std::is_arithmetic_v<S>                                                  \
    constexpr vec<detail::signed_mask_t<T>, N> operator op(S a, const vec<T, N>& b) { \
        return detail::broadcast<T, N>(static_cast<T>(a)) op b;                       \
    }
KILN_DETAIL_VEC_COMPARISON(<)
KILN_DETAIL_VEC_COMPARISON(<=)
KILN_DETAIL_VEC_COMPARISON(>)
KILN_DETAIL_VEC_COMPARISON(>=)
#undef KILN_DETAIL_VEC_COMPARISON

/// Every component negated.
template <class T, int N>
constexpr vec<T, N> operator-(const vec<T, N>& a) {
    vec<T, N> r{};
    for (int i = 0; i < N; ++i) r[i] = static_cast<T>(-a[i]);
    return r;
}

// Same size and alignment as the device types (OpenCL C 6.1.5); the layout tests check them
// against each device's compiler.
static_assert(sizeof(float3) == 16 && alignof(float3) == 16);
static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
static_assert(sizeof(double2) == 16 && alignof(double2) == 16);
static_assert(sizeof(int2) == 8 && alignof(int2) == 8);

}  // namespace kiln
#pragma GCC visibility pop
