// SPDX-License-Identifier: Apache-2.0
// kiln::fft on every device against FFTW in double precision (or, where FFTW is missing, a
// host Cooley-Tukey in double that skips large primes): 1-D sizes from 1 to 2^20 (radix
// passes and Bluestein), 2-D and 3-D shapes, batches, round trips, in place, bad input, caching.
#include <gtest/gtest.h>

#ifdef KILN_FFT_TEST_FFTW
#include <fftw3.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "fft_test_data.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::product;
using kiln::test::random_complex;

using cdouble = std::complex<double>;

#ifdef KILN_FFT_TEST_FFTW
constexpr bool reference_is_fftw = true;

// FFTW's transforms of `input` (converted to double), unscaled.
std::vector<cdouble> reference_transform(std::vector<cdouble> in, const std::vector<int>& n,
                                         std::size_t batch, bool inverse) {
    std::vector<cdouble> out(in.size());
    const int transform = int(in.size() / batch);
    fftw_plan plan = fftw_plan_many_dft(
        int(n.size()), n.data(), int(batch), reinterpret_cast<fftw_complex*>(in.data()), nullptr, 1,
        transform, reinterpret_cast<fftw_complex*>(out.data()), nullptr, 1, transform,
        inverse ? FFTW_BACKWARD : FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
    return out;
}
#else
// Without FFTW (machines that lack libfftw3-dev): recursive Cooley-Tukey on the host in double,
// over the smallest prime factor, with every root of unity computed directly. Sizes with a
// large prime factor (1000003) would take O(n^2) and are skipped.
constexpr bool reference_is_fftw = false;

void host_dft(cdouble* x, std::size_t n, std::size_t stride, const std::vector<cdouble>& roots,
              std::size_t root_step) {
    if (n == 1) return;
    std::size_t p = 2;
    while (n % p != 0) ++p;
    const std::size_t m = n / p;
    std::vector<cdouble> parts(n);
    for (std::size_t r = 0; r < p; ++r) {
        for (std::size_t j = 0; j < m; ++j) parts[r * m + j] = x[(j * p + r) * stride];
        host_dft(parts.data() + r * m, m, 1, roots, root_step * p);
    }
    for (std::size_t k = 0; k < n; ++k) {
        cdouble sum = 0;
        for (std::size_t r = 0; r < p; ++r)
            sum += parts[r * m + k % m] * roots[(r * k % n) * root_step];
        x[k * stride] = sum;
    }
}

std::vector<cdouble> reference_transform(std::vector<cdouble> data, const std::vector<int>& n,
                                         std::size_t batch, bool inverse) {
    const std::size_t transform = data.size() / batch;
    std::size_t stride = transform;
    for (const int size : n) {
        stride /= std::size_t(size);
        std::vector<cdouble> roots(static_cast<std::size_t>(size));
        for (std::size_t e = 0; e < roots.size(); ++e)
            roots[e] =
                std::polar(1.0, (inverse ? 2 : -2) * std::numbers::pi * double(e) / double(size));
        for (std::size_t start = 0; start < data.size(); ++start)
            if (start % (stride * std::size_t(size)) < stride)
                host_dft(data.data() + start, std::size_t(size), stride, roots, 1);
    }
    return data;
}
#endif

bool reference_can_do(std::size_t n) {
    return reference_is_fftw || n < 100000 || (n & (n - 1)) == 0;
}

// The reference transform of `input` (converted to double), scaled by 1/N when inverse, like
// kiln's.
template <class T>
std::vector<cdouble> reference(const std::vector<std::complex<T>>& input,
                               const std::vector<std::size_t>& sizes, std::size_t batch,
                               bool inverse) {
    std::vector<cdouble> out =
        reference_transform(std::vector<cdouble>(input.begin(), input.end()),
                            std::vector<int>(sizes.begin(), sizes.end()), batch, inverse);
    if (inverse)
        for (auto& z : out) z /= double(product(sizes));
    return out;
}

template <class T>
double relative_l2_error(const std::vector<std::complex<T>>& got,
                         const std::vector<cdouble>& expected) {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        error += std::norm(cdouble(got[i]) - expected[i]);
        norm += std::norm(expected[i]);
    }
    return norm == 0 ? std::sqrt(error) : std::sqrt(error / norm);
}

