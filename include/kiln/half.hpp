// SPDX-License-Identifier: Apache-2.0
// kiln::half (IEEE 754 binary16) and kiln::bfloat16 (float's upper 16 bits): host storage types
// of 2 bytes whose values convert to and from float explicitly, rounding to nearest even.
#pragma once
#pragma GCC visibility push(default)

#include <bit>
#include <compare>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>
#include <version>
#ifdef __cpp_lib_format
#include <format>
#endif

namespace kiln {
namespace detail {

/// A binary floating-point format of 16 bits: a sign, `exponent_bits` and `mantissa_bits`, with
/// IEEE 754's subnormals, infinities and NaNs. Conversions work on float's bit pattern, so that
/// they are exact, constexpr and independent of the host's floating-point rounding mode.
template <int exponent_bits, int mantissa_bits>
struct binary16_format {
    static_assert(1 + exponent_bits + mantissa_bits == 16);
    static constexpr int bias = (1 << (exponent_bits - 1)) - 1;
    static constexpr std::uint32_t infinity_bits = ((1u << exponent_bits) - 1) << mantissa_bits;
    static constexpr std::uint32_t mantissa_mask = (1u << mantissa_bits) - 1;
    // float has 23 mantissa bits; these are the ones the narrow format drops.
    static constexpr int dropped_bits = 23 - mantissa_bits;

    /// Rounds to nearest, ties to even. Overflow gives infinity; a NaN stays NaN, quiet, with
    /// the top of its payload.
    static constexpr std::uint16_t from_float(float value) noexcept {
        const auto bits = std::bit_cast<std::uint32_t>(value);
        const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
        const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
        if (magnitude > 0x7F800000u) {
            const std::uint32_t quiet = 1u << (mantissa_bits - 1);
            return static_cast<std::uint16_t>(sign | infinity_bits | quiet |
                                              ((magnitude >> dropped_bits) & mantissa_mask));
        }
        const std::uint32_t float_exponent = magnitude >> 23;
        // float's biased exponent of the narrow format's smallest normal number.
        constexpr std::uint32_t smallest_normal_exponent = 127 - bias + 1;
        if (float_exponent >= smallest_normal_exponent) {
            // Adding just under half a unit of the kept bits, plus the kept bits' lowest bit,
            // carries exactly when the dropped bits are above half, or at half with an odd rest.
            const std::uint32_t rounded =
                magnitude + ((1u << (dropped_bits - 1)) - 1) + ((magnitude >> dropped_bits) & 1u);
            const std::uint32_t narrow =
                (rounded >> dropped_bits) - ((127u - bias) << mantissa_bits);
            return static_cast<std::uint16_t>(sign |
                                              (narrow < infinity_bits ? narrow : infinity_bits));
        }
        // A subnormal (or zero) of the narrow format: the significand shifted down to its
        // fixed exponent, rounded by what was shifted out.
        const std::uint32_t significand =
            float_exponent == 0 ? magnitude : (magnitude & 0x7FFFFFu) | 0x800000u;
        const int shift =
            151 - bias - mantissa_bits - static_cast<int>(float_exponent == 0 ? 1 : float_exponent);
        if (shift > 24) return sign;  // below half the smallest subnormal
        const std::uint32_t kept = significand >> shift;
        const std::uint32_t rest = significand & ((1u << shift) - 1);
        const std::uint32_t half_unit = 1u << (shift - 1);
        const bool up = rest > half_unit || (rest == half_unit && (kept & 1u));
        return static_cast<std::uint16_t>(sign | (kept + (up ? 1u : 0u)));
    }

    /// Exact: every value of the narrow format is a float.
    static constexpr float to_float(std::uint16_t narrow) noexcept {
        const std::uint32_t sign = static_cast<std::uint32_t>(narrow & 0x8000u) << 16;
        const std::uint32_t exponent = (narrow >> mantissa_bits) & ((1u << exponent_bits) - 1);
        const std::uint32_t mantissa = narrow & mantissa_mask;
        if (exponent == (1u << exponent_bits) - 1)
            return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << dropped_bits));
        if (exponent != 0)
            return std::bit_cast<float>(sign | ((exponent + 127u - bias) << 23) |
                                        (mantissa << dropped_bits));
        if constexpr (bias == 127) {
            // float's own exponent range: the subnormal is float's subnormal.
            return std::bit_cast<float>(sign | (mantissa << dropped_bits));
        } else {
            if (mantissa == 0) return std::bit_cast<float>(sign);
            // A normal float: the leading bit becomes the implicit one.
            const int leading = std::bit_width(mantissa) - 1;
            const std::uint32_t float_exponent =
                static_cast<std::uint32_t>(leading + 1 - bias - mantissa_bits + 127);
            return std::bit_cast<float>(sign | (float_exponent << 23) |
                                        ((mantissa << (23 - leading)) & 0x7FFFFFu));
        }
    }
};

