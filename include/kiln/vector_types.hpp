// Host twins of OpenCL C's vector types (float4, int2...): the same size and alignment as on the
// device, so that buffers and structs of them have one layout on both sides.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln {

namespace detail {

/// The components, named as in OpenCL C. Aligned to their size, and 3-component vectors take
/// the room of 4 (OpenCL C 6.1.5), which is what kiln's CUDA prelude does too.
template <class T, int N>
struct vec_components;
template <class T>
struct alignas(2 * sizeof(T)) vec_components<T, 2> {
    T x, y;
};
template <class T>
struct alignas(4 * sizeof(T)) vec_components<T, 3> {
    T x, y, z;
};
template <class T>
struct alignas(4 * sizeof(T)) vec_components<T, 4> {
    T x, y, z, w;
};

}  // namespace detail

/// An OpenCL C vector of N components of T (N = 2, 3, 4), with element-wise arithmetic.
/// Components are v.x, v.y... or v[i]; {} value-initialises to zero.
template <class T, int N>
requires(std::is_arithmetic_v<T> && (N == 2 || N == 3 || N == 4)) struct vec
    : detail::vec_components<T, N> {
    using value_type = T;
    static constexpr int size = N;

    constexpr T& operator[](int i) { return component(*this, i); }
    constexpr const T& operator[](int i) const { return component(*this, i); }

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
    friend constexpr bool operator==(const vec& a, const vec& b) {
        for (int i = 0; i < N; ++i)
            if (!(a[i] == b[i])) return false;
        return true;
    }
};

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