// The promise of docs/fft.md: 2e-7 log2 N for float, 1e-15 log2 N for double (log2 N >= 1).
template <class T>
double tolerance(std::size_t n) {
    const double log_n = std::max(1.0, std::log2(double(n)));
    return (std::is_same_v<T, float> ? 2e-7 : 1e-15) * log_n;
}

class fft_test : public kiln::test::device_queue_test {
  protected:
    // Transforms random data with kiln and FFTW and compares, forward or inverse.
    template <class T>
    void check(const std::vector<std::size_t>& sizes, std::size_t batch, bool inverse) {
        SCOPED_TRACE(shape_text(sizes, batch) + (inverse ? " inverse" : " forward"));
        const auto host = random_complex<T>(product(sizes) * batch, unsigned(product(sizes)));
        const kiln::vector<std::complex<T>> x(q, host);
        const auto plan =
            inverse ? kiln::fft<T>(q, sizes, kiln::inverse, batch) : kiln::fft<T>(q, sizes, batch);
        const kiln::vector<std::complex<T>> y = plan(x);
        EXPECT_LE(relative_l2_error(y.read(), reference(host, sizes, batch, inverse)),
                  tolerance<T>(product(sizes)));
        EXPECT_EQ(x.read(), host) << "the input must be left alone";
    }
    // Float, and double where the device has it; CPUs skip double for large problems, which
    // take seconds there and test no code that float and the smaller sizes do not.
    template <class Body>
    void for_each_precision(Body&& body, std::size_t elements = 0) {
        body(float{});
        const bool large_on_cpu =
            device().properties().type == kiln::device_type::cpu && elements > (1u << 16);
        if (has_double() && !large_on_cpu) body(double{});
    }
    // Whether a group may hold the 16384 complex floats of CUDA's row (dynamic shared memory
    // there), so that the device can run that row's long passes.
    bool holds_a_16384_point_pass() const {
        return device().properties().local_memory_bytes >= 150000 ||
               device().properties().shared_memory_per_block_bytes >= 150000;
    }
    static std::string shape_text(const std::vector<std::size_t>& sizes, std::size_t batch) {
        std::string text;
        for (std::size_t n : sizes) text.append(text.empty() ? "" : "x").append(std::to_string(n));
        return text.append(" batch ").append(std::to_string(batch));
    }
};

// Every other test here runs the strategy the device gets (on CI's CPU with FFTW installed, the
// host library; ctest's algo.fft_kernels runs them all again on kiln's kernels). Each forced:
// the host library wherever it can run (CPU devices, FFTW installed), kernels elsewhere.
TEST_P(fft_test, each_strategy_forced_matches_fftw) {
    using kiln::detail::fft_strategy;
    const bool cpu = device().properties().type == kiln::device_type::cpu &&
                     device().backend() == kiln::backend_kind::opencl;
    for (const fft_strategy strategy : {fft_strategy::kernels, fft_strategy::host_library}) {
        SCOPED_TRACE(strategy == fft_strategy::kernels ? "kernels" : "host library");
        const kiln::detail::scoped_fft_strategy forced(strategy);
        const kiln::fft<float> plan(q, {480, 64}, 3);
        // FFTW's runtime libraries come with libfftw3-dev, which the reference here needs.
        if (reference_is_fftw) {
            EXPECT_EQ(plan.plan().on_host_library(), strategy == fft_strategy::host_library && cpu);
        }
        for_each_precision([&](auto real) {
            using T = decltype(real);
            check<T>({97, 12}, 2, false);
            check<T>({1000}, 3, true);
            // In place, out of place, and rfft's path through the complex plan.
            const auto host = random_complex<T>(4096, 11);
            kiln::vector<std::complex<T>> x(q, host);
            const kiln::fft<T> forward(q, {4096}), backward(q, {4096}, kiln::inverse);
            forward(x, x);
            x = backward(x);
            EXPECT_LE(relative_l2_error(x.read(), std::vector<cdouble>(host.begin(), host.end())),
                      2 * tolerance<T>(4096));
            std::vector<T> real_host(100);
            for (std::size_t i = 0; i < real_host.size(); ++i)
                real_host[i] = T(std::sin(0.3 * double(i)));
            const kiln::vector<T> r(q, real_host);
            const kiln::rfft<T> real_forward(q, {100});
            const kiln::vector<std::complex<T>> half = real_forward(r);
            const auto full = reference(
                std::vector<std::complex<T>>(real_host.begin(), real_host.end()), {100}, 1, false);
            EXPECT_LE(relative_l2_error(half.read(),
                                        std::vector<cdouble>(full.begin(), full.begin() + 51)),
                      tolerance<T>(100));
        });
    }
}

