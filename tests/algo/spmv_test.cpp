// SPDX-License-Identifier: Apache-2.0
// Sparse matrix products on every device, in every storage format, against a host CSR loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/sparse/sparse_product_kernel.hpp"
#include "algo/spmv_layouts.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::sparse_format;
using kiln::detail::sparse_layout;
using namespace kiln::test;  // the forced layouts (spmv_layouts.hpp)

template <class T>
struct host_csr {
    std::size_t rows = 0, columns = 0;
    std::vector<std::int64_t> row_pointers{0}, column_indices;
    std::vector<T> values;

    void add_row(const std::vector<std::int64_t>& row_columns, std::mt19937& random) {
        std::uniform_real_distribution<double> value(-1, 1);
        for (const auto c : row_columns) {
            column_indices.push_back(c);
            if constexpr (std::is_floating_point_v<T>)
                values.push_back(static_cast<T>(value(random)));
            else
                values.push_back(
                    T(static_cast<float>(value(random)), static_cast<float>(value(random))));
        }
        row_pointers.push_back(static_cast<std::int64_t>(column_indices.size()));
        ++rows;
    }
    kiln::sparse_matrix<T> on(const kiln::queue& q) const {
        return kiln::sparse_matrix<T>(q, rows, columns, row_pointers, column_indices, values);
    }
};

/// A matrix whose row r has lengths[r] entries at random columns (repeats allowed, as CSR
/// allows them: they add up).
template <class T>
host_csr<T> random_matrix(std::size_t columns, const std::vector<std::size_t>& lengths,
                          unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_int_distribution<std::int64_t> column(0, static_cast<std::int64_t>(columns) - 1);
    host_csr<T> m;
    m.columns = columns;
    for (const auto length : lengths) {
        std::vector<std::int64_t> row;
        for (std::size_t k = 0; k < length; ++k) row.push_back(column(random));
        m.add_row(row, random);
    }
    return m;
}

/// Row lengths with a heavy tail: most rows short, a few thousands of entries long.
std::vector<std::size_t> power_law_lengths(std::size_t rows, std::size_t longest, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> u(1e-4, 1);
    std::vector<std::size_t> lengths;
    for (std::size_t r = 0; r < rows; ++r)
        lengths.push_back(std::min<std::size_t>(
            longest, static_cast<std::size_t>(std::pow(u(random), -0.9)) - 1));
    return lengths;
}

template <class T>
std::vector<T> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<T> v(n);
    for (auto& e : v) {
        if constexpr (std::is_floating_point_v<T>)
            e = static_cast<T>(value(random));
        else
            e = T(value(random), value(random));
    }
    return v;
}

/// A * x on the host, and per row the sum of |a| |x| that bounds the rounding error.
template <class T>
std::pair<std::vector<T>, std::vector<double>> host_product(const host_csr<T>& m,
                                                            const std::vector<T>& x) {
    std::vector<T> y(m.rows);
    std::vector<double> magnitude(m.rows);
    for (std::size_t r = 0; r < m.rows; ++r)
        for (auto e = m.row_pointers[r]; e < m.row_pointers[r + 1]; ++e) {
            y[r] += m.values[e] * x[m.column_indices[e]];
            magnitude[r] += std::abs(m.values[e]) * std::abs(x[m.column_indices[e]]);
        }
    return {y, magnitude};
}

template <class T>
void expect_close(const std::vector<T>& actual, const std::vector<T>& expected,
                  const std::vector<double>& magnitude) {
    const double epsilon = sizeof(kiln::detail::real_of_t<T>) == 4 ? 1e-5 : 1e-13;
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t r = 0; r < actual.size(); ++r)
        ASSERT_LE(std::abs(actual[r] - expected[r]), epsilon * (magnitude[r] + 1)) << "row " << r;
}

// Every field the product kernel is written from changes the program cache's key.
TEST(sparse_layout, key_changes_with_every_field_the_kernel_reads) {
    // A new field fails here first: add it to sparse_layout::key() (or say there why the kernel
    // does not read it) and to the changes below.
    static_assert(sizeof(sparse_layout) == 7 * 8);
    const std::vector<std::function<void(sparse_layout&)>> changes = {
        [](sparse_layout& l) { l.format = sparse_format::ell; },
        [](sparse_layout& l) { l.lanes = 8; },
        [](sparse_layout& l) { l.work_group_size = 256; },
        [](sparse_layout& l) { l.long_row = 4096; },
        [](sparse_layout& l) { l.block_entries = 1024; },
    };
    kiln::test::expect_every_change_changes_the_key(changes);
}

