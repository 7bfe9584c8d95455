// SPDX-License-Identifier: Apache-2.0
// The matrices of bench/algo/spmv_bench and its cuSPARSE reference, built alike by both (C++17,
// for nvcc), and of tests/algo/reproducible_test.cpp's CG solve: the 2-D 5-point Poisson matrix
// and a power-law matrix, CSR with int32 indices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace spmv_matrices {

struct csr {
    std::size_t rows = 0, columns = 0;
    std::vector<std::int32_t> row_pointers, column_indices;
    std::vector<float> values;
};

/// -Laplacian on a side x side grid, Dirichlet boundary: 4 on the diagonal, -1 per neighbour.
inline csr poisson_2d(std::size_t side) {
    csr m;
    m.rows = m.columns = side * side;
    m.row_pointers.reserve(m.rows + 1);
    m.column_indices.reserve(5 * m.rows);
    m.values.reserve(5 * m.rows);
    m.row_pointers.push_back(0);
    for (std::size_t i = 0; i < side; ++i)
        for (std::size_t j = 0; j < side; ++j) {
            const auto add = [&](std::size_t column, float value) {
                m.column_indices.push_back(static_cast<std::int32_t>(column));
                m.values.push_back(value);
            };
            const std::size_t row = i * side + j;
            if (i > 0) add(row - side, -1);
            if (j > 0) add(row - 1, -1);
            add(row, 4);
            if (j + 1 < side) add(row + 1, -1);
            if (i + 1 < side) add(row + side, -1);
            m.row_pointers.push_back(static_cast<std::int32_t>(m.column_indices.size()));
        }
    return m;
}

/// A fixed pseudo-random 64-bit hash (splitmix64's finaliser).
inline std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
inline double uniform(std::uint64_t key) {
    return (static_cast<double>(mix(key) >> 11) + 1) / 9007199254740993.0;  // (0, 1]
}

/// Square, `rows` rows of length floor(2 u^-0.6) for uniform u: mean about 5 entries, most rows
/// of 2..4, a few thousands of rows longer than 1000 (up to `longest`); sorted random columns.
inline csr power_law(std::size_t rows, std::size_t longest) {
    csr m;
    m.rows = m.columns = rows;
    m.row_pointers.reserve(rows + 1);
    m.row_pointers.push_back(0);
    for (std::size_t r = 0; r < rows; ++r) {
        const auto length = std::min<std::size_t>(
            longest, static_cast<std::size_t>(2 * std::pow(uniform(2 * r), -0.6)));
        const std::size_t first = m.column_indices.size();
        for (std::size_t k = 0; k < length; ++k) {
            m.column_indices.push_back(
                static_cast<std::int32_t>(mix(2 * r + 1 + (k << 40)) % rows));
            m.values.push_back(static_cast<float>(uniform(3 * r + k) - 0.5));
        }
        std::sort(m.column_indices.begin() + static_cast<std::ptrdiff_t>(first),
                  m.column_indices.end());
        m.row_pointers.push_back(static_cast<std::int32_t>(m.column_indices.size()));
    }
    return m;
}

/// The x of y = A x: values in [-1, 1].
inline std::vector<float> operand(std::size_t n) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(2 * uniform(7 * i + 5) - 1);
    return x;
}

/// Bytes a CSR product must move at least: values and columns, row pointers, x once, y.
inline double minimum_bytes(const csr& m) {
    return double(m.values.size()) * 8 + double(m.rows + 1) * 4 + double(m.columns) * 4 +
           double(m.rows) * 4;
}

}  // namespace spmv_matrices
