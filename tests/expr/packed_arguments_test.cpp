// SPDX-License-Identifier: Apache-2.0
// How generated kernels take their arguments on OpenCL (kiln/expr/launch.hpp, packed_arguments):
// a statement's scalars travel as one struct, whatever their sizes. A multivector's components
// are ranges of one allocation per device (kiln/multivector.hpp):
// on OpenCL, statements, eager or fused, take that allocation once whatever components of it
// they use (on CUDA each component as a buffer of its own); kernels of the same node types over
// other allocations are told apart; algorithms, copies and moves take a component as any
// vector; and a graph captured over a component refuses to replay once the component has given
// up its range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/test_helpers.hpp"
#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class packed_arguments_test : public kiln::test::device_queue_test {
  protected:
    /// Whether statements take a multivector's allocation once and their scalars together.
    bool passes_allocations() const { return q.device().backend() == kiln::backend_kind::opencl; }
};

/// Per kernel of a printed program: its allocations taken once, its float pointers taken as
/// parameters of their own, its scalar parameters and its structs of scalars.
struct kernel_parameters {
    std::size_t allocations = 0, float_pointers = 0, scalars = 0, structs = 0;
};
std::vector<kernel_parameters> parameters_of(const std::string& printed) {
    std::vector<kernel_parameters> kernels;
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);) {
        line.erase(0, line.find_first_not_of(' '));
        if (line.starts_with("kernel ")) kernels.emplace_back();
        if (kernels.empty() || line.find(" = ") != std::string::npos) continue;
        if (line.starts_with("global uchar* kiln_allocation")) ++kernels.back().allocations;
        if (line.starts_with("global float* ") || line.starts_with("global const float* "))
            ++kernels.back().float_pointers;
        for (const char* scalar : {"ulong ", "float ", "double ", "int ", "long "})
            if (line.starts_with(scalar)) ++kernels.back().scalars;
        if (line.starts_with("kiln_scalars")) ++kernels.back().structs;
    }
    return kernels;
}

/// What KILN_SHOW_KERNELS prints while f() runs, its kernels generated and built again.
template <class F>
std::string printed_during(const F& f) {
    kiln::expression_cache::clear();
    kiln::program_cache::clear_memory();
    const kiln::test::scoped_env show("KILN_SHOW_KERNELS", "1");
    testing::internal::CaptureStderr();
    f();
    return testing::internal::GetCapturedStderr();
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], expected[i], 1e-6f) << "element " << i;
}

TEST_P(packed_arguments_test, a_statement_takes_each_multivector_once) {
    const std::size_t n = 1001;
    const auto hx = random_values<float>(3 * n, -1, 1, 1),
               hf = random_values<float>(3 * n, -1, 1, 2);
    kiln::multivector<float, 3> X(q, hx), F(q, hf);
    const std::string printed = printed_during([&] { X = 0.5f * X + 0.25f * F; });
    const auto kernels = parameters_of(printed);
    ASSERT_EQ(kernels.size(), 1u) << printed;
    // X's allocation (target and operand) and F's; no component of its own.
    EXPECT_EQ(kernels[0].allocations, passes_allocations() ? 2u : 0u) << printed;
    EXPECT_EQ(kernels[0].float_pointers, passes_allocations() ? 0u : 9u) << printed;
    std::vector<float> expected(3 * n);
    for (std::size_t i = 0; i < 3 * n; ++i) expected[i] = 0.5f * hx[i] + 0.25f * hf[i];
    expect_near_all(X.read(), expected);
}

TEST_P(packed_arguments_test, a_fused_block_takes_each_multivector_once) {
    const std::size_t n = 777;
    const auto hx = random_values<float>(2 * n, -1, 1, 3), hv = random_values<float>(n, -1, 1, 4);
    kiln::multivector<float, 2> X(q, hx), Y(q, n);
    kiln::vector<float> v(q, hv);
    const std::string printed = printed_during([&] {
        kiln::fused(q, [&] {
            Y = X * v;
            X = Y + X;
        });
    });
    const auto kernels = parameters_of(printed);
    ASSERT_EQ(kernels.size(), 1u) << printed;
    EXPECT_EQ(kernels[0].allocations, passes_allocations() ? 2u : 0u) << printed;
    // v, a vector of its own (and each component once, where they are buffers of their own)
    EXPECT_EQ(kernels[0].float_pointers, passes_allocations() ? 1u : 5u) << printed;
    std::vector<float> y(2 * n), x(2 * n);
    for (std::size_t i = 0; i < 2 * n; ++i) {
        y[i] = hx[i] * hv[i % n];
        x[i] = y[i] + hx[i];
    }
    expect_near_all(Y.read(), y);
    expect_near_all(X.read(), x);
}