TEST(sparse_product_key, key_changes_with_every_field) {
    using kiln::detail::sparse_product_key;
    // A new field fails here first: add it to sparse_product_key::key() and to the changes below.
    static_assert(sizeof(sparse_product_key) ==
                  2 * sizeof(std::string) + sizeof(sparse_layout) + 8);
    kiln::test::expect_every_change_changes_the_key<sparse_product_key>({
        [](sparse_product_key& k) { k.statement = "statement"; },
        [](sparse_product_key& k) { k.layout.format = sparse_format::ell; },
        [](sparse_product_key& k) { k.loop = kiln::detail::loop_style::chunked; },
        [](sparse_product_key& k) { k.result = "result"; },
    });
    using kiln::detail::halo_gather_key;
    static_assert(sizeof(halo_gather_key) == sizeof(std::string));
    kiln::test::expect_every_change_changes_the_key<halo_gather_key>(
        {[](halo_gather_key& k) { k.value_type = "float"; }});
}

// The product kernel keeps the parameters the host has always passed, in that order.
TEST(sparse_product_description, keeps_the_product_parameters_in_order) {
    const auto kernel = kiln::detail::sparse_product_description("float2");
    std::vector<std::string> declared;
    for (const auto& slot : kernel.slots()) declared.push_back(slot.declaration());
    EXPECT_EQ(
        declared,
        (std::vector<std::string>{
            "ulong n", "ulong kiln_width", "global const uint* restrict kiln_row_pointers",
            "global const uint* restrict kiln_columns", "global const float2* restrict kiln_values",
            "ulong kiln_work_count", "global const uint* restrict kiln_work"}));
    EXPECT_TRUE(kernel.takes_input());
    EXPECT_EQ(kernel.input_position(), kernel.slots().size()) << "the expressions come last";
}

/// The matrices every format must handle.
std::vector<host_csr<float>> awkward_matrices() {
    std::vector<host_csr<float>> matrices;
    matrices.push_back(random_matrix<float>(1, {1}, 1));                  // 1 x 1
    matrices.push_back(random_matrix<float>(700, {300}, 2));              // a single row
    matrices.push_back(random_matrix<float>(50, {0, 0, 3, 0, 1, 0}, 3));  // empty rows
    matrices.push_back(random_matrix<float>(10, {0, 0, 0}, 4));           // no entries at all
    // Rectangular both ways; the long rows are longer than any work-group.
    matrices.push_back(random_matrix<float>(40, std::vector<std::size_t>(300, 7), 5));
    matrices.push_back(random_matrix<float>(9000, {5000, 1, 0, 4500, 2}, 6));
    matrices.push_back(random_matrix<float>(3000, power_law_lengths(3000, 3000, 7), 8));
    return matrices;
}

class spmv : public kiln::test::device_queue_test {};

TEST_P(spmv, products_match_the_host_loop_in_every_format) {
    const auto matrices = awkward_matrices();
    for (const auto& layout : every_layout()) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        for (std::size_t m = 0; m < matrices.size(); ++m) {
            SCOPED_TRACE("matrix " + std::to_string(m));
            const auto& host = matrices[m];
            const auto x = random_vector<float>(host.columns, 10 + m);
            const auto [expected, magnitude] = host_product(host, x);
            const auto A = host.on(q);
            if (layout) {
                EXPECT_EQ(A.format(), layout->format);
            }
            kiln::vector<float> dx(q, x), y(q, host.rows);
            y = A * dx;
            expect_close(y.read(), expected, magnitude);
        }
    }
}

// Padded slots (ELL's, sliced ELL's) must not reach the sums: with x[0] infinite, the rows that
// have no entry in column 0 stay finite.
TEST_P(spmv, padding_is_not_added_even_where_x_is_infinite) {
    host_csr<float> host;
    host.columns = 40;
    std::mt19937 random(61);
    for (std::int64_t r = 0; r < 70; ++r) {
        std::vector<std::int64_t> row;
        for (std::int64_t k = 0; k < r % 6; ++k) row.push_back(1 + (r + 7 * k) % 39);
        if (r % 9 == 0) row.push_back(0);
        host.add_row(row, random);
    }
    auto x = random_vector<float>(40, 62);
    x[0] = std::numeric_limits<float>::infinity();
    for (const auto& layout : every_layout()) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const auto A = host.on(q);
        kiln::vector<float> dx(q, x), y(q, host.rows);
        y = A * dx;
        const auto got = y.read();
        for (std::size_t r = 0; r < host.rows; ++r) {
            if (r % 9 == 0) continue;
            float expected = 0;
            for (auto e = host.row_pointers[r]; e < host.row_pointers[r + 1]; ++e)
                expected += host.values[e] * x[host.column_indices[e]];
            ASSERT_NEAR(got[r], expected, 1e-5 * (1 + std::abs(expected))) << "row " << r;
        }
    }
}

