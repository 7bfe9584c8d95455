// SPDX-License-Identifier: Apache-2.0
// kiln::gemm and kiln::gemm_batched on every device, through every strategy the device can run,
// against a double host reference within the bound docs/linear_algebra.md promises, and every bad
// input, rejected before any device work. The plan on devices written by hand: gemm_plan_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "algo/gemm/gemm_aligned_rows.hpp"
#include "algo/gemm/gemm_plan.hpp"
#include "algo/gemm/gemm_strategies.hpp"
#include "algo/gemm_feeds.hpp"
#include "algo/written_devices.hpp"
#include "support/device_param.hpp"
#include "support/reference_dot.hpp"
#include "support/uniform_values.hpp"

namespace {

using kiln::detail::gemm_strategy;

using kiln::test::uniform_values;

/// A rows x columns matrix stored with leading dimension `leading` from `offset` in `values`.
struct host_layout {
    std::size_t rows, columns, leading, offset = 0;
    bool transposed = false;  // the product reads the transpose
};

/// Element (i, p) of op(X).
template <class T>
double op_at(const std::vector<T>& values, const host_layout& x, std::size_t i, std::size_t p) {
    return x.transposed ? double(values[x.offset + p * x.leading + i])
                        : double(values[x.offset + i * x.leading + p]);
}

/// C = alpha op(A) op(B) + beta C in double, and for each element the scale of its rounding
/// errors: |alpha| (|op(A)| |op(B)|) + |beta| |C|.
template <class T>
struct reference {
    std::vector<double> values, scales;
};
template <class T>
reference<T> host_gemm(const std::vector<T>& a, const host_layout& la, const std::vector<T>& b,
                       const host_layout& lb, const std::vector<T>& c, const host_layout& lc,
                       double alpha, double beta, std::size_t k) {
    reference<T> r;
    r.values.assign(c.begin(), c.end());
    r.scales.assign(c.size(), 0.0);
    for (std::size_t i = 0; i < lc.rows; ++i)
        for (std::size_t j = 0; j < lc.columns; ++j) {
            const auto [sum, magnitude] = kiln::test::reference_dot(
                k, [&](std::size_t p) { return op_at(a, la, i, p); },
                [&](std::size_t p) { return op_at(b, lb, p, j); });
            const std::size_t at = lc.offset + i * lc.leading + j;
            const double old = beta == 0 ? 0.0 : double(c[at]);
            r.values[at] = alpha * sum + beta * old;
            r.scales[at] = std::abs(alpha) * magnitude + std::abs(beta * old);
        }
    return r;
}

/// The bound docs/linear_algebra.md promises: each of k steps and the epilogue rounds at most
/// twice (a multiply-add may round its product), so |C - reference| <= 2 (k + 2) eps scale.
template <class T>
double error_bound(std::size_t k, double scale) {
    return 2.0 * double(k + 2) * double(std::numeric_limits<T>::epsilon()) * scale;
}

/// Every element of `got` within the bound of `want`, or equal where the bound is 0 (elements
/// outside C's window, which must be untouched).
template <class T>
void expect_close(const std::vector<T>& got, const reference<T>& want, std::size_t k) {
    ASSERT_EQ(got.size(), want.values.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double error = std::abs(double(got[i]) - want.values[i]);
        if (!(error <= error_bound<T>(k, want.scales[i])) && wrong++ < 5)
            ADD_FAILURE() << "element " << i << ": " << got[i] << ", reference " << want.values[i]
                          << " (bound " << error_bound<T>(k, want.scales[i]) << ")";
    }
}

/// SIMT tiles whose kernel copies by cp.async (copy_stages): blocks of 256 work-items, two and
/// three stages, each operand's tile transposed by the copies or not (every layout runs them),
/// thread tiles read by 4-vectors (r4) and one element at a time.
constexpr const char* copy_tiles[] = {"256x128x8 t16x8 v4 s3 r4", "128x256x8 t8x16 v4 s3 r4",
                                      "128x128x16 t8x8 v4 s2 r4", "128x128x8 t8x8 v4 s2"};

class gemm_test : public kiln::test::device_queue_test {
  protected:
    /// `body` once per strategy the device can run, that strategy forced; SIMT once per row's
    /// tiles that the device can hold, so that vector loads and every tile shape run everywhere,
    /// and on NVIDIA GPUs with cp.async once per shape of copy_tiles.
    template <class Body>
    void on_every_strategy(Body&& body) {
        for (gemm_strategy s : kiln::detail::gemm_strategies_for(device())) {
            SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
            const kiln::detail::scoped_gemm_strategy forced(s);
            if (s != gemm_strategy::simt) {
                body();
                continue;
            }
            std::vector<kiln::detail::gemm_simt_tiles> shapes;
            for (const auto& row : kiln::detail::algorithm::gemm_rows::rows())
                shapes.push_back(row.tuning.simt);
            if (kiln::detail::has_nvidia_tensor_cores(device().properties()))
                for (const char* key : copy_tiles)
                    shapes.push_back(*kiln::detail::parse_gemm_simt_tiles(key));
            std::vector<std::string> done;
            for (const kiln::detail::gemm_simt_tiles& tiles : shapes) {
                const std::string key = tiles.key();
                if (std::find(done.begin(), done.end(), key) != done.end() ||
                    tiles.work_group_size() > device().properties().max_work_group_size)
                    continue;
                done.push_back(key);
                SCOPED_TRACE("tiles " + key);
                const kiln::detail::scoped_algorithm_policy forced_tiles(
                    kiln::detail::algorithm::gemm,
                    kiln::detail::gemm_tuning_with(row_tuning(), tiles));
                body();
            }
        }
    }

