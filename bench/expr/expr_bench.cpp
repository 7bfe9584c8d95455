// SPDX-License-Identifier: Apache-2.0
// Benchmarks of vector expressions against the device's own copy bandwidth and plain CPU loops.
//
//     expr_bench [log2(n)]     (default 28 on GPUs, 24 on CPUs; KILN_DEVICE picks the device)
//
// Prints one markdown table for docs/benchmarks.md: the device's copy bandwidth (a buffer copy
// timed with profiling events: the practical limit), `y = 2*x + 3*z`, `sum(x)`, the first launch
// of a new expression with a warm disk cache, the same work as plain single-threaded C++ loops
// on the host, and `y = 2*x + z` and `sum(x)` over float, half and bfloat16 vectors.
// bench/expr/cub_reference.cu measures CUB and Thrust on the same work.
//
// KILN_REDUCE_BENCH_TUNINGS lists reduction tunings to time on the 16-bit sums after the
// device's own row, separated by ';', as KILN_REDUCE_TUNING takes them
// (kiln/detail/algo/reduce_tuning.hpp: the loop, then fields g<group size> p<groups per compute
// unit> a<accumulators> w<16-byte loads per step> v<elements per vector step of chunked loops>,
// those left out keeping their defaults), so that one run compares candidate rows on the same
// data:
//
//     KILN_REDUCE_BENCH_TUNINGS="strided g256 p16 a4 w2;strided g512 p8 a8 w4" expr_bench 28
//     KILN_DEVICE=cpu KILN_REDUCE_BENCH_TUNINGS="chunked g1 p16 a4 v0" expr_bench 24
//
// The bench sets KILN_REDUCE_TUNING itself, and clears it for the device's own rows.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <device_limits.hpp>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"
#include "tuning_sweep.hpp"

