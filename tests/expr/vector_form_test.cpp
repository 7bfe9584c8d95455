// SPDX-License-Identifier: Apache-2.0
// The vector form of chunked expression kernels (launch_policy::vector_bytes): which statements
// take it, and results equal to the element loop's, element by element, at every size around
// the vector width, at a stencil's two ends, and through infinities and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <kiln/kiln.hpp>
#include <kiln/stencil.hpp>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

KILN_STENCIL_OPERATOR(vector_form_coupling, float, 3, 1, sin(x[0] - x[-1]) + sin(x[0] - x[1]));
// Reaches three elements ahead and none behind.
KILN_STENCIL_OPERATOR(vector_form_spread, double, 4, 0, exp(x[3] - x[1]) * 0.5 - x[0]);
// A comparison: over vectors it would give -1 for true, so the statement keeps its element loop.
KILN_STENCIL_OPERATOR(vector_form_rises, float, 2, 0, (x[1] > x[0]) * 2.0f + x[0]);
KILN_FUNCTION(float, vector_form_twice, (float v), return 2 * v;);

namespace {

using kiln::detail::launch_policy;
using kiln::detail::loop_style;

class vector_form : public kiln::test::device_queue_test {};

/// The CPU shape with and without the vector form, whatever the device: 16 groups per compute
/// unit (short chunks, many seams), or one (long chunks).
launch_policy chunked(std::size_t vector_bytes, std::size_t groups_per_compute_unit = 16) {
    return {loop_style::chunked, 1, groups_per_compute_unit, vector_bytes};
}

bool has_vector_loop(const std::string& source, unsigned lanes) {
    return source.find("vstore" + std::to_string(lanes) + "(") != std::string::npos;
}

/// Inputs with infinities and NaNs among ordinary values.
template <class T>
std::vector<T> with_special_values(std::size_t n, unsigned seed) {
    auto values = kiln::test::random_values<T>(n, -2, 2, seed);
    constexpr T inf = std::numeric_limits<T>::infinity();
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    for (std::size_t i = 5; i < n; i += 37) values[i] = i % 2 ? inf : -inf;
    for (std::size_t i = 11; i < n; i += 53) values[i] = nan;
    return values;
}

/// Equal, or both NaN; where `tolerance` is not 0 (maths built-ins, whose vector forms may round
/// differently in the last bits), within it relative to the value.
template <class T>
void expect_same_values(const std::vector<T>& vectors, const std::vector<T>& elements,
                        double tolerance) {
    ASSERT_EQ(vectors.size(), elements.size());
    for (std::size_t i = 0; i < vectors.size(); ++i) {
        const T a = vectors[i], b = elements[i];
        if (std::isnan(b)) {
            ASSERT_TRUE(std::isnan(a)) << "element " << i << ": " << a << ", not NaN";
        } else if (tolerance == 0 || std::isinf(b)) {
            ASSERT_EQ(a, b) << "element " << i;
        } else {
            ASSERT_NEAR(a, b, tolerance * std::max(1.0, std::fabs(double(b)))) << "element " << i;
        }
    }
}

/// `assign(y)` under the vector form (both chunk lengths) and without it, into a target filled
/// with a value no statement computes, so that an element left unwritten shows.
template <class T>
void expect_vector_form_matches(const kiln::queue& q, std::size_t n, double tolerance,
                                const std::function<void(kiln::vector<T>&)>& assign) {
    kiln::vector<T> y(q, n);
    const auto run = [&](const launch_policy& policy) {
        const kiln::detail::scoped_launch_policy forcing(policy);
        y = T(-12345);
        assign(y);
        return y.read();
    };
    const auto elements = run(chunked(0));
    for (const std::size_t groups : {16u, 1u}) {
        SCOPED_TRACE(std::to_string(groups) + " groups per compute unit");
        expect_same_values(run(chunked(64, groups)), elements, tolerance);
    }
}

// Sizes around 16 floats and 8 doubles, a few vectors and a remainder, and many chunks.
const std::vector<std::size_t> sizes = {0, 1, 7, 8, 9, 15, 16, 17, 100, 1001, 20011};

// The tolerance of the stencil tests (tests/algo/stencil_test.cpp) for sin and exp.
constexpr double maths_tolerance = 1e-5;

TEST_P(vector_form, every_statement_with_one_takes_it) {
    kiln::stencil<float> S(q, {1, -2, 1}, 1);
    kiln::vector<float> x(q, 32), y(q, 32), z(q, 32);
    kiln::vector<double> d(q, 32), e(q, 32);
    kiln::vector<std::int32_t> i(q, 32);
    const kiln::detail::scoped_launch_policy forcing(chunked(64));
    const auto source = [&](const auto& target, const auto& value) {
        return kiln::assignment_source(device(), target, value);
    };
    // Arithmetic, scalars, maths built-ins, stencils, user operators of lane-wise bodies,
    // temporaries and tags; 16 floats or 8 doubles per step.
    EXPECT_TRUE(has_vector_loop(source(y, 2 * x - kiln::sin(z) / (1 + x * x)), 16));
    EXPECT_TRUE(has_vector_loop(source(y, kiln::pow(kiln::fabs(x), 1.5f) + kiln::fmax(x, z)), 16));
    EXPECT_TRUE(has_vector_loop(source(y, 1.0f * vector_form_coupling(x)), 16));
    EXPECT_TRUE(has_vector_loop(source(y, 1.0f * (x * S)), 16));
    auto t = kiln::temporary<1>(kiln::log(x));
    EXPECT_TRUE(has_vector_loop(source(y, t * (t + kiln::tag<2>(z))), 16));
    EXPECT_TRUE(has_vector_loop(source(e, -d * 0.5 + vector_form_spread(d)), 8));
    // Comparisons, selections, conversions, indices, gathers, user functions, integers and
    // bodies that mean something else over vectors keep the element loop alone.
    for (const std::string& scalar :
         {source(y, kiln::if_else(x > 0.0f, x, z)), source(y, x + kiln::cast<float>(i)),
          source(y, x * kiln::cast<float>(kiln::element_index())),
          source(y, kiln::raw_pointer(x)[kiln::element_index()]), source(y, vector_form_twice(x)),
          source(i, i * 3 + 1), source(y, 1.0f * vector_form_rises(x))})
        EXPECT_FALSE(has_vector_loop(scalar, 16)) << scalar;
    // Without vector bytes, and in strided loops (GPUs), the kernels are what they were.
    const std::string with_vectors = source(y, 2 * x + kiln::sin(z));
    {
        const kiln::detail::scoped_launch_policy off(chunked(0));
        EXPECT_FALSE(has_vector_loop(source(y, 2 * x + kiln::sin(z)), 16));
    }
    std::string strided;
    {
        const kiln::detail::scoped_launch_policy gpu({loop_style::strided, 64, 2, 0});
        strided = source(y, 2 * x + kiln::sin(z));
    }
    const kiln::detail::scoped_launch_policy gpu_with_bytes({loop_style::strided, 64, 2, 64});
    EXPECT_EQ(source(y, 2 * x + kiln::sin(z)), strided);
    EXPECT_NE(strided, with_vectors);
}

TEST_P(vector_form, arithmetic_is_exactly_the_element_loops) {
    for (const std::size_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        kiln::vector<float> x(q, with_special_values<float>(n, 1)),
            z(q, with_special_values<float>(n, 2));
        expect_vector_form_matches<float>(
            q, n, 0, [&](kiln::vector<float>& y) { y = 2 * x - z / (1.5f + x) * -x + 0.25f; });
        auto t = kiln::temporary<1>(x * z);
        auto tx = kiln::tag<2>(x);
        expect_vector_form_matches<float>(q, n, 0,
                                          [&](kiln::vector<float>& y) { y = t * (t + tx) - tx; });
        // Two results of one kernel, each stored whole vectors at a time.
        kiln::vector<float> other(q, n);
        expect_vector_form_matches<float>(q, n, 0, [&](kiln::vector<float>& y) {
            other = 0.0f;
            kiln::tie(y, other) = std::make_tuple(x + z, x * z);
            y = y + 3 * other;
        });
        if (!has_double()) continue;
        kiln::vector<double> d(q, with_special_values<double>(n, 3));
        expect_vector_form_matches<double>(q, n, 0,
                                           [&](kiln::vector<double>& y) { y = d * d - 0.5 * d; });
    }
}

TEST_P(vector_form, maths_built_ins_match_the_element_loop) {
    for (const std::size_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        kiln::vector<float> x(q, with_special_values<float>(n, 4)),
            z(q, with_special_values<float>(n, 5));
        expect_vector_form_matches<float>(q, n, maths_tolerance, [&](kiln::vector<float>& y) {
            y = kiln::sin(x) + kiln::exp(-kiln::fabs(z)) * kiln::sqrt(kiln::fabs(x)) +
                kiln::fmin(x, z) - kiln::atan2(x, 2.0f);
        });
        if (!has_double()) continue;
        kiln::vector<double> d(q, with_special_values<double>(n, 6));
        expect_vector_form_matches<double>(q, n, 1e-12, [&](kiln::vector<double>& y) {
            y = kiln::cos(d) * kiln::pow(kiln::fabs(d), 0.5) + kiln::fma(d, d, 1.0);
        });
    }
}

/// sum over k of c[k] * x[clamp(i + k - center, 0, n - 1)], in the element loop's order.
std::vector<float> host_stencil(const std::vector<float>& x, const std::vector<float>& c,
                                std::size_t center) {
    const auto n = static_cast<std::ptrdiff_t>(x.size());
    std::vector<float> y(x.size());
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < c.size(); ++k)
            y[i] += c[k] * x[std::clamp<std::ptrdiff_t>(
                               i + std::ptrdiff_t(k) - std::ptrdiff_t(center), 0, n - 1)];
    return y;
}

