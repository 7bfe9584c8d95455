// SPDX-License-Identifier: Apache-2.0
// Run-to-run determinism: each algorithm of floating-point values, called 20 times on the same
// input with the device's own plan, gives the same bits every time (docs/algorithms.md,
// "Determinism"). On GPUs a float scan's look-back once gave 20 different results in 20 calls;
// PoCL, whose groups run on a few threads, seldom shows such races, so scan_test also checks
// the look-back's order itself against the host.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "expr/test_data.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::random_values;

constexpr int calls = 20;

/// FNV-1a over the bytes of `values`.
template <class T>
std::uint64_t bits_hash(const std::vector<T>& values) {
    std::uint64_t hash = 14695981039346656037ull;
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    for (std::size_t i = 0; i < values.size() * sizeof(T); ++i)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

class determinism_test : public kiln::test::device_queue_test {
  protected:
    /// Elements of the large inputs: many tiles on a GPU, many chunks on a CPU.
    static constexpr std::size_t n = std::size_t{1} << 21;

    /// Calls `run` `calls` times; every call's result (its bits) must be the same.
    template <class Run>
    void expect_one_result(const std::string& what, Run&& run) {
        std::set<std::uint64_t> results;
        for (int i = 0; i < calls; ++i) results.insert(run());
        EXPECT_EQ(results.size(), 1u)
            << what << ": " << results.size() << " different results in " << calls << " calls";
    }
};

TEST_P(determinism_test, scans_give_the_same_bits_on_every_call) {
    const kiln::vector<float> x(q, random_values<float>(n, -1, 1, 1));
    kiln::vector<float> y(q, n);
    expect_one_result("float inclusive_scan", [&] {
        kiln::inclusive_scan(x, y);
        return bits_hash(y.read());
    });
    const kiln::vector<double> xd(q, random_values<double>(n, -1, 1, 2));
    kiln::vector<double> yd(q, n);
    expect_one_result("double exclusive_scan", [&] {
        kiln::exclusive_scan(xd, yd, 0.5);
        return bits_hash(yd.read());
    });
}

TEST_P(determinism_test, segmented_and_by_key_work_gives_the_same_bits_on_every_call) {
    const auto host = random_values<float>(n, -1, 1, 3);
    const kiln::vector<float> x(q, host);
    // Segments of 1 to 3000 elements, and runs of keys alike.
    std::mt19937 engine(4);
    std::uniform_int_distribution<std::size_t> length(1, 3000);
    std::vector<std::int64_t> offsets = {0};
    std::vector<std::int32_t> keys(n);
    for (std::size_t start = 0; start < n;) {
        const std::size_t end = std::min(n, start + length(engine));
        for (std::size_t i = start; i < end; ++i) keys[i] = std::int32_t(offsets.size());
        offsets.push_back(std::int64_t(end));
        start = end;
    }
    const kiln::vector<std::int64_t> segment_offsets(q, offsets);
    const std::size_t segments = offsets.size() - 1;
    kiln::vector<float> y(q, n), sums(q, segments);
    expect_one_result("segmented_inclusive_scan", [&] {
        kiln::segmented_inclusive_scan(x, segment_offsets, y);
        return bits_hash(y.read());
    });
    expect_one_result("segmented_reduce", [&] {
        kiln::segmented_reduce(x, segment_offsets, sums);
        return bits_hash(sums.read());
    });
    const kiln::vector<std::int32_t> k(q, keys);
    kiln::vector<std::int32_t> unique_keys(q, segments);
    expect_one_result("reduce_by_key", [&] {
        const std::size_t runs = kiln::reduce_by_key(k, x, unique_keys, sums);
        EXPECT_EQ(runs, segments);
        return bits_hash(sums.read());
    });
}

TEST_P(determinism_test, reductions_give_the_same_bits_on_every_call) {
    const kiln::vector<float> x(q, random_values<float>(n, -1, 1, 5)),
        y(q, random_values<float>(n, -1, 1, 6));
    const kiln::vector<double> xd(q, random_values<double>(n, -1, 1, 7));
    expect_one_result("float sum", [&] { return bits_hash(std::vector{kiln::sum(x)}); });
    expect_one_result("sum(x * y)", [&] { return bits_hash(std::vector{kiln::sum(x * y)}); });
    expect_one_result("double sum", [&] { return bits_hash(std::vector{kiln::sum(xd)}); });
}

TEST_P(determinism_test, products_give_the_same_bits_on_every_call) {
    // A sparse matrix with rows of 1 to 200 entries at random columns.
    const std::size_t rows = 20000, columns = 30000;
    std::mt19937 engine(8);
    std::uniform_int_distribution<std::size_t> length(1, 200);
    std::uniform_int_distribution<std::int64_t> column(0, columns - 1);
    std::vector<std::int64_t> row_pointers = {0}, column_indices;
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t e = length(engine); e > 0; --e) column_indices.push_back(column(engine));
        row_pointers.push_back(std::int64_t(column_indices.size()));
    }
    const auto values = random_values<float>(column_indices.size(), -1, 1, 9);
    const kiln::sparse_matrix<float> A(q, rows, columns, row_pointers, column_indices, values);
    const kiln::vector<float> x(q, random_values<float>(columns, -1, 1, 10));
    kiln::vector<float> y(q, rows);
    expect_one_result("SpMV", [&] {
        y = A * x;
        return bits_hash(y.read());
    });
    const std::size_t m = 256, k = 512;
    const kiln::matrix<float> a(q, m, k, random_values<float>(m * k, -1, 1, 11)),
        b(q, k, m, random_values<float>(k * m, -1, 1, 12));
    kiln::matrix<float> c(q, m, m);
    expect_one_result("float gemm", [&] {
        kiln::gemm(c, a, b);
        return bits_hash(c.read());
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(determinism_test);

}  // namespace
