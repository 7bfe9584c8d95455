// SPDX-License-Identifier: Apache-2.0
// kiln::fft plans as terms of vector expressions, on every device: expression inputs read by the
// first pass, plans inside larger expressions, the spectral Poisson chain u = ifft(K * fft(rhs)),
// real transforms of expressions, and bad operands. Transforms of expressions are compared with
// the same plans' transforms of plain vectors, which fft_test checks against FFTW.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/kiln.hpp>
#include <numbers>
#include <random>
#include <vector>

#include "fft_test_data.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::product;
using kiln::test::random_complex;

template <class T>
std::vector<T> random_real(std::size_t n, unsigned seed) {
    std::vector<T> data(n);
    const auto values = random_complex<T>(n, seed);
    for (std::size_t i = 0; i < n; ++i) data[i] = values[i].real();
    return data;
}

// Relative L2 distance between host copies of two results.
template <class V>
double distance(const std::vector<V>& got, const std::vector<V>& expected) {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        error += std::norm(std::complex<double>(got[i]) - std::complex<double>(expected[i]));
        norm += std::norm(std::complex<double>(expected[i]));
    }
    return std::sqrt(error / std::max(norm, 1e-300));
}

template <class V, class S>
std::vector<V> scaled(std::vector<V> values, S factor) {
    for (V& v : values) v *= factor;
    return values;
}

// Both sides transform the same values (the expression's rounding aside) with the same passes.
template <class T>
constexpr double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;

class fft_expression_test : public kiln::test::device_queue_test {
  protected:
    template <class Body>
    void for_each_precision(Body&& body) {
        body(float{});
        if (has_double()) body(double{});
    }

    // plan(2 * x + y), inverse(2 * x + y) and plan(r) of a real vector r against the same plans
    // of the values, for each shape and precision (or in single precision alone).
    enum class precisions { both, single };
    void expect_plans_of_expressions_equal_plans_of_values(
        const std::vector<std::vector<std::size_t>>& shapes, precisions which = precisions::both) {
        for_each_precision([&](auto real) {
            using T = decltype(real);
            if (which == precisions::single && !std::is_same_v<T, float>) return;
            using C = std::complex<T>;
            for (const auto& sizes : shapes) {
                SCOPED_TRACE(::testing::Message() << sizes.size() << "-D, " << product(sizes)
                                                  << (sizeof(T) == 4 ? " float" : " double"));
                const std::size_t n = product(sizes);
                const kiln::vector<C> x(q, random_complex<T>(n, 1)), y(q, random_complex<T>(n, 2));
                const kiln::vector<T> r(q, random_real<T>(n, 3));
                const kiln::fft<T> plan(q, sizes), inverse(q, sizes, kiln::inverse);
                kiln::vector<C> value(q, n), got(q, n);

                value = 2 * x + y;
                got = plan(2 * x + y);
                EXPECT_LE(distance(got.read(), kiln::vector<C>(plan(value)).read()), tolerance<T>);
                got = inverse(2 * x + y);
                EXPECT_LE(distance(got.read(), kiln::vector<C>(inverse(value)).read()),
                          tolerance<T>);

                kiln::vector<C> widened(q, n);
                widened = r;
                got = plan(r);  // a real vector, widened by the first pass
                EXPECT_LE(distance(got.read(), kiln::vector<C>(plan(widened)).read()),
                          tolerance<T>);
            }
        });
    }
};

TEST_P(fft_expression_test, plan_of_an_expression_equals_plan_of_its_value) {
    // Radix first passes (360, 12 x 30, 97 x 6: 6 comes first), Bluestein's first step (97: the
    // chirp multiplication reads the expression) and no pass at all (1: evaluated into the target
    // first).
    expect_plans_of_expressions_equal_plans_of_values({{360}, {12, 30}, {97, 6}, {97}, {1}});
}

TEST_P(fft_expression_test, the_local_memory_passes_of_gpus_read_expressions_on_every_device) {
    // GPUs read an input expression in the first radix stage of a local-memory pass, straight
    // into registers. Forced here, CPUs run those kernels too: one pass of several stages (360,
    // 12 x 30), several passes (65536), and lines that are not the fastest dimension (30 x 12).
    // The element's size changes how lines split into passes, so one pass and several take both
    // precisions; which dimension a line runs along changes only its strides, in either.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    expect_plans_of_expressions_equal_plans_of_values({{360}, {65536}});
    expect_plans_of_expressions_equal_plans_of_values({{12, 30}, {30, 12}}, precisions::single);
    // A line longer than the row's local memory (1024 complex floats), held in registers, reads
    // the expression in its first stage as well.
    const kiln::detail::scoped_algorithm_policy small_row(kiln::detail::fft_tuning{64, 16});
    expect_plans_of_expressions_equal_plans_of_values({{2048}});
}

