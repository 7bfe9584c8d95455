// SPDX-License-Identifier: Apache-2.0
// The C++ twin of python/bench/bench.py's large works: the same calls on the same sizes, each
// figure the median seconds per call over 15 batches of 10 back-to-back calls ended by one wait,
// after an untimed call, as bench.py times kiln.sort, kiln.cumsum, kiln.sum and `@`. bench.py
// runs it (--cpp PATH) and prints Python's figure over this one's.
//
//     python_twin_bench [--matmul N] [exponent...]
//
// (default 24 26 28, and N = 4096; the device is KILN_DEVICE's). Each line reads "twin <work>
// <exponent> <seconds>": sort (into another vector), sort_in_place (a copy of the keys and the
// sort, less the copy), cumsum (inclusive_scan into another vector), sum, and matmul, whose
// exponent is N's (N^3 floats, TF32 off).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kiln/algo/sort_copy.hpp>
#include <kiln/kiln.hpp>
#include <random>
#include <string>
#include <vector>

#include "report_start.hpp"
#include "timing.hpp"

namespace {

constexpr int batches = 15;
constexpr int calls_per_batch = 10;

/// Median seconds per call of `work`, as bench.py's per_call takes it.
template <class Work>
double median_seconds_per_call(const kiln::queue& q, Work&& work) {
    work();
    q.finish();
    std::vector<double> per_call;
    for (int b = 0; b < batches; ++b) {
        const auto start = kiln::bench::clock_type::now();
        for (int c = 0; c < calls_per_batch; ++c) work();
        q.finish();
        per_call.push_back(kiln::bench::seconds_since(start) / calls_per_batch);
    }
    std::nth_element(per_call.begin(), per_call.begin() + batches / 2, per_call.end());
    return per_call[batches / 2];
}

void print(const char* work, int exponent, double seconds) {
    std::printf("twin %s %d %.9g\n", work, exponent, seconds);
    std::fflush(stdout);
}

void large(const kiln::queue& q, int exponent) {
    const std::size_t n = std::size_t{1} << exponent;
    std::mt19937 engine(7);
    std::vector<std::uint32_t> keys(n);
    std::vector<float> values(n);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = static_cast<std::uint32_t>(engine());
        values[i] = unit(engine);
    }
    const kiln::vector<std::uint32_t> k(q, keys);
    const kiln::vector<float> v(q, values);
    kiln::vector<std::uint32_t> sorted(q, n), work(q, n);
    kiln::vector<float> scanned(q, n);
    print("sort", exponent, median_seconds_per_call(q, [&] { kiln::sort(k, sorted); }));
    const double copy_and_sort = median_seconds_per_call(q, [&] {
        work = k;
        kiln::sort(work);
    });
    const double copy = median_seconds_per_call(q, [&] { work = k; });
    print("sort_in_place", exponent, copy_and_sort - copy);
    print("cumsum", exponent,
          median_seconds_per_call(q, [&] { kiln::inclusive_scan(v, scanned); }));
    float total = 0;
    print("sum", exponent, median_seconds_per_call(q, [&] { total = kiln::sum(v); }));
    if (!(total > 0)) std::printf("the sum is %g: wrong\n", static_cast<double>(total));
}

void matmul(const kiln::queue& q, std::size_t n) {
    std::mt19937 engine(11);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> host(n * n);
    for (float& e : host) e = unit(engine);
    const kiln::matrix<float> a(q, n, n, host);
    kiln::matrix<float> c(q, n, n);
    print("matmul", std::bit_width(n) - 1,
          median_seconds_per_call(q, [&] { kiln::gemm(c, a, a); }));
}

}  // namespace

int main(int argc, char** argv) {
    const kiln::device dev = kiln::bench::devices_chosen().front();
    const kiln::queue q(dev);
    std::printf("python_twin_bench on %s, %s\n", dev.name().c_str(), kiln::bench::today().c_str());
    std::vector<int> exponents;
    std::size_t matmul_size = 4096;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--matmul" && i + 1 < argc)
            matmul_size = std::strtoull(argv[++i], nullptr, 10);
        else
            exponents.push_back(std::atoi(argv[i]));
    }
    if (exponents.empty()) exponents = {24, 26, 28};
    for (int exponent : exponents) large(q, exponent);
    matmul(q, matmul_size);
}
