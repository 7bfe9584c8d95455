// SPDX-License-Identifier: Apache-2.0
// Checks that the 16-bit and the FP8 vector tests share: vectors of storage types (half,
// bfloat16, float8_e4m3, float8_e5m2) reduced in float and split over devices.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <kiln/vector.hpp>
#include <vector>

#include "test_data.hpp"

namespace kiln::test {

/// Each float rounded to T.
template <class T>
std::vector<T> from_floats(const std::vector<float>& floats) {
    std::vector<T> values;
    for (float f : floats) values.push_back(T(f));
    return values;
}

/// Sums, a dot product and the extremes of n quarters of small integers, whose float sum is
/// exact in any order; the extremes (12 and -6, exact in every format) sit in the last
/// elements, in the tail of a load or chunk wherever n is not a multiple of it.
template <class T>
void expect_exact_reductions(const kiln::queue& q, std::size_t n) {
    std::vector<T> hs;
    for (std::size_t i = 0; i < n; ++i)
        hs.push_back(T(static_cast<float>(static_cast<int>(i % 7) - 2) * 0.25f));
    if (n > 0) hs[n - 1] = T(12.0f);
    if (n > 1) hs[n - 2] = T(-6.0f);
    float total = 0, squares = 0;
    for (const T& h : hs) {
        total += static_cast<float>(h);
        squares += static_cast<float>(h) * static_cast<float>(h);
    }
    kiln::vector<T> x(q, hs);
    EXPECT_EQ(kiln::sum(x), total);
    EXPECT_EQ(kiln::sum(x * x), squares);
    if (n > 0) {
        EXPECT_EQ(kiln::maximum(x), 12.0f);
        EXPECT_EQ(kiln::minimum(x), n > 1 ? -6.0f : 12.0f);
    }
}

/// A vector of n elements of T split over `queues`: its transfers, y = x * 3 + 1 rounded once
/// per element, and y's sum in float.
template <class T>
void expect_split_statement(const std::vector<kiln::queue>& queues, std::size_t n) {
    const auto hs = from_floats<T>(random_values<float>(n, -5, 5, 5));
    kiln::vector<T> x(queues, hs), y(queues, n);
    EXPECT_EQ(x.read(), hs);
    y = x * 3 + 1;
    const auto got = y.read();
    float total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const T expected(static_cast<float>(hs[i]) * 3 + 1);
        ASSERT_EQ(got[i].bits(), expected.bits()) << i;
        total += static_cast<float>(expected);
    }
    EXPECT_NEAR(kiln::sum(y), total, 1e-3f * static_cast<float>(n) * 16);
}

}  // namespace kiln::test