TEST_P(spmv, element_wise_parts_are_fused_into_the_product) {
    const auto host = random_matrix<float>(500, power_law_lengths(500, 400, 11), 12);
    const auto x = random_vector<float>(500, 13), z = random_vector<float>(500, 14),
               f = random_vector<float>(500, 15);
    const auto [ax, magnitude] = host_product(host, x);
    std::vector<float> sum(500), expected(500);
    for (std::size_t i = 0; i < 500; ++i) sum[i] = x[i] + z[i];
    const auto [a_sum, sum_magnitude] = host_product(host, sum);
    {
        const auto A = host.on(q);
        kiln::vector<float> dx(q, x), df(q, f), y(q, 500);
        y = df - A * dx;
        for (std::size_t i = 0; i < 500; ++i) expected[i] = f[i] - ax[i];
        expect_close(y.read(), expected, magnitude);
        y = A * dx - 1.5;
        for (std::size_t i = 0; i < 500; ++i) expected[i] = ax[i] - 1.5f;
        expect_close(y.read(), expected, magnitude);
        // Element-wise operators wrap the product's value, still in the one kernel.
        y = df - 2 * (A * dx);
        for (std::size_t i = 0; i < 500; ++i) expected[i] = f[i] - 2 * ax[i];
        expect_close(y.read(), expected, magnitude);
        y = (df + 1) * -(A * dx) / 4;
        for (std::size_t i = 0; i < 500; ++i) expected[i] = (f[i] + 1) * -ax[i] / 4;
        expect_close(y.read(), expected, magnitude);
    }
    // y = 2 * x + A * (x + z): A's operand evaluated at the columns, the rest at the rows; in
    // the rule's kernel shape and in the one with the most code around the fused parts.
    for (const auto& layout :
         {std::optional<sparse_layout>{},
          std::optional(sparse_layout{sparse_format::csr_vector, 4, 0, 64, 100}),
          std::optional(adaptive_small), std::optional(sliced_odd)}) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const auto A = host.on(q);
        kiln::vector<float> dx(q, x), dz(q, z), y(q, 500);
        y = 2 * dx + A * (dx + dz);
        for (std::size_t i = 0; i < 500; ++i) expected[i] = 2 * x[i] + a_sum[i];
        expect_close(y.read(), expected, sum_magnitude);
    }
}

TEST_P(spmv, double_and_complex_values) {
    const std::vector<std::size_t> lengths = {3, 0, 70, 1, 5, 5, 5, 200};
    {
        const auto host = random_matrix<std::complex<float>>(250, lengths, 21);
        const auto x = random_vector<std::complex<float>>(250, 22);
        const auto f = random_vector<std::complex<float>>(host.rows, 23);
        const auto [ax, magnitude] = host_product(host, x);
        for (const auto& layout :
             {std::optional<sparse_layout>{},
              std::optional(sparse_layout{sparse_format::ell, 1, 0, 128}),
              std::optional(sparse_layout{sparse_format::csr_vector, 4, 0, 64, 100}),
              std::optional(adaptive_small), std::optional(chunked_few),
              std::optional(sliced_few)}) {
            SCOPED_TRACE(describe(layout));
            std::optional<kiln::detail::scoped_sparse_layout> forced;
            if (layout) forced.emplace(*layout);
            const auto A = host.on(q);
            kiln::vector<std::complex<float>> dx(q, x), df(q, f), y(q, host.rows);
            y = df - A * dx;
            std::vector<std::complex<float>> expected(host.rows);
            for (std::size_t i = 0; i < host.rows; ++i) expected[i] = f[i] - ax[i];
            expect_close(y.read(), expected, magnitude);
        }
    }
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    const auto host = random_matrix<double>(250, lengths, 24);
    const auto x = random_vector<double>(250, 25);
    const auto [ax, magnitude] = host_product(host, x);
    for (const auto& layout : {std::optional<sparse_layout>{}, std::optional(adaptive_small),
                               std::optional(chunked_many), std::optional(sliced_odd)}) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const auto A = host.on(q);
        kiln::vector<double> dx(q, x), y(q, host.rows);
        y = A * dx;
        expect_close(y.read(), ax, magnitude);
    }
}

