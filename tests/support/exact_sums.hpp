// SPDX-License-Identifier: Apache-2.0
// Checks of reproducible mode's results (docs/reproducibility.md): against exact sums (values
// that are whole multiples of 2^-shift summed exactly in 128-bit integers: whether a result is
// that sum rounded once, or within the documented bound), and against the golden table.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/runtime/determinism.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "support/device_param.hpp"
#include "support/reproducible_inputs.hpp"

namespace kiln::test {

/// A test on one device in reproducible mode for the test's whole life.
class reproducible_device_test : public device_queue_test {
  protected:
    kiln::scoped_determinism reproducible{kiln::determinism::reproducible};
};

__extension__ typedef __int128 exact_integer;

/// The exact sum of `values`, each a multiple of 2^-shift below 2^(127 - shift) / n, in units
/// of 2^-shift.
template <class T>
exact_integer exact_sum(const std::vector<T>& values, int shift) {
    exact_integer total = 0;
    for (T v : values) total += static_cast<exact_integer>(std::ldexp(v, shift));
    return total;
}

/// Whether `result` is `exact` (in units of 2^-shift) rounded to nearest, ties to even.
template <class T>
::testing::AssertionResult is_rounded_once(T result, exact_integer exact, int shift) {
    const auto in_units = [&](T v) { return static_cast<exact_integer>(std::ldexp(v, shift)); };
    const exact_integer rounded = in_units(result);
    const T neighbour =
        std::nextafter(result, exact >= rounded ? std::numeric_limits<T>::infinity()
                                                : -std::numeric_limits<T>::infinity());
    const exact_integer gap = in_units(neighbour) - rounded;
    const exact_integer twice_error = 2 * (exact - rounded);
    const auto magnitude = [](exact_integer v) { return v < 0 ? -v : v; };
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    const bool even = (std::bit_cast<bits>(result) & 1) == 0;
    if (magnitude(twice_error) < magnitude(gap) ||
        (magnitude(twice_error) == magnitude(gap) && even))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "result " << hex_bits(result) << " is " << static_cast<double>(exact - rounded)
           << " units of 2^-" << shift << " from the exact sum";
}

/// The documented bound (docs/reproducibility.md): |result - exact| <= half an ulp of the
/// result + n 2^-64 max |x|, in units of 2^-shift.
template <class T>
::testing::AssertionResult is_within_the_bound(T result, const std::vector<T>& values, int shift) {
    T largest = 0;
    for (T v : values) largest = std::max(largest, std::abs(v));
    const double error = std::abs(static_cast<double>(
        exact_sum(values, shift) - static_cast<exact_integer>(std::ldexp(result, shift))));
    const double half_ulp = std::ldexp(std::abs(std::nextafter(result, T(0)) - result), shift) / 2;
    const double bound =
        half_ulp + std::ldexp(static_cast<double>(values.size()) * largest, shift - 64);
    if (error <= bound) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "error " << error << " units of 2^-" << shift << " above the bound " << bound;
}

/// Each prefix of `values` (after `init`, where given), exactly in units of 2^-shift.
template <class T>
std::vector<exact_integer> exact_prefixes(const std::vector<T>& values, int shift, bool exclusive,
                                          T init = 0) {
    std::vector<exact_integer> prefixes;
    exact_integer total = static_cast<exact_integer>(std::ldexp(init, shift));
    for (T v : values) {
        if (exclusive) prefixes.push_back(total);
        total += static_cast<exact_integer>(std::ldexp(v, shift));
        if (!exclusive) prefixes.push_back(total);
    }
    return prefixes;
}

/// Whether every element of `got` is the matching exact prefix rounded once.
template <class T>
::testing::AssertionResult are_rounded_once(const std::vector<T>& got,
                                            const std::vector<exact_integer>& exact, int shift) {
    if (got.size() != exact.size()) return ::testing::AssertionFailure() << "sizes differ";
    for (std::size_t i = 0; i < got.size(); ++i)
        if (auto rounded = is_rounded_once(got[i], exact[i], shift); !rounded)
            return rounded << " at element " << i;
    return ::testing::AssertionSuccess();
}

/// Expects each operation's bits to be the golden table's.
inline void expect_golden(const std::map<std::string, std::string>& got) {
    for (const auto& [operation, bits] : got) EXPECT_EQ(bits, golden_bits(operation)) << operation;
}

/// What makes a golden input's vector on queue `q`.
inline auto on_queue(const kiln::queue& q) {
    return [&q](const auto& host) {
        return kiln::vector<typename std::decay_t<decltype(host)>::value_type>(q, host);
    };
}

}  // namespace kiln::test