TEST_P(vector_form, stencils_keep_their_ends) {
    // Centres at the first, a middle and the last coefficient, so that the element loop takes
    // either end alone, or both; sizes shorter than the stencil and than a vector.
    const std::vector<float> five = {0.5f, -1, 2, 0.25f, -3};
    for (const std::size_t center : {0u, 2u, 4u}) {
        kiln::stencil<float> S(q, five, center);
        for (const std::size_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", center " + std::to_string(center));
            const auto host = kiln::test::random_values<float>(n, -1, 1, 7);
            kiln::vector<float> x(q, host);
            expect_vector_form_matches<float>(q, n, 0,
                                              [&](kiln::vector<float>& y) { y = 1.0f * (x * S); });
            kiln::vector<float> y(q, n);
            {
                const kiln::detail::scoped_launch_policy forcing(chunked(64, 1));
                y = 1.0f * (x * S);
            }
            const auto expected = host_stencil(host, five, center);
            const auto got = y.read();
            for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], expected[i], 1e-5) << i;
        }
    }
}

TEST_P(vector_form, user_operators_keep_their_ends) {
    for (const std::size_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        kiln::vector<float> x(q, with_special_values<float>(n, 8));
        expect_vector_form_matches<float>(q, n, maths_tolerance, [&](kiln::vector<float>& y) {
            y = 1.0f * vector_form_coupling(x);
        });
        expect_vector_form_matches<float>(
            q, n, 0, [&](kiln::vector<float>& y) { y = 1.0f * vector_form_rises(x); });
        if (!has_double()) continue;
        kiln::vector<double> d(q, with_special_values<double>(n, 9));
        expect_vector_form_matches<double>(
            q, n, 1e-12, [&](kiln::vector<double>& y) { y = 2.0 * vector_form_spread(d) + d; });
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(vector_form);

}  // namespace