TEST_P(spmv, adaptive_blocks_handle_power_law_empty_long_single_and_rectangular_rows) {
    // Power-law rows (some longer than a block, many empty), one 1 x 1 matrix, a single row
    // longer than the group and the block, rectangular both ways, in the GPU rule's csr_adaptive
    // and in small blocks; r = f - A * x fused as the rule would run it.
    std::vector<host_csr<float>> matrices;
    matrices.push_back(random_matrix<float>(4000, power_law_lengths(4000, 4000, 81), 82));
    matrices.push_back(random_matrix<float>(1, {1}, 83));
    matrices.push_back(random_matrix<float>(3000, {2500}, 84));
    matrices.push_back(random_matrix<float>(30, power_law_lengths(900, 60, 85), 86));
    matrices.push_back(random_matrix<float>(5000, {0, 3, 1500, 0, 0, 70, 1}, 87));
    for (const auto& layout : {adaptive_gpu, adaptive_small}) {
        SCOPED_TRACE(describe(layout));
        const kiln::detail::scoped_sparse_layout forced(layout);
        for (std::size_t m = 0; m < matrices.size(); ++m) {
            SCOPED_TRACE("matrix " + std::to_string(m));
            const auto& host = matrices[m];
            const auto A = host.on(q);
            ASSERT_EQ(kiln::detail::to_string(A.format()), "csr_adaptive");
            const auto x = random_vector<float>(host.columns, 88 + m),
                       f = random_vector<float>(host.rows, 89 + m);
            const auto [ax, magnitude] = host_product(host, x);
            kiln::vector<float> dx(q, x), df(q, f), y(q, host.rows);
            y = df - A * dx;
            std::vector<float> expected(host.rows);
            for (std::size_t i = 0; i < host.rows; ++i) expected[i] = f[i] - ax[i];
            expect_close(y.read(), expected, magnitude);
        }
    }
}

TEST_P(spmv, bad_csr_arrays_are_rejected_before_allocating) {
    const std::vector<int> good_pointers = {0, 2, 3}, good_columns = {0, 2, 1};
    const std::vector<float> values = {1, 2, 3};
    EXPECT_NO_THROW(kiln::sparse_matrix<float>(q, 2, 3, good_pointers, good_columns, values));
    const auto rejects = [&](std::size_t rows, std::size_t columns, std::vector<int> pointers,
                             std::vector<int> column_indices, std::vector<float> v) {
        EXPECT_THROW(kiln::sparse_matrix<float>(q, rows, columns, pointers, column_indices, v),
                     kiln::invalid_argument_error);
    };
    rejects(3, 3, good_pointers, good_columns, values);  // row_pointers too short
    rejects(2, 3, {1, 2, 3}, good_columns, values);      // does not start at 0
    rejects(2, 3, {0, 3, 2}, good_columns, values);      // decreases
    rejects(2, 3, {0, 2, 4}, good_columns, values);      // last != non-zeros
    rejects(2, 3, good_pointers, {0, 3, 1}, values);     // column out of range
    rejects(2, 3, good_pointers, {0, -1, 1}, values);    // negative column
    rejects(2, 3, good_pointers, good_columns, {1, 2});  // too few values
    try {
        kiln::sparse_matrix<float>(q, 2, 3, good_pointers, std::vector<int>{0, 7, 1}, values);
        FAIL() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("column index 7"), std::string::npos) << e.what();
    }
}

// rows + 1 wrapped to 0, passed the size check against no row pointers at all, and the first
// of them was read.
TEST_P(spmv, a_row_count_without_room_for_its_row_pointers_is_rejected) {
    const std::vector<int> none;
    const std::vector<float> no_values;
    const std::size_t rows = std::numeric_limits<std::size_t>::max();
    try {
        kiln::sparse_matrix<float>(q, rows, 3, none, none, no_values);
        FAIL() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(std::to_string(rows)), std::string::npos) << e.what();
    }
}

