// SPDX-License-Identifier: Apache-2.0
// The prelude's math, common and integer functions, and min, max and clamp (opencl_c_prelude.cuh).
#line 4 "src/backend/cuda/opencl_c_math.cuh"

namespace kiln_opencl {

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
// Not OpenCL C: vector expressions' multiplies, adds and subtracts that contract into no fma
// (element_rules::explicit_contraction), which neither NVRTC nor ptxas fuses.
KILN_FLOAT_FUNCTION_2(kiln_add_rn, __fadd_rn, __dadd_rn)
KILN_FLOAT_FUNCTION_2(kiln_sub_rn, __fsub_rn, __dsub_rn)
KILN_FLOAT_FUNCTION_2(kiln_mul_rn, __fmul_rn, __dmul_rn)

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

#undef KILN_VECTORISE_1
#undef KILN_VECTORISE_2
#undef KILN_VECTORISE_3
#undef KILN_FLOAT_FUNCTION_1
#undef KILN_FLOAT_FUNCTION_2
#undef KILN_NATIVE_FUNCTION_1
#undef KILN_NATIVE_FUNCTION_2

}  // namespace kiln_opencl