    /// The device's row's tuning, which tests force with other tiles (gemm_tuning_with).
    kiln::detail::gemm_tuning row_tuning() const {
        return kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
            device().properties(), std::nullopt);
    }

    /// Whether doubles run under the SIMT tiles in force: the device has them, and the tiles fit
    /// its local memory for doubles (the NVIDIA row's float tiles do not).
    bool doubles_run() const {
        const auto forced =
            kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::forced();
        const std::size_t local = device().properties().local_memory_bytes;
        return has_double() &&
               (!forced || local == 0 || forced->simt_double.local_bytes(8) <= local);
    }

    /// C (m x n) = alpha op(A) op(B) + beta C with plain matrices, checked against the host.
    template <class T>
    void check_product(std::size_t m, std::size_t n, std::size_t k, bool transpose_a,
                       bool transpose_b, T alpha, T beta) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     (transpose_a ? " Aᵀ" : "") + (transpose_b ? " Bᵀ" : ""));
        const host_layout la{transpose_a ? k : m, transpose_a ? m : k, transpose_a ? m : k, 0,
                             transpose_a};
        const host_layout lb{transpose_b ? n : k, transpose_b ? k : n, transpose_b ? k : n, 0,
                             transpose_b};
        const host_layout lc{m, n, n};
        const auto a = uniform_values<T>(m * k, 1), b = uniform_values<T>(k * n, 2),
                   c = uniform_values<T>(m * n, 3);
        const kiln::matrix<T> A(q, la.rows, la.columns, a), B(q, lb.rows, lb.columns, b),
            C(q, m, n, c);
        if (transpose_a && transpose_b)
            kiln::gemm(C, kiln::transposed(A), kiln::transposed(B), {.alpha = alpha, .beta = beta});
        else if (transpose_a)
            kiln::gemm(C, kiln::transposed(A), B, {.alpha = alpha, .beta = beta});
        else if (transpose_b)
            kiln::gemm(C, A, kiln::transposed(B), {.alpha = alpha, .beta = beta});
        else
            kiln::gemm(C, A, B, {.alpha = alpha, .beta = beta});
        expect_close(C.read(), host_gemm(a, la, b, lb, c, lc, alpha, beta, k), k);
    }
};

// Sizes around the tiles of every row (SIMT blocks of 32, 64 and 128; CPU tiles of 4 x 64, 4 x 32
// for doubles, and 4 x 16) and the smallest: 1 and primes, full tiles and one more.
TEST_P(gemm_test, edge_tiles_of_every_size) {
    const std::vector<std::array<std::size_t, 3>> shapes{
        {1, 1, 1},   {1, 17, 3},    {19, 1, 7},  {5, 3, 1},      {64, 64, 8},
        {65, 63, 9}, {131, 37, 67}, {4, 16, 31}, {128, 128, 16}, {129, 129, 17}};
    on_every_strategy([&] {
        for (const auto& [m, n, k] : shapes)
            check_product<float>(m, n, k, false, false, 1.0f, 0.0f);
        if (doubles_run())
            for (const auto& [m, n, k] : shapes)
                check_product<double>(m, n, k, false, false, 1.0, 0.0);
    });
}