TEST_P(fft_test, one_dimension_of_every_kind_of_size_matches_fftw) {
    // Radix passes (2, 3, 5, 7, 11, 13 and their products, radix 16 and 8 included) and
    // Bluestein (97, 1000003).
    for (std::size_t n : {1u, 2u, 3u, 7u, 8u, 97u, 128u, 143u, 1000u, 1024u, 1716u, 4096u, 65536u,
                          1000003u, 1u << 20})
        if (reference_can_do(n))
            for_each_precision([&](auto real) { check<decltype(real)>({n}, 1, false); }, n);
}

TEST_P(fft_test, inverse_matches_fftw_scaled_by_one_over_n) {
    for (std::size_t n : {1u, 5u, 12u, 97u, 1000u, 4096u, 2310u})
        for_each_precision([&](auto real) { check<decltype(real)>({n}, 1, true); });
}

TEST_P(fft_test, two_and_three_dimensions_match_fftw) {
    const std::vector<std::vector<std::size_t>> shapes = {
        {1, 1000}, {1000, 1}, {480, 640}, {97, 10}, {64, 64, 64}, {5, 7, 11}, {1, 1, 1}};
    for (const auto& sizes : shapes)
        for_each_precision([&](auto real) {
            check<decltype(real)>(sizes, 1, false);
            check<decltype(real)>(sizes, 1, true);
        });
}

TEST_P(fft_test, batches_match_fftw) {
    const std::vector<std::vector<std::size_t>> shapes = {{1000}, {97}, {1}, {12, 10}, {3, 4, 13}};
    for (const auto& sizes : shapes)
        for_each_precision([&](auto real) {
            check<decltype(real)>(sizes, 7, false);
            check<decltype(real)>(sizes, 3, true);
        });
}

TEST_P(fft_test, the_64_bit_index_kernels_of_huge_plans_are_right) {
    // Float only: the index type is written by the same code for both precisions, and each
    // program costs PoCL seconds to build.
    const kiln::detail::scoped_wide_fft_indices wide;
    check<float>({4096}, 1, false);
    check<float>({97}, 3, true);
    check<float>({12, 5, 16}, 1, false);
}

TEST_P(fft_test, the_local_memory_passes_of_gpus_are_right_on_every_device) {
    // GPUs run each length that fits a group's local memory as one pass of several radix
    // stages, and longer ones as few passes with twiddles between; CPUs one radix per pass.
    // Forced here, CPUs run the GPU kernels too: one pass (1000, 12, 480 x 640, 11 x 13), more
    // lines per group than work-items (10 x 97), passes of a split length (65536, 4096 in double on
    // CPUs), and Bluestein's inner transforms (97).
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    check<float>({1000}, 1, false);
    check<float>({12}, 5, true);
    check<float>({10}, 97, false);
    check<float>({480, 640}, 1, false);
    check<float>({65536}, 1, false);
    check<float>({97}, 2, false);
    check<float>({143}, 3, true);
    if (has_double()) check<double>({4096}, 1, true);
}

TEST_P(fft_test, the_long_passes_of_large_local_memories_are_right_on_every_device) {
    // CUDA's row gives passes 16384 complex floats of local memory (dynamic shared memory):
    // one pass of 16384 (in registers, test below), a strided pass of four 4096-point lines with
    // stages of more butterflies than work-items, and 2^20 as two passes of four 1024-point lines.
    // Run on every device through the same row where the device's local memory allows it.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    const kiln::detail::scoped_algorithm_policy cuda_row(kiln::detail::fft_tuning{256, 64});
    if (!holds_a_16384_point_pass())
        GTEST_SKIP() << "less local memory than a 16384-point pass takes";
    check<float>({16384}, 2, false);
    check<float>({4096, 8}, 1, true);
    check<float>({1u << 20}, 1, false);
}

