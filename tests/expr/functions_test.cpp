// SPDX-License-Identifier: Apache-2.0
// User functions in expressions: plain, with dependencies, over raw pointers, and their errors.
#include <cmath>
#include <kiln/vector.hpp>
#include <string>

#include "support/device_param.hpp"
#include "test_data.hpp"

// clang-format off
// [doc:user-function]
KILN_FUNCTION(float, squared_norm, (float x, float y), return x * x + y * y;);
KILN_FUNCTION_USING(float, norm, (float x, float y), (squared_norm), return sqrt(squared_norm(x, y)););
// [/doc]
// clang-format on

// clang-format off
// [doc:nbody]
// y[i] = sum over j != i of exp(-|x[i] - x[j]|): a loop over the whole vector per element.
KILN_FUNCTION(float, interaction, (ulong n, ulong i, const float* x),
              float total = 0;
              const float xi = x[i];
              for (ulong j = 0; j < n; ++j)
                  if (j != i) total += exp(-fabs(x[j] - xi));
              return total;);
// [/doc]
// clang-format on

KILN_FUNCTION(float, broken, (float x), return x + ;);

namespace {

using kiln::test::random_values;

class function_test : public kiln::test::device_queue_test {};

TEST_P(function_test, user_functions_compute_like_the_host) {
    const std::size_t n = 1001;
    const auto hx = random_values<float>(n, -3, 3, 11), hy = random_values<float>(n, -3, 3, 12);
    kiln::vector<float> x(q, hx), y(q, hy), z(q, n);
    // [doc:user-function-call]
    z = norm(x, y) + squared_norm(x, 1);
    // [/doc]
    const auto hz = z.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(hz[i], std::sqrt(hx[i] * hx[i] + hy[i] * hy[i]) + hx[i] * hx[i] + 1, 1e-4f)
            << i;
}

TEST_P(function_test, functions_may_be_declared_in_a_block) {
    KILN_FUNCTION(int, clamp_to_byte, (int v), return v < 0 ? 0 : (v > 255 ? 255 : v););
    kiln::vector<std::int32_t> v(q, {-5, 7, 300}), w(q, 3);
    w = clamp_to_byte(v);
    EXPECT_EQ(w.read(), (std::vector<std::int32_t>{0, 7, 255}));
}

TEST_P(function_test, raw_pointers_give_stencils) {
    const std::size_t n = 1000;
    const auto hx = random_values<float>(n, -1, 1, 13);
    kiln::vector<float> x(q, hx), y(q, n);
    // [doc:laplace]
    auto data = kiln::raw_pointer(x);
    auto i = kiln::element_index();
    auto left = kiln::if_else(i > 0, i - 1, i);
    auto right = kiln::if_else(i + 1 < n, i + 1, i);
    y = 2 * data[i] - data[left] - data[right];
    // [/doc]
    const auto hy = y.read();
    for (std::size_t k = 0; k < n; ++k) {
        const float l = hx[k > 0 ? k - 1 : k], r = hx[k + 1 < n ? k + 1 : k];
        ASSERT_FLOAT_EQ(hy[k], 2 * hx[k] - l - r) << k;
    }
}

TEST_P(function_test, user_functions_loop_over_raw_pointers) {
    const std::size_t n = 300;
    const auto hx = random_values<float>(n, -2, 2, 14);
    kiln::vector<float> x(q, hx), y(q, n);
    // [doc:nbody-call]
    y = interaction(x.size(), kiln::element_index(), kiln::raw_pointer(x));
    // [/doc]
    const auto hy = y.read();
    for (std::size_t i = 0; i < n; ++i) {
        double expected = 0;
        for (std::size_t j = 0; j < n; ++j)
            if (j != i) expected += std::exp(-std::fabs(hx[j] - hx[i]));
        ASSERT_NEAR(hy[i], expected, 1e-4 * expected) << i;
    }
}

TEST_P(function_test, a_compile_error_shows_the_numbered_source) {
    kiln::vector<float> x(q, 4), y(q, 4);
    try {
        y = broken(x);
        FAIL() << "expected kiln::build_error";
    } catch (const kiln::build_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("generated source:"), std::string::npos) << message;
        EXPECT_NE(message.find("   1 | float broken(float x) {"), std::string::npos) << message;
        EXPECT_NE(message.find("kernel void kiln_assign("), std::string::npos) << message;
    }
}

// Arity and pointer parameters are checked at compile time.
template <class F, class... Args>
concept callable = requires(const F& f, const Args&... args) {
    f(args...);
};
static_assert(callable<decltype(squared_norm), kiln::vector<float>, float>);
static_assert(!callable<decltype(squared_norm), kiln::vector<float>>, "one argument too few");
static_assert(!callable<decltype(interaction), std::size_t, decltype(kiln::element_index()),
                        kiln::vector<float>>,
              "a pointer parameter takes raw_pointer(), not a vector");

KILN_INSTANTIATE_FOR_EVERY_DEVICE(function_test);

}  // namespace
