// SPDX-License-Identifier: Apache-2.0
// Reproducible mode (docs/reproducibility.md): sums that are the exact sum rounded once, whatever
// the order of the elements, and minima and maxima that order -0 below +0; the golden bits of
// fixed inputs (tests/support/reproducible_inputs.hpp) on every device, on PoCL with one thread
// (algo.reproducible_one_thread) and split over PoCL's CPU shown as two devices
// (algo.reproducible_split). tests/mpi checks the same bits over 2 and 3 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conjugate_gradients.hpp"
#include "spmv_layouts.hpp"
#include "spmv_matrices.hpp"
#include "support/device_param.hpp"
#include "support/exact_sums.hpp"
#include "support/reproducible_inputs.hpp"

namespace {

using kiln::test::are_rounded_once;
using kiln::test::digest_bits;
using kiln::test::exact_integer;
using kiln::test::exact_prefixes;
using kiln::test::exact_sum;
using kiln::test::expect_golden;
using kiln::test::golden_bits;
using kiln::test::golden_inputs;
using kiln::test::hex_bits;
using kiln::test::is_rounded_once;
using kiln::test::is_within_the_bound;
using kiln::test::spread_values;

class reproducible_test : public kiln::test::reproducible_device_test {};

TEST_P(reproducible_test, sums_are_the_exact_sum_rounded_once) {
    // Elements within the three bins below the largest one's: nothing is rounded before the
    // end. Floats of exponents -10 to 20 are whole multiples of 2^-33; doubles of exponents 2 to
    // 12, of 2^-50 (their top bin's lowest grid is 2^-82).
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{131071}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = spread_values<float>(n, -10, 20, n);
        EXPECT_TRUE(
            is_rounded_once(kiln::sum(kiln::vector<float>(q, host)), exact_sum(host, 33), 33));
        // Wider: pairs that cancel from 2^20 down, and values from 2^-40, within the bound.
        const auto cancelling = kiln::test::cancelling_values<float>(n, n + 1);
        EXPECT_TRUE(
            is_within_the_bound(kiln::sum(kiln::vector<float>(q, cancelling)), cancelling, 63));
        if (!has_double()) continue;
        const auto doubles = spread_values<double>(n, 2, 12, n + 2);
        EXPECT_TRUE(is_rounded_once(kiln::sum(kiln::vector<double>(q, doubles)),
                                    exact_sum(doubles, 50), 50));
    }
    EXPECT_EQ(kiln::sum(kiln::vector<float>(q, 0)), 0.0f);
}

TEST_P(reproducible_test, the_mode_is_set_by_a_guard) {
    const auto host = kiln::test::spread_values<float>(100001, -100, 100, 21);
    const kiln::vector<float> x(q, host), y(q, kiln::test::spread_values<float>(100001, -4, 4, 22));
    const kiln::scoped_determinism outer(kiln::determinism::run_to_run);
    // [doc:reproducible_mode]
    kiln::scoped_determinism guard(kiln::determinism::reproducible);  // this thread, in scope
    const float s = kiln::sum(x);        // exact up to a fixed grid, rounded once
    const float d = kiln::sum(x * y);    // each product rounded, then summed as above
    const float low = kiln::minimum(x);  // -0 below +0; NaNs passed over
    // [/doc]
    // The same bits with the elements in another order.
    const kiln::vector<float> reversed(q, std::vector<float>(host.rbegin(), host.rend()));
    EXPECT_EQ(hex_bits(kiln::sum(reversed)), hex_bits(s));
    EXPECT_EQ(hex_bits(kiln::sum(kiln::reverse(reversed) * y)), hex_bits(d));
    EXPECT_EQ(kiln::minimum(reversed), low);
}

TEST_P(reproducible_test, sums_are_at_least_as_accurate_as_the_default) {
    const auto host = kiln::test::cancelling_values<float>(100000, 11);
    const kiln::vector<float> x(q, host);
    const double exact = static_cast<double>(exact_sum(host, 63)) * std::ldexp(1.0, -63);
    const float reproducible = kiln::sum(x);
    float by_default = 0;
    {
        kiln::scoped_determinism default_mode(kiln::determinism::run_to_run);
        by_default = kiln::sum(x);
    }
    EXPECT_LE(std::abs(reproducible - exact), std::abs(by_default - exact))
        << "reproducible " << reproducible << ", default " << by_default << ", exact " << exact;
}