// The plan of a forward (or inverse) 1-D float or double transform of `n` x `batch`.
std::shared_ptr<const kiln::detail::fft_plan> plan_of(const kiln::queue& q, std::size_t n,
                                                      std::size_t batch, bool inverse,
                                                      bool double_precision = false) {
    return kiln::detail::fft_plan::make(q, {{n}, batch, inverse, double_precision}, "test");
}

bool has_register_pass(const kiln::detail::fft_plan& plan) {
    const auto& steps = plan.steps();
    return std::any_of(steps.begin(), steps.end(), [](const kiln::detail::fft_step& step) {
        return step.pass && step.pass->exchange_rounds > 0;
    });
}

TEST_P(fft_test, lines_filling_local_memory_take_the_register_pass_where_it_saves_a_stage) {
    // Under CUDA's row (16384 complex floats per group), a 16384-point line through local memory
    // would take 512 work-items of 32 elements each in four stages (16, 16, 16, 4); the register
    // pass holds the same in three (32, 32, 16), its exchanges in one round each. So does 8192
    // (256 x 32: 32, 16, 16 against 16, 16, 16, 2). Doubles hold 16 per work-item there: not.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    const kiln::detail::scoped_algorithm_policy cuda_row(kiln::detail::fft_tuning{256, 64});
    if (!holds_a_16384_point_pass())
        GTEST_SKIP() << "less local memory than a 16384-point pass takes";
    check<float>({16384}, 2, false);
    check<float>({16384}, 1, true);
    check<float>({8192}, 3, false);
    const auto expect_kernel = [&](std::size_t n, bool inverse, const std::string& kernel,
                                   std::size_t group) {
        const auto plan = plan_of(q, n, 1, inverse);
        // A device whose built kernel takes fewer work-items falls back (test below).
        if (device().properties().max_work_group_size < group) return;
        ASSERT_EQ(plan->steps().size(), 1u);
        EXPECT_EQ(plan->steps()[0].kernel, kernel);
    };
    expect_kernel(16384, false, "kiln_fft_pass16384_r32_32_16_g1_w512_fwd_u_x1", 512);
    expect_kernel(16384, true, "kiln_fft_pass16384_r32_32_16_g1_w512_inv_u_x1", 512);
    expect_kernel(8192, false, "kiln_fft_pass8192_r32_16_16_g1_w256_fwd_u_x1", 256);
    if (has_double()) {
        const auto plan = plan_of(q, 8192, 1, false, true);
        EXPECT_FALSE(has_register_pass(*plan));
    }
}