TEST_P(gemm_test, transposes_with_alpha_and_beta) {
    on_every_strategy([&] {
        for (const bool ta : {false, true})
            for (const bool tb : {false, true}) {
                check_product<float>(67, 45, 33, ta, tb, 2.0f, 1.0f);
                check_product<float>(128, 64, 16, ta, tb, -0.5f, 0.25f);
                if (doubles_run()) check_product<double>(37, 70, 41, ta, tb, 1.5, -1.0);
            }
    });
}

// Doubles whose rows the tensor-core kernel copies by 16 bytes (even leading dimensions), around
// its blocks and m8n8k4 / m16n8k8 instructions: partial blocks, warps past m or n, and k ending
// inside a copy. Every strategy; on NVIDIA GPUs the row's tensor-core tiles and one-warp blocks.
TEST_P(gemm_test, doubles_in_the_tensor_cores_layout) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::vector<std::array<std::size_t, 3>> shapes{
        {2, 2, 2}, {8, 8, 4}, {130, 66, 34}, {136, 264, 40}, {64, 200, 18}, {258, 130, 2}};
    const auto products = [&] {
        for (const auto& [m, n, k] : shapes) check_product<double>(m, n, k, false, false, 1.0, 0.0);
        for (const bool ta : {false, true})
            for (const bool tb : {false, true})
                check_product<double>(72, 132, 36, ta, tb, 1.5, -1.0);
    };
    for (gemm_strategy s : kiln::detail::gemm_strategies_for(device())) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_gemm_strategy forced(s);
        if (s != gemm_strategy::tensor_cores) {
            products();
            continue;
        }
        // The device's row's tiles, a block of one warp (warps past m or n in every block), and
        // the same 16 deep (m16n8k16 where the device has it).
        const kiln::detail::gemm_tensor_tiles row_tiles = row_tuning().tensor_double;
        const kiln::detail::gemm_tensor_tiles one_warp{.block_rows = 32,
                                                       .block_columns = 32,
                                                       .block_depth = 8,
                                                       .warp_rows = 32,
                                                       .warp_columns = 32,
                                                       .stages = 3};
        kiln::detail::gemm_tensor_tiles one_warp_deep = one_warp;
        one_warp_deep.block_depth = 16;
        for (const auto& tiles : {row_tiles, one_warp, one_warp_deep}) {
            SCOPED_TRACE("tensor tiles " + tiles.key());
            const kiln::detail::scoped_algorithm_policy forced_tiles(
                kiln::detail::algorithm::gemm, kiln::detail::gemm_tuning_with(row_tuning(), tiles));
            products();
        }
    }
}

