// SPDX-License-Identifier: Apache-2.0
// kiln::gemm with kiln::float8_e4m3 and kiln::float8_e5m2 inputs (A and B each either), per-tensor
// scales and a float, bfloat16 or half C, on every device through every strategy it can run:
// against a double host reference of the exactly converted values, within the bound
// docs/linear_algebra.md promises; NaN and infinity propagate, k = 0, views, batches, an
// epilogue, and bad input is refused before any device work.
#include "algo/gemm/gemm_float8.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <kiln/kiln.hpp>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "algo/gemm/gemm_plan.hpp"
#include "algo/gemm/gemm_strategies.hpp"
#include "algo/gemm_feeds.hpp"
#include "algo/written_devices.hpp"
#include "support/device_param.hpp"
#include "support/reference_dot.hpp"
#include "support/uniform_values.hpp"

namespace {

using kiln::bfloat16;
using kiln::float8_e4m3;
using kiln::float8_e5m2;
using kiln::half;
using kiln::detail::gemm_element;
using kiln::detail::gemm_strategy;
using kiln::test::uniform_values;

template <class T>
double value_of(T x) {
    return double(float(x));
}

/// An operand as it lies in its vector: rows x columns from `offset`, rows `leading` apart,
/// batch entries `stride` apart; the product reads its transpose where `transposed`.
struct layout {
    std::size_t rows, columns, leading, offset = 0, stride = 0;
    bool transposed = false;
    std::size_t size(std::size_t batch) const {
        return offset + (batch - 1) * stride + (rows - 1) * leading + columns;
    }
};

/// op(X)(i, p) of batch entry e.
template <class T>
double op_at(const std::vector<T>& x, const layout& l, std::size_t e, std::size_t i,
             std::size_t p) {
    const std::size_t r = l.transposed ? p : i, c = l.transposed ? i : p;
    return value_of(x[l.offset + e * l.stride + r * l.leading + c]);
}

/// The scalars of one product.
struct scalars {
    float alpha = 1, beta = 0, scale_a = 1, scale_b = 1;
    /// gemm_options::allow_float8_fast_accumulation
    bool fast_accumulation = false;
};

/// Checks `got` (m x n per entry, dense) against alpha (scale_a op(A)) (scale_b op(B)) + beta
/// C_old computed in double from the exactly converted elements, then `epilogue` (1-Lipschitz,
/// so that the bound carries), within the bound of docs/linear_algebra.md: FP8 products are
/// exact in float, so only the float accumulation rounds, 4 (k + 2) eps_float (|alpha scale_a
/// scale_b| sum |a| |b| + |beta c|), and a 16-bit C adds its own rounding.
template <class TA, class TB, class Out>
void expect_product(const std::vector<Out>& got, const std::vector<TA>& a, const layout& la,
                    const std::vector<TB>& b, const layout& lb, const std::vector<Out>& c_old,
                    std::size_t m, std::size_t n, std::size_t k, std::size_t batch,
                    const scalars& s,
                    const std::function<double(double, std::size_t)>& epilogue = {}) {
    double unit_roundoff = 0, smallest = 0;
    if constexpr (!std::is_same_v<Out, float>) {
        unit_roundoff = value_of(std::numeric_limits<Out>::epsilon()) / 2;
        smallest = value_of(std::numeric_limits<Out>::min());
    }
    const double scale = double(s.alpha) * double(s.scale_a) * double(s.scale_b);
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < batch; ++e)
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const auto [sum, magnitude] = kiln::test::reference_dot(
                    k, [&](std::size_t p) { return op_at(a, la, e, i, p); },
                    [&](std::size_t p) { return op_at(b, lb, e, p, j); });
                const std::size_t at = e * m * n + i * n + j;
                const double old = s.beta == 0 ? 0.0 : value_of(c_old[at]);
                double want = scale * sum + double(s.beta) * old;
                if (epilogue) want = epilogue(want, j);
                // Fast accumulation: 2^-12 of the products' magnitude per k32 step.
                const double fast =
                    s.fast_accumulation
                        ? double((k + 31) / 32) * std::ldexp(std::abs(scale) * magnitude, -12)
                        : 0.0;
                const double bound =
                    (4.0 * double(k + 2) * double(std::numeric_limits<float>::epsilon()) *
                         (std::abs(scale) * magnitude + std::abs(s.beta * old)) +
                     fast) *
                        (1 + unit_roundoff) +
                    unit_roundoff * std::max(std::abs(want), smallest);
                if (!(std::abs(value_of(got[at]) - want) <= bound) && wrong++ < 5)
                    ADD_FAILURE() << "C(" << e << ", " << i << ", " << j
                                  << ") = " << value_of(got[at]) << ", reference " << want
                                  << " (bound " << bound << ")";
            }
}