// Fusion is the kernels' (the host library evaluates an expression into a block first).
TEST_P(fft_expression_test, a_fused_kernel_is_built_once_per_expression_type) {
    const kiln::detail::scoped_fft_strategy kernels(kiln::detail::fft_strategy::kernels);
    const std::size_t n = 360;
    const kiln::vector<std::complex<float>> x(q, random_complex<float>(n, 4)),
        y(q, random_complex<float>(n, 5));
    const kiln::fft<float> plan(q, {n});
    kiln::vector<std::complex<float>> got(q, n);
    got = plan(2 * x + y);
    const std::size_t generated = kiln::detail::algorithm_programs_generated();
    got = plan(3 * y + x);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), generated)
        << "same expression type: the same first-pass kernel";
    got = plan(x - y);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), generated + 1)
        << "a new expression type: one new first-pass kernel, no assignment kernel before it";
    // Bluestein's chirp multiplication reads the expression as the first pass does.
    const kiln::fft<float> bluestein(q, {97});
    kiln::vector<std::complex<float>> line(q, 97);
    const kiln::vector<std::complex<float>> u(q, random_complex<float>(97, 7)),
        w(q, random_complex<float>(97, 8));
    line = bluestein(2 * u + w);
    const std::size_t chirps = kiln::detail::algorithm_programs_generated();
    line = bluestein(3 * w + u);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), chirps);
    line = bluestein(u - w);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), chirps + 1)
        << "a new expression type: one new chirp kernel, no assignment kernel before it";
    // irfft reads its input expression in the kernel that expands the half spectrum.
    const kiln::irfft<float> c2r(q, {n});
    const kiln::vector<std::complex<float>> half(q, random_complex<float>(c2r.spectrum_size(), 6));
    kiln::vector<float> real(q, n);
    real = c2r(0.5f * half);
    const std::size_t expansions = kiln::detail::algorithm_programs_generated();
    real = c2r(2.0f * half);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), expansions);
    real = c2r(half + half);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), expansions + 1);
}

TEST_P(fft_expression_test, assignment_writes_the_transform_into_the_target) {
    const std::size_t n = 1000;
    const auto host = random_complex<float>(n, 6);
    const kiln::vector<std::complex<float>> x(q, host);
    const kiln::fft<float> plan(q, {n});
    const kiln::vector<std::complex<float>> expected = plan(x);
    kiln::vector<std::complex<float>> y(q, n);
    const void* memory = y.part(0).storage().memory();
    y = plan(x);
    EXPECT_EQ(y.part(0).storage().memory(), memory) << "no new vector for y = plan(x)";
    EXPECT_EQ(y.read(), expected.read());
    y = plan(0.5f * x);
    EXPECT_EQ(y.part(0).storage().memory(), memory);
    EXPECT_LE(distance(y.read(), scaled(expected.read(), 0.5f)), tolerance<float>);
    // The target read by the expression, with one pass of 1000 (forced on CPUs), which writes
    // the target directly.
    const kiln::detail::scoped_fft_length_kernels one_pass;
    const kiln::fft<float> one_pass_plan(q, {n});
    y = x;
    y = one_pass_plan(2 * y);
    EXPECT_LE(distance(y.read(), scaled(expected.read(), 2.0f)), tolerance<float>);
    y = x;
    y = one_pass_plan(y);  // in place
    EXPECT_LE(distance(y.read(), expected.read()), tolerance<float>);
}

// docs/fft.md: an input that reads the target at other positions is evaluated before the target
// is written, on either strategy (FFTW's plans wrote kiln::reverse(c) into c while reading it).
TEST_P(fft_expression_test, a_view_of_the_target_is_read_before_the_target_is_written) {
    for (const auto strategy :
         {kiln::detail::fft_strategy::host_library, kiln::detail::fft_strategy::kernels}) {
        const kiln::detail::scoped_fft_strategy forced(strategy);
        for (const std::size_t n : {std::size_t{1000}, std::size_t{65536}}) {
            SCOPED_TRACE(::testing::Message()
                         << "n = " << n
                         << (strategy == kiln::detail::fft_strategy::kernels ? ", kernels"
                                                                             : ", host library"));
            const std::vector<std::complex<float>> host = random_complex<float>(n, 11);
            const std::vector<std::complex<float>> backwards(host.rbegin(), host.rend());
            const kiln::fft<float> plan(q, {n}), inverse(q, {n}, kiln::inverse);
            const kiln::vector<std::complex<float>> reversed(q, backwards);
            const auto expected = kiln::vector<std::complex<float>>(plan(reversed)).read();

            kiln::vector<std::complex<float>> c(q, host);
            c = plan(kiln::reverse(c));
            EXPECT_LE(distance(c.read(), expected), tolerance<float>);

            // A gather through a permutation, into an inverse transform.
            kiln::vector<std::complex<float>> d(q, host);
            const auto expected_inverse =
                kiln::vector<std::complex<float>>(inverse(reversed)).read();
            d = inverse(kiln::permutation(n - 1 - kiln::element_index())(d));
            EXPECT_LE(distance(d.read(), expected_inverse), tolerance<float>);
        }
    }
}