TEST_P(fft_test, lines_longer_than_local_memory_take_one_pass_through_registers) {
    // A power-of-two line longer than the row's local memory stays in its group's registers
    // (32 complex floats per work-item) and crosses local memory a part at a time between
    // stages. NVIDIA's OpenCL row (4096 complex floats): 16384 points in four rounds per
    // exchange; a row of 1024: 2048 in two, 4096 in four, 8192 in eight, doubles 2048 in four.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    // Plans on the host library (FFTW on CPU devices) build no kernels.
    const kiln::detail::scoped_fft_strategy kernels(kiln::detail::fft_strategy::kernels);
    // The plan built `kernel` (its program exists, so no source is generated here) and runs it
    // alone, unless the kernel as built takes fewer work-items than its group: then two passes.
    const auto one_pass = [&](std::size_t n, std::size_t batch, bool inverse,
                              const std::string& kernel, std::size_t group,
                              bool double_precision = false) {
        const kiln::detail::fft_program_key key{double_precision, false, kernel, {}};
        const auto& built = kiln::detail::algorithm_program_for(
            device(), key.key(), {kernel}, [&]() -> std::string {
                ADD_FAILURE() << kernel << " was not built";
                return "";
            });
        const auto plan = plan_of(q, n, batch, inverse, double_precision);
        const std::size_t limit = built.kernel(kernel).max_work_group_size();
        if (limit >= group) {
            ASSERT_EQ(plan->steps().size(), 1u);
            EXPECT_EQ(plan->steps()[0].kernel, kernel);
        } else {
            EXPECT_FALSE(has_register_pass(*plan));
            EXPECT_EQ(plan->steps().size(), 2u) << kernel << " takes " << limit << " work-items";
            // Said on every run, so that GPU logs show which devices refuse the group.
            std::printf("[   NOTE   ] %s takes %zu work-items per group, not %zu: two passes\n",
                        kernel.c_str(), limit, group);
        }
    };
    {
        const kiln::detail::scoped_algorithm_policy opencl_row(kiln::detail::fft_tuning{256, 16});
        check<float>({16384}, 2, false);
        one_pass(16384, 2, false, "kiln_fft_pass16384_r32_32_16_g1_w512_fwd_u_x4", 512);
    }
    {
        // NVIDIA's OpenCL row keeps such lines in two passes through local memory (measured
        // faster there).
        const kiln::detail::scoped_algorithm_policy without_registers(
            kiln::detail::fft_tuning{256, 16, false});
        check<float>({16384}, 2, false);
        const auto plan = plan_of(q, 16384, 2, false, false);
        EXPECT_FALSE(has_register_pass(*plan));
        EXPECT_EQ(plan->steps().size(), 2u);
    }
    const kiln::detail::scoped_algorithm_policy small_row(kiln::detail::fft_tuning{64, 16});
    check<float>({2048}, 3, false);
    one_pass(2048, 3, false, "kiln_fft_pass2048_r16_16_8_g1_w64_fwd_u_x2", 64);
    check<float>({4096}, 2, true);
    one_pass(4096, 2, true, "kiln_fft_pass4096_r16_16_16_g1_w128_inv_u_x4", 128);
    check<float>({8192}, 1, false);
    one_pass(8192, 1, false, "kiln_fft_pass8192_r32_16_16_g1_w256_fwd_u_x8", 256);
    if (has_double()) {
        check<double>({2048}, 1, false);
        one_pass(2048, 1, false, "kiln_fft_pass2048_r16_16_8_g1_w128_fwd_u_x4", 128, true);
    }
}

TEST_P(fft_test, lines_take_two_passes_where_the_register_pass_kernel_refuses_its_group) {
    // As NVIDIA's OpenCL did with the 16384-point pass before kiln capped its registers: the
    // kernel builds, but takes 256 work-items, not its 512. The plan must not fail then.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    const kiln::detail::scoped_algorithm_policy opencl_row(kiln::detail::fft_tuning{256, 16});
    if (!has_register_pass(*plan_of(q, 16384, 2, false)))
        GTEST_SKIP() << "no register pass for 16384 points here";
    const kiln::detail::scoped_fft_register_pass_limit limit(256);
    check<float>({16384}, 2, false);
    const auto plan = plan_of(q, 16384, 2, false);
    EXPECT_FALSE(has_register_pass(*plan));
    EXPECT_EQ(plan->steps().size(), 2u);
}

bool has_pipeline(const kiln::detail::fft_plan& plan) {
    const auto& steps = plan.steps();
    return std::any_of(steps.begin(), steps.end(), [](const kiln::detail::fft_step& step) {
        return step.pipeline.has_value();
    });
}

