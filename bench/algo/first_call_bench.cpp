// SPDX-License-Identifier: Apache-2.0
// The first call of one algorithm in a new process: what a user waits for before the first
// result, most of it building the algorithm's programs (PoCL compiles them with LLVM; kiln's
// disk cache keeps the binaries for the next process).
//
//     first_call_bench WORK [log2(n)]        (n defaults to 2^20)
//     first_call_bench --list
//
// Prints one markdown row: the first call's wall time (build and run), the second call's (the
// run alone), and the device. WORK is one of --list's names. scripts/first-call-times.sh runs
// every WORK twice in new processes, with empty caches and then with the caches the first
// process filled, and prints the table docs/benchmarks.md quotes.
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <kiln/algorithm.hpp>
#include <kiln/fft.hpp>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <kiln/stencil.hpp>
#include <kiln/stencil_2d.hpp>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "spmv_matrices.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

/// Each work's data is made before the timed calls; the returned function is one call that
/// waits for its result.
using work_maker = std::function<std::function<void()>(const kiln::queue&, std::size_t)>;

std::vector<std::int32_t> ramp(std::size_t n) {
    std::vector<std::int32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>((i * 2654435761u) >> 7);
    return v;
}

const std::map<std::string, work_maker>& works() {
    static const std::map<std::string, work_maker> all = {
        {"copy",
         [](const kiln::queue& q, std::size_t n) {
             auto x = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             auto y = std::make_shared<kiln::vector<std::int32_t>>(q, n);
             return std::function<void()>([=] {
                 *y = *x;
                 q.finish();
             });
         }},
        {"sum",
         [](const kiln::queue& q, std::size_t n) {
             auto x = std::make_shared<kiln::vector<float>>(q, std::vector<float>(n, 1.0f));
             return std::function<void()>([=] { (void)kiln::sum(*x); });
         }},
        {"inclusive_scan",
         [](const kiln::queue& q, std::size_t n) {
             auto x = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             auto y = std::make_shared<kiln::vector<std::int32_t>>(q, n);
             return std::function<void()>([=] {
                 kiln::inclusive_scan(*x, *y);
                 q.finish();
             });
         }},
        {"copy_if",
         [](const kiln::queue& q, std::size_t n) {
             auto x = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             auto y = std::make_shared<kiln::vector<std::int32_t>>(q, n);
             return std::function<void()>([=] { (void)kiln::copy_if(*x, (*x & 1) == 0, *y); });
         }},
        {"unique",
         [](const kiln::queue& q, std::size_t n) {
             std::vector<std::int32_t> runs(n);
             for (std::size_t i = 0; i < n; ++i) runs[i] = static_cast<std::int32_t>(i / 8);
             auto x = std::make_shared<kiln::vector<std::int32_t>>(q, runs);
             return std::function<void()>([=] { (void)kiln::unique(*x); });
         }},
        {"reduce_by_key",
         [](const kiln::queue& q, std::size_t n) {
             std::vector<std::int32_t> keys(n);
             for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<std::int32_t>(i / 8);
             auto k = std::make_shared<kiln::vector<std::int32_t>>(q, keys);
             auto v = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             auto ok = std::make_shared<kiln::vector<std::int32_t>>(q, n);
             auto ov = std::make_shared<kiln::vector<std::int32_t>>(q, n);
             return std::function<void()>([=] { (void)kiln::reduce_by_key(*k, *v, *ok, *ov); });
         }},
        {"sort",
         [](const kiln::queue& q, std::size_t n) {
             auto x = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             return std::function<void()>([=] { kiln::sort(*x); });
         }},
        {"sort_by_key",
         [](const kiln::queue& q, std::size_t n) {
             auto k = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             auto v = std::make_shared<kiln::vector<std::int32_t>>(q, ramp(n));
             return std::function<void()>([=] { kiln::sort_by_key(*k, *v); });
         }},
        {"fft",
         [](const kiln::queue& q, std::size_t n) {
             using cfloat = std::complex<float>;
             auto x = std::make_shared<kiln::vector<cfloat>>(q, std::vector<cfloat>(n, 1.0f));
             auto y = std::make_shared<kiln::vector<cfloat>>(q, n);
             return std::function<void()>([=] {
                 const kiln::fft<float> forward(q, {n});
                 forward(*x, *y);
                 q.finish();
             });
         }},
        {"spmv",
         [](const kiln::queue& q, std::size_t n) {
             const std::size_t side = static_cast<std::size_t>(std::sqrt(double(n)));
             const spmv_matrices::csr m = spmv_matrices::poisson_2d(side);
             auto A = std::make_shared<kiln::sparse_matrix<float>>(
                 q, m.rows, m.columns, m.row_pointers, m.column_indices, m.values);
             auto x = std::make_shared<kiln::vector<float>>(q, std::vector<float>(m.columns, 1));
             auto y = std::make_shared<kiln::vector<float>>(q, m.rows);
             return std::function<void()>([=] {
                 *y = *A * *x;
                 q.finish();
             });
         }},
        {"stencil_1d",
         [](const kiln::queue& q, std::size_t n) {
             auto S = std::make_shared<kiln::stencil<float>>(
                 q, std::vector<float>{-1.0f / 12, 4.0f / 3, -5.0f / 2, 4.0f / 3, -1.0f / 12}, 2);
             auto x = std::make_shared<kiln::vector<float>>(q, std::vector<float>(n, 1.0f));
             auto y = std::make_shared<kiln::vector<float>>(q, n);
             return std::function<void()>([=] {
                 *y = *x * *S;
                 q.finish();
             });
         }},
        {"stencil_2d",
         [](const kiln::queue& q, std::size_t n) {
             const std::size_t side = static_cast<std::size_t>(std::sqrt(double(n)));
             kiln::slicer<2> grid({side, side});
             auto L = std::make_shared<kiln::stencil_2d<float>>(
                 kiln::stencil_2d<float>::laplacian_5(q, grid));
             auto x =
                 std::make_shared<kiln::vector<float>>(q, std::vector<float>(side * side, 1.0f));
             auto y = std::make_shared<kiln::vector<float>>(q, side * side);
             return std::function<void()>([=] {
                 *y = *x * *L;
                 q.finish();
             });
         }},
    };
    return all;
}

double seconds_of(const std::function<void()>& call) {
    const auto start = clock_type::now();
    call();
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--list") == 0) {
        for (const auto& [name, make] : works()) std::printf("%s\n", name.c_str());
        return argc < 2 ? 1 : 0;
    }
    const auto found = works().find(argv[1]);
    if (found == works().end()) {
        std::fprintf(stderr, "first_call_bench: no work named %s (--list)\n", argv[1]);
        return 1;
    }
    const std::size_t n = std::size_t{1} << (argc > 2 ? std::atoi(argv[2]) : 20);
    try {
        const kiln::queue q(kiln::default_device());
        const std::function<void()> call = found->second(q, n);
        q.finish();
        const double first = seconds_of(call);
        const double second = seconds_of(call);
        std::printf("| %s | %.3f s | %.4f s | %s |\n", found->first.c_str(), first, second,
                    q.device().name().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "first_call_bench %s: %s\n", argv[1], e.what());
        return 1;
    }
}