class gemm_float8_test : public kiln::test::device_queue_test {
  protected:
    /// `body` with each strategy the device runs forced (the 16-bit and float ones the widened
    /// operands take), and wgmma's other feeds and schedules beside the row's tile maps.
    template <class Body>
    void on_every_strategy(Body&& body) {
        for (gemm_strategy s : kiln::detail::gemm_strategies_for(device())) {
            SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
            const kiln::detail::scoped_gemm_strategy forced(s);
            body();
            // The row's feed above (tile maps); the others too.
            if (s == gemm_strategy::warpgroup_mma)
                kiln::test::with_other_warpgroup_feeds(device(), body);
        }
    }

    /// C (m x n, of Out) = alpha (scale_a op(A)) (scale_b op(B)) + beta C for dense A of TA and
    /// B of TB, read transposed where ta (tb).
    template <class TA, class TB, class Out>
    void check_product(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb,
                       const scalars& s) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     (ta ? " Aᵀ" : "") + (tb ? " Bᵀ" : ""));
        const layout la{ta ? k : m, ta ? m : k, ta ? m : k, 0, 0, ta},
            lb{tb ? n : k, tb ? k : n, tb ? k : n, 0, 0, tb};
        const auto a = uniform_values<TA>(m * k, 1);
        const auto b = uniform_values<TB>(k * n, 2);
        const auto c = uniform_values<Out>(m * n, 3);
        const kiln::matrix<TA> A(q, la.rows, la.columns, a);
        const kiln::matrix<TB> B(q, lb.rows, lb.columns, b);
        const kiln::matrix<Out> C(q, m, n, c);
        const kiln::gemm_options<float> options{
            .alpha = s.alpha,
            .beta = s.beta,
            .scale_a = s.scale_a,
            .scale_b = s.scale_b,
            .allow_float8_fast_accumulation = s.fast_accumulation};
        if (ta && tb)
            kiln::gemm(C, kiln::transposed(A), kiln::transposed(B), options);
        else if (ta)
            kiln::gemm(C, kiln::transposed(A), B, options);
        else if (tb)
            kiln::gemm(C, A, kiln::transposed(B), options);
        else
            kiln::gemm(C, A, B, options);
        expect_product(C.read(), a, la, b, lb, c, m, n, k, 1, s);
    }
};

// 1 and primes, sizes around the SIMT, CPU and tensor-core tiles; each output type.
TEST_P(gemm_float8_test, edge_tiles_of_every_size_and_output) {
    const std::vector<std::array<std::size_t, 3>> shapes{
        {1, 1, 1}, {5, 3, 1}, {17, 9, 15}, {65, 63, 9}, {131, 37, 67}, {129, 130, 33}};
    on_every_strategy([&] {
        for (const auto& [m, n, k] : shapes) {
            check_product<float8_e4m3, float8_e4m3, float>(m, n, k, false, false, {});
            check_product<float8_e5m2, float8_e5m2, bfloat16>(m, n, k, false, false, {});
            check_product<float8_e4m3, float8_e5m2, half>(m, n, k, false, false, {});
            check_product<float8_e4m3, float8_e4m3, float8_e4m3>(m, n, k, false, false, {});
            check_product<float8_e5m2, float8_e4m3, float8_e5m2>(m, n, k, false, false, {});
        }
    });
}

