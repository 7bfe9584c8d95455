// SPDX-License-Identifier: Apache-2.0
// Sparse matrix products with kiln::half and kiln::bfloat16 values on every device, in every
// storage format: float operands, float sums, against a host loop in double over the same 16-bit
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algo/spmv_layouts.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::bfloat16;
using kiln::half;
using kiln::test::describe;
using kiln::test::every_layout;

/// A CSR matrix of 16-bit values whose rows have the given lengths, at random columns.
template <class T>
struct host_csr {
    std::size_t rows = 0, columns = 0;
    std::vector<std::uint32_t> row_pointers{0}, column_indices;
    std::vector<T> values;

    host_csr(std::size_t columns_, const std::vector<std::size_t>& lengths, unsigned seed)
        : columns(columns_) {
        std::mt19937 random(seed);
        std::uniform_int_distribution<std::uint32_t> column(
            0, static_cast<std::uint32_t>(columns) - 1);
        std::uniform_real_distribution<float> value(-1, 1);
        for (const auto length : lengths) {
            for (std::size_t k = 0; k < length; ++k) {
                column_indices.push_back(column(random));
                values.push_back(T(value(random)));  // rounded once, to nearest even
            }
            row_pointers.push_back(static_cast<std::uint32_t>(column_indices.size()));
            ++rows;
        }
    }
    kiln::sparse_matrix<T> on(const kiln::queue& q) const {
        return kiln::sparse_matrix<T>(q, rows, columns, row_pointers, column_indices, values);
    }
};

/// The matrices every format must handle: 1 x 1, a single long row, empty rows, no entries,
/// rectangular both ways with rows longer than any work-group.
template <class T>
std::vector<host_csr<T>> awkward_matrices() {
    return {host_csr<T>(1, {1}, 1),
            host_csr<T>(700, {300}, 2),
            host_csr<T>(50, {0, 0, 3, 0, 1, 0}, 3),
            host_csr<T>(10, {0, 0, 0}, 4),
            host_csr<T>(40, std::vector<std::size_t>(300, 7), 5),
            host_csr<T>(9000, {5000, 1, 0, 4500, 2}, 6)};
}

/// Float sums of float products of exact 16-bit values: each row within 1e-5 of sum |a| |x|
/// (plus 1) of the double sum, the float matrices' tolerance in spmv_test.cpp.
template <class T>
void expect_product(const host_csr<T>& m, const std::vector<float>& x,
                    const std::vector<float>& y) {
    ASSERT_EQ(y.size(), m.rows);
    for (std::size_t r = 0; r < m.rows; ++r) {
        double exact = 0, magnitude = 0;
        for (auto e = m.row_pointers[r]; e < m.row_pointers[r + 1]; ++e) {
            const double a = static_cast<float>(m.values[e]), b = x[m.column_indices[e]];
            exact += a * b;
            magnitude += std::abs(a * b);
        }
        ASSERT_LE(std::abs(y[r] - exact), 1e-5 * (magnitude + 1)) << "row " << r;
    }
}

class spmv_binary16 : public kiln::test::device_queue_test {
  protected:
    template <class T>
    void check_every_format() {
        const auto matrices = awkward_matrices<T>();
        for (const auto& layout : every_layout()) {
            SCOPED_TRACE(describe(layout));
            std::optional<kiln::detail::scoped_sparse_layout> forced;
            if (layout) forced.emplace(*layout);
            for (std::size_t m = 0; m < matrices.size(); ++m) {
                SCOPED_TRACE("matrix " + std::to_string(m));
                const auto& host = matrices[m];
                std::mt19937 random(10 + static_cast<unsigned>(m));
                std::uniform_real_distribution<float> value(-1, 1);
                std::vector<float> x(host.columns);
                for (auto& e : x) e = value(random);
                const auto A = host.on(q);
                if (layout) {
                    EXPECT_EQ(A.format(), layout->format);
                }
                kiln::vector<float> dx(q, x), y(q, host.rows);
                y = A * dx;
                expect_product(host, x, y.read());
                // The product inlined in an expression: the plain CSR (or ELL) loop.
                kiln::vector<float> inlined(q, host.rows);
                inlined = kiln::make_inline(A * dx) + 0.0f;
                expect_product(host, x, inlined.read());
            }
        }
    }
};

TEST_P(spmv_binary16, half_values_in_every_format) {
    check_every_format<half>();
}

TEST_P(spmv_binary16, bfloat16_values_in_every_format) {
    check_every_format<bfloat16>();
}

TEST_P(spmv_binary16, products_are_float_and_fuse_with_element_wise_parts) {
    // Sums beyond the 16-bit types' precision: 3000 entries of 1 in a row sum to 3000 in float
    // (half's spacing there is 2, bfloat16's 16), and y = 2 * (A * x) - 1 stores float.
    const std::size_t n = 3000;
    std::vector<std::uint32_t> pointers{0, static_cast<std::uint32_t>(n)}, columns(n);
    for (std::size_t i = 0; i < n; ++i) columns[i] = static_cast<std::uint32_t>(i);
    const std::vector<half> ones(n, half(1.0f));
    const kiln::sparse_matrix<half> A(q, 1, n, pointers, columns, ones);
    std::vector<float> x(n, 1.0f);
    x[0] = 1.0f / 1024;  // below half's spacing at 3000
    kiln::vector<float> dx(q, x), y(q, 1);
    y = 2.0f * (A * dx) - 1.0f;
    EXPECT_EQ(y.read()[0], 2.0f * (2999.0f + 1.0f / 1024) - 1.0f);
    // A half vector operand loads as float.
    const std::vector<half> half_x(n, half(0.5f));
    kiln::vector<half> hx(q, half_x);
    y = A * hx;
    EXPECT_EQ(y.read()[0], 1500.0f);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(spmv_binary16);

/// A matrix split over two devices (PoCL's CPU shown twice).
class spmv_binary16_split : public kiln::test::two_devices_test {};

TEST_F(spmv_binary16_split, products_of_split_16_bit_matrices_are_refused) {
    const host_csr<half> host(100, std::vector<std::size_t>(50, 3), 7);
    const kiln::sparse_matrix<half> A(queues, host.rows, host.columns, host.row_pointers,
                                      host.column_indices, host.values);
    kiln::vector<float> x(queues, host.columns), y(queues, host.rows);
    EXPECT_THROW(y = A * x, kiln::invalid_argument_error);
}

}  // namespace
