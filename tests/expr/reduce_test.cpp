// SPDX-License-Identifier: Apache-2.0
// Reductions: every reducer against a double-precision host computation, special values, empty
// and odd sizes, integer widening, the async form and expressions without vectors.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <kiln/vector.hpp>
#include <limits>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class reduce_test : public kiln::test::device_queue_test {};

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

double host_sum(const std::vector<float>& values) {
    double total = 0;
    for (float v : values) total += v;
    return total;
}

TEST_P(reduce_test, sums_match_a_double_precision_host_sum) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000},
                          std::size_t{65537}, std::size_t{1} << 20}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = random_values<float>(n, -1, 1, static_cast<unsigned>(n));
        kiln::vector<float> x(q, host);
        const double expected = host_sum(host);
        const float sum = kiln::sum(x), kahan = kiln::kahan_sum(x);
        std::printf("n = %zu: float sum error %.3g, Kahan error %.3g\n", n, sum - expected,
                    kahan - expected);
        EXPECT_NEAR(sum, expected, 1e-6 * std::sqrt(static_cast<double>(n)) + 1e-6);
        // Compensated: only the final rounding to float remains.
        EXPECT_NEAR(kahan, expected, std::abs(expected) * 1.2e-7 + 1e-6);
    }
}

TEST_P(reduce_test, reduces_expressions_without_temporaries) {
    const std::size_t n = 100003;
    const auto hx = random_values<float>(n, -1, 1, 21), hy = random_values<float>(n, -1, 1, 22);
    kiln::vector<float> x(q, hx), y(q, hy);
    // [doc:reductions]
    float dot = kiln::sum(x * y);
    float largest_distance = kiln::maximum(kiln::sqrt(x * x + y * y));
    std::uint64_t inside = kiln::count(x * x + y * y < 1);
    auto [low, high] = kiln::minmax(x);
    // [/doc]
    double expected_dot = 0, expected_distance = 0;
    std::uint64_t expected_inside = 0;
    for (std::size_t i = 0; i < n; ++i) {
        expected_dot += double(hx[i]) * hy[i];
        expected_distance =
            std::max(expected_distance, std::sqrt(double(hx[i]) * hx[i] + double(hy[i]) * hy[i]));
        expected_inside += hx[i] * hx[i] + hy[i] * hy[i] < 1;
    }
    EXPECT_NEAR(dot, expected_dot, 1e-3);
    EXPECT_NEAR(largest_distance, expected_distance, 1e-6);
    EXPECT_EQ(inside, expected_inside);
    EXPECT_EQ(low, *std::min_element(hx.begin(), hx.end()));
    EXPECT_EQ(high, *std::max_element(hx.begin(), hx.end()));
}

TEST_P(reduce_test, kahan_summation_keeps_the_small_terms) {
    // One large value then many small ones: plain float accumulation drops most of them.
    std::vector<float> host(1 << 18, 1e-4f);
    host[0] = 1e4f;
    kiln::vector<float> x(q, host);
    const double expected = host_sum(host);
    EXPECT_NEAR(kiln::kahan_sum(x), expected, expected * 1.2e-7);
    EXPECT_NEAR(kiln::kahan_sum(x * 2), 2 * expected, 2 * expected * 1.2e-7);
}

TEST_P(reduce_test, min_max_count_any_all_on_odd_sizes) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{65537}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = random_values<float>(n, -5, 5, 31);
        kiln::vector<float> x(q, host);
        EXPECT_EQ(kiln::minimum(x), *std::min_element(host.begin(), host.end()));
        EXPECT_EQ(kiln::maximum(x), *std::max_element(host.begin(), host.end()));
        EXPECT_EQ(kiln::count(x > 0),
                  static_cast<std::uint64_t>(
                      std::count_if(host.begin(), host.end(), [](float v) { return v > 0; })));
        EXPECT_EQ(kiln::any(x > 4.9f),
                  std::any_of(host.begin(), host.end(), [](float v) { return v > 4.9f; }));
        EXPECT_EQ(kiln::all(x > -5.0f), true);
        EXPECT_FALSE(kiln::all(x > 0) && n > 1);
    }
}

TEST_P(reduce_test, empty_ranges_give_each_reducers_identity) {
    kiln::vector<float> x(q, 0);
    EXPECT_EQ(kiln::sum(x), 0.0f);
    EXPECT_EQ(kiln::kahan_sum(x), 0.0f);
    EXPECT_TRUE(std::isnan(kiln::minimum(x)));
    EXPECT_TRUE(std::isnan(kiln::maximum(x)));
    EXPECT_EQ(kiln::count(x), 0u);
    EXPECT_FALSE(kiln::any(x));
    EXPECT_TRUE(kiln::all(x));
    kiln::vector<std::int32_t> integers(q, 0);
    EXPECT_EQ(kiln::minimum(integers), std::numeric_limits<std::int32_t>::max());
    EXPECT_EQ(kiln::maximum(integers), std::numeric_limits<std::int32_t>::lowest());
}

