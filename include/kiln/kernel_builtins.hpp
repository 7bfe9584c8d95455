// SPDX-License-Identifier: Apache-2.0
// The C++ declarations of what a KILN_KERNEL body may use: OpenCL C's built-ins, types and
// address-space pointers. The C++ compiler checks a kernel body against them; the body then runs
// as OpenCL C on the device. Nothing here is ever called on the host: the functions are declared
// and never defined, so a host call fails to link.
#pragma once
#pragma GCC visibility push(default)

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/kernel_narrow_float.hpp>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <kiln/vector_types.hpp>
#include <type_traits>

namespace kiln {

// OpenCL C's unsigned type names, so that `kiln::uint` means the same in C++ and (with the
// `kiln::` dropped) in the kernel source.
using uchar = unsigned char;    ///< OpenCL C's `uchar`
using ushort = unsigned short;  ///< OpenCL C's `ushort`
using uint = std::uint32_t;     ///< OpenCL C's `uint`, 32 bits
using ulong = std::uint64_t;    ///< OpenCL C's `ulong`, 64 bits

namespace detail {

enum class address_space { global, local, constant };

/// A pointer into one of OpenCL C's address spaces, as a kernel parameter or variable: it
/// indexes, dereferences and moves like a pointer, and converts only to the same space. Its
/// elements are what the kernel can do with them: 16-bit values as kernel_element_t says.
template <class T, address_space Space>
class address_space_pointer {
  public:
    using element_type = T;
    static constexpr address_space space = Space;

    address_space_pointer() = default;
    /// `global float*` converts to `global const float*`, as in C.
    template <class U>
    requires std::same_as<const U, T> &&
        (!std::same_as<U, T>)address_space_pointer(const address_space_pointer<U, Space>& other);

    // Elements that are themselves are spelt T, so that diagnostics name the plain type.
    template <std::integral I>
    T& operator[](I index) const requires std::same_as<kernel_element_t<T>, T>;
    template <std::integral I>
    kernel_element_t<T>& operator[](I index) const requires(!std::same_as<kernel_element_t<T>, T>);
    T& operator*() const requires std::same_as<kernel_element_t<T>, T>;
    kernel_element_t<T>& operator*() const requires(!std::same_as<kernel_element_t<T>, T>);
    T* operator->() const requires std::same_as<kernel_element_t<T>, T>;
    kernel_element_t<T>* operator->() const requires(!std::same_as<kernel_element_t<T>, T>);