// Mixed formats, every pair of layouts, scales that are not powers of two, alpha and beta.
TEST_P(gemm_float8_test, mixed_formats_transposes_scales_alpha_and_beta) {
    on_every_strategy([&] {
        for (const bool ta : {false, true})
            for (const bool tb : {false, true}) {
                check_product<float8_e4m3, float8_e5m2, float>(
                    67, 45, 33, ta, tb,
                    {.alpha = 2.0f, .beta = 1.0f, .scale_a = 0.375f, .scale_b = 3.3f});
                check_product<float8_e5m2, float8_e4m3, bfloat16>(
                    40, 72, 48, ta, tb,
                    {.alpha = -0.5f, .beta = 0.25f, .scale_a = 1.7f, .scale_b = 0.0625f});
            }
        check_product<float8_e4m3, float8_e4m3, half>(
            33, 20, 70, true, false,
            {.alpha = 1.5f, .beta = -1.0f, .scale_a = 12.0f, .scale_b = 0.3f});
    });
}

// allow_float8_fast_accumulation: on Hopper through CUDA the FP8 tensor cores read the operands
// as they are (copied with k inner where they lie otherwise), each k32 step summed with about 14
// bits (errors to 2^-14 of the products' magnitude at k = 9 on an H200), so the bound grows by
// 2^-12 of |alpha scale_a scale_b| sum |a| |b| per step. Elsewhere the option changes nothing.
TEST_P(gemm_float8_test, fast_accumulation_on_float8_tensor_cores) {
    const std::vector<std::array<std::size_t, 3>> shapes{
        {1, 1, 1}, {17, 9, 15}, {65, 63, 9}, {131, 37, 67}, {129, 130, 33}, {64, 256, 300}};
    on_every_strategy([&] {
        for (const auto& [m, n, k] : shapes)
            for (const bool ta : {false, true})
                for (const bool tb : {false, true})
                    check_product<float8_e4m3, float8_e5m2, bfloat16>(m, n, k, ta, tb,
                                                                      {.alpha = 2.0f,
                                                                       .beta = 0.5f,
                                                                       .scale_a = 0.375f,
                                                                       .fast_accumulation = true});
        check_product<float8_e5m2, float8_e4m3, float>(40, 72, 48, false, true,
                                                       {.fast_accumulation = true});
        // k = 0: C = beta C, each operand given memory for its tile map by the copies.
        const kiln::matrix<float8_e4m3> A(q, 2, 0);
        const kiln::matrix<float8_e5m2> B(q, 0, 3);
        const kiln::matrix<float> C(q, 2, 3, std::vector<float>{1, 2, 3, 4, 5, 6});
        kiln::gemm(C, A, B, {.beta = 3.0f, .allow_float8_fast_accumulation = true});
        EXPECT_EQ(C.read(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
    });
}

// The guide's example: e4m3 times e5m2 into bfloat16, each operand with its scale.
TEST_P(gemm_float8_test, scaled_product_into_bfloat16) {
    const std::size_t m = 48, n = 40, k = 96;
    const auto host_a = uniform_values<float8_e4m3>(m * k, 4);
    const auto host_b = uniform_values<float8_e5m2>(k * n, 5);
    const float scale_a = 0.02f, scale_b = 7.5f;
    // [doc:gemm_float8]
    const kiln::matrix<kiln::float8_e4m3> A(q, m, k, host_a);  // 1 byte an element
    const kiln::matrix<kiln::float8_e5m2> B(q, k, n, host_b);
    const kiln::matrix<kiln::bfloat16> C(q, m, n);
    kiln::gemm(C, A, B, {.alpha = 1.0f, .scale_a = scale_a, .scale_b = scale_b});
    // [/doc]
    expect_product(C.read(), host_a, layout{m, k, k}, host_b, layout{k, n, n},
                   std::vector<bfloat16>(), m, n, k, 1, {.scale_a = scale_a, .scale_b = scale_b});
}

// E4M3's NaN makes its row of C NaN; E5M2's infinity its column infinite (the other factors
// positive), on every output type.
TEST_P(gemm_float8_test, nan_and_infinity_propagate) {
    const std::size_t m = 3, n = 4, k = 5;
    std::vector<float8_e4m3> a(m * k, float8_e4m3(0.5f));
    std::vector<float8_e5m2> b(k * n, float8_e5m2(1.5f));
    a[1 * k + 2] = std::numeric_limits<float8_e4m3>::quiet_NaN();
    b[3 * n + 2] = std::numeric_limits<float8_e5m2>::infinity();
    const auto check = [&](const auto& got) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const double x = value_of(got[i * n + j]);
                if (i == 1)
                    EXPECT_TRUE(std::isnan(x)) << i << " " << j << ": " << x;
                else if (j == 2)
                    EXPECT_EQ(x, std::numeric_limits<double>::infinity()) << i << " " << j;
                else
                    EXPECT_EQ(x, 2.0 * 5 * 0.5 * 1.5) << i << " " << j;
            }
    };
    on_every_strategy([&] {
        const kiln::matrix<float8_e4m3> A(q, m, k, a);
        const kiln::matrix<float8_e5m2> B(q, k, n, b);
        const kiln::matrix<float> C(q, m, n);
        const kiln::matrix<bfloat16> C16(q, m, n);
        const kiln::matrix<half> Ch(q, m, n);
        const kiln::gemm_options<float> options{.scale_a = 4.0f, .scale_b = 0.5f};
        kiln::gemm(C, A, B, options);
        kiln::gemm(C16, A, B, options);
        kiln::gemm(Ch, A, B, options);
        check(C.read());
        check(C16.read());
        check(Ch.read());
    });
}

