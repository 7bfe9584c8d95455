// SPDX-License-Identifier: Apache-2.0
// kiln::gemm with an epilogue (a KILN_LAMBDA of value, row and column) on every device, through
// every strategy the device can run: the fused product equals the unfused sequence (the product,
// then the element-wise statement) within the output type's rounding, sees the rows and columns
// of views and batch entries, captures vectors and values, and bad epilogues are refused before
// any device work.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "algo/gemm/gemm_strategies.hpp"
#include "support/device_param.hpp"
#include "support/uniform_values.hpp"

namespace {

using kiln::detail::gemm_strategy;

KILN_STRUCT(clamp_range, (float, low), (float, high));

using kiln::test::uniform_values;

class gemm_epilogue_test : public kiln::test::device_queue_test {
  protected:
    template <class Body>
    void on_every_strategy(Body&& body) {
        for (gemm_strategy s : kiln::detail::gemm_strategies_for(device())) {
            SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
            const kiln::detail::scoped_gemm_strategy forced(s);
            body();
        }
    }
};

// Bias per column, then a leaky ReLU whose slope is a captured value: fused, and as the product
// followed by a parallel_for over C. Sizes with full tiles of every strategy and edges past them.
TEST_P(gemm_epilogue_test, bias_and_leaky_relu_equal_the_unfused_sequence) {
    for (const auto& [m, n, k] :
         {std::array<std::size_t, 3>{1, 1, 1}, {37, 45, 29}, {64, 64, 32}, {130, 67, 9}}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
        const auto a = uniform_values<float>(m * k, 1), b = uniform_values<float>(k * n, 2),
                   c = uniform_values<float>(m * n, 3), host_bias = uniform_values<float>(n, 4);
        const kiln::matrix<float> A(q, m, k, a), B(q, k, n, b);
        const kiln::vector<float> bias(q, host_bias);
        const float slope = 0.125f;
        on_every_strategy([&] {
            const kiln::gemm_options<float> options{.alpha = 0.5f, .beta = 2.0f};
            const kiln::matrix<float> fused(q, m, n, c);
            kiln::vector<float> after(q, c);
            // [doc:gemm_epilogue]
            kiln::gemm(
                fused, A, B, options,
                KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias, slope), {
                    (void)row;
                    const float biased = value + bias[column];
                    return biased > 0.0f ? biased : slope * biased;
                }));
            // [/doc]
            kiln::gemm(kiln::matrix_view<float>(after, m, n, n), A, B, options);
            const kiln::uint columns = kiln::uint(n);
            kiln::parallel_for(q, m * n,
                               KILN_LAMBDA((kiln::uint i), (after, bias, slope, columns), {
                                   const float biased = after[i] + bias[i % columns];
                                   after[i] = biased > 0.0f ? biased : slope * biased;
                               }));
            const std::vector<float> got = fused.read(), expected = after.read();
            for (std::size_t i = 0; i < m * n; ++i) {
                // The two differ only where a compiler contracts alpha's product into the bias's
                // sum on one side: by one rounding of the terms' size.
                const double size = std::abs(0.5 * (got[i] - 2.0 * c[i])) + std::abs(2.0 * c[i]) +
                                    std::abs(host_bias[i % n]);
                ASSERT_NEAR(got[i], expected[i], 4 * std::numeric_limits<float>::epsilon() * size)
                    << "element " << i;
            }
        });
    }
}

// alpha = 0 and beta = 0 make every value 0: what C holds is the epilogue's own, at the rows and
// columns of a view inside a larger vector and of each batch entry; nothing around the window
// changes.
TEST_P(gemm_epilogue_test, rows_and_columns_of_views_and_batch_entries) {
    const std::size_t m = 19, n = 23, k = 5, leading = 31, offset = 7, batch = 3;
    const std::size_t stride = m * leading + 4;
    const kiln::matrix<float> As(q, m, k, batch, uniform_values<float>(m * k * batch, 5)),
        Bs(q, k, n, batch, uniform_values<float>(k * n * batch, 6));
    const float row_weight = 1000.0f;
    const auto check = [&](const std::vector<float>& got, std::size_t entries) {
        std::vector<float> expected(got.size(), -1.0f);
        for (std::size_t e = 0; e < entries; ++e)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    expected[offset + e * stride + i * leading + j] = float(i) * 1000.0f + float(j);
        ASSERT_EQ(got, expected);
    };
    on_every_strategy([&] {
        const std::vector<float> outside(offset + batch * stride + 3, -1.0f);
        const kiln::vector<float> c(q, outside), cs(q, outside);
        const auto epilogue =
            KILN_LAMBDA((float value, kiln::ulong row, kiln::ulong column), (row_weight),
                        { return value + float(row) * row_weight + float(column); });
        kiln::gemm(kiln::matrix_view<float>(c, m, n, leading, offset),
                   kiln::matrix_view<float>(As.data(), m, k, k),
                   kiln::matrix_view<float>(Bs.data(), k, n, n), {.alpha = 0.0f, .beta = 0.0f},
                   epilogue);
        check(c.read(), 1);
        kiln::gemm_batched(kiln::matrix_view<float>(cs, m, n, leading, offset, batch, stride), As,
                           Bs, {.alpha = 0.0f, .beta = 0.0f}, epilogue);
        check(cs.read(), batch);
    });
}

