// SPDX-License-Identifier: Apache-2.0
// kiln::histogram beside CUB's DeviceHistogram::HistogramEven (CUDA machines) and one host thread
// (CPU devices), on the same floats in the same run: 256 even bins over [0, 1), the values
// uniform, or all in one bin (every atomic on one counter: the contention case).
//
//     histogram_bench [log2(n)]
//
// Measures every device KILN_DEVICE matches (e.g. KILN_DEVICE=cuda), or every device when it is
// unset; n defaults to 2^28 on GPUs and 2^24 on CPU devices. KILN_HISTOGRAM_STRATEGY
// (local_atomics, global_atomics, cpu_chunks) forces kiln's strategy. Counts are checked against
// the reference's; CUB's bins of values on an edge may round differently, which the check column
// reports as the bins that differ.
//
// KILN_HISTOGRAM_BENCH_TUNINGS lists tunings to time after the plan's own, separated by ';', as
// KILN_HISTOGRAM_TUNING takes them (src/algo/histogram/histogram_tuning.hpp: the strategy, then
// fields g<group> u<loads> c<copies> m<local memory share> p<groups per compute unit>
// q<steps a group claims at a time, 0: the grid's stride>, and
// flags wide (16-byte loads), single (an atomic per element, no runs) and ahead (16-byte loads
// issued a step ahead); those left out keep their defaults), so that one run compares candidate
// rows on the same data beside the same reference:
//
//     KILN_HISTOGRAM_BENCH_TUNINGS="local_atomics p8 wide;local_atomics p8 wide ahead single"
//
// The bench sets KILN_HISTOGRAM_TUNING itself, and clears it for the plan's own rows.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"
#include "tuning_sweep.hpp"

#ifdef KILN_BENCH_HAVE_CUB
#include "cub_histogram_reference.hpp"
#endif

namespace {

constexpr std::size_t bins = 256;
constexpr float lo = 0.0f, hi = 1.0f;

std::vector<float> uniform_values(std::size_t n) {
    std::mt19937_64 engine(20261125);
    std::uniform_real_distribution<float> uniform(lo, hi);
    std::vector<float> values(n);
    for (float& v : values) v = uniform(engine);
    return values;
}

/// One host thread: the bins docs/algorithms.md gives, in a plain loop.
std::vector<std::uint32_t> host_histogram(const std::vector<float>& values) {
    std::vector<std::uint32_t> counts(bins);
    const float scale = float(bins) / (hi - lo);
    for (const float x : values) {
        if (!(x >= lo && x < hi)) continue;
        const float f = (x - lo) * scale;
        ++counts[f < float(bins) ? std::size_t(f) : bins - 1];
    }
    return counts;
}

std::size_t bins_that_differ(const std::vector<std::uint32_t>& a,
                             const std::vector<std::uint32_t>& b) {
    std::size_t differ = 0;
    for (std::size_t i = 0; i < bins; ++i) differ += a[i] != b[i];
    return differ;
}

/// Times the reference once, then kiln under the plan's tuning and each of `tunings`: a row each.
void run_case(const kiln::device& dev, const char* what, const std::vector<float>& host,
              const std::vector<std::string>& tunings, bool* all_equal) {
    const kiln::queue q(dev);
    const kiln::vector<float> x(q, host);
    kiln::vector<std::uint32_t> counts(q, bins);
    double reference = 0;
    const char* ref_name = "";
    std::vector<std::uint32_t> expected;
#ifdef KILN_BENCH_HAVE_CUB
    if (!dev.is_cpu()) {
        expected.resize(bins);
        reference =
            cub_histogram_seconds(host.data(), host.size(), bins, lo, hi, 10, expected.data());
        ref_name = "CUB";
    }
#endif
    if (dev.is_cpu()) {
        reference = kiln::bench::best_host_seconds(3, [&] { expected = host_histogram(host); });
        ref_name = "one host thread";
    }
    if (expected.empty()) expected = host_histogram(host);
    std::vector<std::string> runs{""};
    runs.insert(runs.end(), tunings.begin(), tunings.end());
    for (const std::string& tuning : runs) {
        const kiln_bench::forced_tuning forced("KILN_HISTOGRAM_TUNING", tuning);
        const int repeats = dev.is_cpu() ? 3 : 10;
        double seconds = 0;
        try {
            seconds = kiln::bench::best_seconds_per_call(
                q, repeats, 1, [&] { kiln::histogram(x, counts, lo, hi); });
        } catch (const kiln::error& e) {
            // A tuning the device cannot run (a group past the kernel's limit) ends its row only.
            std::printf("| %s | %s | failed: %s | | | |\n", what, tuning.c_str(), e.what());
            continue;
        }
        const std::vector<std::uint32_t> result = counts.read();
        const std::size_t differ = bins_that_differ(result, expected);
        // CUB may bin a value on an edge one way and kiln the other; a count off elsewhere is
        // wrong.
        std::uint64_t total = 0;
        for (const std::uint32_t c : result) total += c;
        const bool right = total == host.size() && (differ == 0 || ref_name == std::string("CUB"));
        *all_equal = *all_equal && right;
        const double n = static_cast<double>(host.size());
        std::printf("| %s | %s | %.3f ms | %.3g Gvalues/s |", what,
                    tuning.empty() ? "the plan's" : tuning.c_str(), seconds * 1e3,
                    n / seconds / 1e9);
        if (reference > 0) {
            std::printf(" %.3f ms %s | %.2fx |", reference * 1e3, ref_name, reference / seconds);
            kiln::bench::record_ratio(
                std::string(what) + (tuning.empty() ? "" : " (" + tuning + ")"),
                reference / seconds, kiln::bench::measure::speed, ref_name);
        } else {
            std::printf(" | |");
        }
        std::printf(" %s, %zu bins differ |\n", right ? "counts right" : "WRONG", differ);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 0;
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        const std::string date = kiln::bench::today();
        const std::vector<kiln::device> chosen = kiln::bench::devices_chosen();
        const std::vector<std::string> tunings =
            kiln_bench::tunings_listed_in("KILN_HISTOGRAM_BENCH_TUNINGS");
        bool all_equal = true;
        for (const kiln::device& dev : chosen) {
            const int log2 = log2_n > 0 ? log2_n : (dev.is_cpu() ? 24 : 28);
            const std::size_t n = std::size_t{1} << log2;
            kiln::bench::record_rows_of(dev, "histogram");
            std::printf("\n### %s, %s (%s), %zu bins, n = 2^%d\n\n", date.c_str(),
                        dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(),
                        bins, log2);
            std::printf(
                "| floats | kiln tuning | kiln | kiln rate | reference | ratio | check |\n");
            std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
            run_case(dev, "uniform", uniform_values(n), tunings, &all_equal);
            run_case(dev, "all in one bin", std::vector<float>(n, 0.5f), tunings, &all_equal);
        }
        if (!all_equal) {
            std::fprintf(stderr, "histogram_bench: counts were wrong\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "histogram_bench: %s\n", e.what());
        return 1;
    }
}
