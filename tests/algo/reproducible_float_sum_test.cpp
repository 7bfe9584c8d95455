// SPDX-License-Identifier: Apache-2.0
// Reproducible float sums (docs/reproducibility.md) against the definition of the sum, computed
// here on the host: each element's digits as a fresh accumulator's, all states combined, rounded
// once. Largest elements across float's whole range and either side of where the top bin steps,
// ties of every grid below a top (and of the grids half-way, which a split of the roundings
// would round onto), elements at the top bin's limit, subnormals, and sums left on the lower
// grids' digits by cancellation, in two orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <vector>

#include "support/device_param.hpp"
#include "support/exact_sums.hpp"
#include "support/reproducible_inputs.hpp"

namespace {

using kiln::detail::exact_sum_state;
using kiln::test::hex_bits;

/// One finite float's state, as kiln_exact_state_of gives it on the device.
exact_sum_state float_state(float value) {
    const double v = value;
    if (v == 0.0) return exact_sum_state{0};
    const int top = (std::ilogb(v) + 1075) / 32;
    double rest = v;
    exact_sum_state s{0};
    std::int64_t* digits[3] = {&s.x, &s.y, &s.z};
    for (int j = 0; j < 3; ++j) {
        const int grid = 32 * (top - j) - 1074;
        const double rounder = std::ldexp(1.5, grid + 52);
        const double q = (rounder + rest) - rounder;
        rest -= q;
        *digits[j] = static_cast<std::int64_t>(std::ldexp(q, -grid));
    }
    s.w = top + 1;
    return s;
}

/// The reproducible sum by its definition, on the host.
float defined_sum(const std::vector<float>& values) {
    exact_sum_state total{0};
    for (float v : values) total = kiln::detail::combine_exact_sums(total, float_state(v));
    return kiln::detail::round_exact_sum_to_float(total);
}

/// n elements under a largest of 2^e: random exponents from e - 100 up, ties of six grids below
/// e's top (its bins' 2^K, 2^(K - 32) and 2^(K - 64), and 2^(K + 9), 2^(K - 23) and
/// 2^(K - 55)), a few subnormals and zeros, the largest floats below 2^e
/// and below the top bin's limit; then, where `cancelled_above` is below e, the negation of
/// every element from 2^cancelled_above up, so that the sum lies on the lower grids' digits;
/// shuffled.
std::vector<float> hard_values(int e, std::size_t n, std::uint64_t seed,
                               int cancelled_above = 128) {
    kiln::test::word_stream words(seed);
    std::vector<float> v;
    v.push_back(std::ldexp(1.0f, e));
    v.push_back(-std::nextafter(std::ldexp(1.0f, e), 0.0f));
    const int k = 32 * ((std::min(e, 127) + 1075) / 32) - 1074;
    if (k + 31 <= 127) v.push_back(std::nextafter(std::ldexp(1.0f, k + 31), 0.0f));
    for (const int grid : {k + 9, k, k - 23, k - 32, k - 55, k - 64})
        for (const int odd : {1, 3, 5, -7})
            if (grid - 1 >= -149 && grid + 3 <= e) v.push_back(std::ldexp(float(odd), grid - 1));
    for (const float tiny : {0x1p-149f, -0x1.8p-148f, 0x1.fffffcp-127f, 0.0f, -0.0f})
        v.push_back(tiny);
    while (v.size() < n) {
        const std::uint64_t w = words.next();
        const int exponent = std::max(-149, e - static_cast<int>(w % 101));
        const float mantissa = 1.0f + static_cast<float>((w >> 8) & 0x7fffff) * 0x1p-23f;
        v.push_back(std::ldexp((w >> 63) != 0 ? -mantissa : mantissa, exponent - 1));
    }
    for (std::size_t i = 0, size = v.size(); i < size; ++i)
        if (std::abs(v[i]) >= std::ldexp(1.0f, cancelled_above)) v.push_back(-v[i]);
    for (std::size_t i = v.size() - 1; i > 0; --i) std::swap(v[i], v[words.next() % (i + 1)]);
    return v;
}

class reproducible_float_sum_test : public kiln::test::reproducible_device_test {};

TEST_P(reproducible_float_sum_test, float_sums_are_the_defined_sums_over_floats_whole_range) {
    if (!has_double()) GTEST_SKIP() << "the reproducible sum needs doubles";
    std::vector<int> exponents;
    for (int e = -140; e <= 127; e += 9) exponents.push_back(e);
    // Either side of where the top bin steps: 2^-51, 2^-19 and 2^109 start tops 32, 33 and 37.
    for (const int e : {-53, -52, -51, -50, -20, -19, 107, 108, 109, 110}) exponents.push_back(e);
    for (const int e : exponents) {
        // All of them; then what is left below 2^(e - 50) and below 2^(e - 75), which the
        // grids 2^(K - 32) and 2^(K - 64) round (K is e - 30 to e + 1).
        for (const int cancelled : {128, e - 50, e - 75}) {
            SCOPED_TRACE("largest 2^" + std::to_string(e) + ", cancelled from 2^" +
                         std::to_string(cancelled));
            const std::vector<float> host = hard_values(e, 20011, 100 + e + 140, cancelled);
            const float expected = defined_sum(host);
            EXPECT_EQ(hex_bits(kiln::sum(kiln::vector<float>(q, host))), hex_bits(expected));
            const std::vector<float> reversed(host.rbegin(), host.rend());
            EXPECT_EQ(hex_bits(kiln::sum(kiln::vector<float>(q, reversed))), hex_bits(expected));
        }
    }
}

TEST_P(reproducible_float_sum_test, the_largest_element_last_raises_the_bins_of_float_sums) {
    if (!has_double()) GTEST_SKIP() << "the reproducible sum needs doubles";
    // Small elements first fill float sums under a low top, which a late large one raises.
    std::vector<float> host = hard_values(-30, 30011, 7);
    const std::vector<float> large = hard_values(60, 3001, 8);
    host.insert(host.end(), large.begin(), large.end());
    EXPECT_EQ(hex_bits(kiln::sum(kiln::vector<float>(q, host))), hex_bits(defined_sum(host)));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reproducible_float_sum_test);

}  // namespace