TEST_P(packed_arguments_test, scalars_of_several_sizes_travel_together) {
    const std::size_t n = 1001;
    const auto hx = random_values<float>(n, -1, 1, 8);
    kiln::vector<float> x(q, hx), y(q, n);
    const float a = 0.5f;
    const int b = 3;
    // n and the index's offset (8 bytes each) around a and b (4 bytes each).
    const std::string printed = printed_during([&] { y = x * a + kiln::element_index(1000) + b; });
    const auto kernels = parameters_of(printed);
    ASSERT_EQ(kernels.size(), 1u) << printed;
    EXPECT_EQ(kernels[0].scalars, passes_allocations() ? 0u : 4u) << printed;
    EXPECT_EQ(kernels[0].structs, passes_allocations() ? 1u : 0u) << printed;
    const std::vector<float> got = y.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], hx[i] * a + float(1000 + i) + float(b), 1e-3f) << "element " << i;
}

// Z = X + Y and Z = X + X have the same node types: only which allocations their arguments are
// ranges of tells their kernels apart.
TEST_P(packed_arguments_test, kernels_of_the_same_types_over_other_allocations_differ) {
    const std::size_t n = 300;
    const auto hx = random_values<float>(2 * n, -1, 1, 5),
               hy = random_values<float>(2 * n, -1, 1, 6);
    kiln::multivector<float, 2> X(q, hx), Y(q, hy), Z(q, n);
    kiln::vector<float> plain(q, n), other(q, n);
    other = 3.0f;
    for (int round = 0; round < 2; ++round) {
        Z = X + Y;
        std::vector<float> expected(2 * n);
        for (std::size_t i = 0; i < 2 * n; ++i) expected[i] = hx[i] + hy[i];
        expect_near_all(Z.read(), expected);
        Z = X + X;
        for (std::size_t i = 0; i < 2 * n; ++i) expected[i] = hx[i] + hx[i];
        expect_near_all(Z.read(), expected);
        // Components beside vectors of their own, in either order.
        plain = X(1) + other;
        other = plain - X(1);
        const auto p = plain.read(), o = other.read();
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_NEAR(p[i], hx[n + i] + 3.0f, 1e-6f);
            ASSERT_NEAR(o[i], 3.0f, 1e-6f);
        }
    }
}

TEST_P(packed_arguments_test, components_serve_algorithms_copies_and_moves) {
    for (const std::size_t n : kiln::test::edge_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto hx = random_values<float>(3 * n, -1, 1, 7);
        kiln::multivector<float, 3> X(q, hx);
        // Sorting the middle component leaves its neighbours as they were.
        kiln::sort(X(1));
        std::vector<float> expected = hx;
        std::sort(expected.begin() + std::ptrdiff_t(n), expected.begin() + std::ptrdiff_t(2 * n));
        EXPECT_EQ(X.read(), expected);
        double host_sum = 0;
        for (std::size_t i = 0; i < n; ++i) host_sum += expected[2 * n + i];
        EXPECT_NEAR(kiln::sum(X(2)), host_sum, 1e-4 * double(n + 1));

        // A copy is a multivector of its own; X(0) given a vector of its own takes part in
        // statements beside the ranges of X(1) and X(2).
        kiln::multivector<float, 3> copy = X;
        kiln::vector<float> replacement(q, std::vector<float>(n, 2.0f));
        X(0) = std::move(replacement);
        X = X * 2.0f;
        std::vector<float> doubled(3 * n);
        for (std::size_t i = 0; i < 3 * n; ++i) doubled[i] = 2 * (i < n ? 2.0f : expected[i]);
        EXPECT_EQ(X.read(), doubled);
        EXPECT_EQ(copy.read(), expected);
        copy = X;
        EXPECT_EQ(copy.read(), doubled);
    }
}

TEST_P(packed_arguments_test, a_graph_refuses_a_component_that_gave_up_its_range) {
    const std::size_t n = 256;
    kiln::multivector<float, 2> X(q, std::vector<float>(2 * n, 1.0f));
    const kiln::graph g = kiln::capture(q, [&] { X = X + 1.0f; });
    g.launch().wait();
    EXPECT_EQ(X.read(), std::vector<float>(2 * n, 2.0f));
    X(1) = kiln::vector<float>(q, std::vector<float>(n, 5.0f));
    EXPECT_THROW(g.launch(), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(packed_arguments_test);

}  // namespace
