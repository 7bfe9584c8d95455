// SPDX-License-Identifier: Apache-2.0
// Reductions along a dimension: every reducer against host loops, for 1xN, Nx1, empty and
// ordinary shapes, both dimensions, three dimensions, NaN, and every kernel shape (one work-item
// per result; sliced strided lines, 1000 x 37 along dimension 0, one line or a strip of lines per
// work-item under the GPU or the CPU tuning; and, under the GPU tuning, one work-group per
// contiguous line). The module's plan and every shape in either loop:
// tests/algo/reduce_dimension_test.cpp.
#include <cmath>
#include <cstdint>
#include <kiln/detail/algo/reduce_dimension_tuning.hpp>
#include <kiln/reduce_dimension.hpp>
#include <limits>
#include <string>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class reduce_dimension_test : public kiln::test::device_queue_test {};

constexpr float nan = std::numeric_limits<float>::quiet_NaN();

/// The host's view of one reduction: result r folds elements base(r) + k * inner, k < length.
struct lines {
    std::size_t count, length, inner;
    std::size_t element(std::size_t r, std::size_t k) const {
        return (r / inner) * length * inner + r % inner + k * inner;
    }
};

lines lines_of(std::size_t rows, std::size_t columns, std::size_t dimension) {
    return dimension == 1 ? lines{rows, columns, 1} : lines{columns, rows, columns};
}

/// Runs every reducer on x viewed as rows x columns along `dimension` and compares with host
/// loops over the same values.
void check_every_reducer(kiln::queue& q, std::size_t rows, std::size_t columns,
                         std::size_t dimension, const std::vector<float>& host) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(columns) + ", dimension " +
                 std::to_string(dimension));
    const lines l = lines_of(rows, columns, dimension);
    kiln::vector<float> x(q, host);
    const kiln::extents shape{rows, columns};
    const std::vector<float>
        sums = kiln::reduce<kiln::reducers::sum>(shape, x, dimension).read(),
        kahan = kiln::reduce<kiln::reducers::kahan_sum>(shape, x, dimension).read(),
        lows = kiln::reduce<kiln::reducers::minimum>(shape, x, dimension).read(),
        highs = kiln::reduce<kiln::reducers::maximum>(shape, x, dimension).read();
    const auto [low_vector, high_vector] =
        kiln::reduce<kiln::reducers::minmax>(shape, x, dimension);
    const std::vector<float> both_low = low_vector.read(), both_high = high_vector.read();
    const std::vector<std::uint64_t> counts =
        kiln::reduce<kiln::reducers::count>(shape, x > 0, dimension).read();
    const std::vector<std::int32_t>
        anys = kiln::reduce<kiln::reducers::any_of>(shape, x > 0.9f, dimension).read(),
        alls = kiln::reduce<kiln::reducers::all_of>(shape, x > -0.9f, dimension).read();
    for (const auto* result : {&sums, &kahan, &lows, &highs, &both_low, &both_high})
        ASSERT_EQ(result->size(), l.count);
    ASSERT_EQ(counts.size(), l.count);
    ASSERT_EQ(anys.size(), l.count);
    ASSERT_EQ(alls.size(), l.count);
    for (std::size_t r = 0; r < l.count; ++r) {
        double sum = 0;
        float low = nan, high = nan;
        std::uint64_t count = 0;
        bool any = false, all = true;
        for (std::size_t k = 0; k < l.length; ++k) {
            const float v = host[l.element(r, k)];
            sum += v;
            low = std::fmin(low, v);
            high = std::fmax(high, v);
            count += v > 0;
            any = any || v > 0.9f;
            all = all && v > -0.9f;
        }
        SCOPED_TRACE("result " + std::to_string(r));
        if (std::isnan(sum)) {
            EXPECT_TRUE(std::isnan(sums[r]));
            EXPECT_TRUE(std::isnan(kahan[r]));
        } else {
            EXPECT_NEAR(sums[r], sum, 1e-5 * double(l.length) + 1e-6);
            EXPECT_NEAR(kahan[r], sum, 1e-6 * std::abs(sum) + 1e-6);
        }
        // NaN elements are ignored; a line of NaNs only, or no elements, gives NaN.
        const auto same = [](float got, float expected) {
            return std::isnan(expected) ? std::isnan(got) : got == expected;
        };
        EXPECT_TRUE(same(lows[r], low) && same(both_low[r], low)) << lows[r] << " " << low;
        EXPECT_TRUE(same(highs[r], high) && same(both_high[r], high)) << highs[r] << " " << high;
        EXPECT_EQ(counts[r], count);
        EXPECT_EQ(anys[r], any ? 1 : 0);
        EXPECT_EQ(alls[r], all ? 1 : 0);
    }
}

void check_shapes(kiln::queue& q) {
    // 150 x 530 along dimension 0: two slices, and on CPU devices strips of lines narrower than
    // a row, the last one narrower still.
    const std::size_t shapes[][2] = {{1, 1000},  {1000, 1},  {0, 5},   {5, 0},     {0, 0},
                                     {37, 1000}, {1000, 37}, {3, 130}, {150, 530}, {1, 1}};
    unsigned seed = 1;
    for (const auto& shape : shapes) {
        auto host = random_values<float>(shape[0] * shape[1], -1, 1, seed++);
        // NaN in some lines; a line of one NaN (1 x N and N x 1 have such lines).
        for (std::size_t i = 0; i < host.size(); i += 17) host[i] = nan;
        for (std::size_t dimension : {0, 1})
            check_every_reducer(q, shape[0], shape[1], dimension, host);
    }
}

TEST_P(reduce_dimension_test, every_reducer_matches_host_loops) {
    check_shapes(q);
}