    template <std::integral I>
    address_space_pointer operator+(I offset) const;
    template <std::integral I>
    address_space_pointer operator-(I offset) const;
    std::ptrdiff_t operator-(const address_space_pointer& other) const;
    template <std::integral I>
    address_space_pointer& operator+=(I offset);
    template <std::integral I>
    address_space_pointer& operator-=(I offset);
    address_space_pointer& operator++();
    address_space_pointer operator++(int);
    address_space_pointer& operator--();
    address_space_pointer operator--(int);
    bool operator==(const address_space_pointer& other) const;
    std::strong_ordering operator<=>(const address_space_pointer& other) const;
};

template <class T>
inline constexpr bool is_address_space_pointer_v = false;
template <class T, address_space Space>
inline constexpr bool is_address_space_pointer_v<address_space_pointer<T, Space>> = true;

}  // namespace detail

/// `global T*`: device memory, bound to a kiln::vector<T> or kiln::buffer<T> at launch.
template <class T>
using global_ptr = detail::address_space_pointer<T, detail::address_space::global>;
/// `local T*`: work-group memory, bound to kiln::local<T>(count) at launch.
template <class T>
using local_ptr = detail::address_space_pointer<T, detail::address_space::local>;
/// `constant T*`: read-only device memory, bound to a buffer the kernel reads.
template <class T>
using constant_ptr = detail::address_space_pointer<T, detail::address_space::constant>;

namespace detail {

/// What a host-only name becomes inside a kernel body, so that using it fails the build.
struct host_library_is_not_available_in_kernels {};

// clang-format off
#define KILN_DETAIL_FLOAT_TYPES(M, name) \
    M(float, name) M(float2, name) M(float3, name) M(float4, name) \
    M(double, name) M(double2, name) M(double3, name) M(double4, name)
#define KILN_DETAIL_FLOAT_VECTORS(M, name) \
    M(float2, float, name) M(float3, float, name) M(float4, float, name) \
    M(double2, double, name) M(double3, double, name) M(double4, double, name)
#define KILN_DETAIL_INTEGER_TYPES(M, name) \
    M(int, name) M(uint, name) M(long, name) M(ulong, name) \
    M(int2, name) M(int3, name) M(int4, name) M(uint2, name) M(uint3, name) M(uint4, name)
#define KILN_DETAIL_COLLECTIVE_TYPES(M, name) \
    M(int, name) M(uint, name) M(long, name) M(ulong, name) M(float, name) M(double, name)

#define KILN_DETAIL_UNARY(T, name) static T name(T x);
#define KILN_DETAIL_BINARY(T, name) static T name(T x, T y);
#define KILN_DETAIL_TERNARY(T, name) static T name(T x, T y, T z);
#define KILN_DETAIL_BINARY_SCALAR(V, S, name) static V name(V x, S y);
#define KILN_DETAIL_CLAMP_SCALAR(V, S, name) static V name(V x, S low, S high);
#define KILN_DETAIL_MIX_SCALAR(V, S, name) static V name(V x, V y, S a);
#define KILN_DETAIL_TO_SCALAR(V, S, name) static S name(V x);
#define KILN_DETAIL_TWO_TO_SCALAR(V, S, name) static S name(V x, V y);
#define KILN_DETAIL_COLLECTIVE(T, name) static T name(T x);
#define KILN_DETAIL_BROADCAST(T, name) static T name(T x, size_t id);
#define KILN_DETAIL_ATOMIC_TYPES(M) M(int) M(uint)
#define KILN_DETAIL_ATOMICS_ON(P, T) \
    static T atomic_add(P p, T v); static T atomic_sub(P p, T v); static T atomic_xchg(P p, T v); \
    static T atomic_min(P p, T v); static T atomic_max(P p, T v); static T atomic_and(P p, T v); \
    static T atomic_or(P p, T v); static T atomic_xor(P p, T v); static T atomic_inc(P p); \
    static T atomic_dec(P p); static T atomic_cmpxchg(P p, T compare, T value);
#define KILN_DETAIL_ATOMICS(T) \
    KILN_DETAIL_ATOMICS_ON(T*, T) KILN_DETAIL_ATOMICS_ON(global_ptr<T>, T) \
    KILN_DETAIL_ATOMICS_ON(local_ptr<T>, T)
// clang-format on

/// The scope a kernel body is compiled in (its class derives from this one): OpenCL C's types
/// and built-ins, found before any host name of the same spelling, and host-only names made into
/// errors. The functions are declared, never defined.
struct kernel_scope {
    // --- types ---------------------------------------------------------------------------------
    using uchar = kiln::uchar;
    using ushort = kiln::ushort;
    using uint = kiln::uint;
    using ulong = kiln::ulong;
    using size_t = ulong;
    using float2 = kiln::float2;
    using float3 = kiln::float3;
    using float4 = kiln::float4;
    using double2 = kiln::double2;
    using double3 = kiln::double3;
    using double4 = kiln::double4;
    using int2 = kiln::int2;
    using int3 = kiln::int3;
    using int4 = kiln::int4;
    using uint2 = kiln::uint2;
    using uint3 = kiln::uint3;
    using uint4 = kiln::uint4;
    using cl_mem_fence_flags = uint;

    // --- work-items ----------------------------------------------------------------------------
    static uint get_work_dim();
    static size_t get_global_size(uint dimension);
    static size_t get_global_id(uint dimension);
    static size_t get_local_size(uint dimension);
    static size_t get_local_id(uint dimension);
    static size_t get_num_groups(uint dimension);
    static size_t get_group_id(uint dimension);
    static size_t get_global_offset(uint dimension);

    // --- synchronisation -----------------------------------------------------------------------
    static constexpr cl_mem_fence_flags CLK_LOCAL_MEM_FENCE = 1;
    static constexpr cl_mem_fence_flags CLK_GLOBAL_MEM_FENCE = 2;
    static void barrier(cl_mem_fence_flags flags);
    static void work_group_barrier(cl_mem_fence_flags flags);
    static void mem_fence(cl_mem_fence_flags flags);
    static void read_mem_fence(cl_mem_fence_flags flags);
    static void write_mem_fence(cl_mem_fence_flags flags);

