// SPDX-License-Identifier: Apache-2.0
// kiln::float8_e4m3 and kiln::float8_e5m2 on the host: every bit pattern to float and back, and
// float to FP8 over every midpoint, checked against a reference that lists the format's values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/float8.hpp>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "support/float8_types.hpp"

namespace {

/// A reference written from the formats' definitions: the value of each finite pattern from its
/// fields, and rounding as the choice of the nearest of those values (the even pattern at a
/// tie), saturating at the largest.
struct reference_format {
    int mantissa_bits;
    int bias;
    bool has_infinity;

    /// NaN for the patterns that are no number, ±inf for the infinities.
    double decode(std::uint8_t bits) const {
        const int exponent = (bits & 0x7F) >> mantissa_bits;
        const int mantissa = bits & ((1 << mantissa_bits) - 1);
        const int top = (1 << (7 - mantissa_bits)) - 1;
        double magnitude;
        if (has_infinity && exponent == top)
            magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::quiet_NaN();
        else if (!has_infinity && (bits & 0x7F) == 0x7F)
            magnitude = std::numeric_limits<double>::quiet_NaN();
        else if (exponent == 0)
            magnitude = std::ldexp(mantissa, 1 - bias - mantissa_bits);
        else
            magnitude =
                std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
        return (bits & 0x80) ? -magnitude : magnitude;
    }

    /// The bits of `value` rounded to the format.
    std::uint8_t round(float value) const {
        const std::uint8_t sign = std::signbit(value) ? 0x80 : 0;
        if (std::isnan(value)) return sign | (has_infinity ? 0x7E : 0x7F);
        // The finite non-negative values in increasing order are the patterns 0, 1, 2, ...
        std::vector<double> finite;
        for (int bits = 0; bits < 0x80 && std::isfinite(decode(static_cast<std::uint8_t>(bits)));
             ++bits)
            finite.push_back(decode(static_cast<std::uint8_t>(bits)));
        const double magnitude = std::fabs(static_cast<double>(value));
        if (magnitude >= finite.back()) return sign | static_cast<std::uint8_t>(finite.size() - 1);
        const auto above = std::upper_bound(finite.begin(), finite.end(), magnitude);
        const auto high = static_cast<std::uint8_t>(above - finite.begin());
        const auto low = static_cast<std::uint8_t>(high - 1);
        const double below = magnitude - finite[low], over = finite[high] - magnitude;
        if (below < over) return sign | low;
        if (over < below) return sign | high;
        return sign | ((low & 1) == 0 ? low : high);
    }
};

template <class T>
const reference_format& reference() {
    static const reference_format e4m3{3, 7, false}, e5m2{2, 15, true};
    return std::is_same_v<T, kiln::float8_e4m3> ? e4m3 : e5m2;
}

template <class T>
class float8_test : public ::testing::Test {};
using float8_types = ::testing::Types<kiln::float8_e4m3, kiln::float8_e5m2>;
TYPED_TEST_SUITE(float8_test, float8_types);

TYPED_TEST(float8_test, every_bit_pattern_converts_to_its_float_and_back) {
    for (const TypeParam number : kiln::test::every_float8<TypeParam>()) {
        const float value = static_cast<float>(number);
        const double expected = reference<TypeParam>().decode(number.bits());
        SCOPED_TRACE(testing::Message() << std::hex << "bits 0x" << int{number.bits()});
        if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(value));
            // Every NaN comes back as the format's quiet NaN of its sign.
            const auto quiet = std::numeric_limits<TypeParam>::quiet_NaN().bits();
            ASSERT_EQ(TypeParam(value).bits(), (number.bits() & 0x80) | quiet);
            continue;
        }
        ASSERT_EQ(static_cast<double>(value), expected);
        ASSERT_EQ(std::signbit(value), (number.bits() & 0x80) != 0);
        if (std::isinf(expected)) {
            // Saturation: float's infinity is beyond the largest finite value.
            ASSERT_EQ(TypeParam(value).bits(),
                      (number.bits() & 0x80) | std::numeric_limits<TypeParam>::max().bits());
            continue;
        }
        ASSERT_EQ(TypeParam(value).bits(), number.bits());
    }
}