TEST_P(reproducible_test, the_order_of_the_elements_changes_no_bit) {
    // Exponents over most of float's range: the default sum's bits change with the order.
    auto host = spread_values<float>(200003, -120, 120, 12);
    const kiln::vector<float> forward(q, host);
    std::reverse(host.begin(), host.end());
    const kiln::vector<float> backward(q, host);
    std::rotate(host.begin(), host.begin() + 77777, host.end());
    const kiln::vector<float> rotated(q, host);
    const float expected = kiln::sum(forward);
    EXPECT_EQ(hex_bits(kiln::sum(backward)), hex_bits(expected));
    EXPECT_EQ(hex_bits(kiln::sum(rotated)), hex_bits(expected));
    // A view reads the elements in another order again.
    EXPECT_EQ(hex_bits(kiln::sum(kiln::reverse(rotated))), hex_bits(expected));
}

TEST_P(reproducible_test, an_element_far_below_the_largest_rounds_the_same_in_any_order) {
    // 2^90's lowest kept grid is 2^14, onto which 12288 rounds up to 16384, whether it was split
    // before 2^90 raised the bins (in the same work-item or in a state combined later) or after.
    const float big = std::ldexp(1.0f, 90);
    for (const std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{500},
                                 std::size_t{998}, std::size_t{999}}) {
        std::vector<float> host(1000, 0.0f);
        host[at == 0 ? 999 : 0] = big;
        host[at == 1 ? 998 : 1] = -big;
        host[at] = 12288.0f;
        EXPECT_EQ(kiln::sum(kiln::vector<float>(q, host)), 16384.0f) << "12288 at " << at;
    }
}

TEST_P(reproducible_test, special_values_follow_ieee_sums) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto sum_of = [&](std::vector<float> values) {
        return kiln::sum(kiln::vector<float>(q, values));
    };
    EXPECT_EQ(sum_of({1, inf, 2}), inf);
    EXPECT_EQ(sum_of({-inf, 1}), -inf);
    EXPECT_TRUE(std::isnan(sum_of({inf, 1, -inf})));
    EXPECT_TRUE(std::isnan(sum_of({1, nan, 2})));
    // One NaN whatever the payloads.
    EXPECT_EQ(hex_bits(sum_of({std::bit_cast<float>(0xffc00123u)})), hex_bits(nan));
    EXPECT_EQ(hex_bits(sum_of({-0.0f, -0.0f})), hex_bits(0.0f));
    EXPECT_EQ(sum_of({std::numeric_limits<float>::max(), std::numeric_limits<float>::max()}), inf);
    EXPECT_EQ(sum_of({std::numeric_limits<float>::denorm_min(),
                      std::numeric_limits<float>::denorm_min()}),
              2 * std::numeric_limits<float>::denorm_min());
    // 2^31 elements' top digits fill 64 bits: more is refused, before any launch.
    const auto many = kiln::element_index(0, (std::size_t{1} << 31) + 1) * 0.5f;
    EXPECT_THROW(static_cast<void>(kiln::sum(q, many)), kiln::invalid_argument_error);
    if (!has_double()) return;
    const kiln::vector<double> huge(q, std::vector<double>{1.0, std::ldexp(1.0, 973)});
    EXPECT_THROW(kiln::sum(huge), kiln::invalid_argument_error);
    const kiln::vector<double> tiny(
        q, std::vector<double>{std::numeric_limits<double>::denorm_min(), 1e-310, -1e-310});
    EXPECT_EQ(kiln::sum(tiny), std::numeric_limits<double>::denorm_min());
}

TEST_P(reproducible_test, scans_are_each_prefix_rounded_once) {
    // Sizes about a tile (at most 256 x 8 elements), and past 4 x 512 tiles, so that work-items
    // of the tile prefixes' pass take more than 4 tiles each. Elements fit the three bins, as in
    // the sums' test.
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{2047},
                                std::size_t{2049}, std::size_t{600001}, std::size_t{8392705}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = spread_values<float>(n, -10, 20, n + 3);
        const kiln::vector<float> x(q, host), y(q, n);
        kiln::inclusive_scan(x, y);
        EXPECT_TRUE(are_rounded_once(y.read(), exact_prefixes(host, 33, false), 33));
        kiln::exclusive_scan(x, y, 0.75f);
        EXPECT_TRUE(are_rounded_once(y.read(), exact_prefixes(host, 33, true, 0.75f), 33));
        if (!has_double() || n > 1000000) continue;
        const auto doubles = spread_values<double>(n, 2, 12, n + 4);
        const kiln::vector<double> xd(q, doubles), yd(q, n);
        kiln::inclusive_scan(xd, yd);
        EXPECT_TRUE(are_rounded_once(yd.read(), exact_prefixes(doubles, 50, false), 50));
    }
}

