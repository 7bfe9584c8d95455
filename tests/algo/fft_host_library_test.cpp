// SPDX-License-Identifier: Apache-2.0
// kiln::fft's host-library strategy beneath the plan (src/algo/fft/fft_host_library.hpp): a
// shape without FFTW wisdom answers its first calls with an estimated plan while a thread
// measures, and the measured plan takes over; the wisdom file is read only when it is a small
// regular file. No device: FFTW transforms host arrays.
#include "algo/fft/fft_host_library.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "runtime/test_helpers.hpp"
#include "support/hang_guard.hpp"

namespace {

using kiln::detail::fft_shape;
using kiln::detail::fftw_plan_origin;
using kiln::detail::fftw_transform;
using cfloat = std::complex<float>;

constexpr std::size_t n = 65536;  // two threads' worth (a thread per 32768 elements)

/// n complex floats, as aligned as FFTW's own arrays.
struct aligned_array {
    std::unique_ptr<cfloat[], decltype(&std::free)> data{
        static_cast<cfloat*>(std::aligned_alloc(64, n * sizeof(cfloat))), &std::free};
    cfloat* get() const { return data.get(); }
};

// Two tones, whose forward transform is n at bin 3 and n/2 at bin 1000, zero elsewhere.
void fill_tones(cfloat* x) {
    for (std::size_t j = 0; j < n; ++j) {
        const double t = 2 * std::numbers::pi * double(j) / double(n);
        x[j] = cfloat(std::polar(1.0, 3 * t) + std::polar(0.5, 1000 * t));
    }
}

double relative_error(const cfloat* got, const cfloat* expected) {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
        error += std::norm(std::complex<double>(got[i]) - std::complex<double>(expected[i]));
        norm += std::norm(std::complex<double>(expected[i]));
    }
    return std::sqrt(error / norm);
}

// docs/fft.md's promise for float, 2e-7 log2 N, with room for the input's rounding.
constexpr double tolerance = 4e-7 * 16;

void expect_tones(const cfloat* spectrum) {
    aligned_array expected;
    std::fill_n(expected.get(), n, cfloat());
    expected.get()[3] = float(n);
    expected.get()[1000] = float(n) / 2;
    EXPECT_LE(relative_error(spectrum, expected.get()), tolerance);
}

std::unique_ptr<fftw_transform> forward_transform() {
    return fftw_transform::make(fft_shape{{n}, 1, false, false}, 2);
}

TEST(fft_host_library, first_calls_take_an_estimated_plan_until_the_measured_one_is_made) {
    aligned_array input, estimated, measured, in_place;
    fill_tones(input.get());
    {
        const kiln::detail::scoped_fftw_wisdom_ignored no_wisdom;
        const auto transform = forward_transform();
        if (!transform) GTEST_SKIP() << "FFTW (libfftw3-single3) is not installed";

        EXPECT_EQ(transform->execute(input.get(), estimated.get()), fftw_plan_origin::estimated);
        expect_tones(estimated.get());
        transform->wait_for_measuring();
        EXPECT_EQ(transform->execute(input.get(), measured.get()), fftw_plan_origin::measured);
        expect_tones(measured.get());
        EXPECT_LE(relative_error(measured.get(), estimated.get()), tolerance);

        // In place: a plan of its own, estimated and measured the same way.
        for (const fftw_plan_origin origin :
             {fftw_plan_origin::estimated, fftw_plan_origin::measured}) {
            std::memcpy(in_place.get(), input.get(), n * sizeof(cfloat));
            EXPECT_EQ(transform->execute(in_place.get(), in_place.get()), origin);
            expect_tones(in_place.get());
            transform->wait_for_measuring();
        }
    }
    // The measuring left its wisdom: a new transform of the shape plans measured at once.
    const auto again = forward_transform();
    EXPECT_EQ(again->execute(input.get(), measured.get()), fftw_plan_origin::measured);
    expect_tones(measured.get());
}

TEST(fft_host_library, arrays_less_aligned_than_the_kept_plans_take_a_plan_of_their_own) {
    const auto transform = forward_transform();
    if (!transform) GTEST_SKIP() << "FFTW (libfftw3-single3) is not installed";
    // One float past FFTW's alignment, n + 1 complex floats each.
    std::vector<float> input_floats(2 * n + 2), output_floats(2 * n + 2);
    auto* input = reinterpret_cast<cfloat*>(input_floats.data() + 1);
    auto* output = reinterpret_cast<cfloat*>(output_floats.data() + 1);
    fill_tones(input);
    EXPECT_EQ(transform->execute(input, output), fftw_plan_origin::once);
    expect_tones(output);
}

TEST(fft_host_library, a_transform_let_go_while_it_measures_leaves_the_measuring_to_finish) {
    aligned_array input, output;
    fill_tones(input.get());
    {
        const kiln::detail::scoped_fftw_wisdom_ignored no_wisdom;
        for (int round = 0; round < 3; ++round) {
            const auto transform = forward_transform();
            if (!transform) GTEST_SKIP() << "FFTW (libfftw3-single3) is not installed";
            EXPECT_EQ(transform->execute(input.get(), output.get()), fftw_plan_origin::estimated);
        }  // destroyed before its measuring ends, most likely: the thread must not touch it
    }
    // The planner comes free again for other transforms, whose plans are right.
    const auto inverse = fftw_transform::make(fft_shape{{n}, 1, true, false}, 2);
    aligned_array back;
    inverse->execute(output.get(), back.get());
    inverse->wait_for_measuring();
    EXPECT_LE(relative_error(back.get(), input.get()), tolerance);
}

// The wisdom file is read like a compile-cache entry. A FIFO at its path hung the first transform,
// and a link to /dev/zero ended the process with an uncaught std::bad_alloc.
TEST(fft_host_library, wisdom_is_read_only_from_a_small_regular_file) {
    const kiln::test::hang_guard guard(std::chrono::seconds(60));
    const kiln::test::temp_dir dir;
    const kiln::test::scoped_env cache("KILN_CACHE_DIR", dir.path().string());
    const std::filesystem::path file = dir.path() / "fftw-wisdom-float";
    const std::filesystem::path kept = dir.path() / "kept";
    const std::string wisdom = "(fftw-3.3.10 fftwf_wisdom #x0 #x0 #x0 #x0\n)\n";
    std::ofstream(kept) << wisdom;

    std::filesystem::copy_file(kept, file);
    EXPECT_EQ(kiln::detail::read_fftw_wisdom(false), wisdom);
    EXPECT_EQ(kiln::detail::read_fftw_wisdom(true), std::nullopt);  // fftw-wisdom-double
    const std::map<std::string, std::function<void()>> plants = {
        {"a FIFO", [&] { ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0); }},
        {"a link to /dev/zero", [&] { std::filesystem::create_symlink("/dev/zero", file); }},
        {"a link to a good file", [&] { std::filesystem::create_symlink(kept, file); }},
        {"a folder", [&] { std::filesystem::create_directory(file); }},
        {"a good file grown past 16 MiB",
         [&] {
             std::filesystem::copy_file(kept, file);
             std::filesystem::resize_file(file, std::uintmax_t(32) << 20);  // sparse
         }},
    };
    for (const auto& [name, plant] : plants) {
        SCOPED_TRACE(name);
        std::filesystem::remove(file);
        plant();
        EXPECT_EQ(kiln::detail::read_fftw_wisdom(false), std::nullopt);
    }
}

}  // namespace