TEST_P(fft_test, two_passes_pipelined_through_a_ring_are_right) {
    // NVIDIA's OpenCL takes 16384-point lines in two passes of 128 (its register pass refused):
    // one kernel does both, chunk by chunk, the lines between the passes in a ring. Forced here
    // with chunks of 2 lines in 2 slots, so that groups wait for a chunk's first pass and for
    // the slot they overwrite, and the last chunk of an odd batch is half empty; then with the
    // second passes further behind. CPUs run it
    // with their groups promised to make progress (PoCL runs each group to its end once it
    // started, and a group waits only for groups that started before it).
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    const kiln::detail::scoped_algorithm_policy opencl_row(kiln::detail::fft_tuning{256, 16});
    const kiln::detail::scoped_fft_register_pass_limit limit(256);
    const kiln::detail::scoped_forward_progress progress(true);
    {
        const kiln::detail::scoped_fft_pipeline_policy off({0, 0});
        EXPECT_FALSE(has_pipeline(*plan_of(q, 16384, 12, false)));
    }
    const kiln::detail::scoped_fft_pipeline_policy pipeline({2 * 16384 * 8, 2});
    if (kiln::detail::fft_pipeline_policy_for(device()).chunk_bytes == 0)
        GTEST_SKIP() << "no fence orders writes across this device's groups";
    check<float>({16384}, 12, false);
    check<float>({16384}, 7, true);
    for (const bool inverse : {false, true}) {
        const auto plan = plan_of(q, 16384, 12, inverse);
        ASSERT_EQ(plan->steps().size(), 1u);
        ASSERT_TRUE(plan->steps()[0].pipeline.has_value());
        EXPECT_EQ(plan->steps()[0].pipeline->chunks, 6u);
    }
    {
        // An input expression, read by the first pass.
        const auto host = random_complex<float>(16384 * 4, 3);
        const kiln::vector<std::complex<float>> x(q, host);
        const kiln::fft<float> forward(q, {16384}, 4);
        const kiln::vector<std::complex<float>> y = forward(2.0f * x);
        std::vector<cdouble> expected = reference(host, {16384}, 4, false);
        for (cdouble& z : expected) z *= 2.0;
        EXPECT_LE(relative_l2_error(y.read(), expected), tolerance<float>(16384));
    }
    {
        // Second passes 3 chunks behind the first, in 4 slots, with the streaming loads and
        // stores, each waiting for its own arrays' first pass: 4 chunks (one round of both passes),
        // and 2 (fewer chunks than the lag: first passes only, then second passes).
        const kiln::detail::scoped_fft_pipeline_policy lagging({2 * 16384 * 8, 4, 3, true, true});
        check<float>({16384}, 7, false);
        check<float>({16384}, 3, true);
        const auto plan = plan_of(q, 16384, 3, true);
        ASSERT_TRUE(plan->steps()[0].pipeline.has_value());
        const auto& kernel = plan->steps()[0].pipeline->kernel;
        EXPECT_EQ(kernel.lag, 3u);
        EXPECT_TRUE(kernel.streaming);
        EXPECT_TRUE(kernel.fine);
    }
    // In place: a chunk's second pass overwrites the input only after its first pass read it.
    // Twice with one plan, whose second launch must find its counters set back to zero (left
    // as they were, every group would find its tile past the end and skip it).
    const auto host = random_complex<float>(16384 * 5, 5);
    const auto expected = reference(host, {16384}, 5, false);
    const kiln::fft<float> forward(q, {16384}, 5);
    for (int round = 0; round < 2; ++round) {
        kiln::vector<std::complex<float>> x(q, host);
        forward(x, x);
        EXPECT_LE(relative_l2_error(x.read(), expected), tolerance<float>(16384)) << round;
    }
}

TEST_P(fft_test, pipeline_counters_are_per_queue_and_go_with_it) {
    // Each queue a pipelined plan runs on has its own counters, so that launches on two queues
    // may overlap; a queue's counters go with the queue (held as long as the plan, a plan used
    // on a new queue per call would keep one set per call). On an out-of-order queue, two
    // transforms with no order between them share the queue's counters and must take turns.
    const kiln::detail::scoped_fft_length_kernels length_kernels;
    const kiln::detail::scoped_algorithm_policy opencl_row(kiln::detail::fft_tuning{256, 16});
    const kiln::detail::scoped_fft_register_pass_limit limit(256);
    const kiln::detail::scoped_forward_progress progress(true);
    const kiln::detail::scoped_fft_pipeline_policy pipeline({2 * 16384 * 8, 2});
    if (kiln::detail::fft_pipeline_policy_for(device()).chunk_bytes == 0)
        GTEST_SKIP() << "no fence orders writes across this device's groups";
    const auto host = random_complex<float>(16384 * 4, 9);
    const auto expected = reference(host, {16384}, 4, false);
    const kiln::vector<std::complex<float>> x(q, host);
    kiln::vector<std::complex<float>> y(q, host.size()), z(q, host.size());
    const auto plan = plan_of(q, 16384, 4, false);
    ASSERT_TRUE(has_pipeline(*plan));
    const auto run = [&](const kiln::queue& on, kiln::vector<std::complex<float>>& out) {
        plan->run(on, x.part(0).storage(), out.part(0).storage());
    };
    run(q, y);
    q.finish();
    // Queues of earlier tests may still be alive (the temporary pool holds the last queue of
    // an idle block), so count from here.
    const std::size_t before = plan->counter_queues();
    for (int round = 0; round < 3; ++round) {
        const kiln::queue other(device());
        run(other, y);
        other.finish();
        EXPECT_LE(relative_l2_error(y.read(), expected), tolerance<float>(16384)) << round;
    }
    {
        const kiln::queue unordered(device(), kiln::out_of_order);
        run(unordered, y);
        run(unordered, z);
        unordered.finish();
        EXPECT_LE(relative_l2_error(y.read(), expected), tolerance<float>(16384));
        EXPECT_LE(relative_l2_error(z.read(), expected), tolerance<float>(16384));
    }
    run(q, y);
    q.finish();
    // At most the pool's hold on the last queue's ring: not one set per queue used.
    EXPECT_LE(plan->counter_queues(), before + 1);
}