TEST_P(reduce_dimension_test, the_gpu_shapes_match_host_loops) {
    // One work-group per contiguous line and slices of strided lines in strided loops, as the GPU
    // row has them (in groups of 64), on every device.
    const kiln::detail::scoped_algorithm_policy gpu_shapes(
        kiln::detail::reduce_dimension_tuning{.loop = kiln::detail::loop_style::strided,
                                              .work_group_size = 64,
                                              .groups_per_compute_unit = 4,
                                              .contiguous = kiln::detail::contiguous_lines::group,
                                              .strided = kiln::detail::strided_lines::slices});
    check_shapes(q);
}

TEST_P(reduce_dimension_test, the_cpu_shapes_match_host_loops) {
    // Lanes of contiguous lines and strips of adjacent strided lines in chunked loops, as the CPU
    // row has them, on every device.
    const kiln::detail::scoped_algorithm_policy cpu_shapes(
        kiln::detail::reduce_dimension_tuning{.loop = kiln::detail::loop_style::chunked,
                                              .work_group_size = 1,
                                              .groups_per_compute_unit = 16,
                                              .contiguous = kiln::detail::contiguous_lines::lanes,
                                              .contiguous_min_length = 4 * 32,
                                              .lanes = 32,
                                              .strided = kiln::detail::strided_lines::strips});
    check_shapes(q);
}

TEST_P(reduce_dimension_test, reduces_expressions_and_three_dimensions) {
    const std::size_t a = 4, b = 5, c = 6;
    const auto hx = random_values<float>(a * b * c, -1, 1, 40);
    const auto hy = random_values<float>(a * b * c, -1, 1, 41);
    kiln::vector<float> x(q, hx), y(q, hy);
    const std::size_t rows = 30, columns = 70;
    // [doc:reduce_dimension]
    kiln::vector<float> matrix(q, rows * columns);  // row-major: element (r, c) at r * columns + c
    matrix = kiln::sin(kiln::cast<float>(kiln::element_index()));
    kiln::vector<float> row_sums =
        kiln::reduce<kiln::reducers::sum>(kiln::extents{rows, columns}, matrix, 1);
    kiln::vector<float> column_maxima =
        kiln::reduce<kiln::reducers::maximum>(kiln::extents{rows, columns}, kiln::fabs(matrix), 0);
    // [/doc]
    const std::vector<float> sums = row_sums.read(), maxima = column_maxima.read();
    ASSERT_EQ(sums.size(), rows);
    ASSERT_EQ(maxima.size(), columns);
    for (std::size_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (std::size_t column = 0; column < columns; ++column)
            sum += std::sin(float(r * columns + column));
        EXPECT_NEAR(sums[r], sum, 1e-4);
    }
    for (std::size_t column = 0; column < columns; ++column) {
        float largest = 0;
        for (std::size_t r = 0; r < rows; ++r)
            largest = std::fmax(largest, std::fabs(std::sin(float(r * columns + column))));
        EXPECT_NEAR(maxima[column], largest, 1e-5);
    }
    const std::vector<float> middle =
        kiln::reduce<kiln::reducers::sum>(kiln::extents{a, b, c}, x * y + 1, 1).read();
    ASSERT_EQ(middle.size(), a * c);
    for (std::size_t i = 0; i < a; ++i)
        for (std::size_t k = 0; k < c; ++k) {
            double sum = 0;
            for (std::size_t j = 0; j < b; ++j) {
                const std::size_t e = (i * b + j) * c + k;
                sum += double(hx[e]) * hy[e] + 1;
            }
            EXPECT_NEAR(middle[i * c + k], sum, 1e-5);
        }
    // Integers widen as in kiln::reduce; expressions without vectors take a queue.
    const std::vector<std::uint64_t> indices =
        kiln::reduce<kiln::reducers::sum>(q, kiln::extents{3, 4}, kiln::element_index(0, 12), 1)
            .read();
    EXPECT_EQ(indices, (std::vector<std::uint64_t>{0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9 + 10 + 11}));
}

TEST_P(reduce_dimension_test, wrong_shapes_are_errors) {
    kiln::vector<float> x(q, 12);
    EXPECT_THROW(kiln::reduce<kiln::reducers::sum>(kiln::extents{3, 5}, x, 1),
                 kiln::invalid_argument_error);
    EXPECT_THROW(kiln::reduce<kiln::reducers::sum>(kiln::extents{3, 4}, x, 2),
                 kiln::invalid_argument_error);
}

// Extents whose product wraps passed the size checks: {2^63 + 1, 2, 0} gave 2 results (the
// results, 2^64 + 2 of them, wrapped), {2^62 + 1, 4} failed with an allocation message.
TEST_P(reduce_dimension_test, extents_whose_product_overflows_are_refused_by_name) {
    const std::size_t half = std::size_t{1} << 63, quarter = std::size_t{1} << 62;
    const auto expect_refused = [](const auto& reduction, const std::string& named) {
        try {
            reduction();
            ADD_FAILURE() << "no error for extents " << named;
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
        }
    };
    kiln::vector<float> empty(q, 0), four(q, 4);
    expect_refused(
        [&] {
            return kiln::reduce<kiln::reducers::sum>(kiln::extents{half + 1, 2, 0}, empty, 2);
        },
        "{9223372036854775809, 2, 0}");
    expect_refused(
        [&] {
            return kiln::reduce<kiln::reducers::sum>(kiln::extents{quarter + 1, 4}, four, 1);
        },
        "{4611686018427387905, 4}");
    // A 0 extent beside extents whose product fits: no elements, and results of no elements.
    const auto sums = kiln::reduce<kiln::reducers::sum>(kiln::extents{3, 0}, empty, 1).read();
    EXPECT_EQ(sums, (std::vector<float>{0, 0, 0}));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reduce_dimension_test);

}  // namespace
