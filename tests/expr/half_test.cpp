// SPDX-License-Identifier: Apache-2.0
// kiln::half and kiln::bfloat16 on the host: every bit pattern to float and back, and float to
// 16 bits over every tie, checked against a reference that rounds with double arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <kiln/half.hpp>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace {

/// A reference written from the formats' definitions instead of their bit layouts: a finite
/// value is a significand of `digits` bits times a power of two no smaller than the smallest
/// normal's; rounding is std::nearbyint in the default mode (to nearest even) of the value
/// scaled so that one unit in the last place is 1, which double holds exactly.
struct reference_format {
    int digits;               // significand bits, the implicit one included
    int min_normal_exponent;  // the smallest normal number is 2^min_normal_exponent
    int max_exponent;         // the largest finite number is below 2^max_exponent

    double largest_finite() const {
        return std::ldexp(2.0 - std::ldexp(1.0, 1 - digits), max_exponent - 1);
    }

    /// The value of `value` rounded to the format: ±inf beyond the largest finite number.
    double round(float value) const {
        const double magnitude = std::fabs(static_cast<double>(value));
        if (magnitude == 0) return value;
        int exponent = 0;
        std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
        const int unit_exponent = std::max(exponent - 1, min_normal_exponent) - (digits - 1);
        const double rounded =
            std::ldexp(std::nearbyint(std::ldexp(magnitude, -unit_exponent)), unit_exponent);
        const double bounded =
            rounded > largest_finite() ? std::numeric_limits<double>::infinity() : rounded;
        return std::signbit(value) ? -bounded : bounded;
    }

    /// The value of a bit pattern with `digits - 1` mantissa bits below an exponent field.
    double decode(std::uint16_t bits) const {
        const int mantissa_bits = digits - 1;
        const int exponent_field = (bits & 0x7FFF) >> mantissa_bits;
        const int mantissa = bits & ((1 << mantissa_bits) - 1);
        const int all_ones = (1 << (15 - mantissa_bits)) - 1;
        double magnitude;
        if (exponent_field == all_ones)
            magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::quiet_NaN();
        else if (exponent_field == 0)
            magnitude = std::ldexp(mantissa, min_normal_exponent - mantissa_bits);
        else
            magnitude = std::ldexp((1 << mantissa_bits) + mantissa,
                                   exponent_field - 1 + min_normal_exponent - mantissa_bits);
        return (bits & 0x8000) ? -magnitude : magnitude;
    }
};

constexpr reference_format half_reference{11, -14, 16};
constexpr reference_format bfloat16_reference{8, -126, 128};

template <class T>
class binary16_test : public ::testing::Test {
  protected:
    static const reference_format& reference() {
        if constexpr (std::is_same_v<T, kiln::half>)
            return half_reference;
        else
            return bfloat16_reference;
    }

    /// Checks one float's conversion against the reference (NaN: any NaN; zero: its sign).
    static void expect_converts(float value) {
        const T converted(value);
        const double expected = reference().round(value);
        const auto result = static_cast<float>(converted);
        if (std::isnan(value)) {
            EXPECT_TRUE(std::isnan(result)) << std::hex << std::bit_cast<std::uint32_t>(value);
            return;
        }
        ASSERT_EQ(static_cast<double>(result), expected)
            << "float bits 0x" << std::hex << std::bit_cast<std::uint32_t>(value) << " (" << value
            << ") gave 16-bit 0x" << converted.bits();
        ASSERT_EQ(std::signbit(result), std::signbit(value)) << value;
    }
};

using binary16_types = ::testing::Types<kiln::half, kiln::bfloat16>;
TYPED_TEST_SUITE(binary16_test, binary16_types);

TYPED_TEST(binary16_test, every_bit_pattern_converts_to_its_float_and_back) {
    ASSERT_EQ(std::fegetround(), FE_TONEAREST);
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const auto number = TypeParam::from_bits(static_cast<std::uint16_t>(bits));
        const float value = static_cast<float>(number);
        const double expected = this->reference().decode(static_cast<std::uint16_t>(bits));
        if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(value)) << std::hex << bits;
            // The payload survives and the NaN is already quiet when its quiet bit was set.
            const TypeParam back(value);
            ASSERT_TRUE(std::isnan(static_cast<float>(back))) << std::hex << bits;
            const std::uint16_t quiet = (std::numeric_limits<TypeParam>::quiet_NaN().bits());
            ASSERT_EQ(back.bits(), bits | quiet) << std::hex << bits;
            continue;
        }
        ASSERT_EQ(static_cast<double>(value), expected) << std::hex << bits;
        ASSERT_EQ(std::signbit(value), (bits & 0x8000) != 0) << std::hex << bits;
        ASSERT_EQ(TypeParam(value).bits(), bits) << std::hex << bits;
    }
}

TYPED_TEST(binary16_test, floats_round_to_nearest_even_at_every_tie) {
    // Ties between neighbouring 16-bit values have at least 12 low zero bits in float (13 for
    // half's normal numbers, 16 for bfloat16's), so every float with 12 low zero bits, and its
    // neighbours one float unit either side, covers every tie, the values next to it, and the
    // exact values; also subnormal, overflow and NaN boundaries.
    for (std::uint32_t high = 0; high < (1u << 20); ++high) {
        const std::uint32_t bits = high << 12;
        for (const std::uint32_t nearby : {bits - 1, bits, bits + 1})
            this->expect_converts(std::bit_cast<float>(nearby));
    }
    std::mt19937 random(40);
    std::uniform_int_distribution<std::uint32_t> any_bits;
    for (int i = 0; i < 1000000; ++i) this->expect_converts(std::bit_cast<float>(any_bits(random)));
}

