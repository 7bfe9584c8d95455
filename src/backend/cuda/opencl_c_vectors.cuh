// SPDX-License-Identifier: Apache-2.0
// The prelude's vector types: layout, components, swizzles, operators, map (opencl_c_prelude.cuh).
#line 4 "src/backend/cuda/opencl_c_vectors.cuh"

namespace kiln_opencl {
namespace detail {

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

}  // namespace detail
}  // namespace kiln_opencl