    // --- atomics on 32-bit integers in global or local memory ----------------------------------
    KILN_DETAIL_ATOMIC_TYPES(KILN_DETAIL_ATOMICS)
    static float atomic_xchg(float* p, float v);
    static float atomic_xchg(global_ptr<float> p, float v);
    static float atomic_xchg(local_ptr<float> p, float v);

    // --- math ----------------------------------------------------------------------------------
    // clang-format off
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, sqrt) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, rsqrt)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, cbrt) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, exp)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, exp2) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, exp10)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, expm1) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, log)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, log2) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, log10)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, log1p) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, sin)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, cos) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, tan)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, asin) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, acos)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, atan) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, sinh)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, cosh) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, tanh)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, fabs) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, floor)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, ceil) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, round)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, trunc) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, rint)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, erf) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, erfc)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, tgamma) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, lgamma)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, sign)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, pow) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, powr)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, atan2) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, hypot)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, fmod) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, fdim)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, copysign) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, step)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, fmin) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, fmax)
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_BINARY_SCALAR, fmin) KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_BINARY_SCALAR, fmax)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_TERNARY, mad) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_TERNARY, fma)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_TERNARY, mix) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_TERNARY, smoothstep)
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_MIX_SCALAR, mix)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_sqrt) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_rsqrt)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_recip) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_exp)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_exp2) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_log)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_log2) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_sin)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_cos) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, native_tan)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, native_divide) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, native_powr)
    // Common functions over floats and integers: min, max and clamp in the operands' type.
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, min) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_BINARY, max)
    KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_BINARY, min) KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_BINARY, max)
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_BINARY_SCALAR, min) KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_BINARY_SCALAR, max)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_TERNARY, clamp) KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_TERNARY, clamp)
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_CLAMP_SCALAR, clamp)
    // Integer functions.
    static uint abs(int x); static uint abs(uint x); static ulong abs(long x); static ulong abs(ulong x);
    KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_UNARY, popcount) KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_UNARY, clz)
    KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_BINARY, rotate) KILN_DETAIL_INTEGER_TYPES(KILN_DETAIL_BINARY, mul_hi)
    static int mul24(int x, int y); static uint mul24(uint x, uint y);
    static int mad24(int x, int y, int z); static uint mad24(uint x, uint y, uint z);
    // Geometric functions.
    static float dot(float x, float y); static double dot(double x, double y);
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_TWO_TO_SCALAR, dot) KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_TWO_TO_SCALAR, distance)
    KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_TO_SCALAR, length) KILN_DETAIL_FLOAT_VECTORS(KILN_DETAIL_TO_SCALAR, fast_length)
    KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, normalize) KILN_DETAIL_FLOAT_TYPES(KILN_DETAIL_UNARY, fast_normalize)
    static float3 cross(float3 x, float3 y); static float4 cross(float4 x, float4 y);
    static double3 cross(double3 x, double3 y); static double4 cross(double4 x, double4 y);
    // clang-format on

    // --- 16-bit and 8-bit floating point (docs/kernel_language.md) ----------------------------
    // half elements load as float and store rounded (OpenCL C's core functions, no cl_khr_fp16
    // needed); bfloat16 and FP8 elements are ushort and uchar bits in OpenCL C, and such fields
    // of a KILN_STRUCT too, converted by kiln's helpers. `half`, `bfloat16` and the FP8 types
    // here are the host types, for parameter lists; a body sees the kernel's
    // (KILN_DETAIL_KERNEL_BODY_NAMES).
    using half = kiln::half;
    using bfloat16 = kiln::bfloat16;
    using float8_e4m3 = kiln::float8_e4m3;
    using float8_e5m2 = kiln::float8_e5m2;
#define KILN_DETAIL_HALF_ACCESS(P)                                  \
    static float vload_half(size_t offset, P<const half> p);        \
    static void vstore_half(float value, size_t offset, P<half> p); \
    static void vstore_half_rte(float value, size_t offset, P<half> p);
    KILN_DETAIL_HALF_ACCESS(global_ptr)
    KILN_DETAIL_HALF_ACCESS(local_ptr)