// Were refused as "split vectors are not supported yet": 0-element operands have no part.
TEST_P(spmv, matrices_without_columns_give_zeros_and_without_rows_nothing) {
    const std::vector<int> no_columns;
    const std::vector<float> no_values;
    for (const auto& layout : every_layout()) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const kiln::sparse_matrix<float> five_by_zero(q, 5, 0, std::vector<int>(6, 0), no_columns,
                                                      no_values);
        kiln::vector<float> empty(q, 0), y(q, 5), z(q, 5);
        y = 7;
        z = 2;
        y = five_by_zero * empty;
        EXPECT_EQ(y.read(), std::vector<float>(5, 0));
        y = z + five_by_zero * empty;
        EXPECT_EQ(y.read(), std::vector<float>(5, 2));
        y = 1 + kiln::make_inline(five_by_zero * empty);
        EXPECT_EQ(y.read(), std::vector<float>(5, 1));

        const kiln::sparse_matrix<float> zero_by_five(q, 0, 5, std::vector<int>{0}, no_columns,
                                                      no_values);
        kiln::vector<float> x(q, 5);
        x = 1;
        EXPECT_NO_THROW(empty = zero_by_five * x);
        EXPECT_NO_THROW(empty = 2 + zero_by_five * x);
    }
}

TEST_P(spmv, operands_of_the_wrong_size_are_rejected) {
    const auto host = random_matrix<float>(30, {1, 2, 3}, 31);
    const auto A = host.on(q);
    kiln::vector<float> x(q, 30), short_x(q, 29), y(q, 3), long_y(q, 30);
    x = 1;
    EXPECT_THROW(y = A * short_x, kiln::invalid_argument_error);
    EXPECT_THROW(long_y = A * x, kiln::invalid_argument_error);
    EXPECT_THROW(y = long_y - A * x, kiln::invalid_argument_error);
    // Rows would be written while other rows read them.
    const auto square = random_matrix<float>(30, std::vector<std::size_t>(30, 3), 32).on(q);
    EXPECT_THROW(x = square * x, kiln::invalid_argument_error);
}

// x = A * x was refused, but not a target reaching the product's operand another way: rows
// were written while other rows still read them.
TEST_P(spmv, a_target_read_by_a_product_is_refused_in_any_statement) {
    const auto A = random_matrix<float>(30, std::vector<std::size_t>(30, 3), 33).on(q);
    kiln::vector<float> x(q, 30), z(q, 30);
    x = 1;
    z = 1;
    try {
        x = A * (2 * x);
        FAIL() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("other positions"), std::string::npos) << e.what();
    }
    EXPECT_THROW(x = z + A * (x + z), kiln::invalid_argument_error);
    EXPECT_THROW(x = 1 + kiln::make_inline(A * x), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::tie(z, x) = std::make_tuple(x, kiln::make_inline(A * z)),
                 kiln::invalid_argument_error);
    EXPECT_EQ(x.read(), std::vector<float>(30, 1));  // refused before anything was written
    EXPECT_EQ(z.read(), std::vector<float>(30, 1));
    // The target read element by element beside the product is fine.
    EXPECT_NO_THROW(x = 2 * x + A * z);
}

TEST_P(spmv, the_rule_picks_ell_for_stencils_adaptive_blocks_for_power_laws_teams_for_long_rows) {
    // A 1-D Laplacian (rows of 2 and 3 entries) and a power-law matrix.
    host_csr<float> laplacian;
    laplacian.columns = 1000;
    std::mt19937 random(41);
    for (std::int64_t r = 0; r < 1000; ++r) {
        std::vector<std::int64_t> row;
        for (std::int64_t c = r - 1; c <= r + 1; ++c)
            if (c >= 0 && c < 1000) row.push_back(c);
        laplacian.add_row(row, random);
    }
    const auto irregular = random_matrix<float>(2000, power_law_lengths(2000, 2000, 42), 43);
    // Rows of 500..700 entries: longer on average than csr_adaptive's limit (512).
    std::vector<std::size_t> long_lengths;
    for (std::size_t r = 0; r < 20; ++r) long_lengths.push_back(500 + 10 * r);
    const auto long_rows = random_matrix<float>(3000, long_lengths, 44).on(q);
    const auto stencil = laplacian.on(q), power_law = irregular.on(q);
    if (device().is_gpu()) {
        EXPECT_EQ(stencil.format(), sparse_format::ell);
        EXPECT_EQ(power_law.format(), sparse_format::csr_adaptive);
        EXPECT_EQ(long_rows.format(), sparse_format::csr_vector);
    } else {
        EXPECT_EQ(stencil.format(), sparse_format::sliced_ell);
        EXPECT_EQ(power_law.format(), sparse_format::csr_chunked);
        EXPECT_EQ(long_rows.format(), sparse_format::csr_chunked);
    }
}

