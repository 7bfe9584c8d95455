// SPDX-License-Identifier: Apache-2.0
// Reproducible mode's cost (docs/reproducibility.md): sum, dot, minimum and inclusive scan of
// floats, sum and inclusive scan of doubles, a float sparse product, segmented sums and scans and
// reduce_by_key of floats, and float and double gemm
// (4096^3; CPUs 512^3), in the default mode
// (run_to_run) and in reproducible mode, on the same data in one run, with CUB's DeviceReduce::Sum
// beside them on CUDA devices (run-to-run, and gpu_to_gpu where the CUB has it).
//
//     reproducible_bench [log2(n) [segments|scans|sums]]   (default 28 on GPUs, 24 on CPUs;
//                                                          KILN_DEVICE picks devices; segments,
//                                                          scans: those rows alone; sums: the
//                                                          sums' and CUB's rows)
//
// Each row gives the device time of a call's kernels (the best of 20 calls, as CUDA events time
// CUB's) and the wall time per call (best of batches, host fold included), as bandwidth and as a
// share of the device's copy bound; reproducible rows add their ratio to the default's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <optional>
#include <string>
#include <vector>

#include "device_limits.hpp"
#include "report_start.hpp"
#include "timing.hpp"
#if KILN_BENCH_HAVE_CUB
#include "cub_reproducible_reference.hpp"
#endif

namespace {

struct timing {
    double device_seconds = 0, wall_seconds = 0;
};

template <class T, class Work>
timing time_work(const kiln::device& dev, const std::vector<std::vector<T>>& inputs,
                 kiln::determinism mode, Work&& work) {
    const kiln::scoped_determinism guard(mode);
    std::vector<std::optional<kiln::vector<T>>> vectors(inputs.size());
    timing t;
    t.device_seconds = kiln::bench::device_seconds_per_call(dev, 20, [&](const kiln::queue& q) {
        for (std::size_t i = 0; i < inputs.size(); ++i) vectors[i].emplace(q, inputs[i]);
        return [&] { work(vectors); };
    });
    const kiln::queue q(dev);
    for (std::size_t i = 0; i < inputs.size(); ++i) vectors[i].emplace(q, inputs[i]);
    t.wall_seconds = kiln::bench::best_seconds_per_call(q, 5, 10, [&] { work(vectors); });
    return t;
}

void print_row(const std::string& what, double seconds, double bytes, double bound,
               const std::string& note) {
    const double gb_per_s = bytes / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.1f GB/s | %.1f%% | %s |\n", what.c_str(), seconds * 1e3,
                gb_per_s, 100 * gb_per_s / bound, note.c_str());
}

template <class T, class Work>
void compare(const kiln::device& dev, const std::string& what,
             const std::vector<std::vector<T>>& inputs, double bound, Work&& work) {
    const double bytes = static_cast<double>(inputs.size() * inputs[0].size() * sizeof(T));
    const timing plain = time_work<T>(dev, inputs, kiln::determinism::run_to_run, work);
    const timing reproducible = time_work<T>(dev, inputs, kiln::determinism::reproducible, work);
    print_row(what + ", default (device)", plain.device_seconds, bytes, bound, "");
    print_row(what + ", reproducible (device)", reproducible.device_seconds, bytes, bound,
              std::to_string(plain.device_seconds / reproducible.device_seconds).substr(0, 4) +
                  "x the default");
    print_row(what + ", default (wall)", plain.wall_seconds, bytes, bound, "");
    print_row(what + ", reproducible (wall)", reproducible.wall_seconds, bytes, bound,
              std::to_string(plain.wall_seconds / reproducible.wall_seconds).substr(0, 4) +
                  "x the default");
}

/// Floats drawn from a fixed stream, of magnitudes from 2^-20 to 2^20 and both signs.
template <class T>
std::vector<T> values(std::size_t n, unsigned seed) {
    std::vector<T> v(n);
    std::uint64_t state = seed;
    for (auto& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double unit = static_cast<double>(state >> 11) * 0x1.0p-53;
        x = static_cast<T>((unit - 0.5) * std::ldexp(1.0, static_cast<int>(state % 41) - 20));
    }
    return v;
}