TYPED_TEST(float8_test, floats_round_to_nearest_even_and_saturate) {
    std::vector<float> floats = kiln::test::float8_conversion_floats<TypeParam>();
    std::mt19937 random(80);
    std::uniform_int_distribution<std::uint32_t> any_bits;
    for (int i = 0; i < 200000; ++i) floats.push_back(std::bit_cast<float>(any_bits(random)));
    for (const float value : floats) {
        ASSERT_EQ(TypeParam(value).bits(), reference<TypeParam>().round(value))
            << std::hex << "float bits 0x" << std::bit_cast<std::uint32_t>(value) << " (" << value
            << ")";
    }
}

TYPED_TEST(float8_test, overflow_and_infinities_saturate_and_nan_stays_nan) {
    using limits = std::numeric_limits<TypeParam>;
    constexpr float inf = std::numeric_limits<float>::infinity();
    const float largest = static_cast<float>(limits::max());
    const float unit = std::ldexp(1.0f, limits::max_exponent - limits::digits);
    // Half a unit above the largest value is a tie whose even neighbour would be past it, and
    // rounding up from there would carry into the infinities' (or the NaN's) bits.
    for (const float beyond : {largest + unit / 2, std::nextafter(largest + unit / 2, inf),
                               largest + unit, 1e30f, inf}) {
        EXPECT_EQ(TypeParam(beyond).bits(), limits::max().bits()) << beyond;
        EXPECT_EQ(TypeParam(-beyond).bits(), limits::lowest().bits()) << beyond;
    }
    EXPECT_EQ(TypeParam(std::nanf("")).bits(), limits::quiet_NaN().bits());
    EXPECT_EQ(TypeParam(-std::nanf("")).bits(), limits::quiet_NaN().bits() | 0x80);
    EXPECT_TRUE(std::isnan(static_cast<float>(limits::quiet_NaN())));
    if constexpr (limits::has_infinity) {
        EXPECT_EQ(static_cast<float>(limits::infinity()), inf);
        EXPECT_TRUE(std::isnan(static_cast<float>(limits::signaling_NaN())));
    }
    // Subnormals are exact; half the smallest is a tie that goes to zero, keeping the sign.
    const float smallest = static_cast<float>(limits::denorm_min());
    EXPECT_EQ(TypeParam(3 * smallest).bits(), 3);
    EXPECT_EQ(TypeParam(smallest / 2).bits(), 0);
    EXPECT_EQ(TypeParam(-smallest / 2).bits(), 0x80);
    EXPECT_EQ(TypeParam(std::nextafter(smallest / 2, 1.0f)).bits(), 1);
}

TYPED_TEST(float8_test, limits_describe_the_format) {
    using limits = std::numeric_limits<TypeParam>;
    static_assert(limits::is_specialized && limits::is_signed && !limits::is_iec559);
    static_assert(limits::has_quiet_NaN && limits::has_denorm == std::denorm_present);
    // The largest significand at the largest exponent, less a unit where the NaN takes it.
    const float unit = std::ldexp(1.0f, limits::max_exponent - limits::digits);
    EXPECT_EQ(static_cast<float>(limits::max()),
              std::ldexp(2.0f - std::ldexp(1.0f, 1 - limits::digits), limits::max_exponent - 1) -
                  (limits::has_infinity ? 0.0f : unit));
    EXPECT_EQ(static_cast<float>(limits::lowest()), -static_cast<float>(limits::max()));
    EXPECT_EQ(static_cast<float>(limits::min()), std::ldexp(1.0f, limits::min_exponent - 1));
    EXPECT_EQ(static_cast<float>(limits::denorm_min()),
              std::ldexp(1.0f, limits::min_exponent - limits::digits));
    EXPECT_EQ(static_cast<float>(limits::epsilon()), std::ldexp(1.0f, 1 - limits::digits));
    EXPECT_EQ(static_cast<float>(limits::round_error()), 0.5f);
    // digits10 and max_digits10 as the standard defines them from digits.
    EXPECT_EQ(limits::digits10, static_cast<int>(std::floor((limits::digits - 1) * std::log10(2))));
    EXPECT_EQ(limits::max_digits10,
              static_cast<int>(std::ceil(1 + limits::digits * std::log10(2))));
    EXPECT_EQ(limits::max_exponent10,
              static_cast<int>(std::floor(std::log10(static_cast<float>(limits::max())))));
    EXPECT_EQ(limits::min_exponent10,
              static_cast<int>(std::ceil(std::log10(static_cast<float>(limits::min())))));
}