// allow_tf32: on NVIDIA tensor cores the operands round to TF32 (10 significant bits, to nearest)
// first, adding at most 2^-10 of each product's magnitude to float's bound; Hopper's wgmma drops
// the low mantissa bits instead (no rounding), at most 2^-9; elsewhere, and where rows are not
// multiples of 4 floats (but for wgmma, which copies them), the float kernels run.
TEST_P(gemm_test, floats_on_tf32_tensor_cores_when_allowed) {
    const std::vector<std::array<std::size_t, 3>> shapes{
        {4, 4, 4}, {132, 68, 36}, {256, 136, 40}, {37, 29, 43}};
    for (gemm_strategy s : kiln::detail::gemm_strategies_for(device())) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_gemm_strategy forced(s);
        const auto products = [&] {
            for (const auto& [m, n, k] : shapes)
                for (const auto& [ta, tb] :
                     {std::pair{false, false}, std::pair{false, true}, std::pair{true, false}}) {
                    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                                 std::to_string(k) + (ta ? " Aᵀ" : "") + (tb ? " Bᵀ" : ""));
                    const host_layout la{ta ? k : m, ta ? m : k, ta ? m : k, 0, ta},
                        lb{tb ? n : k, tb ? k : n, tb ? k : n, 0, tb}, lc{m, n, n};
                    const auto a = uniform_values<float>(m * k, 11),
                               b = uniform_values<float>(k * n, 12),
                               c = uniform_values<float>(m * n, 13);
                    const kiln::matrix<float> A(q, la.rows, la.columns, a),
                        B(q, lb.rows, lb.columns, b), C(q, m, n, c);
                    const kiln::gemm_options<float> tf32{
                        .alpha = 1.5f, .beta = -1.0f, .allow_tf32 = true};
                    if (ta)
                        kiln::gemm(C, kiln::transposed(A), B, tf32);
                    else if (tb)
                        kiln::gemm(C, A, kiln::transposed(B), tf32);
                    else
                        kiln::gemm(C, A, B, tf32);
                    const auto want = host_gemm(a, la, b, lb, c, lc, 1.5, -1.0, k);
                    const std::vector<float> got = C.read();
                    std::size_t wrong = 0;
                    for (std::size_t i = 0; i < got.size(); ++i) {
                        const double bound =
                            error_bound<float>(k, want.scales[i]) +
                            std::ldexp(want.scales[i],
                                       s == gemm_strategy::warpgroup_mma ? -9 : -10);
                        if (!(std::abs(double(got[i]) - want.values[i]) <= bound) && wrong++ < 5)
                            ADD_FAILURE() << "element " << i << ": " << got[i] << ", reference "
                                          << want.values[i] << " (bound " << bound << ")";
                    }
                }
        };
        products();
        if (s == gemm_strategy::warpgroup_mma)
            kiln::test::with_other_warpgroup_feeds(device(), products);
    }
}

// Leading dimensions and offsets that break every vector alignment, and C's elements outside
// its window left as they were.
TEST_P(gemm_test, views_with_any_leading_dimension_and_offset) {
    const std::size_t m = 37, n = 29, k = 43;
    const host_layout la{m, k, k + 3, 5}, lb{k, n, n + 1, 2}, lc{m, n, n + 7, 11};
    const auto a = uniform_values<float>(la.offset + m * la.leading, 4),
               b = uniform_values<float>(lb.offset + k * lb.leading, 5),
               c = uniform_values<float>(lc.offset + m * lc.leading + 3, 6);
    on_every_strategy([&] {
        const kiln::vector<float> va(q, a), vb(q, b), vc(q, c);
        kiln::gemm(kiln::matrix_view<float>(vc, m, n, lc.leading, lc.offset),
                   kiln::matrix_view<float>(va, m, k, la.leading, la.offset),
                   kiln::matrix_view<float>(vb, k, n, lb.leading, lb.offset),
                   {.alpha = 1.0f, .beta = -1.0f});
        expect_close(vc.read(), host_gemm(a, la, b, lb, c, lc, 1.0, -1.0, k), k);
    });
}