// k = 0 gives beta C; alpha = 0 or a scale of 0 reads neither A nor B (BLAS's rule), so that
// their NaN does not reach C.
TEST_P(gemm_float8_test, empty_inner_dimension_and_zero_scales) {
    const std::vector<float> c{1, 2, 3, 4, 5, 6};
    on_every_strategy([&] {
        const kiln::matrix<float8_e4m3> A(q, 2, 0), An(q, 2, 1, std::vector<float8_e4m3>(2));
        const kiln::matrix<float8_e5m2> B(q, 0, 3), Bn(q, 1, 3, std::vector<float8_e5m2>(3));
        const kiln::matrix<float> C(q, 2, 3, c);
        kiln::gemm(C, A, B, {.alpha = 2.0f, .beta = 3.0f, .scale_a = 4.0f, .scale_b = 5.0f});
        EXPECT_EQ(C.read(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
        An.write(std::vector<float8_e4m3>(2, std::numeric_limits<float8_e4m3>::quiet_NaN()));
        kiln::gemm(C, An, Bn, {.alpha = 1.0f, .beta = 0.5f, .scale_a = 0.0f});
        EXPECT_EQ(C.read(), (std::vector<float>{1.5, 3, 4.5, 6, 7.5, 9}));
        kiln::gemm(C, An, Bn, {.alpha = 0.0f, .beta = 2.0f, .scale_b = 3.0f});
        EXPECT_EQ(C.read(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
    });
}

// A view at an odd offset with rows of odd length, and batches, with scales.
TEST_P(gemm_float8_test, unaligned_views_and_batches) {
    const std::size_t m = 37, n = 29, k = 43, batch = 3;
    const layout la{m, k, k + 3, 5}, lb{k, n, n};
    const auto a = uniform_values<float8_e5m2>(la.size(1), 6);
    const auto b = uniform_values<float8_e4m3>(lb.size(1), 7);
    const layout las{m, 24, 24, 0, m * 24}, lbs{24, n, n, 0, 24 * n};
    const auto as = uniform_values<float8_e4m3>(las.size(batch), 8);
    const auto bs = uniform_values<float8_e4m3>(lbs.size(batch), 9);
    const scalars s{.alpha = 1.0f, .scale_a = 0.75f, .scale_b = 2.5f};
    on_every_strategy([&] {
        const kiln::matrix<float8_e5m2> A(q, 1, a.size(), a);
        const kiln::matrix<float8_e4m3> B(q, k, n, b);
        const kiln::matrix<float> C(q, m, n);
        const kiln::gemm_options<float> options{.scale_a = s.scale_a, .scale_b = s.scale_b};
        kiln::gemm(C, kiln::matrix_view<float8_e5m2>(A.data(), m, k, la.leading, la.offset), B,
                   options);
        expect_product(C.read(), a, la, b, lb, std::vector<float>(), m, n, k, 1, s);
        const kiln::matrix<float8_e4m3> As(q, m, 24, batch, as), Bs(q, 24, n, batch, bs);
        const kiln::matrix<bfloat16> Cs(q, m, n, batch);
        kiln::gemm_batched(Cs, As, Bs, options);
        expect_product(Cs.read(), as, las, bs, lbs, std::vector<bfloat16>(), m, n, 24, batch, s);
    });
}

// A bias per column and a ReLU on the scaled product, rounded once to bfloat16.
TEST_P(gemm_float8_test, epilogue_sees_the_scaled_product) {
    const std::size_t m = 45, n = 70, k = 39;
    const auto a = uniform_values<float8_e4m3>(m * k, 10);
    const auto b = uniform_values<float8_e5m2>(k * n, 11);
    const auto c = uniform_values<bfloat16>(m * n, 12);
    const auto host_bias = uniform_values<float>(n, 13);
    const scalars s{.alpha = 0.5f, .beta = 2.0f, .scale_a = 3.0f, .scale_b = 0.6f};
    on_every_strategy([&] {
        const kiln::matrix<float8_e4m3> A(q, m, k, a);
        const kiln::matrix<float8_e5m2> B(q, k, n, b);
        const kiln::matrix<bfloat16> C(q, m, n, c);
        const kiln::vector<float> bias(q, host_bias);
        kiln::gemm(C, A, B,
                   {.alpha = s.alpha, .beta = s.beta, .scale_a = s.scale_a, .scale_b = s.scale_b},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias), {
                       (void)row;
                       return fmax(value + bias[column], 0.0f);
                   }));
        expect_product(C.read(), a, layout{m, k, k}, b, layout{k, n, n}, c, m, n, k, 1, s,
                       [&](double value, std::size_t column) {
                           return std::max(value + double(host_bias[column]), 0.0);
                       });
    });
}

// FP8 outputs: the product in float, rounded once into C. C is a batched view at an odd offset
// with rows longer than its columns, whose gaps keep their bits; beta reads C's old values; an
// E5M2 C takes an epilogue, and beta 0 reads nothing.
TEST_P(gemm_float8_test, float8_outputs_are_rounded_once) {
    const std::size_t m = 37, n = 29, k = 43, batch = 2, leading = n + 3, offset = 5;
    const std::size_t c_stride = m * leading;
    const layout la{m, k, k, 0, m * k}, lb{k, n, n, 0, k * n};
    const auto a = uniform_values<float8_e4m3>(la.size(batch), 14);
    const auto b = uniform_values<float8_e5m2>(lb.size(batch), 15);
    const auto c = uniform_values<float8_e4m3>(batch * m * n, 16);
    std::vector<float8_e4m3> c_store(offset + batch * c_stride, float8_e4m3(7.0f));
    const auto at = [&](std::size_t e, std::size_t i, std::size_t j) {
        return offset + e * c_stride + i * leading + j;
    };
    for (std::size_t e = 0; e < batch; ++e)
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c_store[at(e, i, j)] = c[(e * m + i) * n + j];
    const scalars s{.alpha = 0.5f, .beta = 0.75f, .scale_a = 1.5f, .scale_b = 0.5f};
    const scalars plain{.alpha = 2.0f};
    const auto host_bias = uniform_values<float>(n, 17);
    on_every_strategy([&] {
        const kiln::matrix<float8_e4m3> As(q, m, k, batch, a);
        const kiln::matrix<float8_e5m2> Bs(q, k, n, batch, b);
        const kiln::matrix<float8_e4m3> store(q, 1, c_store.size(), c_store);
        kiln::gemm_batched(
            kiln::matrix_view<float8_e4m3>(store.data(), m, n, leading, offset, batch, c_stride),
            As, Bs, {.alpha = s.alpha, .beta = s.beta, .scale_a = s.scale_a, .scale_b = s.scale_b});
        const std::vector<float8_e4m3> stored = store.read();
        std::vector<float8_e4m3> got(batch * m * n);
        std::vector<bool> in_view(stored.size(), false);
        for (std::size_t e = 0; e < batch; ++e)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    got[(e * m + i) * n + j] = stored[at(e, i, j)];
                    in_view[at(e, i, j)] = true;
                }
        for (std::size_t x = 0; x < stored.size(); ++x) {
            if (!in_view[x]) {
                ASSERT_EQ(stored[x].bits(), c_store[x].bits()) << "gap " << x;
            }
        }
        expect_product(got, a, la, b, lb, c, m, n, k, batch, s);

        // The first batch entries of A and B.
        const kiln::matrix<float8_e4m3> A(q, m, k, std::span<const float8_e4m3>(a).first(m * k));
        const kiln::matrix<float8_e5m2> B(q, k, n, std::span<const float8_e5m2>(b).first(k * n));
        const kiln::matrix<float8_e5m2> C(q, m, n);
        const kiln::vector<float> bias(q, host_bias);
        kiln::gemm(C, A, B, {.alpha = plain.alpha},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias), {
                       (void)row;
                       return fmax(value + bias[column], 0.0f);
                   }));
        expect_product(C.read(), a, layout{m, k, k}, b, layout{k, n, n}, std::vector<float8_e5m2>(),
                       m, n, k, 1, plain, [&](double value, std::size_t column) {
                           return std::max(value + double(host_bias[column]), 0.0);
                       });
    });
}