TEST(float8_limits, name_the_formats_values) {
    using e4m3 = std::numeric_limits<kiln::float8_e4m3>;
    using e5m2 = std::numeric_limits<kiln::float8_e5m2>;
    static_assert(!e4m3::has_infinity && !e4m3::has_signaling_NaN);
    static_assert(e5m2::has_infinity && e5m2::has_signaling_NaN);
    EXPECT_EQ(static_cast<float>(e4m3::max()), 448.0f);
    EXPECT_EQ(static_cast<float>(e4m3::min()), 0x1p-6f);
    EXPECT_EQ(static_cast<float>(e4m3::denorm_min()), 0x1p-9f);
    EXPECT_EQ(static_cast<float>(e5m2::max()), 57344.0f);
    EXPECT_EQ(static_cast<float>(e5m2::min()), 0x1p-14f);
    EXPECT_EQ(static_cast<float>(e5m2::denorm_min()), 0x1p-16f);
}

TYPED_TEST(float8_test, compares_by_value_as_float_does) {
    const TypeParam one(1.0f), two(2.0f), nan = std::numeric_limits<TypeParam>::quiet_NaN();
    EXPECT_LT(one, two);
    EXPECT_NE(one, two);
    EXPECT_EQ(TypeParam(0.0f), TypeParam(-0.0f));
    EXPECT_NE(TypeParam(0.0f).bits(), TypeParam(-0.0f).bits());
    EXPECT_FALSE(nan == nan);
    EXPECT_EQ(one <=> nan, std::partial_ordering::unordered);
}

TYPED_TEST(float8_test, is_a_one_byte_constexpr_value) {
    static_assert(sizeof(TypeParam) == 1 && std::is_trivially_copyable_v<TypeParam>);
    static_assert(!std::is_convertible_v<float, TypeParam>);
    static_assert(!std::is_convertible_v<TypeParam, float>);
    constexpr TypeParam quarter(0.25f);
    static_assert(static_cast<float>(quarter) == 0.25f);
    static_assert(TypeParam(1e9f).bits() == std::numeric_limits<TypeParam>::max().bits());
    static_assert(static_cast<float>(TypeParam::from_bits(0x01)) ==
                  static_cast<float>(std::numeric_limits<TypeParam>::denorm_min()));
    EXPECT_EQ(TypeParam{}.bits(), 0);
}

TEST(float8_formats, round_where_the_formats_differ) {
    // 1.125 is E4M3's next value after 1, a tie between 1 and 1.25 in E5M2 (to 1, the even).
    static_assert(static_cast<float>(kiln::float8_e4m3(1.125f)) == 1.125f);
    static_assert(static_cast<float>(kiln::float8_e5m2(1.125f)) == 1.0f);
    // 1000 saturates E4M3 at 448; E5M2 holds 1024.
    static_assert(static_cast<float>(kiln::float8_e4m3(1000.0f)) == 448.0f);
    static_assert(static_cast<float>(kiln::float8_e5m2(1000.0f)) == 1024.0f);
    // 464, halfway between 448 and the NaN's pattern, saturates instead of rounding to NaN.
    static_assert(kiln::float8_e4m3(464.0f).bits() == 0x7E);
}

TYPED_TEST(float8_test, prints_as_its_float) {
    std::ostringstream out;
    out << TypeParam(1.5f) << ' ' << TypeParam(-0.25f) << ' ' << TypeParam(1e9f);
    const bool e4m3 = std::is_same_v<TypeParam, kiln::float8_e4m3>;
    EXPECT_EQ(out.str(), e4m3 ? "1.5 -0.25 448" : "1.5 -0.25 57344");
#ifdef __cpp_lib_format
    EXPECT_EQ(std::format("{:.2f}", TypeParam(1.5f)), "1.50");
#endif
}

}  // namespace