// The plan copies large products' operands whose rows vectors cannot read into rows that start
// at multiples of 4 (gemm_aligned_rows.hpp); here the copies of such operands, and the SIMT
// kernel reading them by vectors, on every device: the same product as the host's.
TEST_P(gemm_test, operands_copied_into_aligned_rows_multiply_as_before) {
    const std::size_t m = 37, n = 29, k = 43;
    const host_layout la{m, k, k + 2, 3}, lb{k, n, n + 2, 1}, lc{m, n, n};
    const auto a = uniform_values<float>(la.offset + m * la.leading, 7),
               b = uniform_values<float>(lb.offset + k * lb.leading, 8),
               c = uniform_values<float>(m * n, 9);
    const kiln::buffer<float> ba(q, a), bb(q, b), bc(q, c);
    using kiln::detail::gemm_operand;
    kiln::detail::gemm_problem problem{
        .a = gemm_operand{.storage = &ba.storage(),
                          .offset = la.offset,
                          .rows = m,
                          .columns = k,
                          .leading_dimension = la.leading},
        .b = gemm_operand{.storage = &bb.storage(),
                          .offset = lb.offset,
                          .rows = k,
                          .columns = n,
                          .leading_dimension = lb.leading},
        .c =
            gemm_operand{.storage = &bc.storage(), .rows = m, .columns = n, .leading_dimension = n},
        .alpha = 1.0,
        .beta = 0.5};
    ASSERT_TRUE(kiln::detail::copy_aligns_rows(problem.a));
    ASSERT_TRUE(kiln::detail::copy_aligns_rows(problem.b));
    const auto copy_a = kiln::detail::copy_with_aligned_rows(q, problem.a);
    const auto copy_b = kiln::detail::copy_with_aligned_rows(q, problem.b);
    EXPECT_EQ(copy_a.shape.leading_dimension, 44u);
    EXPECT_EQ(copy_b.shape.leading_dimension, 32u);
    EXPECT_FALSE(kiln::detail::copy_aligns_rows(copy_a.operand()));
    // The copy of A holds its rows, each at a multiple of 4 elements.
    const std::vector<std::byte> bytes = copy_a.scratch.bytes().read(q);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t p = 0; p < k; ++p) {
            float copied;
            std::memcpy(&copied, bytes.data() + (i * 44 + p) * sizeof(float), sizeof copied);
            ASSERT_EQ(copied, a[la.offset + i * la.leading + p]) << i << ", " << p;
        }
    problem.a = copy_a.operand();
    problem.b = copy_b.operand();
    const kiln::detail::gemm_simt_tiles tiles = row_tuning().simt;
    if (tiles.work_group_size() > device().properties().max_work_group_size) GTEST_SKIP();
    kiln::detail::run_simt_gemm(q, problem, tiles, false).wait();
    expect_close(bc.read(q), host_gemm(a, la, b, lb, c, lc, 1.0, 0.5, k), k);
}

// A product inside one vector: A, B and C side by side, C apart from both.
TEST_P(gemm_test, operands_side_by_side_in_one_vector) {
    const std::size_t m = 21, n = 18, k = 13, row = 64;
    const host_layout la{m, k, row, 0}, lb{k, n, row, 20}, lc{m, n, row, 40};
    const auto values = uniform_values<float>(row * std::max(m, k), 7);
    on_every_strategy([&] {
        const kiln::vector<float> v(q, values);
        kiln::gemm(kiln::matrix_view<float>(v, m, n, row, lc.offset),
                   kiln::matrix_view<float>(v, m, k, row, la.offset),
                   kiln::matrix_view<float>(v, k, n, row, lb.offset));
        // A and B are 0-19 and 20-39 of each row, so the reference may read them from the input.
        expect_close(v.read(), host_gemm(values, la, values, lb, values, lc, 1.0, 0.0, k), k);
    });
}

TEST_P(gemm_test, strided_batches) {
    const std::size_t m = 33, n = 17, k = 21, batch = 3;
    const auto a = uniform_values<float>(batch * m * k, 8),
               b = uniform_values<float>(batch * k * n, 9),
               c = uniform_values<float>(batch * m * n, 10);
    on_every_strategy([&] {
        const kiln::matrix<float> As(q, m, k, batch, a), Bs(q, k, n, batch, b),
            Cs(q, m, n, batch, c);
        kiln::gemm_batched(Cs, As, Bs, {.alpha = 1.0f, .beta = 0.5f});
        const std::vector<float> got = Cs.read();
        for (std::size_t e = 0; e < batch; ++e) {
            SCOPED_TRACE("batch entry " + std::to_string(e));
            const host_layout la{m, k, k, e * m * k}, lb{k, n, n, e * k * n},
                lc{m, n, n, e * m * n};
            reference<float> want = host_gemm(a, la, b, lb, c, lc, 1.0, 0.5, k);
            // Only this entry's elements are compared: the others' reference is their input.
            for (std::size_t i = 0; i < want.values.size(); ++i)
                if (i / (m * n) != e) want.values[i] = got[i];
            expect_close(got, want, k);
        }
    });
}