TEST_P(reduce_test, special_values_follow_the_documented_semantics) {
    // clang-format off
    // [doc:special-values]
    kiln::vector<float> x(q, {1.0f, nan, -2.0f, inf});
    EXPECT_TRUE(std::isnan(kiln::sum(x)));     // NaN in, NaN out
    EXPECT_EQ(kiln::minimum(x), -2.0f);        // min and max ignore NaN
    EXPECT_EQ(kiln::maximum(x), inf);
    EXPECT_EQ(kiln::count(x), 4u);             // NaN is not zero
    // [/doc]
    // clang-format on
    kiln::vector<float> infinities(q, {inf, 1.0f, 2.0f}), opposite(q, {inf, -inf}),
        nans(q, {nan, nan});
    EXPECT_EQ(kiln::sum(infinities), inf);
    EXPECT_EQ(kiln::kahan_sum(infinities), inf);
    EXPECT_TRUE(std::isnan(kiln::sum(opposite)));
    EXPECT_TRUE(std::isnan(kiln::kahan_sum(opposite)));
    EXPECT_TRUE(std::isnan(kiln::minimum(nans)));
    const auto [low, high] = kiln::minmax(x);
    EXPECT_EQ(low, -2.0f);
    EXPECT_EQ(high, inf);
}

TEST_P(reduce_test, integers_accumulate_in_64_bits) {
    kiln::vector<std::int32_t> big(
        q, std::vector<std::int32_t>(1000, std::numeric_limits<std::int32_t>::max()));
    EXPECT_EQ(kiln::sum(big), 1000ll * std::numeric_limits<std::int32_t>::max());
    kiln::vector<std::uint32_t> small(q, {1u, 2u, 3u});
    static_assert(std::is_same_v<decltype(kiln::sum(small)), std::uint64_t>);
    EXPECT_EQ(kiln::sum(small), 6u);
    EXPECT_EQ(kiln::sum(small > 1u), 2u);  // a condition sums to a count
}

TEST_P(reduce_test, doubles_and_complex_numbers_sum) {
    kiln::vector<std::complex<float>> c(q, {{1, 2}, {3, -4}});
    const std::complex<float> total = kiln::sum(c);
    EXPECT_EQ(total, std::complex<float>(4, -2));
    if (!has_double()) return;
    const auto host = random_values<double>(50001, -1, 1, 41);
    kiln::vector<double> x(q, host);
    double expected = 0;
    for (double v : host) expected += v;
    EXPECT_NEAR(kiln::sum(x), expected, 1e-11);
    EXPECT_NEAR(kiln::kahan_sum(x), expected, 1e-12);
}

TEST_P(reduce_test, async_reductions_complete_later) {
    kiln::vector<float> x(q, std::vector<float>(4096, 0.5f));
    // [doc:reduce-async]
    auto pending = kiln::reduce_async<kiln::reducers::sum>(x * 2);
    // ... other host work while the device reduces ...
    float total = pending.get();
    // [/doc]
    EXPECT_EQ(total, 4096.0f);
    auto discarded = kiln::reduce_async<kiln::reducers::maximum>(x);
    EXPECT_EQ(discarded.events().size(), 1u);  // its destructor waits for the read
}

TEST_P(reduce_test, expressions_without_vectors_reduce_on_a_given_queue) {
    const std::size_t n = 100000;
    EXPECT_EQ(kiln::count(q, kiln::element_index(0, n) % 3 == 0), (n + 2) / 3);
    EXPECT_EQ(kiln::sum(q, kiln::element_index(1, n)), n * (n + 1) / 2);
    EXPECT_THROW(static_cast<void>(kiln::sum(q, kiln::element_index() * 2)),
                 kiln::invalid_argument_error);
}

template <class Reducer, class E>
concept reducible = requires(const E& e) {
    kiln::reduce<Reducer>(e);
};
static_assert(!reducible<kiln::reducers::kahan_sum, kiln::vector<std::int32_t>>,
              "Kahan summation is for floats");
static_assert(!reducible<kiln::reducers::minimum, kiln::vector<std::complex<float>>>,
              "complex numbers have no order");
static_assert(reducible<kiln::reducers::sum, kiln::vector<std::complex<float>>>);

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reduce_test);

}  // namespace