/// y = A x for a random matrix of n / 32 rows of 16 to 48 entries (n entries in all) over as
/// many columns, in both modes; the bytes are the entries' (a value and a column each) and y's.
void sparse_product(const kiln::device& dev, std::size_t n, double bound) {
    const std::size_t rows = n / 32;
    std::vector<std::uint32_t> row_pointers{0}, columns;
    std::uint64_t state = 9;
    for (std::size_t r = 0; r < rows; ++r) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const std::size_t length = 16 + (state >> 33) % 33;
        for (std::size_t k = 0; k < length; ++k) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            columns.push_back(static_cast<std::uint32_t>((state >> 33) % rows));
        }
        row_pointers.push_back(static_cast<std::uint32_t>(columns.size()));
    }
    const std::vector<float> entries = values<float>(columns.size(), 4);
    const std::vector<float> x_host = values<float>(rows, 5);
    const double bytes = static_cast<double>(columns.size() * 8 + rows * 8);
    const auto time_mode = [&](kiln::determinism mode) {
        const kiln::scoped_determinism guard(mode);
        std::optional<kiln::sparse_matrix<float>> A;
        std::optional<kiln::vector<float>> x, y;
        return kiln::bench::device_seconds_per_call(dev, 20, [&](const kiln::queue& q) {
            A.emplace(q, rows, rows, row_pointers, columns, entries);
            x.emplace(q, x_host);
            y.emplace(q, rows);
            return [&] { *y = *A * *x; };
        });
    };
    const double plain = time_mode(kiln::determinism::run_to_run);
    const double reproducible = time_mode(kiln::determinism::reproducible);
    const std::string what = "y = A * x, " + std::to_string(columns.size()) + " entries";
    print_row(what + ", default (device)", plain, bytes, bound, "");
    print_row(what + ", reproducible (device)", reproducible, bytes, bound,
              std::to_string(plain / reproducible).substr(0, 4) + "x the default");
}

/// segmented_reduce, segmented_inclusive_scan and reduce_by_key of n floats in segments (runs of
/// keys) of 0 to 1999 elements, in both modes; the bytes are the values' and offsets' or keys'
/// read and the results written.
void segments(const kiln::device& dev, std::size_t n, double bound) {
    std::vector<std::uint32_t> offsets{0}, keys(n);
    std::uint64_t state = 11;
    while (offsets.back() < n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        offsets.push_back(static_cast<std::uint32_t>(
            std::min<std::uint64_t>(n, offsets.back() + (state >> 33) % 2000)));
    }
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
        std::fill(keys.begin() + offsets[s], keys.begin() + offsets[s + 1],
                  static_cast<std::uint32_t>(s));
    const std::size_t segment_count = offsets.size() - 1;
    const std::vector<float> x_host = values<float>(n, 8);
    const double reduced = static_cast<double>(n * 4 + segment_count * 8);
    const double scanned = static_cast<double>(n * 8 + segment_count * 4);
    const double by_key = static_cast<double>(n * 8 + segment_count * 8);
    const auto time_mode = [&](kiln::determinism mode, int work) {
        const kiln::scoped_determinism guard(mode);
        std::optional<kiln::vector<float>> x, out;
        std::optional<kiln::vector<std::uint32_t>> o, k, unique;
        return kiln::bench::device_seconds_per_call(dev, 20, [&](const kiln::queue& q) {
            x.emplace(q, x_host);
            o.emplace(q, offsets);
            k.emplace(q, keys);
            out.emplace(q, work == 0 ? segment_count : n);
            unique.emplace(q, n);
            return [&, work] {
                if (work == 0) kiln::segmented_reduce(*x, *o, *out);
                if (work == 1) kiln::segmented_inclusive_scan(*x, *o, *out);
                if (work == 2) (void)kiln::reduce_by_key(*k, *x, *unique, *out);
            };
        });
    };
    const char* names[] = {"segmented_reduce float", "segmented_inclusive_scan float",
                           "reduce_by_key float"};
    const double bytes[] = {reduced, scanned, by_key};
    for (int work = 0; work < 3; ++work) {
        const double plain = time_mode(kiln::determinism::run_to_run, work);
        const double reproducible = time_mode(kiln::determinism::reproducible, work);
        const std::string what = std::string(names[work]) + ", segments of 0-1999";
        print_row(what + ", default (device)", plain, bytes[work], bound, "");
        print_row(what + ", reproducible (device)", reproducible, bytes[work], bound,
                  std::to_string(plain / reproducible).substr(0, 4) + "x the default");
    }
}

/// C = A B of size^3 elements of T, in both modes, in GFLOP/s: wall time per call (the best of
/// batches), since the default mode's CPU strategy (OpenBLAS) runs no kernel.
template <class T>
void matrix_product(const kiln::device& dev, std::size_t size, const std::string& what) {
    const std::vector<T> a = values<T>(size * size, 6), b = values<T>(size * size, 7);
    const kiln::queue q(dev);
    const kiln::matrix<T> A(q, size, size, a), B(q, size, size, b);
    const kiln::matrix<T> C(q, size, size);
    const auto time_mode = [&](kiln::determinism mode) {
        const kiln::scoped_determinism guard(mode);
        return kiln::bench::best_seconds_per_call(q, 3, 5, [&] { kiln::gemm(C, A, B); });
    };
    const double plain = time_mode(kiln::determinism::run_to_run);
    const double reproducible = time_mode(kiln::determinism::reproducible);
    const double flops = 2.0 * static_cast<double>(size) * static_cast<double>(size * size);
    const std::string name = "gemm " + what + " " + std::to_string(size) + "^3";
    std::printf("| %s, default (wall) | %.3f ms | %.0f GFLOP/s | | |\n", name.c_str(), plain * 1e3,
                flops / plain / 1e9);
    std::printf("| %s, reproducible (wall) | %.3f ms | %.0f GFLOP/s | | %.2fx the default |\n",
                name.c_str(), reproducible * 1e3, flops / reproducible / 1e9, plain / reproducible);
}

}  // namespace