TEST_P(reproducible_test, scans_round_ties_and_near_ties_of_their_prefixes_exactly) {
    // A walk of +-1 steps and +-2^-24 and +-2^-60 ones: prefixes land on float midpoints (ties,
    // to even), a hair beside them, and on zero, where a float output's fast path must give way
    // to the exact one.
    const std::vector<float> steps{1.0f,
                                   -1.0f,
                                   std::ldexp(1.0f, -24),
                                   -std::ldexp(1.0f, -24),
                                   std::ldexp(1.0f, -60),
                                   -std::ldexp(1.0f, -60),
                                   std::ldexp(3.0f, -25)};
    std::vector<float> host(30011);
    std::uint64_t state = 5;
    for (float& v : host) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        v = steps[(state >> 33) % steps.size()];
    }
    const kiln::vector<float> x(q, host), y(q, host.size());
    kiln::inclusive_scan(x, y);
    EXPECT_TRUE(are_rounded_once(y.read(), exact_prefixes(host, 60, false), 60));
    kiln::exclusive_scan(x, y, std::ldexp(1.0f, -24));
    EXPECT_TRUE(
        are_rounded_once(y.read(), exact_prefixes(host, 60, true, std::ldexp(1.0f, -24)), 60));
}

TEST_P(reproducible_test, scans_in_place_of_expressions_and_into_16_bit_outputs) {
    const auto host = spread_values<float>(5003, -6, 6, 31);
    const kiln::vector<float> x(q, host), y(q, host.size());
    kiln::inclusive_scan(x * x, y);
    const std::vector<float> of_squares = y.read();
    // [doc:reproducible_scan]
    kiln::scoped_determinism guard(kiln::determinism::reproducible);
    kiln::inclusive_scan(x, x);  // every prefix exact up to its grid, rounded once; in place
    // [/doc]
    std::vector<float> squares(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) squares[i] = host[i] * host[i];
    const kiln::vector<float> squared(q, squares);
    kiln::inclusive_scan(squared, y);
    EXPECT_EQ(y.read(), of_squares);
    kiln::inclusive_scan(kiln::vector<float>(q, host), y);
    EXPECT_EQ(x.read(), y.read());
    // A half output is the float scan rounded once more, to nearest even.
    const kiln::vector<kiln::half> h(q, host.size());
    kiln::inclusive_scan(kiln::vector<float>(q, host), h);
    const std::vector<kiln::half> halves = h.read();
    const std::vector<float> floats = y.read();
    for (std::size_t i = 0; i < host.size(); i += 97)
        EXPECT_EQ(static_cast<float>(halves[i]), static_cast<float>(kiln::half(floats[i]))) << i;
}

TEST_P(reproducible_test, scans_carry_special_values_forward) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto scan_of = [&](std::vector<float> values) {
        kiln::vector<float> y(q, values.size());
        kiln::inclusive_scan(kiln::vector<float>(q, values), y);
        std::vector<std::string> bits;
        for (float v : y.read()) bits.push_back(hex_bits(v));
        return bits;
    };
    const std::vector<std::string> expected{hex_bits(1.0f), hex_bits(inf), hex_bits(nan),
                                            hex_bits(nan), hex_bits(nan)};
    EXPECT_EQ(scan_of({1, inf, -inf, 2, std::bit_cast<float>(0x7fc00077u)}), expected);
    EXPECT_EQ(scan_of({-0.0f, -0.0f}), (std::vector<std::string>{hex_bits(0.0f), hex_bits(0.0f)}));
    if (!has_double()) return;
    const kiln::vector<double> huge(q, std::vector<double>{1.0, std::ldexp(1.0, 973)});
    kiln::vector<double> y(q, 2);
    EXPECT_THROW(kiln::inclusive_scan(huge, y), kiln::invalid_argument_error);
}

/// A CSR matrix on the host (bench/algo/spmv_matrices.hpp's, whose Poisson matrix the CG solve
/// below takes).
using host_matrix = spmv_matrices::csr;