#undef KILN_DETAIL_HALF_ACCESS
    static float vload_half(size_t offset, constant_ptr<const half> p);
    static float vload_half(size_t offset, const half* p);
    static void vstore_half(float value, size_t offset, half* p);
    static void vstore_half_rte(float value, size_t offset, half* p);
    static float kiln_bf16_to_float(narrow_float_bits_in_kernel<bfloat16> bits);
    static narrow_float_bits_in_kernel<bfloat16> kiln_float_to_bf16(float value);
    static float kiln_half_to_float(narrow_float_bits_in_kernel<half> bits);
    static narrow_float_bits_in_kernel<half> kiln_float_to_half(float value);
    static float kiln_e4m3_to_float(narrow_float_bits_in_kernel<float8_e4m3> bits);
    static narrow_float_bits_in_kernel<float8_e4m3> kiln_float_to_e4m3(float value);
    static float kiln_e5m2_to_float(narrow_float_bits_in_kernel<float8_e5m2> bits);
    static narrow_float_bits_in_kernel<float8_e5m2> kiln_float_to_e5m2(float value);

    // --- relational and conversion functions ---------------------------------------------------
    static int isnan(float x);
    static int isnan(double x);
    static int isinf(float x);
    static int isinf(double x);
    static int isfinite(float x);
    static int isfinite(double x);
    static int signbit(float x);
    static int signbit(double x);
    // Component by component on vectors: masks of -1 and 0 in signed integers of the
    // components' size (int4 for float4, vec<long, N> for doubles).
#define KILN_DETAIL_RELATIONAL(name)        \
    static int name(float x, float y);      \
    static int name(double x, double y);    \
    template <std::floating_point T, int N> \
    static vec<signed_mask_t<T>, N> name(const vec<T, N>& x, const vec<T, N>& y);
#define KILN_DETAIL_CLASSIFICATION(name)    \
    template <std::floating_point T, int N> \
    static vec<signed_mask_t<T>, N> name(const vec<T, N>& x);
    KILN_DETAIL_RELATIONAL(isequal)
    KILN_DETAIL_RELATIONAL(isnotequal)
    KILN_DETAIL_RELATIONAL(isgreater)
    KILN_DETAIL_RELATIONAL(isgreaterequal)
    KILN_DETAIL_RELATIONAL(isless)
    KILN_DETAIL_RELATIONAL(islessequal)
    KILN_DETAIL_RELATIONAL(isordered)
    KILN_DETAIL_RELATIONAL(isunordered)
    KILN_DETAIL_CLASSIFICATION(isnan)
    KILN_DETAIL_CLASSIFICATION(isinf)
    KILN_DETAIL_CLASSIFICATION(isfinite)
    KILN_DETAIL_CLASSIFICATION(signbit)