TEST_P(fft_test, forward_then_inverse_in_place_gives_the_input_back) {
    for (const auto& sizes : std::vector<std::vector<std::size_t>>{
             {1}, {2}, {97}, {4096}, {10007}, {480, 640}, {6, 10, 14}}) {
        SCOPED_TRACE(shape_text(sizes, 2));
        const auto host = random_complex<float>(product(sizes) * 2, 7);
        kiln::vector<std::complex<float>> x(q, host);
        const kiln::fft<float> forward(q, sizes, 2), backward(q, sizes, kiln::inverse, 2);
        forward(x, x);  // truly in place: one stage (sizes 2, 97) goes through scratch
        x = backward(x);
        std::vector<cdouble> expected(host.begin(), host.end());
        EXPECT_LE(relative_l2_error(x.read(), expected), 2 * tolerance<float>(product(sizes)));
    }
}

// The first n / 2 + 1 of every n values (n the last size): the half spectrum of real data.
std::vector<cdouble> half_columns(const std::vector<cdouble>& full, std::size_t n) {
    std::vector<cdouble> half;
    for (std::size_t i = 0; i < full.size(); ++i)
        if (i % n <= n / 2) half.push_back(full[i]);
    return half;
}

TEST_P(fft_test, real_transforms_of_even_and_odd_sizes_match_fftw_and_invert) {
    const std::vector<std::vector<std::size_t>> shapes = {
        {1}, {2}, {7}, {8}, {97}, {1000}, {6, 9}, {5, 8}, {1, 7}, {9, 1}, {4, 6, 5}, {3, 2, 8}};
    for (const auto& sizes : shapes)
        for_each_precision([&](auto real) {
            using T = decltype(real);
            SCOPED_TRACE(shape_text(sizes, 3) + (sizeof(T) == 4 ? " float" : " double"));
            const std::size_t total = product(sizes) * 3;
            std::vector<T> host(total);
            const auto random = random_complex<T>(total, unsigned(total));
            for (std::size_t i = 0; i < total; ++i) host[i] = random[i].real();
            const kiln::vector<T> x(q, host);
            const kiln::rfft<T> forward(q, sizes, 3);
            const kiln::irfft<T> backward(q, sizes, 3);
            const kiln::vector<std::complex<T>> spectrum = forward(x);
            ASSERT_EQ(spectrum.size(), forward.spectrum_size());
            const std::vector<std::complex<T>> as_complex(host.begin(), host.end());
            const auto expected =
                half_columns(reference(as_complex, sizes, 3, false), sizes.back());
            EXPECT_LE(relative_l2_error(spectrum.read(), expected), tolerance<T>(product(sizes)));
            const kiln::vector<T> back_vector = backward(spectrum);
            const std::vector<T> back = back_vector.read();
            const std::vector<std::complex<T>> back_complex(back.begin(), back.end());
            EXPECT_LE(
                relative_l2_error(back_complex, std::vector<cdouble>(host.begin(), host.end())),
                2 * tolerance<T>(product(sizes)));
        });
    const kiln::rfft<float> plan(q, {8});
    EXPECT_THROW(plan(kiln::vector<float>(q, 7)), kiln::invalid_argument_error);
    const kiln::irfft<float> inverse(q, {8});
    EXPECT_THROW(inverse(kiln::vector<std::complex<float>>(q, 8)), kiln::invalid_argument_error);
}