namespace {

using kiln::bench::best_host_seconds;
using kiln::bench::best_seconds_per_call;
using kiln::bench::clock_type;
using kiln::bench::seconds_since;

/// A table row: the time, the bandwidth, and its share of the limit where one is given.
void print_row(const char* what, double seconds, double bytes, double limit_gb_per_s,
               const char* note) {
    const double gb_per_s = bytes / seconds / 1e9;
    if (limit_gb_per_s > 0)
        std::printf("| %s | %.3f ms | %.1f GB/s | %.1f%% | %s |\n", what, seconds * 1e3, gb_per_s,
                    100.0 * gb_per_s / limit_gb_per_s, note);
    else
        std::printf("| %s | %.3f ms | %.1f GB/s | | %s |\n", what, seconds * 1e3, gb_per_s, note);
}

/// A row of kiln's work, also recorded against the limit (ratio_rows.hpp); the host's own loops
/// are printed alone.
void row(const char* what, double seconds, double bytes, double limit_gb_per_s,
         const char* note = "") {
    print_row(what, seconds, bytes, limit_gb_per_s, note);
    if (limit_gb_per_s > 0)
        kiln::bench::record_ratio(what, bytes / seconds / 1e9 / limit_gb_per_s,
                                  kiln::bench::measure::bandwidth, "copy");
}

/// The best device time of the reduction kernel of `sum(x)` over 20 runs on a profiled queue.
template <class T>
double sum_kernel_seconds(const kiln::device& dev, const std::vector<T>& host) {
    kiln::queue profiled_q(dev, kiln::profiled);
    kiln::vector<T> x(profiled_q, host);
    double best = 1e30;
    for (int r = 0; r < 20; ++r) {
        auto pending = kiln::reduce_async<kiln::reducers::sum>(x);
        pending.get();
        for (const auto& launch : pending.kernel_events())
            best = std::min(best, std::chrono::duration<double>(launch.duration()).count());
    }
    return best;
}

/// The device time of `y = 2*x + z`, the shortest of 20 (device_seconds_per_call): the same
/// measure as the copy bandwidth's, without the launches' gaps that wall-clock time per
/// assignment adds.
template <class T>
double statement_kernel_seconds(const kiln::device& dev, const std::vector<T>& hx,
                                const std::vector<T>& hz) {
    std::optional<kiln::vector<T>> x, z, y;
    return kiln::bench::device_seconds_per_call(dev, 20, [&](const kiln::queue& q) {
        x.emplace(q, hx);
        z.emplace(q, hz);
        y.emplace(q, hx.size());
        return [&] { *y = 2 * *x + *z; };
    });
}

/// `sum(x)` over a 16-bit vector under the device's row, then under each tuning of
/// KILN_REDUCE_BENCH_TUNINGS: a row each, wall clock per call and the kernel alone, against a
/// copy of the bytes it reads.
template <class T>
void binary16_sum_rows(kiln::queue& q, const char* type, const std::vector<T>& hx,
                       const kiln::vector<T>& x) {
    const std::size_t n = hx.size();
    double exact_sum = 0;
    for (const T& v : hx) exact_sum += static_cast<float>(v);
    const kiln::device dev = q.device();
    const double limit = kiln::bench::copy_bound(dev, n * sizeof(T) / 2);
    std::vector<std::string> tunings = kiln_bench::tunings_listed_in("KILN_REDUCE_BENCH_TUNINGS");
    tunings.insert(tunings.begin(), "");
    for (const std::string& tuning : tunings) {
        const kiln_bench::forced_tuning forcing("KILN_REDUCE_TUNING", tuning);
        float device_sum = 0;
        // Each call alone, the best of 20, as CUB's sum with its copy is timed (cub_reference.cu):
        // a batch's mean would add the host's slowest round trips to kiln's side only.
        device_sum = kiln::sum(x);
        const double sum = best_host_seconds(20, [&] { device_sum = kiln::sum(x); });
        const double kernel = sum_kernel_seconds(dev, hx);
        const std::string name =
            std::string("`sum(x)`, ") + type + (tuning.empty() ? "" : ", " + tuning);
        char note[160];
        std::snprintf(
            note, sizeof note,
            "%.2f G elements/s; float accumulator, relative error %.1e; wall clock, best call",
            n / sum / 1e9, std::fabs(device_sum - exact_sum) / exact_sum);
        row(name.c_str(), sum, 1.0 * n * sizeof(T), limit, note);
        const std::string kernel_name = name + ", kernel only";
        row(kernel_name.c_str(), kernel, 1.0 * n * sizeof(T), limit, "device event, best of 20");
    }
}

/// `y = 2*x + z` and `sum(x)` over 16-bit vectors (elements load as float, compute in float and
/// store rounded once; sum accumulates in float), each against a copy of the bytes it moves
/// (copy_bound: on CPU devices the host's STREAM-style copy on every core, whose speed depends
/// on the size; on GPUs the device's own copy): at it, they move twice float's elements per
/// second. Returns the number of wrong elements of y.
template <class T>
std::size_t binary16_rows(kiln::queue& q, const char* type, const std::vector<float>& host_x,
                          const std::vector<float>& host_z) {
    const std::size_t n = host_x.size();
    std::vector<T> hx(n), hz(n);
    for (std::size_t i = 0; i < n; ++i) {
        hx[i] = T(host_x[i]);
        hz[i] = T(host_z[i]);
    }
    kiln::vector<T> x(q, hx), z(q, hz), y(q, n);
    const double axpy = best_seconds_per_call(q, 5, 20, [&] { y = 2 * x + z; });
    const std::vector<T> result = y.read();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        wrong +=
            result[i].bits() != T(2 * static_cast<float>(hx[i]) + static_cast<float>(hz[i])).bits();
    const std::string axpy_name = std::string("`y = 2*x + z`, ") + type;
    char note[128];
    std::snprintf(note, sizeof note, "%.2f G elements/s; wall clock per assignment",
                  n / axpy / 1e9);
    const kiln::device dev = q.device();
    const double limit = kiln::bench::copy_bound(dev, 3 * n * sizeof(T) / 2);
    row(axpy_name.c_str(), axpy, 3.0 * n * sizeof(T), limit, note);
    row((axpy_name + ", kernel only").c_str(), statement_kernel_seconds(dev, hx, hz),
        3.0 * n * sizeof(T), limit, "device time, best of 20");
    binary16_sum_rows(q, type, hx, x);
    return wrong;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const kiln::device dev = kiln::default_device();
        const int log2_n = argc > 1 ? std::atoi(argv[1]) : (dev.is_gpu() ? 28 : 24);
        const std::size_t n = std::size_t{1} << log2_n;
        // Wall-clock timings on a plain queue: profiling can add work to every command.
        kiln::queue q(dev);

        std::vector<float> host_x(n), host_z(n), host_y(n);
        for (std::size_t i = 0; i < n; ++i) {
            host_x[i] = static_cast<float>(i % 1024) / 1024.0f;
            host_z[i] = 1.0f - static_cast<float>(i % 512) / 512.0f;
        }
        kiln::vector<float> x(q, host_x), z(q, host_z), y(q, n);

        const double copy_gb_per_s = kiln::bench::measure_copy_bandwidth(dev, n * sizeof(float));

        const double axpy = best_seconds_per_call(q, 5, 20, [&] { y = 2 * x + 3 * z; });
        float device_sum = 0;
        const double sum = best_seconds_per_call(q, 5, 20, [&] { device_sum = kiln::sum(x); });
        // The reduction kernel alone, from its profiling event on a profiled queue: the
        // wall-clock time above adds the launch, the read of the partial results and the wait.
        const double sum_kernel = sum_kernel_seconds(dev, host_x);

        // First launch of an expression this process has not run, its binary on disk: drop
        // kiln's in-memory caches so that the statement regenerates its source, finds the binary
        // in the disk cache, loads it and launches. Small vectors: this times the overhead.
        kiln::vector<float> small_x(q, 1024), small_y(q, 1024);
        auto fresh_expression = [&] {
            small_y = kiln::sqrt(small_x * 0.25f + 7) - kiln::cos(small_x);
        };
        fresh_expression();  // compiles and stores the binary on disk, if it was not there yet
        q.finish();
        std::vector<double> first_launches;
        for (int r = 0; r < 9; ++r) {
            kiln::expression_cache::clear();
            kiln::program_cache::clear_memory();
            const auto start = clock_type::now();
            fresh_expression();
            q.finish();
            first_launches.push_back(seconds_since(start));
        }
        std::nth_element(first_launches.begin(), first_launches.begin() + 4, first_launches.end());
        const double first_launch = first_launches[4];
        const auto cache = kiln::program_cache::stats();

        const double host_axpy = best_host_seconds(5, [&] {
            for (std::size_t i = 0; i < n; ++i) host_y[i] = 2 * host_x[i] + 3 * host_z[i];
        });
        float host_float_sum = 0;
        const double host_sum_time = best_host_seconds(
            5, [&] { host_float_sum = std::accumulate(host_x.begin(), host_x.end(), 0.0f); });
        double exact_sum = 0;
        for (float v : host_x) exact_sum += v;

        const std::vector<float> result = y.read();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i)
            wrong += std::fabs(result[i] - host_y[i]) > 1e-6f * (1 + std::fabs(host_y[i]));