TEST_P(fft_expression_test, a_plan_is_a_term_of_larger_expressions) {
    for_each_precision([&](auto real) {
        using T = decltype(real);
        using C = std::complex<T>;
        const std::vector<std::size_t> sizes = {24, 10};
        const std::size_t n = product(sizes);
        const kiln::vector<C> x(q, random_complex<T>(n, 7)), z(q, random_complex<T>(n, 8));
        kiln::fft<T> fft(q, sizes);
        const std::vector<C> fx = kiln::vector<C>(fft(x)).read(),
                             fz = kiln::vector<C>(fft(z)).read(), host_z = z.read();
        kiln::vector<C> y(q, n);

        y = 3 * fft(x) + z;
        std::vector<C> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = T(3) * fx[i] + host_z[i];
        EXPECT_LE(distance(y.read(), expected), tolerance<T>);

        y = fft(x) - fft(z);  // two terms: two temporaries, not one shared
        for (std::size_t i = 0; i < n; ++i) expected[i] = fx[i] - fz[i];
        EXPECT_LE(distance(y.read(), expected), tolerance<T>);

        const C total = kiln::sum(fft(x));  // a reduction of a term: n x[0]
        EXPECT_LE(std::abs(total - T(n) * x.read()[0]), 1e3 * tolerance<T> * double(n));

        kiln::fft<T> ifft(q, sizes, kiln::inverse);
        y = ifft(fft(x) * 2);  // a term inside a plan's input expression
        EXPECT_LE(distance(y.read(), scaled(x.read(), T(2))), 10 * tolerance<T>);
    });
}

// The seed's spectral Poisson solve, laplacian(u) = f on a periodic grid, with u's mean 0.
template <class T>
struct poisson_problem {
    std::size_t rows, columns;
    std::vector<T> f, exact;
    // -1 / |k|^2 over `columns_in_spectrum` of the spectrum's columns (all, or the half).
    std::vector<T> multiplier(std::size_t columns_in_spectrum) const {
        std::vector<T> k(rows * columns_in_spectrum);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < columns_in_spectrum; ++c) {
                const double ky = r <= rows / 2 ? double(r) : double(r) - double(rows);
                const double kx = c <= columns / 2 ? double(c) : double(c) - double(columns);
                const double k2 = kx * kx + ky * ky;
                k[r * columns_in_spectrum + c] = k2 == 0 ? T(0) : T(-1 / k2);
            }
        return k;
    }
    poisson_problem(std::size_t rows_, std::size_t columns_)
        : rows(rows_), columns(columns_), f(rows * columns), exact(rows * columns) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < columns; ++c) {
                const double x = 2 * std::numbers::pi * double(c) / double(columns),
                             y = 2 * std::numbers::pi * double(r) / double(rows);
                exact[r * columns + c] =
                    T(std::sin(3 * x) * std::cos(2 * y) + 0.5 * std::cos(x + 4 * y));
                f[r * columns + c] =
                    T(-13 * std::sin(3 * x) * std::cos(2 * y) - 8.5 * std::cos(x + 4 * y));
            }
    }
};