/// The inclusive scans of `x` (floats) and of n/2 doubles; each reads one vector and writes
/// another: the bytes of both.
void scans(const kiln::device& dev, const std::vector<float>& x, double bound) {
    using floats = std::vector<std::optional<kiln::vector<float>>>;
    compare<float>(dev, "inclusive_scan float", {x, x}, bound,
                   [](const floats& v) { kiln::inclusive_scan(*v[0], *v[1]); });
    if (!dev.properties().double_precision) return;
    const std::vector<double> xd = values<double>(x.size() / 2, 3);
    using doubles = std::vector<std::optional<kiln::vector<double>>>;
    compare<double>(dev, "inclusive_scan double (n/2)", {xd, xd}, bound,
                    [](const doubles& v) { kiln::inclusive_scan(*v[0], *v[1]); });
}

int main(int argc, char** argv) {
    for (const kiln::device& dev : kiln::bench::devices_chosen()) {
        const int log2_n = argc > 1 ? std::atoi(argv[1]) : (dev.is_cpu() ? 24 : 28);
        const std::string only = argc > 2 ? argv[2] : "";
        const std::size_t n = std::size_t{1} << log2_n;
        const double bound = kiln::bench::copy_bound(dev, n * sizeof(float));
        std::printf("\n%s, %s (%s), n = 2^%d, %s; copy bound %.1f GB/s (%s)\n\n",
                    kiln::bench::today().c_str(), dev.name().c_str(),
                    std::string(kiln::to_string(dev.backend())).c_str(), log2_n,
                    "reproducible_bench", bound, kiln::bench::copy_bound_name(dev));
        std::printf("| work | time | bandwidth | of copy | note |\n|---|---|---|---|---|\n");
        if (only == "segments") {  // the segmented rows alone, for a sweep of tunings
            segments(dev, n, bound);
            continue;
        }
        const std::vector<std::vector<float>> x = {values<float>(n, 1)};
        if (only == "scans") {  // the scans' rows alone
            scans(dev, x[0], bound);
            continue;
        }
        const std::vector<std::vector<float>> xy = {x[0], values<float>(n, 2)};
        using floats = std::vector<std::optional<kiln::vector<float>>>;
        compare<float>(dev, "sum float", x, bound, [](const floats& v) { (void)kiln::sum(*v[0]); });
        compare<float>(dev, "dot float", xy, bound,
                       [](const floats& v) { (void)kiln::sum(*v[0] * *v[1]); });
        if (only != "sums")
            compare<float>(dev, "minimum float", x, bound,
                           [](const floats& v) { (void)kiln::minimum(*v[0]); });
        if (dev.properties().double_precision) {
            using doubles = std::vector<std::optional<kiln::vector<double>>>;
            compare<double>(dev, "sum double (n/2)", {values<double>(n / 2, 3)}, bound,
                            [](const doubles& v) { (void)kiln::sum(*v[0]); });
        }
        if (only != "sums") {  // sums: the sums' rows and CUB's alone
            scans(dev, x[0], bound);
            sparse_product(dev, n, bound);
            segments(dev, n, bound);
            const std::size_t size = dev.is_cpu() ? 512 : 4096;
            matrix_product<float>(dev, size, "float");
            if (dev.properties().double_precision) matrix_product<double>(dev, size, "double");
        }
#if KILN_BENCH_HAVE_CUB
        if (dev.backend() == kiln::backend_kind::cuda) {
            const double bytes = static_cast<double>(n * sizeof(float));
            float cub_result = 0;
            print_row("sum float, CUB DeviceReduce::Sum (run_to_run)",
                      cub_sum_seconds(x[0].data(), n, false, 20, &cub_result), bytes, bound, "");
            const double g2g = cub_sum_seconds(x[0].data(), n, true, 20, &cub_result);
            if (g2g > 0)
                print_row("sum float, CUB DeviceReduce::Sum (gpu_to_gpu)", g2g, bytes, bound,
                          "temporary storage allocated by each call");
            else
                std::printf("| sum float, CUB gpu_to_gpu | | | | not in this CUB (CCCL < 3.1) |\n");
        }
#endif
    }
}