// Blocks taken down bands of block rows (band_rows): every block of C once, where the last band
// is shorter and the bands cross batch entries. SIMT tiles on every device, and on NVIDIA GPUs the
// tensor-core kernel's for doubles.
TEST_P(gemm_test, blocks_taken_down_bands_of_rows) {
    const std::vector<std::array<std::size_t, 3>> shapes{{200, 70, 9}, {33, 200, 5}, {97, 97, 17}};
    const auto products = [&] {
        for (const auto& [m, n, k] : shapes) check_product<float>(m, n, k, false, true, 1.0f, 0.5f);
        const std::size_t m = 70, n = 40, k = 3, batch = 3;
        const auto a = uniform_values<float>(batch * m * k, 11),
                   b = uniform_values<float>(batch * k * n, 12);
        const kiln::matrix<float> As(q, m, k, batch, a), Bs(q, k, n, batch, b), Cs(q, m, n, batch);
        kiln::gemm_batched(Cs, As, Bs);
        const std::vector<float> got = Cs.read();
        for (std::size_t e = 0; e < batch; ++e) {
            const host_layout la{m, k, k, e * m * k}, lb{k, n, n, e * k * n},
                lc{m, n, n, e * m * n};
            reference<float> want = host_gemm(a, la, b, lb, got, lc, 1.0, 0.0, k);
            expect_close(got, want, k);
        }
    };
    for (const char* key : {"32x32x8 t2x2 v1 b1", "32x32x8 t2x2 v1 b3"}) {
        const kiln::detail::gemm_simt_tiles simt = *kiln::detail::parse_gemm_simt_tiles(key);
        SCOPED_TRACE("tiles " + simt.key());
        const kiln::detail::scoped_gemm_strategy forced(gemm_strategy::simt);
        const kiln::detail::scoped_algorithm_policy forced_tiles(
            kiln::detail::algorithm::gemm, kiln::detail::gemm_tuning_with(row_tuning(), simt));
        products();
    }
    if (!kiln::detail::has_nvidia_tensor_cores(device().properties()) || !has_double()) return;
    const auto tensor = *kiln::detail::parse_gemm_tensor_tiles("32x32x8 w32x32 s3 b3");
    SCOPED_TRACE("tensor tiles " + tensor.key());
    const kiln::detail::scoped_gemm_strategy forced(gemm_strategy::tensor_cores);
    const kiln::detail::scoped_algorithm_policy forced_tiles(
        kiln::detail::algorithm::gemm, kiln::detail::gemm_tuning_with(row_tuning(), tensor));
    // Even rows, which the kernel copies by 16 bytes: 7, 2 and 4 block rows in bands of 3.
    for (const auto& [m, n, k] :
         {std::array<std::size_t, 3>{200, 70, 10}, {34, 200, 6}, {98, 96, 18}})
        check_product<double>(m, n, k, false, false, 1.0, 0.0);
}

// k = 0: C = beta C; m or n = 0: nothing to do, and no error.
TEST_P(gemm_test, empty_dimensions) {
    on_every_strategy([&] {
        const std::vector<float> c{1, 2, 3, 4, 5, 6};
        const kiln::matrix<float> A(q, 2, 0), B(q, 0, 3), C(q, 2, 3, c);
        kiln::gemm(C, A, B, {.alpha = 2.0f, .beta = 3.0f});
        EXPECT_EQ(C.read(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
        const kiln::matrix<float> none(q, 0, 4), B4(q, 4, 3), empty(q, 0, 3);
        kiln::gemm(empty, none, B4);
        const kiln::matrix<float> A4(q, 2, 4), columnless(q, 4, 0), C0(q, 2, 0);
        kiln::gemm(C0, A4, columnless);
    });
}

TEST_P(gemm_test, nan_and_infinity_propagate) {
    const std::size_t m = 9, n = 70, k = 20;
    std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f);
    a[3 * k + 4] = std::numeric_limits<float>::quiet_NaN();  // row 3 of C
    b[2 * n + 5] = std::numeric_limits<float>::infinity();   // column 5 of C
    on_every_strategy([&] {
        const kiln::matrix<float> A(q, m, k, a), B(q, k, n, b), C(q, m, n);
        // beta 0 does not read C, so NaN there does not reach the result.
        C.write(std::vector<float>(m * n, std::numeric_limits<float>::quiet_NaN()));
        kiln::gemm(C, A, B);
        const std::vector<float> c = C.read();
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const float x = c[i * n + j];
                if (i == 3)
                    EXPECT_TRUE(std::isnan(x)) << i << "," << j;
                else if (j == 5)
                    EXPECT_EQ(x, std::numeric_limits<float>::infinity()) << i << "," << j;
                else
                    EXPECT_EQ(x, 0.125f * float(k)) << i << "," << j;
            }
    });
}