TEST_P(fft_expression_test, the_poisson_chain_u_equals_ifft_of_k_times_fft_rhs) {
    for_each_precision([&](auto real) {
        using T = decltype(real);
        const poisson_problem<T> p(48, 30);
        const double bound = std::is_same_v<T, float> ? 1e-5 : 1e-12;
        const kiln::vector<T> rhs(q, p.f);
        {  // complex plans of a real right-hand side
            const kiln::vector<T> K(q, p.multiplier(p.columns));
            kiln::fft<T> fft(q, {p.rows, p.columns});
            kiln::fft<T> ifft(q, {p.rows, p.columns}, kiln::inverse);
            kiln::vector<std::complex<T>> u(q, p.rows * p.columns);
            u = ifft(K * fft(rhs));
            const std::vector<std::complex<T>> got = u.read();
            double worst = 0;
            for (std::size_t i = 0; i < got.size(); ++i)
                worst =
                    std::max(worst, std::abs(std::complex<double>(got[i]) - double(p.exact[i])));
            EXPECT_LE(worst, bound);
        }
        {  // real transforms over the half spectrum
            const kiln::vector<T> K(q, p.multiplier(p.columns / 2 + 1));
            kiln::rfft<T> fft(q, {p.rows, p.columns});
            kiln::irfft<T> ifft(q, {p.rows, p.columns});
            kiln::vector<T> u(q, p.rows * p.columns);
            u = ifft(K * fft(rhs));
            const std::vector<T> got = u.read();
            double worst = 0;
            for (std::size_t i = 0; i < got.size(); ++i)
                worst = std::max(worst, std::fabs(double(got[i]) - double(p.exact[i])));
            EXPECT_LE(worst, bound);
        }
    });
}

TEST_P(fft_expression_test, real_transforms_take_expressions) {
    for_each_precision([&](auto real) {
        using T = decltype(real);
        using C = std::complex<T>;
        for (const auto& sizes : std::vector<std::vector<std::size_t>>{{10, 12}, {9}, {97}}) {
            const std::size_t n = product(sizes);
            const kiln::vector<T> r(q, random_real<T>(n, 9));
            const kiln::rfft<T> r2c(q, sizes);
            const kiln::irfft<T> c2r(q, sizes);
            kiln::vector<T> value(q, n);
            value = 2 * r + 1;
            const kiln::vector<C> expected = r2c(value);
            kiln::vector<C> spectrum(q, r2c.spectrum_size());
            spectrum = r2c(2 * r + 1);
            EXPECT_LE(distance(spectrum.read(), expected.read()), tolerance<T>);
            kiln::vector<T> back(q, n);
            back = c2r(spectrum * T(0.5));
            kiln::vector<T> expected_back(q, n);
            expected_back = r + T(0.5);
            EXPECT_LE(distance(back.read(), expected_back.read()), 10 * tolerance<T>);
        }
    });
}

TEST_P(fft_expression_test, bad_operands_are_rejected_before_anything_runs) {
    const std::size_t n = 64;
    const std::vector<std::complex<float>> ones(n, {1, 0});
    const kiln::vector<std::complex<float>> x(q, random_complex<float>(n, 10)),
        short_x(q, random_complex<float>(n - 1, 11));
    const kiln::fft<float> fft(q, {n});
    kiln::vector<std::complex<float>> y(q, ones), short_y(q, n - 1);
    kiln::detail::temporary_pool::trim(device());
    EXPECT_THROW((void)fft(x + short_x), kiln::invalid_argument_error);
    EXPECT_THROW(y = 3 * fft(short_x) + x, kiln::invalid_argument_error);
    EXPECT_THROW(short_y = fft(x), kiln::invalid_argument_error);
    EXPECT_THROW(y = 3 * fft(x) + short_x, kiln::invalid_argument_error);
    EXPECT_EQ(kiln::detail::temporary_pool::idle_bytes(device()), 0u)
        << "a term computes its value only once the whole statement has been checked";
    const kiln::rfft<float> r2c(q, {n});
    const kiln::irfft<float> c2r(q, {n});
    const kiln::vector<float> r(q, n);
    kiln::vector<float> u(q, n);
    EXPECT_THROW((void)r2c(r + kiln::vector<float>(q, n + 1)), kiln::invalid_argument_error);
    EXPECT_THROW(u = c2r(2 * x), kiln::invalid_argument_error);  // n, not n / 2 + 1
    EXPECT_EQ(y.read(), ones) << "a rejected statement must not write its target";
    for (const kiln::device& other : kiln::devices()) {
        if (other == device()) continue;
        const kiln::queue other_queue(other);
        const kiln::vector<std::complex<float>> elsewhere(other_queue, ones);
        kiln::vector<std::complex<float>> target_elsewhere(other_queue, n);
        EXPECT_THROW(y = fft(2 * elsewhere), kiln::invalid_argument_error);
        EXPECT_THROW(target_elsewhere = fft(x), kiln::invalid_argument_error);
        EXPECT_THROW(y = fft(x) + elsewhere, kiln::invalid_argument_error);
        EXPECT_EQ(y.read(), ones);
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(fft_expression_test);

}  // namespace