// 16-bit inputs and output: the epilogue's value is float and rounds once to bfloat16, as the
// unfused sequence in float rounded once gives (its product may sum in another order: within
// one bfloat16 rounding of the value).
TEST_P(gemm_epilogue_test, bfloat16_output_rounds_the_epilogues_value_once) {
    const std::size_t m = 40, n = 24, k = 32;
    const auto a = uniform_values<kiln::bfloat16>(m * k, 7),
               b = uniform_values<kiln::bfloat16>(k * n, 8);
    const auto host_bias = uniform_values<float>(n, 9);
    const kiln::matrix<kiln::bfloat16> A(q, m, k, a), B(q, k, n, b);
    const kiln::vector<float> bias(q, host_bias);
    on_every_strategy([&] {
        const kiln::matrix<kiln::bfloat16> C(q, m, n);
        const kiln::matrix<float> product(q, m, n);
        kiln::gemm(C, A, B, {},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias), {
                       (void)row;
                       return fmax(value + bias[column], 0.0f);
                   }));
        kiln::gemm(product, A, B);
        const std::vector<kiln::bfloat16> got = C.read();
        const std::vector<float> sums = product.read();
        for (std::size_t i = 0; i < m * n; ++i) {
            const float expected = std::fmax(sums[i] + host_bias[i % n], 0.0f);
            // One bfloat16 rounding (2^-8 relative) of the value and of the sum's order.
            const double size = std::abs(expected) + std::abs(sums[i]);
            ASSERT_NEAR(float(got[i]), expected, size * 0x1p-8 + 1e-6) << "element " << i;
        }
    });
}

TEST_P(gemm_epilogue_test, doubles_take_a_double_value) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::size_t m = 9, n = 11, k = 13;
    const auto a = uniform_values<double>(m * k, 10), b = uniform_values<double>(k * n, 11);
    const kiln::matrix<double> A(q, m, k, a), B(q, k, n, b);
    const double scale = 3.0;
    on_every_strategy([&] {
        const kiln::matrix<double> fused(q, m, n), plain(q, m, n);
        kiln::gemm(fused, A, B, {},
                   KILN_LAMBDA((double value, kiln::uint row, kiln::uint column), (scale),
                               { return row == column ? scale * value : value; }));
        kiln::gemm(plain, A, B);
        const std::vector<double> got = fused.read(), sums = plain.read();
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j)
                ASSERT_EQ(got[i * n + j], i == j ? 3.0 * sums[i * n + j] : sums[i * n + j]);
    });
}

// A KILN_STRUCT captured by value: its definition joins the product's program.
TEST_P(gemm_epilogue_test, captured_structs_reach_the_epilogue) {
    const std::size_t m = 17, n = 33, k = 8;
    const kiln::matrix<float> A(q, m, k, uniform_values<float>(m * k, 15)),
        B(q, k, n, uniform_values<float>(k * n, 16));
    const clamp_range range{-0.25f, 0.5f};
    on_every_strategy([&] {
        const kiln::matrix<float> clamped(q, m, n), plain(q, m, n);
        kiln::gemm(clamped, A, B, {},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (range), {
                       (void)row, (void)column;
                       return fmin(fmax(value, range.low), range.high);
                   }));
        kiln::gemm(plain, A, B);
        const std::vector<float> got = clamped.read(), sums = plain.read();
        for (std::size_t i = 0; i < m * n; ++i)
            ASSERT_EQ(got[i], std::fmin(std::fmax(sums[i], -0.25f), 0.5f)) << "element " << i;
    });
}

// An epilogue that captures C's own memory, and rows that do not fit the row type, are refused
// naming the reason, with C untouched.
TEST_P(gemm_epilogue_test, bad_epilogues_are_rejected_before_any_device_work) {
    const kiln::matrix<float> A(q, 4, 5, uniform_values<float>(20, 12)),
        B(q, 5, 3, uniform_values<float>(15, 13));
    const std::vector<float> before = uniform_values<float>(12, 14);
    const kiln::matrix<float> C(q, 4, 3, before);
    const kiln::vector<float>& own = C.data();
    try {
        kiln::gemm(C, A, B, {},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (own),
                               { return value + own[row * 3 + column]; }));
        ADD_FAILURE() << "an epilogue reading C was accepted";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("captures C's memory"), std::string::npos) << e.what();
    }
    EXPECT_EQ(C.read(), before);

    const std::size_t tall = 70000;
    const kiln::matrix<float> column_of_a(q, tall, 1, std::vector<float>(tall, 1.0f)),
        one(q, 1, 1, std::vector<float>{2.0f});
    const kiln::matrix<float> tall_c(q, tall, 1, std::vector<float>(tall, 5.0f));
    const float shift = 1.0f;
    try {
        kiln::gemm(tall_c, column_of_a, one, {},
                   KILN_LAMBDA((float value, kiln::ushort row, kiln::ushort column), (shift),
                               { return value + shift * float(row + column); }));
        ADD_FAILURE() << "rows past the row type were accepted";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(
            std::string(e.what()).find("do not fit the epilogue's row and column type ushort"),
            std::string::npos)
            << e.what();
    }
    EXPECT_EQ(tall_c.read(), std::vector<float>(tall, 5.0f));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_epilogue_test);

}  // namespace