TEST_P(spmv, inlined_products_stand_anywhere_in_an_expression) {
    const auto host = random_matrix<float>(300, power_law_lengths(300, 300, 51), 52);
    const auto u = random_vector<float>(300, 53), f = random_vector<float>(300, 54);
    const auto [au, magnitude] = host_product(host, u);
    double expected_max = 0;
    std::vector<float> expected(300);
    for (std::size_t i = 0; i < 300; ++i) {
        expected[i] = 3 * au[i] * au[i];
        expected_max = std::max(expected_max, double(std::abs(f[i] - au[i])));
    }
    // The CSR loop and the ELL loop of the same node (one kernel text for both), and sliced ELL
    // matrices through the CSR arrays made from their slices.
    for (const auto& layout : {std::optional<sparse_layout>{},
                               std::optional(sparse_layout{sparse_format::ell, 1, 0, 128}),
                               std::optional(sliced_cpu), std::optional(sliced_odd)}) {
        SCOPED_TRACE(describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const auto A = host.on(q);
        kiln::vector<float> du(q, u), df(q, f), y(q, 300);
        const double residual = kiln::maximum(kiln::fabs(df - kiln::make_inline(A * du)));
        EXPECT_NEAR(residual, expected_max, 1e-4);
        auto product = kiln::make_inline(A * du);
        y = 3 * product * product;
        const auto got = y.read();
        for (std::size_t i = 0; i < 300; ++i)
            ASSERT_NEAR(got[i], expected[i], 1e-4 * (1 + magnitude[i] * magnitude[i])) << i;
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(spmv);

TEST(spmv_blocks, cover_every_row_once_within_their_limits_long_rows_first) {
    const auto lengths = power_law_lengths(20000, 5000, 91);
    std::vector<std::uint32_t> pointers{0};
    for (const auto length : lengths)
        pointers.push_back(pointers.back() + static_cast<std::uint32_t>(length));
    const std::vector<std::uint32_t> blocks = kiln::detail::adaptive_blocks(adaptive_gpu, pointers);
    ASSERT_EQ(blocks.size() % 4, 0u);
    std::vector<int> covered(lengths.size());
    bool long_seen_last = true;
    std::size_t long_blocks = 0;
    for (std::size_t b = 0; b < blocks.size(); b += 4) {
        const std::uint32_t first = blocks[b], end = blocks[b + 1];
        ASSERT_LT(first, end);
        EXPECT_EQ(blocks[b + 2], pointers[first]);
        EXPECT_EQ(blocks[b + 3], pointers[end]);
        for (auto r = first; r < end; ++r) ++covered[r];
        const bool long_block = blocks[b + 3] - blocks[b + 2] > adaptive_gpu.block_entries;
        if (long_block) {
            EXPECT_EQ(end - first, 1u) << "a long row is a block of its own";
            EXPECT_TRUE(long_seen_last) << "long rows come before the others";
            ++long_blocks;
            continue;
        }
        long_seen_last = false;
        EXPECT_LE(end - first, adaptive_gpu.work_group_size);
        std::size_t lanes = 1, longest = 0;
        while (lanes * 2 * (end - first) <= adaptive_gpu.work_group_size) lanes *= 2;
        for (auto r = first; r < end; ++r) longest = std::max<std::size_t>(longest, lengths[r]);
        if (end - first > 1) {
            EXPECT_LE((longest + lanes - 1) / lanes, adaptive_gpu.lane_entries);
        }
    }
    EXPECT_GT(long_blocks, 0u);
    for (std::size_t r = 0; r < covered.size(); ++r) ASSERT_EQ(covered[r], 1) << "row " << r;
}

TEST(spmv_chunks, cover_every_row_once_at_equal_shares_of_entries_and_rows) {
    // Power-law rows (one of them longer than a chunk's share), and fewer rows than chunks.
    auto lengths = power_law_lengths(20000, 5000, 92);
    lengths[7000] = 40000;
    for (const auto& [rows, chunks] : {std::pair<std::size_t, std::size_t>{20000, 32}, {3, 3}}) {
        std::vector<std::uint32_t> pointers{0};
        for (std::size_t r = 0; r < rows; ++r)
            pointers.push_back(pointers.back() + static_cast<std::uint32_t>(lengths[r]));
        const auto cuts = kiln::detail::row_chunks(chunks, pointers);
        ASSERT_EQ(cuts.size(), chunks + 1);
        EXPECT_EQ(cuts.front(), 0u);
        EXPECT_EQ(cuts.back(), rows);
        const double share = double(pointers[rows] + rows) / double(chunks);
        for (std::size_t k = 0; k < chunks; ++k) {
            ASSERT_LE(cuts[k], cuts[k + 1]);
            // A chunk ends at the first row reaching the next share: it holds at most a share
            // and the row that crosses it.
            std::size_t longest = 0;
            for (auto r = cuts[k]; r < cuts[k + 1]; ++r)
                longest = std::max<std::size_t>(longest, lengths[r]);
            EXPECT_LE(double(pointers[cuts[k + 1]] + cuts[k + 1] - pointers[cuts[k]] - cuts[k]),
                      share + double(longest) + 1)
                << "chunk " << k;
        }
    }
}

// A matrix split over two devices (CTest runs this with POCL_DEVICES="pthread pthread"): each
// device multiplies its rows and receives only the elements of x its rows read.
class spmv_split : public kiln::test::two_devices_test {};

TEST_F(spmv_split, products_of_split_matrices_match_the_host_loop) {
    // A band (neighbours across the split), a power-law matrix (columns everywhere) and a matrix
    // whose rows read only their own device's part (no halo at all).
    std::vector<host_csr<float>> matrices;
    {
        host_csr<float> band;
        band.columns = 2000;
        std::mt19937 random(61);
        for (std::int64_t r = 0; r < 2000; ++r) {
            std::vector<std::int64_t> row;
            for (std::int64_t c = r - 3; c <= r + 3; ++c)
                if (c >= 0 && c < 2000) row.push_back(c);
            band.add_row(row, random);
        }
        matrices.push_back(band);
        host_csr<float> diagonal;
        diagonal.columns = 2000;
        for (std::int64_t r = 0; r < 2000; ++r) diagonal.add_row({r}, random);
        matrices.push_back(diagonal);
    }
    matrices.push_back(random_matrix<float>(1500, power_law_lengths(1500, 1500, 62), 63));
    // Each device's block in the rule's format (csr_chunked on PoCL), then in csr_adaptive.
    for (std::size_t m = 0; m < 2 * matrices.size(); ++m) {
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (m >= matrices.size()) forced.emplace(adaptive_small);
        SCOPED_TRACE("matrix " + std::to_string(m % matrices.size()) +
                     (forced ? ", csr_adaptive" : ""));
        const auto& host = matrices[m % matrices.size()];
        const auto x = random_vector<float>(host.columns, 64),
                   f = random_vector<float>(host.rows, 65);
        const auto [ax, magnitude] = host_product(host, x);
        const kiln::sparse_matrix<float> A(queues, host.rows, host.columns, host.row_pointers,
                                           host.column_indices, host.values);
        ASSERT_TRUE(A.is_split());
        if (forced) {
            ASSERT_EQ(A.block(0).format(), sparse_format::csr_adaptive);
            ASSERT_EQ(A.block(1).format(), sparse_format::csr_adaptive);
        }
        kiln::vector<float> dx(queues, x), df(queues, f), y(queues, host.rows);
        y = A * dx;
        expect_close(y.read(), ax, magnitude);
        y = df - A * dx;
        std::vector<float> expected(host.rows);
        for (std::size_t i = 0; i < host.rows; ++i) expected[i] = f[i] - ax[i];
        expect_close(y.read(), expected, magnitude);
    }
}

TEST_F(spmv_split, operands_split_otherwise_are_rejected) {
    const auto host = random_matrix<float>(100, std::vector<std::size_t>(100, 3), 71);
    const kiln::sparse_matrix<float> A(queues, 100, 100, host.row_pointers, host.column_indices,
                                       host.values);
    kiln::vector<float> single(queues[0], 100), split(queues, 100), y(queues, 100);
    single = 1;
    split = 1;
    EXPECT_THROW(y = A * single, kiln::invalid_argument_error);
    EXPECT_THROW(y = A * (split + 1), kiln::invalid_argument_error);
    EXPECT_THROW(single = A * split, kiln::invalid_argument_error);
}

}  // namespace