TEST_P(gemm_float8_test, bad_input_is_rejected_before_any_device_work) {
    const kiln::matrix<float8_e4m3> A(q, 4, 5, uniform_values<float8_e4m3>(20, 14));
    const kiln::matrix<float8_e5m2> B(q, 5, 3, uniform_values<float8_e5m2>(15, 15)),
        B6(q, 6, 3, uniform_values<float8_e5m2>(18, 16));
    const kiln::matrix<float> C(q, 4, 3, std::vector<float>(12, 7.0f));
    const kiln::matrix<float> F(q, 4, 5, uniform_values<float>(20, 17)),
        G(q, 5, 3, uniform_values<float>(15, 18));
    const auto expect_error = [&](const std::function<void()>& call, const std::string& text) {
        try {
            call();
            ADD_FAILURE() << "no error; expected " << text;
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        }
        EXPECT_EQ(C.read(), std::vector<float>(12, 7.0f));
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float infinity = std::numeric_limits<float>::infinity();
    expect_error([&] { kiln::gemm(C, A, B6); }, "inner dimensions differ: op(A) is 4x5, op(B) 6x3");
    expect_error([&] { kiln::gemm(C, A, B, {.scale_a = nan}); },
                 "scale_a is nan (A (4x5)): a per-tensor scale must be finite");
    expect_error([&] { kiln::gemm(C, A, B, {.scale_b = -infinity}); },
                 "scale_b is -inf (B (5x3)): a per-tensor scale must be finite");
    expect_error([&] { kiln::gemm(C, F, G, {.scale_b = 2.0f}); },
                 "scale_b is 2 but B (5x3) holds f32: per-tensor scales are for FP8 "
                 "operands");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_float8_test);

// FP8 inputs take a float or 16-bit C; FP8 with another input type, and FP8 or double C, do
// not compile.
template <class C, class A, class B>
concept multipliable = requires(const C& c, const A& a, const B& b) {
    kiln::gemm(c, a, b);
};
using e4m3_matrix = kiln::matrix<float8_e4m3>;
using e5m2_matrix = kiln::matrix<float8_e5m2>;
static_assert(multipliable<kiln::matrix<float>, e4m3_matrix, e4m3_matrix>);
static_assert(multipliable<kiln::matrix<float>, e4m3_matrix, e5m2_matrix>);
static_assert(multipliable<kiln::matrix<bfloat16>, kiln::transposed_matrix<float8_e5m2>,
                           kiln::matrix_view<float8_e4m3>>);
static_assert(multipliable<kiln::matrix<half>, e5m2_matrix, e5m2_matrix>);
static_assert(!multipliable<kiln::matrix<double>, e4m3_matrix, e4m3_matrix>);
static_assert(!multipliable<kiln::matrix<float>, e4m3_matrix, kiln::matrix<double>>);
static_assert(!multipliable<kiln::matrix<float>, e4m3_matrix, kiln::matrix<bfloat16>>);
static_assert(!multipliable<kiln::matrix<float>, kiln::matrix<float>, e5m2_matrix>);
static_assert(multipliable<e4m3_matrix, e4m3_matrix, e4m3_matrix>);
static_assert(multipliable<e5m2_matrix, e4m3_matrix, e5m2_matrix>);
static_assert(!multipliable<e4m3_matrix, kiln::matrix<float>, kiln::matrix<float>>);
static_assert(!multipliable<e5m2_matrix, kiln::matrix<bfloat16>, kiln::matrix<bfloat16>>);

// What FP8 operands widen to: C's 16-bit type, else float on CPUs and bfloat16 elsewhere.
TEST(gemm_float8_widening, the_type_the_strategies_take) {
    using kiln::detail::widened_element;
    const auto cpu = kiln::test::written_by_hand(kiln::device_type::cpu, "pocl");
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    EXPECT_EQ(widened_element(gemm_element::f32, cpu), gemm_element::f32);
    EXPECT_EQ(widened_element(gemm_element::f32, gpu), gemm_element::bf16);
    EXPECT_EQ(widened_element(gemm_element::bf16, cpu), gemm_element::bf16);
    EXPECT_EQ(widened_element(gemm_element::f16, gpu), gemm_element::f16);
}

// Whatever an FP8 operand's offset, rows and batch stride, its widened copy is one that the
// tensor cores copy by 16 bytes: FP8 products take them wherever 16-bit ones do.
TEST(gemm_float8_widening, any_layout_widens_to_rows_the_tensor_cores_copy) {
    using kiln::detail::gemm_operand;
    const gemm_operand a{.element = gemm_element::e4m3,
                         .offset = 5,
                         .rows = 37,
                         .columns = 43,
                         .leading_dimension = 47,
                         .batch = 3,
                         .batch_stride = 1747};
    const gemm_operand b{.element = gemm_element::e5m2,
                         .offset = 1,
                         .rows = 29,
                         .columns = 43,
                         .leading_dimension = 45,
                         .batch = 3,
                         .batch_stride = 1307,
                         .transposed = true};
    const gemm_operand c{.element = gemm_element::f32,
                         .rows = 37,
                         .columns = 29,
                         .leading_dimension = 29,
                         .batch = 3,
                         .batch_stride = 37 * 29};
    kiln::detail::gemm_problem problem{.a = a, .b = b, .c = c};
    EXPECT_FALSE(kiln::detail::tensor_core_layout_fits(problem));
    problem.a = kiln::detail::widened_shape(a, gemm_element::bf16);
    problem.b = kiln::detail::widened_shape(b, gemm_element::bf16);
    EXPECT_TRUE(kiln::detail::tensor_core_layout_fits(problem));
    EXPECT_EQ(problem.a.leading_dimension, 48u);
    EXPECT_EQ(problem.a.batch_stride, 37u * 48u);
    EXPECT_EQ(problem.a.offset, 0u);
    EXPECT_TRUE(problem.b.transposed);
    EXPECT_EQ(problem.b.product_rows(), 43u);
    EXPECT_THROW(kiln::detail::widened_shape({.element = gemm_element::e4m3,
                                              .rows = std::size_t(1) << 40,
                                              .columns = std::size_t(1) << 30,
                                              .leading_dimension = std::size_t(1) << 30},
                                             gemm_element::bf16),
                 kiln::invalid_argument_error);
}

}  // namespace