/// 3001 rows of 0 to 40 entries, every 97th of 400 (the long rows of csr_vector and
/// csr_adaptive), over 5000 columns; values from 2^-6 to 2^6, of both signs.
host_matrix golden_matrix() {
    host_matrix m;
    m.rows = 3001;
    m.columns = 5000;
    m.row_pointers.push_back(0);
    std::uint64_t state = 77;
    const auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    for (std::size_t r = 0; r < m.rows; ++r) {
        const std::size_t length = r % 97 == 0 ? 400 : next() % 41;
        for (std::size_t k = 0; k < length; ++k)
            m.column_indices.push_back(static_cast<std::int32_t>(next() % m.columns));
        m.row_pointers.push_back(static_cast<std::int32_t>(m.column_indices.size()));
    }
    m.values = spread_values<float>(m.column_indices.size(), -6, 6, 40);
    return m;
}

/// Each row of A x, its products rounded to float and summed exactly, in units of 2^-shift.
std::vector<exact_integer> exact_rows(const host_matrix& a, const std::vector<float>& x,
                                      int shift) {
    std::vector<exact_integer> rows;
    for (std::size_t r = 0; r < a.rows; ++r) {
        std::vector<float> products;
        for (auto k = a.row_pointers[r]; k < a.row_pointers[r + 1]; ++k)
            products.push_back(a.values[k] * x[a.column_indices[k]]);
        rows.push_back(exact_sum(products, shift));
    }
    return rows;
}

TEST_P(reproducible_test, sparse_products_are_exact_row_sums_rounded_once_in_every_layout) {
    // Products of 2^-12 and more: multiples of 2^-35, within the three bins of any row.
    const host_matrix a = golden_matrix();
    const std::vector<float> x = spread_values<float>(a.columns, -6, 6, 41);
    const std::vector<exact_integer> expected = exact_rows(a, x, 40);
    std::vector<std::string> digests;
    for (const auto& layout : kiln::test::every_layout()) {
        SCOPED_TRACE(kiln::test::describe(layout));
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (layout) forced.emplace(*layout);
        const kiln::sparse_matrix<float> A(q, a.rows, a.columns, a.row_pointers, a.column_indices,
                                           a.values);
        const kiln::vector<float> dx(q, x);
        kiln::vector<float> y(q, a.rows);
        y = A * dx;
        const std::vector<float> got = y.read();
        EXPECT_TRUE(are_rounded_once(got, expected, 40));
        digests.push_back(digest_bits(got));
        EXPECT_EQ(digests.back(), digests.front());
        if (layout) continue;
        // Inside an expression, the row is rounded once, then the rest computed.
        y = 2.0f * (A * dx) - 1.0f;
        const std::vector<float> scaled = y.read();
        for (std::size_t r = 0; r < a.rows; r += 101)
            EXPECT_EQ(scaled[r], 2.0f * got[r] - 1.0f) << "row " << r;
    }
    EXPECT_EQ(digests.front(), golden_bits("A * x"));
}

TEST_P(reproducible_test, element_wise_statements_round_every_product) {
    // Contraction into a * b + c in one rounding is off: every device rounds a * b, then adds.
    const std::size_t n = 100003;
    const auto a = spread_values<float>(n, -4, 4, 51), b = spread_values<float>(n, -4, 4, 52),
               c = spread_values<float>(n, -8, 8, 53);
    const kiln::vector<float> da(q, a), db(q, b), dc(q, c);
    kiln::vector<float> y(q, n);
    y = da * db + dc;
    const std::vector<float> got = y.read();
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
        volatile float product = a[i] * b[i];
        if (hex_bits(got[i]) != hex_bits(product + c[i])) ++differ;
    }
    EXPECT_EQ(differ, 0u);
}

TEST_P(reproducible_test, a_conjugate_gradient_solve_gives_the_golden_bits) {
    // examples/expr/cg_poisson.cpp's iteration, 40 steps on 24 x 24 points: sparse products,
    // dot products and element-wise updates, every one the same bits on every device.
    const host_matrix a = spmv_matrices::poisson_2d(24);
    const kiln::sparse_matrix<float> A(q, a.rows, a.columns, a.row_pointers, a.column_indices,
                                       a.values);
    const kiln::vector<float> f(q, spread_values<float>(a.rows, -2, 2, 61));
    kiln::vector<float> u(q, a.rows);
    EXPECT_EQ(kiln::examples::conjugate_gradients(A, f, u, 0.0, 40, [](int, double) {}), 40);
    EXPECT_EQ(digest_bits(u.read()), golden_bits("cg(poisson 24, 40 iterations)"));
}