/// What half and bfloat16 share: the bits, the explicit conversions and comparisons by value (as
/// float compares: NaN is unordered, -0 == +0).
template <class Number, class Format>
class binary16 {
  public:
    using format = Format;

    binary16() = default;
    constexpr explicit binary16(float value) noexcept : bits_(Format::from_float(value)) {}
    constexpr explicit operator float() const noexcept { return Format::to_float(bits_); }

    static constexpr Number from_bits(std::uint16_t bits) noexcept {
        Number number;
        number.bits_ = bits;
        return number;
    }
    constexpr std::uint16_t bits() const noexcept { return bits_; }

    friend constexpr bool operator==(Number a, Number b) noexcept {
        return static_cast<float>(a) == static_cast<float>(b);
    }
    friend constexpr std::partial_ordering operator<=>(Number a, Number b) noexcept {
        return static_cast<float>(a) <=> static_cast<float>(b);
    }
    friend std::ostream& operator<<(std::ostream& out, Number number) {
        return out << static_cast<float>(number);
    }

  private:
    std::uint16_t bits_;
};

}  // namespace detail

/// IEEE 754 binary16: 5 exponent bits, 10 mantissa bits; largest finite 65504, smallest normal
/// 2^-14, smallest subnormal 2^-24. Arithmetic happens in float: convert, compute, convert back.
class half : public detail::binary16<half, detail::binary16_format<5, 10>> {
  public:
    using binary16::binary16;
};

/// bfloat16: float's sign, 8 exponent bits and top 7 mantissa bits. It has float's range
/// (overflow to infinity only beyond float's) with 2 to 3 significant decimal digits.
class bfloat16 : public detail::binary16<bfloat16, detail::binary16_format<8, 7>> {
  public:
    using binary16::binary16;
};

static_assert(sizeof(half) == 2 && alignof(half) == 2 && std::is_trivially_copyable_v<half>);
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2 &&
              std::is_trivially_copyable_v<bfloat16>);

namespace detail {
template <class T>
inline constexpr bool is_binary16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// The numeric_limits members the two types share: IEEE-style binary formats rounding to
/// nearest, with subnormals, infinities and NaNs.
template <class Number>
struct binary16_limits {
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = true;
    static constexpr std::float_denorm_style has_denorm = std::denorm_present;
    static constexpr bool has_denorm_loss = false;
    static constexpr std::float_round_style round_style = std::round_to_nearest;
    static constexpr bool is_bounded = true;
    static constexpr bool is_modulo = false;
    static constexpr int radix = 2;
    static constexpr bool traps = false;
    static constexpr bool tinyness_before = false;
    static constexpr Number round_error() noexcept { return Number(0.5f); }
};
}  // namespace detail
}  // namespace kiln

/// IEEE 754 binary16's limits: 11 significant bits, exponents -14 to 15, subnormals.
template <>
struct std::numeric_limits<kiln::half> : kiln::detail::binary16_limits<kiln::half> {
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
struct std::numeric_limits<kiln::bfloat16> : kiln::detail::binary16_limits<kiln::bfloat16> {
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

#ifdef __cpp_lib_format
// Formats as the float of the same value, with float's format specification ("{:.3f}").
template <class CharT>
struct std::formatter<kiln::half, CharT> : std::formatter<float, CharT> {
    auto format(kiln::half value, auto& context) const {
        return std::formatter<float, CharT>::format(static_cast<float>(value), context);
    }
};
template <class CharT>
struct std::formatter<kiln::bfloat16, CharT> : std::formatter<float, CharT> {
    auto format(kiln::bfloat16 value, auto& context) const {
        return std::formatter<float, CharT>::format(static_cast<float>(value), context);
    }
};
#endif
#pragma GCC visibility pop
