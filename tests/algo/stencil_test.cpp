// 1-D stencils (x * S, clamped at the ends) in expressions on every device, against the host.
#include <gtest/gtest.h>

#include <cmath>
#include <kiln/kiln.hpp>
#include <kiln/stencil.hpp>
#include <vector>

#include "support/device_param.hpp"

namespace {

/// sum over k of c[k] * x[clamp(i + k - center, 0, n - 1)]
template <class T>
std::vector<T> host_stencil(const std::vector<T>& x, const std::vector<T>& c, std::size_t center) {
    const auto n = static_cast<std::ptrdiff_t>(x.size());
    std::vector<T> y(x.size());
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < c.size(); ++k) {
            const std::ptrdiff_t j = std::clamp<std::ptrdiff_t>(
                i + static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(center), 0, n - 1);
            y[i] += c[k] * x[j];
        }
    return y;
}

template <class T>
std::vector<T> values(std::size_t n) {
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = static_cast<T>(std::sin(0.37 * double(i)) + 0.1 * double(i % 7));
    return x;
}

template <class T>
void expect_near_all(const std::vector<T>& actual, const std::vector<T>& expected,
                     double tolerance) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
        ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

class stencils : public kiln::test::device_queue_test {};

TEST_P(stencils, clamped_convolutions_match_the_host) {
    // Sizes shorter than the stencil, a single element, and one long vector; centres at the
    // first, a middle and the last coefficient.
    const std::vector<float> five = {0.5f, -1, 2, 0.25f, -3};
    for (const std::size_t n : {1u, 3u, 1000u}) {
        for (const std::size_t center : {0u, 2u, 4u}) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", center " + std::to_string(center));
            const auto host = values<float>(n);
            kiln::stencil<float> S(q, five, center);
            kiln::vector<float> x(q, host), y(q, n);
            y = x * S;
            expect_near_all(y.read(), host_stencil(host, five, center), 1e-5);
        }
    }
}

TEST_P(stencils, are_terms_of_expressions) {
    const std::size_t n = 777;
    const auto host = values<float>(n);
    kiln::stencil<float> laplacian(q, {1, -2, 1}, 1);
    kiln::vector<float> x(q, host), y(q, n);
    y = 2 * x - 0.5f * (x * laplacian);
    auto expected = host_stencil(host, {1, -2, 1}, 1);
    for (std::size_t i = 0; i < n; ++i) expected[i] = 2 * host[i] - 0.5f * expected[i];
    expect_near_all(y.read(), expected, 1e-5);
}

TEST_P(stencils, double_coefficients) {
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    const std::vector<double> c = {1.0 / 12, -2.0 / 3, 0, 2.0 / 3, -1.0 / 12};
    const auto host = values<double>(300);
    kiln::stencil<double> S(q, c, 2);
    kiln::vector<double> x(q, host), y(q, 300);
    y = x * S;
    expect_near_all(y.read(), host_stencil(host, c, 2), 1e-13);
}

TEST_P(stencils, bad_arguments_are_rejected) {
    EXPECT_THROW(kiln::stencil<float>(q, {1, 2, 3}, 3), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::stencil<float>(q, std::vector<float>{}, 0), kiln::invalid_argument_error);
    kiln::stencil<float> S(q, {1, 2, 3}, 1);
    kiln::vector<float> x(q, 10), y(q, 11);
    x = 1;
    EXPECT_THROW(y = x * S, kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(stencils);

}  // namespace
