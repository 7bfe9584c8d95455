// SPDX-License-Identifier: Apache-2.0
// What kiln's storage-only floating-point types (half, bfloat16, float8_e4m3, float8_e5m2) share:
// one exact, constexpr conversion to and from float for every such format, and the host type
// that holds its bits.
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

namespace kiln::detail {

/// How a format spends its largest exponent, and what a float too large for it becomes.
enum class narrow_encoding {
    /// IEEE 754's rules (half, bfloat16): the largest exponent holds the infinities and NaNs;
    /// overflow gives infinity.
    ieee,
    /// IEEE 754's encodings, but float to narrow saturates: values beyond the largest finite
    /// one, infinities included, give the largest finite value of their sign (float8_e5m2).
    ieee_saturating,
    /// No infinities: the largest exponent holds normal numbers but for the all-ones pattern,
    /// the only NaN; float to narrow saturates (OCP's E4M3, "fn": finite and NaN only).
    finite_saturating,
};

/// A binary floating-point format of `total_bits` (8 or 16): a sign, `exponent_bits` and
/// `mantissa_bits`, with subnormals. Conversions work on float's bit pattern, so that they are
/// exact, constexpr and independent of the host's floating-point rounding mode.
template <int total_bits, int exponent_bits, int mantissa_bits, narrow_encoding encoding>
struct narrow_float_format {
    static_assert(total_bits == 8 || total_bits == 16);
    static_assert(1 + exponent_bits + mantissa_bits == total_bits);
    using bits_type = std::conditional_t<total_bits == 8, std::uint8_t, std::uint16_t>;
    static constexpr bool has_infinity = encoding != narrow_encoding::finite_saturating;
    static constexpr int bias = (1 << (exponent_bits - 1)) - 1;
    static constexpr std::uint32_t sign_bit = 1u << (total_bits - 1);
    static constexpr std::uint32_t mantissa_mask = (1u << mantissa_bits) - 1;
    static constexpr std::uint32_t top_exponent_bits = ((1u << exponent_bits) - 1) << mantissa_bits;
    static constexpr std::uint32_t largest_finite_bits =
        has_infinity ? top_exponent_bits - 1 : top_exponent_bits | (mantissa_mask - 1);
    // float has 23 mantissa bits; these are the ones the narrow format drops.
    static constexpr int dropped_bits = 23 - mantissa_bits;

    static constexpr bool is_nan(std::uint32_t magnitude_bits) noexcept {
        return has_infinity ? magnitude_bits > top_exponent_bits
                            : magnitude_bits == (top_exponent_bits | mantissa_mask);
    }

    /// Rounds to nearest, ties to even. Overflow gives infinity (ieee) or the largest finite
    /// value (the saturating encodings, infinities too). A NaN stays NaN, quiet: under ieee with
    /// the top of its payload, else the format's one quiet NaN of its sign.
    static constexpr bits_type from_float(float value) noexcept {
        const auto bits = std::bit_cast<std::uint32_t>(value);
        const auto sign = static_cast<std::uint32_t>(bits >> (32 - total_bits)) & sign_bit;
        const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
        if (magnitude > 0x7F800000u) {
            const std::uint32_t quiet = 1u << (mantissa_bits - 1);
            const std::uint32_t nan =
                encoding == narrow_encoding::ieee
                    ? top_exponent_bits | quiet | ((magnitude >> dropped_bits) & mantissa_mask)
                : has_infinity ? top_exponent_bits | quiet
                               : top_exponent_bits | mantissa_mask;
            return static_cast<bits_type>(sign | nan);
        }
        const std::uint32_t float_exponent = magnitude >> 23;
        // float's biased exponent of the narrow format's smallest normal number.
        constexpr std::uint32_t smallest_normal_exponent = 127 - bias + 1;
        if (float_exponent >= smallest_normal_exponent) {
            // Adding just under half a unit of the kept bits, plus the kept bits' lowest bit,
            // carries exactly when the dropped bits are above half, or at half with an odd rest.
            // A carry past the largest finite value (into the infinities' or the NaN's bits)
            // is overflow like any larger value.
            const std::uint32_t rounded =
                magnitude + ((1u << (dropped_bits - 1)) - 1) + ((magnitude >> dropped_bits) & 1u);
            const std::uint32_t narrow =
                (rounded >> dropped_bits) - ((127u - bias) << mantissa_bits);
            constexpr std::uint32_t overflow =
                encoding == narrow_encoding::ieee ? top_exponent_bits : largest_finite_bits;
            return static_cast<bits_type>(sign |
                                          (narrow <= largest_finite_bits ? narrow : overflow));
        }
        // A subnormal (or zero) of the narrow format: the significand shifted down to its
        // fixed exponent, rounded by what was shifted out.
        const std::uint32_t significand =
            float_exponent == 0 ? magnitude : (magnitude & 0x7FFFFFu) | 0x800000u;
        const int shift =
            151 - bias - mantissa_bits - static_cast<int>(float_exponent == 0 ? 1 : float_exponent);
        if (shift > 24) return static_cast<bits_type>(sign);  // below half the smallest subnormal
        const std::uint32_t kept = significand >> shift;
        const std::uint32_t rest = significand & ((1u << shift) - 1);
        const std::uint32_t half_unit = 1u << (shift - 1);
        const bool up = rest > half_unit || (rest == half_unit && (kept & 1u));
        return static_cast<bits_type>(sign | (kept + (up ? 1u : 0u)));
    }

    /// Exact: every value of the narrow format is a float.
    static constexpr float to_float(bits_type narrow) noexcept {
        const std::uint32_t sign = static_cast<std::uint32_t>(narrow & sign_bit)
                                   << (32 - total_bits);
        const std::uint32_t exponent = (narrow >> mantissa_bits) & ((1u << exponent_bits) - 1);
        const std::uint32_t mantissa = narrow & mantissa_mask;
        if (has_infinity ? exponent == (1u << exponent_bits) - 1 : is_nan(narrow & ~sign_bit))
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

/// What the storage types share: the bits, the explicit conversions and comparisons by value (as
/// float compares: NaN is unordered, -0 == +0).
template <class Number, class Format>
class narrow_float {
  public:
    using format = Format;
    using bits_type = typename Format::bits_type;

    narrow_float() = default;
    constexpr explicit narrow_float(float value) noexcept : bits_(Format::from_float(value)) {}
    constexpr explicit operator float() const noexcept { return Format::to_float(bits_); }

    static constexpr Number from_bits(bits_type bits) noexcept {
        Number number;
        number.bits_ = bits;
        return number;
    }
    constexpr bits_type bits() const noexcept { return bits_; }

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
    bits_type bits_;
};

/// The numeric_limits members the storage types share: binary formats rounding to nearest, with
/// subnormals; infinities and signalling NaNs where the format has infinities.
template <class Number>
struct narrow_float_limits {
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = Number::format::has_infinity;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = Number::format::has_infinity;
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

/// half, bfloat16, float8_e4m3 and float8_e5m2.
template <class T>
concept narrow_float_type = std::is_base_of_v<narrow_float<T, typename T::format>, T>;

}  // namespace kiln::detail

#ifdef __cpp_lib_format
// Formats as the float of the same value, with float's format specification ("{:.3f}").
template <kiln::detail::narrow_float_type Number, class CharT>
struct std::formatter<Number, CharT> : std::formatter<float, CharT> {
    auto format(Number value, auto& context) const {
        return std::formatter<float, CharT>::format(static_cast<float>(value), context);
    }
};
#endif
#pragma GCC visibility pop