TEST_P(fft_test, bad_input_is_rejected_before_anything_runs) {
    EXPECT_THROW(kiln::fft<float>(q, {0}), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::fft<float>(q, {4, 0}), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::fft<float>(q, {}), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::fft<float>(q, {2, 2, 2, 2}), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::fft<float>(q, {8}, 0), kiln::invalid_argument_error);
    const kiln::fft<float> plan(q, {8});
    const std::vector<std::complex<float>> ones(8, {1, 0});
    const kiln::vector<std::complex<float>> wrong_size(q, std::vector<std::complex<float>>(7));
    const kiln::vector<std::complex<float>> output(q, ones);
    EXPECT_THROW(plan(wrong_size), kiln::invalid_argument_error);
    EXPECT_THROW(plan(wrong_size, output), kiln::invalid_argument_error);
    EXPECT_THROW(plan(output, wrong_size), kiln::invalid_argument_error);
    EXPECT_THROW(plan(kiln::vector<std::complex<float>>()), kiln::invalid_argument_error);
    EXPECT_EQ(output.read(), ones) << "a rejected call must not have written the output";
    for (const kiln::device& other : kiln::devices()) {
        if (other == device()) continue;
        const kiln::queue other_queue(other);
        const kiln::vector<std::complex<float>> elsewhere(other_queue, ones);
        EXPECT_THROW(plan(elsewhere), kiln::invalid_argument_error);
        EXPECT_THROW(plan(elsewhere, output), kiln::invalid_argument_error);
        EXPECT_EQ(output.read(), ones);
    }
}

// {SIZE_MAX} hung in Bluestein's planning (its padded size doubled past 2^64 to 0) and {2^40}
// filled the host's memory with tables: every shape whose buffers the device cannot allocate
// is refused before anything is computed, naming the device's limit.
TEST_P(fft_test, shapes_beyond_the_device_are_refused_before_planning) {
    const std::uint64_t limit = device().properties().max_allocation_bytes;
    const std::size_t fitting = limit / sizeof(std::complex<float>);
    const auto refused = [&](const std::vector<std::size_t>& sizes, std::size_t batch) {
        SCOPED_TRACE(::testing::PrintToString(sizes) + " x" + std::to_string(batch));
        try {
            kiln::fft<float>(q, sizes, batch);
            ADD_FAILURE() << "no error";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(std::to_string(limit)), std::string::npos)
                << e.what();
        }
    };
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    refused({max}, 1);
    refused({std::size_t{1} << 40}, 1);
    refused({std::bit_ceil(fitting + 1)}, 1);  // radix passes, one power of two too large
    refused({std::size_t{1} << 21, std::size_t{1} << 21, std::size_t{1} << 21}, 1);  // 2^66 bytes
    refused({1024}, fitting / 1024 + 1);
    // A prime that fits, whose Bluestein convolution pads it to a power of two that does not.
    const std::size_t power = std::bit_floor(fitting);
    std::size_t prime = power - 1;
    const auto is_prime = [](std::size_t n) {
        for (std::size_t d = 2; d * d <= n; ++d)
            if (n % d == 0) return false;
        return true;
    };
    while (!is_prime(prime)) --prime;
    ASSERT_GT(prime, power / 2);
    refused({prime}, 1);
}

TEST_P(fft_test, a_second_plan_of_the_same_shape_costs_nothing) {
    const kiln::fft<float> first(q, {97, 60}, 3);
    const std::size_t generated = kiln::detail::algorithm_programs_generated();
    const kiln::fft<float> second(q, {97, 60}, 3);
    EXPECT_EQ(&first.plan(), &second.plan()) << "tables and steps are shared";
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), generated);
    const kiln::fft<float> other_batch(q, {97, 60}, 5);
    EXPECT_NE(&first.plan(), &other_batch.plan());
    EXPECT_EQ(kiln::detail::algorithm_programs_generated(), generated)
        << "pass kernels depend on the pass lengths, not on the batch";
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(fft_test);

}  // namespace