        const std::string date = kiln::bench::today();
        kiln::bench::record_rows_of(dev, "vector expressions");
        std::printf("### %s, %s (%s), n = 2^%d floats\n\n", date.c_str(), dev.name().c_str(),
                    std::string(kiln::to_string(dev.backend())).c_str(), log2_n);
        std::printf(
            "| work | time | bandwidth | of copy bandwidth | notes |\n|---|---|---|---|---|\n");
        row("buffer copy (limit)", 2.0 * n * sizeof(float) / (copy_gb_per_s * 1e9),
            2.0 * n * sizeof(float), 0, "device events, best of 10; read + write");
        row("`y = 2*x + 3*z`", axpy, 3.0 * n * sizeof(float), copy_gb_per_s,
            "wall clock per assignment, best batch");
        char note[128];
        std::snprintf(note, sizeof note, "result on the host; relative error vs double %.1e",
                      std::fabs(device_sum - exact_sum) / exact_sum);
        row("`sum(x)`", sum, 1.0 * n * sizeof(float), copy_gb_per_s, note);
        row("`sum(x)`, reduction kernel only", sum_kernel, 1.0 * n * sizeof(float), copy_gb_per_s,
            "device event, best of 20");
        std::printf(
            "| first launch, new expression, warm disk cache | %.3f ms | | | median of 9; %zu disk "
            "hits |\n",
            first_launch * 1e3, cache.disk_hits);
        print_row("CPU loop `y = 2*x + 3*z`", host_axpy, 3.0 * n * sizeof(float), copy_gb_per_s,
                  "one host thread");
        std::snprintf(note, sizeof note, "one host thread, float accumulator (relative error %.1e)",
                      std::fabs(host_float_sum - exact_sum) / exact_sum);
        print_row("CPU loop sum", host_sum_time, 1.0 * n * sizeof(float), copy_gb_per_s, note);
        // The float baseline of the 16-bit rows: the same statement, 4-byte elements. The 16-bit
        // rows' percentages are of a copy of their own bytes (binary16_rows).
        const double float_axpy = best_seconds_per_call(q, 5, 20, [&] { y = 2 * x + z; });
        std::snprintf(note, sizeof note, "%.2f G elements/s; the 16-bit rows' baseline",
                      n / float_axpy / 1e9);
        row("`y = 2*x + z`, float", float_axpy, 3.0 * n * sizeof(float), copy_gb_per_s, note);
        kiln::bench::record_rows_of(dev, "16-bit types");
        const std::size_t wrong_half = binary16_rows<kiln::half>(q, "half", host_x, host_z);
        const std::size_t wrong_bf16 = binary16_rows<kiln::bfloat16>(q, "bfloat16", host_x, host_z);
        std::printf("\nspeed-up over the CPU loop: %.1fx (y = 2*x + 3*z), %.1fx (sum)\n",
                    host_axpy / axpy, host_sum_time / sum);
        if (wrong_half + wrong_bf16 != 0) {
            std::fprintf(stderr, "expr_bench: %zu half and %zu bfloat16 elements of y differ\n",
                         wrong_half, wrong_bf16);
            return 1;
        }
        if (wrong != 0) {
            std::fprintf(stderr, "expr_bench: %zu elements of y differ from the CPU\n", wrong);
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "expr_bench: %s\n", e.what());
        return 2;
    }
}