#undef KILN_DETAIL_RELATIONAL
#undef KILN_DETAIL_CLASSIFICATION
    // any and all test the sign bit of each component, as in OpenCL C.
    template <std::signed_integral T>
    static int any(T x);
    template <std::signed_integral T, int N>
    static int any(const vec<T, N>& x);
    template <std::signed_integral T>
    static int all(T x);
    template <std::signed_integral T, int N>
    static int all(const vec<T, N>& x);
    // select(a, b, c): b where c (a vector: the sign bit of c's component) is set, else a.
    template <class T, int N, std::integral M>
    requires(sizeof(M) == sizeof(T)) static vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b,
                                                             const vec<M, N>& c);
    static float select(float a, float b, int c);
    static double select(double a, double b, long c);
    static int select(int a, int b, int c);
    static uint select(uint a, uint b, int c);
    static float as_float(int x);
    static float as_float(uint x);
    static int as_int(float x);
    static uint as_uint(float x);
    static double as_double(long x);
    static double as_double(ulong x);
    static long as_long(double x);
    static ulong as_ulong(double x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static int convert_int(T x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static uint convert_uint(T x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static long convert_long(T x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static ulong convert_ulong(T x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static float convert_float(T x);
    template <class T>
    requires std::is_arithmetic_v<T>
    static double convert_double(T x);
    static float4 convert_float4(int4 x);
    static float4 convert_float4(uint4 x);
    static int4 convert_int4(float4 x);
    static uint4 convert_uint4(float4 x);

    // --- sub-groups (cl_khr_subgroups; under CUDA, warps) --------------------------------------
    static uint get_sub_group_size();
    static uint get_max_sub_group_size();
    static uint get_num_sub_groups();
    static uint get_sub_group_id();
    static uint get_sub_group_local_id();
    static void sub_group_barrier(cl_mem_fence_flags flags);
    static int sub_group_any(int predicate);
    static int sub_group_all(int predicate);
    // clang-format off
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_reduce_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_reduce_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_reduce_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_inclusive_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_inclusive_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_inclusive_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_exclusive_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_exclusive_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, sub_group_scan_exclusive_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_BROADCAST, sub_group_broadcast)

    // --- work-groups (kiln provides them where the device does not) ----------------------------
    static int work_group_any(int predicate);
    static int work_group_all(int predicate);
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_reduce_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_reduce_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_reduce_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_inclusive_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_inclusive_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_inclusive_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_exclusive_add)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_exclusive_min)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_COLLECTIVE, work_group_scan_exclusive_max)
    KILN_DETAIL_COLLECTIVE_TYPES(KILN_DETAIL_BROADCAST, work_group_broadcast)
    // clang-format on

    // --- host-only names -----------------------------------------------------------------------
    // The standard library (std::vector, std::sqrt...) and C's I/O and allocation are not there on
    // the device; C's float-suffixed math (sqrtf) is spelt without the suffix in OpenCL C.
    using std = host_library_is_not_available_in_kernels;
    // Deleted rather than failing a static_assert, so that the error is at the user's call.
#define KILN_DETAIL_HOST_ONLY(name) \
    template <class... A>           \
    static void name(A&&...) = delete;  // a host function: kernels cannot call it
    KILN_DETAIL_HOST_ONLY(printf)
    KILN_DETAIL_HOST_ONLY(fprintf)
    KILN_DETAIL_HOST_ONLY(puts)
    KILN_DETAIL_HOST_ONLY(malloc)
    KILN_DETAIL_HOST_ONLY(calloc)
    KILN_DETAIL_HOST_ONLY(free)
    KILN_DETAIL_HOST_ONLY(exit)
    KILN_DETAIL_HOST_ONLY(abort)
    KILN_DETAIL_HOST_ONLY(sqrtf)
    KILN_DETAIL_HOST_ONLY(expf)
    KILN_DETAIL_HOST_ONLY(logf)
    KILN_DETAIL_HOST_ONLY(sinf)
    KILN_DETAIL_HOST_ONLY(cosf)
    KILN_DETAIL_HOST_ONLY(powf)
    KILN_DETAIL_HOST_ONLY(fabsf)
#undef KILN_DETAIL_HOST_ONLY
};

#undef KILN_DETAIL_FLOAT_TYPES
#undef KILN_DETAIL_FLOAT_VECTORS
#undef KILN_DETAIL_INTEGER_TYPES
#undef KILN_DETAIL_COLLECTIVE_TYPES
#undef KILN_DETAIL_UNARY
#undef KILN_DETAIL_BINARY
#undef KILN_DETAIL_TERNARY
#undef KILN_DETAIL_BINARY_SCALAR
#undef KILN_DETAIL_CLAMP_SCALAR
#undef KILN_DETAIL_MIX_SCALAR
#undef KILN_DETAIL_TO_SCALAR
#undef KILN_DETAIL_TWO_TO_SCALAR
#undef KILN_DETAIL_COLLECTIVE
#undef KILN_DETAIL_BROADCAST
#undef KILN_DETAIL_ATOMIC_TYPES
#undef KILN_DETAIL_ATOMICS_ON
#undef KILN_DETAIL_ATOMICS

}  // namespace detail
}  // namespace kiln

/// A work-group array of a constant size in a kernel body: `KILN_LOCAL(float, tile, 16 * 16);`
/// is `local float tile[16 * 16];` in the kernel's OpenCL C source.
#define KILN_LOCAL(type, name, count) type name[count]

/// A pragma of the kernel's program, written in its body: `KILN_PRAGMA(OPENCL FP_CONTRACT OFF);`
/// is `#pragma OPENCL FP_CONTRACT OFF` at the head of the OpenCL C source (a `#pragma` cannot stand
/// in a macro argument). Nothing in C++.
#define KILN_PRAGMA(...) static_assert(true)
/// Build options of the kernel's program, written in its body:
/// `KILN_BUILD_OPTIONS("-cl-fp32-correctly-rounded-divide-sqrt");`. Nothing in C++.
#define KILN_BUILD_OPTIONS(options) static_assert(sizeof(options) > 0)
#pragma GCC visibility pop
