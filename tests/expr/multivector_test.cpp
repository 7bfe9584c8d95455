// SPDX-License-Identifier: Apache-2.0
// kiln::multivector: statements over every component in one kernel against host loops, the
// operand kinds a component may meet (scalars, per-component scalars, vectors, multivectors),
// component access, tuples of component expressions, errors and empty multivectors.
#include <algorithm>
#include <array>
#include <cmath>
#include <kiln/multivector.hpp>
#include <kiln/sparse.hpp>
#include <tuple>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class multivector_test : public kiln::test::device_queue_test {};

/// Launches of generated kernels during f().
template <class F>
std::size_t launches_during(const F& f) {
    const std::size_t before = kiln::expression_cache::stats().launches;
    f();
    return kiln::expression_cache::stats().launches - before;
}

TEST_P(multivector_test, updates_every_component_in_one_kernel) {
    for (std::size_t n : kiln::test::edge_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto hx = random_values<float>(3 * n, -1, 1, 1),
                   hf = random_values<float>(3 * n, -1, 1, 2);
        kiln::multivector<float, 3> X(q, hx), F(q, hf);
        const float a = 0.5f, dt = 0.125f;
        const std::size_t launches = launches_during([&] {
            // [doc:multivector_update]
            X = a * X + dt * F;  // one kernel updates X(0), X(1) and X(2)
            // [/doc]
        });
        EXPECT_EQ(launches, n == 0 ? 0u : 1u);
        const std::vector<float> result = X.read();
        ASSERT_EQ(result.size(), 3 * n);
        for (std::size_t i = 0; i < 3 * n; ++i)
            ASSERT_FLOAT_EQ(result[i], a * hx[i] + dt * hf[i]) << "element " << i;
    }
}

TEST_P(multivector_test, operands_are_shared_or_taken_per_component) {
    const std::size_t n = 1001;
    const auto hx = random_values<float>(2 * n, -1, 1, 3),
               hy = random_values<float>(2 * n, 1, 2, 4), hv = random_values<float>(n, -1, 1, 5);
    kiln::multivector<float, 2> X(q, hx), Y(q, hy), Z(q, n);
    kiln::vector<float> v(q, hv);
    // [doc:multivector_operands]
    const std::array<float, 2> scale = {2.0f, -3.0f};
    Z = scale * X - v * Y / (X + 4.0f);  // scale[i] for component i, v for every component
    // [/doc]
    const std::vector<float> z = Z.read();
    for (std::size_t c = 0; c < 2; ++c)
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = c * n + i;
            ASSERT_NEAR(z[k], scale[c] * hx[k] - hv[i] * hy[k] / (hx[k] + 4.0f), 1e-5)
                << "component " << c << " element " << i;
        }
    Z = -X;
    Z += Y;
    Z *= 2;
    const std::vector<float> w = Z.read();
    for (std::size_t k = 0; k < 2 * n; ++k) ASSERT_FLOAT_EQ(w[k], 2 * (hy[k] - hx[k]));
}

TEST_P(multivector_test, components_are_vectors) {
    const std::size_t n = 517;
    const auto hx = random_values<float>(3 * n, -1, 1, 6);
    kiln::multivector<float, 3> X(q, hx);
    kiln::vector<float> norm(q, n);
    // [doc:multivector_components]
    norm = kiln::sqrt(X(0) * X(0) + X(1) * X(1) + X(2) * X(2));
    X(2) = 2 * X(0);  // X(i) is a kiln::vector&
    // One expression per component, all computed before any is stored:
    X = std::make_tuple(X(1), X(0), 1.5f);
    // [/doc]
    const std::vector<float> norms = norm.read(), x = X.read();
    for (std::size_t i = 0; i < n; ++i) {
        const float a = hx[i], b = hx[n + i], c = hx[2 * n + i];
        ASSERT_NEAR(norms[i], std::sqrt(a * a + b * b + c * c), 1e-6);
        ASSERT_EQ(x[i], b);
        ASSERT_EQ(x[n + i], a);
        ASSERT_EQ(x[2 * n + i], 1.5f);
    }
    EXPECT_EQ(X(1).size(), n);
    EXPECT_THROW(X(3), std::out_of_range);
}

TEST_P(multivector_test, sparse_products_act_on_every_component) {
    // The 1-D Laplacian with Dirichlet ends: rows of 2 and 3 entries.
    const std::size_t n = 300;
    std::vector<int> pointers = {0}, columns;
    std::vector<float> values;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i == 0 ? 0 : i - 1; j <= std::min(n - 1, i + 1); ++j) {
            columns.push_back(static_cast<int>(j));
            values.push_back(i == j ? -2.0f : 1.0f);
        }
        pointers.push_back(static_cast<int>(columns.size()));
    }
    const kiln::sparse_matrix<float> A(q, n, n, pointers, columns, values);
    const auto hx = random_values<float>(2 * n, -1, 1, 10),
               hf = random_values<float>(2 * n, -1, 1, 11);
    kiln::multivector<float, 2> X(q, hx), F(q, hf);
    const float dt = 0.25f;
    // [doc:multivector_sparse]
    X = A * X + dt * F;  // one kernel per component; X is replaced once both are computed
    // [/doc]
    const std::vector<float> x = X.read();
    for (std::size_t c = 0; c < 2; ++c)
        for (std::size_t i = 0; i < n; ++i) {
            float ax = 0;
            for (int e = pointers[i]; e < pointers[i + 1]; ++e)
                ax += values[e] * hx[c * n + columns[e]];
            ASSERT_NEAR(x[c * n + i], ax + dt * hf[c * n + i], 1e-5)
                << "component " << c << " row " << i;
        }
}

TEST_P(multivector_test, applies_functions_componentwise) {
    const std::size_t n = 300;
    const auto hx = random_values<float>(2 * n, -1, 1, 7);
    kiln::multivector<float, 2> X(q, hx), Y(q, n);
    Y = kiln::componentwise([](const auto& x) { return kiln::sin(x) + 1; }, X);
    const std::vector<float> y = Y.read();
    for (std::size_t k = 0; k < 2 * n; ++k) ASSERT_NEAR(y[k], std::sin(hx[k]) + 1, 1e-6);
}

TEST_P(multivector_test, doubles) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::size_t n = 4099;
    const auto hx = random_values<double>(4 * n, -1, 1, 8);
    kiln::multivector<double, 4> X(q, hx), Y(q, n);
    Y = X * X - 0.25 * X;
    const std::vector<double> y = Y.read();
    for (std::size_t k = 0; k < 4 * n; ++k)
        ASSERT_NEAR(y[k], hx[k] * hx[k] - 0.25 * hx[k], 1e-15);  // the device may contract to fma
}

TEST_P(multivector_test, copies_are_deep_and_mismatched_sizes_are_errors) {
    const auto hx = random_values<float>(2 * 10, -1, 1, 9);
    kiln::multivector<float, 2> X(q, hx), Y(q, 12);
    kiln::multivector<float, 2> copy = X;
    X = 0.0f;
    EXPECT_EQ(copy.read(), hx);
    EXPECT_THROW(Y = X + copy, kiln::invalid_argument_error);
    kiln::vector<float> v(q, 11);
    EXPECT_THROW(X = X * v, kiln::invalid_argument_error);
    EXPECT_THROW((kiln::multivector<float, 3>(q, hx)), kiln::invalid_argument_error);
    EXPECT_THROW(X.write(std::vector<float>(3)), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(multivector_test);

}  // namespace
