// SPDX-License-Identifier: Apache-2.0
// kiln::half (IEEE 754 binary16) and kiln::bfloat16 (float's upper 16 bits): host storage types
// of 2 bytes whose values convert to and from float explicitly, rounding to nearest even.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/detail/narrow_float.hpp>
#include <limits>
#include <type_traits>

namespace kiln {

/// IEEE 754 binary16: 5 exponent bits, 10 mantissa bits; largest finite 65504, smallest normal
/// 2^-14, smallest subnormal 2^-24. Arithmetic happens in float: convert, compute, convert back.
class half : public detail::narrow_float<
                 half, detail::narrow_float_format<16, 5, 10, detail::narrow_encoding::ieee>> {
  public:
    using narrow_float::narrow_float;
};

/// bfloat16: float's sign, 8 exponent bits and top 7 mantissa bits. It has float's range
/// (overflow to infinity only beyond float's) with 2 to 3 significant decimal digits.
class bfloat16
    : public detail::narrow_float<
          bfloat16, detail::narrow_float_format<16, 8, 7, detail::narrow_encoding::ieee>> {
  public:
    using narrow_float::narrow_float;
};

static_assert(sizeof(half) == 2 && alignof(half) == 2 && std::is_trivially_copyable_v<half>);
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2 &&
              std::is_trivially_copyable_v<bfloat16>);

namespace detail {
template <class T>
inline constexpr bool is_binary16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
}  // namespace detail
}  // namespace kiln

/// IEEE 754 binary16's limits: 11 significant bits, exponents -14 to 15, subnormals.
template <>
struct std::numeric_limits<kiln::half> : kiln::detail::narrow_float_limits<kiln::half> {
    ///@{
    /// As std::numeric_limits defines them, for binary16.
    using half = kiln::half;
    static constexpr bool is_iec559 = true;
    static constexpr int digits = 11;
    static constexpr int digits10 = 3;
    static constexpr int max_digits10 = 5;
    static constexpr int min_exponent = -13;
    static constexpr int min_exponent10 = -4;
    static constexpr int max_exponent = 16;
    static constexpr int max_exponent10 = 4;
    static constexpr half min() noexcept { return half::from_bits(0x0400); }
    static constexpr half max() noexcept { return half::from_bits(0x7BFF); }
    static constexpr half lowest() noexcept { return half::from_bits(0xFBFF); }
    static constexpr half epsilon() noexcept { return half::from_bits(0x1400); }
    static constexpr half infinity() noexcept { return half::from_bits(0x7C00); }
    static constexpr half quiet_NaN() noexcept { return half::from_bits(0x7E00); }
    static constexpr half signaling_NaN() noexcept { return half::from_bits(0x7D00); }
    static constexpr half denorm_min() noexcept { return half::from_bits(0x0001); }
    ///@}
};

/// bfloat16's limits: float's exponent range with 8 significant bits. It follows IEEE 754's
/// rules but is not one of its interchange formats: not is_iec559.
template <>
struct std::numeric_limits<kiln::bfloat16> : kiln::detail::narrow_float_limits<kiln::bfloat16> {
    ///@{
    /// As std::numeric_limits defines them, for bfloat16.
    using bfloat16 = kiln::bfloat16;
    static constexpr bool is_iec559 = false;
    static constexpr int digits = 8;
    static constexpr int digits10 = 2;
    static constexpr int max_digits10 = 4;
    static constexpr int min_exponent = -125;
    static constexpr int min_exponent10 = -37;
    static constexpr int max_exponent = 128;
    static constexpr int max_exponent10 = 38;
    static constexpr bfloat16 min() noexcept { return bfloat16::from_bits(0x0080); }
    static constexpr bfloat16 max() noexcept { return bfloat16::from_bits(0x7F7F); }
    static constexpr bfloat16 lowest() noexcept { return bfloat16::from_bits(0xFF7F); }
    static constexpr bfloat16 epsilon() noexcept { return bfloat16::from_bits(0x3C00); }
    static constexpr bfloat16 infinity() noexcept { return bfloat16::from_bits(0x7F80); }
    static constexpr bfloat16 quiet_NaN() noexcept { return bfloat16::from_bits(0x7FC0); }
    static constexpr bfloat16 signaling_NaN() noexcept { return bfloat16::from_bits(0x7FA0); }
    static constexpr bfloat16 denorm_min() noexcept { return bfloat16::from_bits(0x0001); }
    ///@}
};

#pragma GCC visibility pop
