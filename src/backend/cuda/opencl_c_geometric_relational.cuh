// SPDX-License-Identifier: Apache-2.0
// The prelude's geometric and relational functions (opencl_c_prelude.cuh).
#line 4 "src/backend/cuda/opencl_c_geometric_relational.cuh"

namespace kiln_opencl {

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

}  // namespace kiln_opencl
