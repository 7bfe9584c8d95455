// SPDX-License-Identifier: Apache-2.0
// How a C++ kernel body sees half, bfloat16 and the FP8 types (docs/kernel_language.md, "16-bit
// and FP8 values in C++ kernels"). OpenCL C without cl_khr_fp16 holds these values as their
// ushort or uchar bits, where a cast or a comparison would act on the bits, not on the value
// that C++ gives. So the body's C++
// check sees types that allow what means the same on both sides (copying, storing, kiln's
// conversion helpers, `.bits()`) and refuses the rest where the user wrote it.
#pragma once
#pragma GCC visibility push(default)

#include <compare>
#include <cstdint>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <type_traits>

namespace kiln::detail {

/// A half, bfloat16 or FP8 value in a kernel body (an element of a bfloat16 or FP8 pointer, a
/// KILN_STRUCT field of those types, a helper's result, a local `kiln::half`): `ushort` or
/// `uchar` in the kernel's OpenCL C. Declared for the C++ check only; nothing here runs.
template <class Number>
class narrow_float_bits_in_kernel {
  public:
    narrow_float_bits_in_kernel() = default;
    // The value is read with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or
    // kiln_e5m2_to_float. The refusals below say why in the line the compiler quotes, so each
    // stays on one line.
    // clang-format off
    template <class T>
    explicit narrow_float_bits_in_kernel(const T&) = delete;  // 16-bit and FP8 values are bits in kernels: make them with kiln_float_to_half, kiln_float_to_bf16, kiln_float_to_e4m3 or kiln_float_to_e5m2
    template <class T>
    explicit operator T() const = delete;  // 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
    template <class T>
    friend bool operator==(narrow_float_bits_in_kernel, const T&) = delete;  // 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
    template <class T>
    friend std::partial_ordering operator<=>(narrow_float_bits_in_kernel, const T&) = delete;  // 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
    // clang-format on
    /// The bits, as on the host: the OpenCL C text drops `.bits()`, the value being its bits there.
    typename Number::bits_type bits() const;

  private:
    typename Number::bits_type bits_;
};

/// An element of a `global half*` (or local, constant) in a kernel body. OpenCL C without
/// cl_khr_fp16 neither loads nor stores it as a value: vload_half(i, p) reads it as a float and
/// vstore_half_rte(value, i, p) writes one. Every direct use is refused.
class half_element_in_kernel {
  public:
    // clang-format off
    half_element_in_kernel(const half_element_in_kernel&) = delete;  // half elements are read with vload_half(i, p)
    half_element_in_kernel& operator=(const half_element_in_kernel&) = delete;  // half elements are written with vstore_half_rte(value, i, p)
    template <class T>
    half_element_in_kernel& operator=(const T&) = delete;  // half elements are written with vstore_half_rte(value, i, p)
    template <class T>
    explicit operator T() const = delete;  // half elements are read with vload_half(i, p)
    template <class T>
    friend bool operator==(const half_element_in_kernel&, const T&) = delete;  // half elements are read with vload_half(i, p)
    template <class T>
    friend std::partial_ordering operator<=>(const half_element_in_kernel&, const T&) = delete;  // half elements are read with vload_half(i, p)
    std::uint16_t bits() const = delete;  // half elements are read with vload_half(i, p)
    // clang-format on
};

/// What a kernel body's `kiln::half`, `kiln::bfloat16` and FP8 types (and a KILN_STRUCT field of
/// those types) are in the C++ check.
template <class T>
struct kernel_value {
    using type = T;
};
template <class T>
requires is_narrow_float_v<T>
struct kernel_value<T> {
    using type = narrow_float_bits_in_kernel<T>;
};
template <class T>
using kernel_value_t = typename kernel_value<T>::type;

template <class T>
concept struct_with_binary16_fields = requires {
    typename T::kiln_kernel_view;
    requires T::kiln_has_binary16_fields;
};

/// What `p[i]` of a kernel pointer to T is in the C++ check: half elements, bfloat16 and FP8 bits
/// as above, a KILN_STRUCT with such fields as its kernel view (those fields as bits), anything
/// else T itself. Const stays.
template <class T>
struct kernel_element {
    using type = kernel_value_t<T>;
};
template <>
struct kernel_element<half> {
    using type = half_element_in_kernel;
};
template <struct_with_binary16_fields T>
struct kernel_element<T> {
    using type = typename T::kiln_kernel_view;
};
template <class T>
using kernel_element_t =
    std::conditional_t<std::is_const_v<T>,
                       const typename kernel_element<std::remove_const_t<T>>::type,
                       typename kernel_element<T>::type>;

}  // namespace kiln::detail

namespace kiln::detail::kernel_body_names {
// What `kiln::` names inside a kernel body (KILN_DETAIL_KERNEL_BODY_NAMES): kiln's own names,
// but the storage types as the kernel holds them.
using namespace ::kiln;
using half = narrow_float_bits_in_kernel<::kiln::half>;
using bfloat16 = narrow_float_bits_in_kernel<::kiln::bfloat16>;
using float8_e4m3 = narrow_float_bits_in_kernel<::kiln::float8_e4m3>;
using float8_e5m2 = narrow_float_bits_in_kernel<::kiln::float8_e5m2>;
}  // namespace kiln::detail::kernel_body_names

/// Opens a kernel body: `kiln::half`, `kiln::bfloat16` and the FP8 types, qualified or not, are
/// then the kernel's values of them (which the OpenCL C text spells `ushort` or `uchar`).
#define KILN_DETAIL_KERNEL_BODY_NAMES                       \
    namespace kiln = ::kiln::detail::kernel_body_names;     \
    using half [[maybe_unused]] = kiln::half;               \
    using bfloat16 [[maybe_unused]] = kiln::bfloat16;       \
    using float8_e4m3 [[maybe_unused]] = kiln::float8_e4m3; \
    using float8_e5m2 [[maybe_unused]] = kiln::float8_e5m2;
#pragma GCC visibility pop