// alpha = 0 reads neither A nor B, as BLAS says: C = beta C even where A holds NaN.
TEST_P(gemm_test, alpha_zero_reads_neither_operand) {
    const std::size_t m = 5, n = 67, k = 3;
    const std::vector<float> a(m * k, std::numeric_limits<float>::quiet_NaN()),
        b(k * n, std::numeric_limits<float>::infinity()), c = uniform_values<float>(m * n, 20);
    on_every_strategy([&] {
        const kiln::matrix<float> A(q, m, k, a), B(q, k, n, b), C(q, m, n, c);
        kiln::gemm(C, kiln::transposed(kiln::transposed(A)), B, {.alpha = 0.0f, .beta = 2.0f});
        std::vector<float> doubled = c;
        for (float& x : doubled) x *= 2;
        EXPECT_EQ(C.read(), doubled);
    });
}

/// Runs `bad`, expecting invalid_argument_error naming `named`, and C (its vector) unchanged.
template <class Bad>
void expect_rejected(const kiln::vector<float>& c, Bad&& bad, const std::string& named) {
    const std::vector<float> before = c.read();
    try {
        bad();
        ADD_FAILURE() << "no error; expected one naming " << named;
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
    EXPECT_EQ(c.read(), before);
}

TEST_P(gemm_test, bad_input_is_rejected_before_any_device_work) {
    const kiln::matrix<float> A(q, 4, 5, uniform_values<float>(20, 12)),
        B(q, 6, 3, uniform_values<float>(18, 13)), B5(q, 5, 3, uniform_values<float>(15, 14));
    const kiln::vector<float> c(q, uniform_values<float>(64, 15));
    const kiln::matrix_view<float> C(c, 4, 3, 3);
    expect_rejected(
        c, [&] { kiln::gemm(C, A, B); }, "inner dimensions differ: op(A) is 4x5, op(B) 6x3");
    expect_rejected(
        c, [&] { kiln::gemm(kiln::matrix_view<float>(c, 4, 4, 4), A, B5); },
        "C is 4x4, op(A) op(B) 4x3");
    expect_rejected(
        c, [&] { kiln::gemm(C, kiln::transposed(A), B5); }, "op(A) is 5x4");
    // C inside A's rows (one vector), and C as A itself.
    expect_rejected(
        c,
        [&] {
            kiln::gemm(kiln::matrix_view<float>(c, 4, 3, 3, 10),
                       kiln::matrix_view<float>(c, 4, 5, 5), B5);
        },
        "C overlaps A");
    const kiln::matrix<float> square(q, 3, 3, uniform_values<float>(9, 16));
    EXPECT_THROW(kiln::gemm(square, square, square), kiln::invalid_argument_error);
    expect_rejected(
        c, [&] { kiln::gemm(C, A, kiln::matrix_view<float>(c, 5, 3, 3, 5)); }, "C overlaps B");
    // Views: leading dimension below the columns, past the vector, extents that overflow.
    expect_rejected(
        c, [&] { kiln::matrix_view<float>(c, 4, 3, 2); }, "leading dimension is below the columns");
    expect_rejected(
        c, [&] { kiln::matrix_view<float>(c, 8, 8, 8, 1); }, "runs past its vector");
    expect_rejected(
        c, [&] { kiln::matrix_view<float>(c, SIZE_MAX / 2, 3, 4); }, "overflows");
    expect_rejected(
        c, [&] { kiln::matrix_view<float>(c, 2, 3, 3, SIZE_MAX - 2); }, "overflows");
    expect_rejected(
        c, [&] { kiln::matrix<float>(q, SIZE_MAX / 2, 3); }, "overflows");
    expect_rejected(
        c, [&] { kiln::matrix<float>(q, 2, 3, std::vector<float>(5)); },
        "needs 6 host elements, got 5");
    // Batches: gemm on batches, and batches that differ.
    const kiln::matrix<float> As(q, 4, 5, 2), Bs(q, 5, 3, 2), Cs(q, 4, 3, 2), Cs3(q, 4, 3, 3);
    expect_rejected(
        c, [&] { kiln::gemm(Cs, As, Bs); }, "use kiln::gemm_batched");
    expect_rejected(
        c, [&] { kiln::gemm_batched(Cs3, As, Bs); }, "batches differ");
}

// Each entry's product writes its own window of C: entries that share an element are refused
// (every strategy wrote some other sum), entries side by side in C's rows are not.
TEST_P(gemm_test, batch_entries_of_c_that_overlap_are_rejected) {
    const std::size_t m = 4, n = 3, k = 5;
    const auto a = uniform_values<float>(2 * m * k, 20), b = uniform_values<float>(2 * k * n, 21);
    const kiln::matrix<float> As(q, m, k, 2, a), Bs(q, k, n, 2, b);
    const kiln::vector<float> c(q, uniform_values<float>(64, 22));
    const auto batched_into = [&](std::size_t leading, std::size_t stride) {
        return [&, leading, stride] {
            kiln::gemm_batched(kiln::matrix_view<float>(c, m, n, leading, 0, 2, stride), As, Bs);
        };
    };
    try {
        batched_into(n, 0)();
        ADD_FAILURE() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("kiln::gemm_batched", 0), 0u) << e.what();
    }
    const std::string overlap = "C's batch entries overlap";
    expect_rejected(c, batched_into(n, 0), overlap);          // every entry on the first
    expect_rejected(c, batched_into(n, 2 * n), overlap);      // entry 1 from entry 0's third row
    expect_rejected(c, batched_into(n, m * n - 1), overlap);  // one element shared
    expect_rejected(c, batched_into(2 * n, n + 1), overlap);  // side by side, one column too close
    // Three entries side by side in rows of 6: entry 2 begins entry 0's second row.
    const kiln::matrix<float> As3(q, 2, k, 3, uniform_values<float>(3 * 2 * k, 24)),
        Bs3(q, k, n, 3, uniform_values<float>(3 * k * n, 25));
    expect_rejected(
        c, [&] { kiln::gemm_batched(kiln::matrix_view<float>(c, 2, n, 2 * n, 0, 3, n), As3, Bs3); },
        "entries 0 and 2 share elements");

    // Side by side in rows of 7, the last column untouched: apart, and each entry's product.
    const std::size_t leading = 2 * n + 1;
    const auto before = uniform_values<float>(m * leading, 23);
    on_every_strategy([&] {
        const kiln::vector<float> side_by_side(q, before);
        kiln::gemm_batched(kiln::matrix_view<float>(side_by_side, m, n, leading, 0, 2, n), As, Bs,
                           {.alpha = 1.0f, .beta = 0.5f});
        reference<float> want{{before.begin(), before.end()}, std::vector<double>(before.size())};
        for (std::size_t e = 0; e < 2; ++e) {
            const host_layout la{m, k, k, e * m * k}, lb{k, n, n, e * k * n},
                lc{m, n, leading, e * n};
            const reference<float> entry = host_gemm(a, la, b, lb, before, lc, 1.0, 0.5, k);
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    const std::size_t at = lc.offset + i * leading + j;
                    want.values[at] = entry.values[at];
                    want.scales[at] = entry.scales[at];
                }
        }
        expect_close(side_by_side.read(), want, k);
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_test);

// Operands on two devices (CTest runs this with POCL_DEVICES="pthread pthread").
class gemm_two_devices : public kiln::test::two_devices_test {};
TEST_F(gemm_two_devices, operands_on_different_devices_are_rejected) {
    const kiln::matrix<float> A(queues[0], 3, 4, uniform_values<float>(12, 17)),
        B(queues[1], 4, 2, uniform_values<float>(8, 18));
    const std::vector<float> c = uniform_values<float>(6, 19);
    const kiln::matrix<float> C(queues[0], 3, 2, c);
    expect_rejected(
        C.data(), [&] { kiln::gemm(C, A, B); }, "operands on different devices");
    // Each named by its kiln-info index: PoCL's two devices share a name.
    try {
        kiln::gemm(C, A, B);
    } catch (const kiln::invalid_argument_error& e) {
        const std::string what = e.what();
        const auto on = [](const kiln::queue& q) {
            return " on device " + std::to_string(q.device().index()) + " (";
        };
        for (const std::string& named :
             {"A" + on(queues[0]), "B" + on(queues[1]), "C" + on(queues[0])})
            EXPECT_NE(what.find(named), std::string::npos) << named << " in " << what;
    }
}

}  // namespace