/// C = alpha A B + beta C as the reproducible gemm computes it: each element summed in k's
/// order from 0, every product and sum rounded in T (volatile: no contraction on the host).
template <class T>
std::vector<T> gemm_in_k_order(const std::vector<T>& a, const std::vector<T>& b,
                               const std::vector<T>& c, std::size_t m, std::size_t n, std::size_t k,
                               T alpha, T beta) {
    std::vector<T> out(m * n);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            volatile T sum = 0;
            for (std::size_t p = 0; p < k; ++p) {
                volatile T product = a[i * k + p] * b[p * n + j];
                sum = sum + product;
            }
            volatile T scaled = alpha * sum, kept = beta * c[i * n + j];
            out[i * n + j] = scaled + kept;
        }
    return out;
}

template <class T>
void expect_gemm_in_k_order(const kiln::queue& q) {
    const std::size_t m = 67, n = 45, k = 301;
    const auto a = spread_values<T>(m * k, -4, 4, 71), b = spread_values<T>(k * n, -4, 4, 72),
               c = spread_values<T>(m * n, -4, 4, 73);
    const kiln::matrix<T> A(q, m, k, a), B(q, k, n, b), C(q, m, n, c);
    kiln::gemm(C, A, B, {.alpha = T(1.5), .beta = T(-0.5)});
    const std::vector<T> got = C.read(),
                         expected = gemm_in_k_order(a, b, c, m, n, k, T(1.5), T(-0.5));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (hex_bits(got[i]) != hex_bits(expected[i])) ++differ;
    EXPECT_EQ(differ, 0u) << "of " << got.size();
}

TEST_P(reproducible_test, gemm_sums_each_element_in_k_order_with_rounded_products) {
    // The host's own loop is the golden result: every device and tile shape must give its bits.
    expect_gemm_in_k_order<float>(q);
    if (has_double()) expect_gemm_in_k_order<double>(q);
}

TEST_P(reproducible_test, minimum_and_maximum_order_minus_zero_below_plus_zero) {
    const kiln::vector<float> zeros(q, std::vector<float>{0.0f, -0.0f, 0.0f});
    EXPECT_EQ(hex_bits(kiln::minimum(zeros)), hex_bits(-0.0f));
    EXPECT_EQ(hex_bits(kiln::maximum(zeros)), hex_bits(0.0f));
    const kiln::vector<float> other_order(q, std::vector<float>{-0.0f, 0.0f, 0.0f});
    EXPECT_EQ(hex_bits(kiln::minimum(other_order)), hex_bits(-0.0f));
    EXPECT_EQ(hex_bits(kiln::maximum(other_order)), hex_bits(0.0f));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const kiln::vector<float> with_nan(q, std::vector<float>{nan, 3, -2, nan});
    EXPECT_EQ(kiln::minimum(with_nan), -2.0f);
    EXPECT_EQ(kiln::maximum(with_nan), 3.0f);
    const kiln::vector<float> only_nan(q, std::vector<float>{std::bit_cast<float>(0x7fc00042u)});
    EXPECT_EQ(hex_bits(kiln::minimum(only_nan)), hex_bits(nan));
}

