// SPDX-License-Identifier: Apache-2.0
// One test body for each of kiln's FP8 types, and the floats whose conversions the host and the
// device tests check: every value of the format, every midpoint between neighbours and the
// floats one unit either side of each, overflow, underflow, zeros, infinities and NaNs.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/float8.hpp>
#include <limits>
#include <vector>

namespace kiln::test {

/// Runs `check.template operator()<T>()` for T = float8_e4m3, then float8_e5m2.
template <class F>
void for_each_float8(F check) {
    {
        SCOPED_TRACE("kiln::float8_e4m3");
        check.template operator()<kiln::float8_e4m3>();
    }
    {
        SCOPED_TRACE("kiln::float8_e5m2");
        check.template operator()<kiln::float8_e5m2>();
    }
}

/// Every 8-bit pattern once: zeros, subnormals, normals, infinities and NaNs of both signs.
template <class T>
std::vector<T> every_float8() {
    std::vector<T> values;
    for (unsigned bits = 0; bits < 256; ++bits)
        values.push_back(T::from_bits(static_cast<std::uint8_t>(bits)));
    return values;
}

/// The floats on either side of `value`, and itself.
inline void add_with_neighbours(std::vector<float>& floats, float value) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    floats.insert(floats.end(), {std::nextafter(value, -inf), value, std::nextafter(value, inf)});
}

/// Floats whose conversion to T tells right rounding from wrong, with both signs: each finite
/// value of T, each midpoint between neighbours (including the one above the largest finite
/// value, where a format with one more exponent would have its next value), each with its
/// neighbouring floats; underflow below the smallest subnormal, float's extremes, zeros,
/// infinities and NaNs of several payloads.
template <class T>
std::vector<float> float8_conversion_floats() {
    using limits = std::numeric_limits<T>;
    std::vector<float> magnitudes;
    const float largest = static_cast<float>(limits::max());
    const float unit_at_largest = std::ldexp(1.0f, limits::max_exponent - limits::digits);
    for (unsigned bits = 0; bits < 0x80; ++bits) {
        const float value = static_cast<float>(T::from_bits(static_cast<std::uint8_t>(bits)));
        if (!std::isfinite(value)) continue;
        add_with_neighbours(magnitudes, value);
        const float next =
            value == largest
                ? largest + unit_at_largest
                : static_cast<float>(T::from_bits(static_cast<std::uint8_t>(bits + 1)));
        add_with_neighbours(magnitudes, value + (next - value) / 2);
    }
    const float smallest = static_cast<float>(limits::denorm_min());
    for (const float value :
         {smallest / 4, smallest / 2 * 3, largest + unit_at_largest * 2, largest * 1024,
          std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
          std::numeric_limits<float>::denorm_min(), 1.0f / 3, 0.1f, 100.0f})
        add_with_neighbours(magnitudes, value);
    constexpr float inf = std::numeric_limits<float>::infinity();
    magnitudes.insert(
        magnitudes.end(),
        {inf, std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7FA00000u),
         std::bit_cast<float>(0x7F800001u), std::bit_cast<float>(0x7FFFFFFFu)});
    std::vector<float> floats;
    for (const float m : magnitudes) floats.insert(floats.end(), {m, -m});
    return floats;
}

}  // namespace kiln::test