TYPED_TEST(binary16_test, special_values_follow_ieee_rules) {
    using limits = std::numeric_limits<TypeParam>;
    constexpr float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(static_cast<float>(TypeParam(inf)), inf);
    EXPECT_EQ(static_cast<float>(TypeParam(-inf)), -inf);
    EXPECT_EQ(TypeParam(inf), limits::infinity());
    EXPECT_TRUE(std::isnan(static_cast<float>(TypeParam(std::nanf("")))));
    EXPECT_TRUE(std::isnan(static_cast<float>(limits::quiet_NaN())));
    EXPECT_TRUE(std::isnan(static_cast<float>(limits::signaling_NaN())));
    // Overflow: the largest finite value plus half a unit rounds (to even) to infinity.
    const float largest = static_cast<float>(limits::max());
    const float half_unit = std::ldexp(1.0f, limits::max_exponent - limits::digits - 1);
    EXPECT_EQ(static_cast<float>(TypeParam(largest + half_unit)), inf);
    EXPECT_EQ(static_cast<float>(limits::lowest()), -largest);
    EXPECT_EQ(static_cast<float>(limits::min()), std::ldexp(1.0f, limits::min_exponent - 1));
    EXPECT_EQ(static_cast<float>(limits::denorm_min()),
              std::ldexp(1.0f, limits::min_exponent - limits::digits));
    EXPECT_EQ(static_cast<float>(limits::epsilon()), std::ldexp(1.0f, 1 - limits::digits));
    EXPECT_EQ(static_cast<float>(limits::round_error()), 0.5f);
    EXPECT_EQ(static_cast<float>(limits::max()),
              std::ldexp(2.0f - std::ldexp(1.0f, 1 - limits::digits), limits::max_exponent - 1));
    // Subnormals are exact both ways.
    const float smallest = static_cast<float>(limits::denorm_min());
    EXPECT_EQ(TypeParam(smallest).bits(), 1);
    EXPECT_EQ(TypeParam(3 * smallest).bits(), 3);
    EXPECT_EQ(TypeParam(-smallest).bits(), 0x8001);
}

TYPED_TEST(binary16_test, compares_by_value_as_float_does) {
    const TypeParam one(1.0f), two(2.0f), nan = std::numeric_limits<TypeParam>::quiet_NaN();
    EXPECT_LT(one, two);
    EXPECT_GT(two, one);
    EXPECT_LE(one, one);
    EXPECT_NE(one, two);
    EXPECT_EQ(TypeParam(0.0f), TypeParam(-0.0f));
    EXPECT_NE(TypeParam(0.0f).bits(), TypeParam(-0.0f).bits());
    EXPECT_FALSE(nan == nan);
    EXPECT_TRUE(nan != nan);
    EXPECT_FALSE(nan < one || nan > one || nan <= one || nan >= one);
    EXPECT_EQ(one <=> nan, std::partial_ordering::unordered);
}

TYPED_TEST(binary16_test, is_a_two_byte_trivially_copyable_value) {
    static_assert(sizeof(TypeParam) == 2 && std::is_trivially_copyable_v<TypeParam>);
    // Conversions are explicit: no silent float <-> 16-bit.
    static_assert(!std::is_convertible_v<float, TypeParam>);
    static_assert(!std::is_convertible_v<TypeParam, float>);
    static_assert(std::is_constructible_v<TypeParam, float>);
    constexpr TypeParam quarter(0.25f);
    static_assert(static_cast<float>(quarter) == 0.25f);
    const TypeParam value{};
    EXPECT_EQ(value.bits(), 0);
}

TYPED_TEST(binary16_test, prints_as_its_float) {
    std::ostringstream out;
    out << TypeParam(1.5f) << ' ' << TypeParam(-0.25f) << ' '
        << std::numeric_limits<TypeParam>::infinity();
    EXPECT_EQ(out.str(), "1.5 -0.25 inf");
#ifdef __cpp_lib_format
    EXPECT_EQ(std::format("{:.2f}", TypeParam(1.5f)), "1.50");
#endif
}

TEST(binary16_formats, round_where_half_and_bfloat16_differ) {
    // 1 + 2^-10 is half's next value after 1 and below bfloat16's precision.
    const float next_after_one = 1.0f + std::ldexp(1.0f, -10);
    EXPECT_EQ(static_cast<float>(kiln::half(next_after_one)), next_after_one);
    EXPECT_EQ(static_cast<float>(kiln::bfloat16(next_after_one)), 1.0f);
    // 70000 overflows half and is within bfloat16's range (rounded to 8 significant bits).
    EXPECT_EQ(static_cast<float>(kiln::half(70000.0f)), std::numeric_limits<float>::infinity());
    EXPECT_EQ(static_cast<float>(kiln::bfloat16(70000.0f)), 70144.0f);
}

}  // namespace