/// The golden operations on vectors made by `make` (on one device, or split), by name.
template <class Make>
std::map<std::string, std::string> golden_operations(Make&& make, bool with_double) {
    const golden_inputs in;
    std::map<std::string, std::string> got;
    const auto uniform = make(in.uniform), wide = make(in.wide), cancelling = make(in.cancelling),
               factors = make(in.factors);
    got["sum(uniform)"] = hex_bits(kiln::sum(uniform));
    got["sum(wide)"] = hex_bits(kiln::sum(wide));
    got["sum(cancelling)"] = hex_bits(kiln::sum(cancelling));
    got["sum(uniform * factors)"] = hex_bits(kiln::sum(uniform * factors));
    got["sum(3 * uniform - factors * factors)"] =
        hex_bits(kiln::sum(3 * uniform - factors * factors));
    got["minimum(wide)"] = hex_bits(kiln::minimum(wide));
    got["maximum(wide)"] = hex_bits(kiln::maximum(wide));
    const auto scanned = make(std::vector<float>(in.wide.size()));
    kiln::inclusive_scan(wide, scanned);
    const std::vector<float> prefixes = scanned.read();
    got["inclusive_scan(wide)"] = digest_bits(prefixes);
    EXPECT_EQ(hex_bits(prefixes.back()), got["sum(wide)"]) << "the last prefix is the sum";
    const auto scanned_cancelling = make(std::vector<float>(in.cancelling.size()));
    kiln::exclusive_scan(cancelling, scanned_cancelling, 0.5f);
    got["exclusive_scan(cancelling, 0.5)"] = digest_bits(scanned_cancelling.read());
    kiln::inclusive_scan(uniform * factors, scanned);
    got["inclusive_scan(uniform * factors)"] = digest_bits(scanned.read());
    if (!with_double) return got;
    const auto uniform_double = make(in.uniform_double), wide_double = make(in.wide_double),
               cancelling_double = make(in.cancelling_double),
               factors_double = make(in.factors_double);
    got["sum(uniform_double)"] = hex_bits(kiln::sum(uniform_double));
    got["sum(wide_double)"] = hex_bits(kiln::sum(wide_double));
    got["sum(cancelling_double)"] = hex_bits(kiln::sum(cancelling_double));
    got["sum(uniform_double * factors_double)"] =
        hex_bits(kiln::sum(uniform_double * factors_double));
    got["minimum(wide_double)"] = hex_bits(kiln::minimum(wide_double));
    got["maximum(wide_double)"] = hex_bits(kiln::maximum(wide_double));
    const auto scanned_double = make(std::vector<double>(in.wide_double.size()));
    kiln::inclusive_scan(wide_double, scanned_double);
    got["inclusive_scan(wide_double)"] = digest_bits(scanned_double.read());
    const auto scanned_cancelling_double = make(std::vector<double>(in.cancelling_double.size()));
    kiln::exclusive_scan(cancelling_double, scanned_cancelling_double, -0.25);
    got["exclusive_scan(cancelling_double, -0.25)"] = digest_bits(scanned_cancelling_double.read());
    return got;
}

TEST_P(reproducible_test, golden_inputs_give_the_golden_bits) {
    expect_golden(golden_operations(kiln::test::on_queue(q), has_double()));
}

TEST(reproducible_mode, scoped_guards_nest_and_restore) {
    const kiln::determinism outside = kiln::current_determinism();
    {
        kiln::scoped_determinism reproducible(kiln::determinism::reproducible);
        EXPECT_EQ(kiln::current_determinism(), kiln::determinism::reproducible);
        {
            kiln::scoped_determinism inner(kiln::determinism::run_to_run);
            EXPECT_EQ(kiln::current_determinism(), kiln::determinism::run_to_run);
        }
        EXPECT_EQ(kiln::current_determinism(), kiln::determinism::reproducible);
    }
    EXPECT_EQ(kiln::current_determinism(), outside);
    // algo.reproducible_environment runs this with KILN_DETERMINISM=reproducible.
    const char* mode = std::getenv("KILN_DETERMINISM");
    EXPECT_EQ(outside, mode != nullptr && std::string(mode) == "reproducible"
                           ? kiln::determinism::reproducible
                           : kiln::determinism::run_to_run);
}

class reproducible_split : public kiln::test::two_devices_test {};

TEST_F(reproducible_split, a_vector_split_over_two_devices_gives_the_golden_bits) {
    kiln::scoped_determinism reproducible(kiln::determinism::reproducible);
    const bool with_double = queues[0].device().properties().double_precision &&
                             queues[1].device().properties().double_precision;
    expect_golden(golden_operations(
        [&](const auto& host) {
            kiln::vector<typename std::decay_t<decltype(host)>::value_type> v(queues, host);
            EXPECT_EQ(v.part_count(), 2u);
            return v;
        },
        with_double));
}

TEST_F(reproducible_split, a_matrix_split_over_two_devices_gives_the_golden_bits) {
    kiln::scoped_determinism reproducible(kiln::determinism::reproducible);
    const host_matrix a = golden_matrix();
    const kiln::sparse_matrix<float> A(queues, a.rows, a.columns, a.row_pointers, a.column_indices,
                                       a.values);
    const kiln::vector<float> x(queues, spread_values<float>(a.columns, -6, 6, 41));
    kiln::vector<float> y(queues, std::vector<float>(a.rows));
    y = A * x;
    EXPECT_EQ(digest_bits(y.read()), golden_bits("A * x"));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reproducible_test);

}  // namespace
