// SPDX-License-Identifier: Apache-2.0
// kiln::segmented_reduce beside CUB's DeviceSegmentedReduce::Sum, and
// kiln::segmented_inclusive_scan beside CUB's DeviceScan::InclusiveSumByKey with segment numbers as
// keys (made before the timing) on CUDA machines, and each beside one host thread on CPU devices,
// on the same floats in the same run: n floats in segments of one fixed length (1, 10, 100, 1000,
// 10^4, 10^6), then in segments of random lengths 1 .. 10^6. kiln's rows are wall clock per call,
// the result waited for; on GPUs a last row per case times the plan's kernels alone, as CUB's
// CUDA events time the reference. On CPU devices kiln and the host thread are timed in turn, 15
// times each, and each row gives the best of either.
//
//     segmented_bench [log2(n)]
//
// Measures every device KILN_DEVICE matches (e.g. KILN_DEVICE=cuda), or every device when it is
// unset; n defaults to 2^26 on GPUs and 2^24 on CPU devices. KILN_SEGMENTED_STRATEGY
// (thread_per_segment, team_per_segment, cpu_chunks, flat_tiles, tile_reductions; the scan takes
// flat_tiles for tile_reductions) forces kiln's strategy. The values
// are small integers, which floats sum exactly in any order, so results are checked exactly against
// the reference's.
//
// KILN_SEGMENTED_BENCH_TUNINGS lists tunings to time after the plan's own, separated by ';', as
// KILN_SEGMENTED_TUNING takes them (src/algo/segmented/segmented_tuning.hpp: the strategy, then
// fields g<group> e<elements per lane> u<unroll> b<chunk elements> k<chunks per compute unit>
// c<the CPU scan's block> i<tile reductions' items per work-item> r<mean length from which the
// reduction takes tile reductions> s<the same for the scan's flat tiles>, and wide for the teams'
// 16-byte loads; those left out keep their defaults). A tuning whose strategy is flat_tiles or
// tile_reductions runs it at every length (the scan: flat tiles for both), so that one run
// compares them with the plan's choice:
//
//     KILN_SEGMENTED_BENCH_TUNINGS="team_per_segment e4;team_per_segment wide;flat_tiles"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"
#include "tuning_sweep.hpp"

#ifdef KILN_BENCH_HAVE_CUB
#include "cub_segmented_reference.hpp"
#endif

namespace {

std::vector<float> small_integers(std::size_t n) {
    std::mt19937_64 engine(20261125);
    std::vector<float> values(n);
    for (float& v : values) v = float(engine() % 4);
    return values;
}

/// Offsets of segments of `length` elements covering n (the last one shorter).
std::vector<std::int32_t> fixed_offsets(std::size_t n, std::size_t length) {
    std::vector<std::int32_t> offsets{0};
    while (std::size_t(offsets.back()) < n)
        offsets.push_back(std::int32_t(std::min(n, std::size_t(offsets.back()) + length)));
    return offsets;
}

/// Offsets of segments of random lengths 1 .. 10^6 covering n (the last one shorter).
std::vector<std::int32_t> random_offsets(std::size_t n) {
    std::mt19937_64 engine(42);
    std::uniform_int_distribution<std::size_t> length(1, 1000000);
    std::vector<std::int32_t> offsets{0};
    while (std::size_t(offsets.back()) < n)
        offsets.push_back(std::int32_t(std::min(n, std::size_t(offsets.back()) + length(engine))));
    return offsets;
}

// The host references write into outputs allocated before the timing, as kiln's are: a new
// vector per call would time the page faults of its first touch too (2^24 floats: 64 MiB).

/// One host thread: std::accumulate per segment, into `sums` (a sum per segment).
void host_sums(const std::vector<float>& x, const std::vector<std::int32_t>& o,
               std::vector<float>& sums) {
    for (std::size_t i = 0; i + 1 < o.size(); ++i)
        sums[i] = std::accumulate(x.begin() + o[i], x.begin() + o[i + 1], 0.0f);
}

/// One host thread: std::inclusive_scan per segment, into `y` (x's size).
void host_scan(const std::vector<float>& x, const std::vector<std::int32_t>& o,
               std::vector<float>& y) {
    for (std::size_t i = 0; i + 1 < o.size(); ++i)
        std::inclusive_scan(x.begin() + o[i], x.begin() + o[i + 1], y.begin() + o[i]);
}

/// Times the reference once, then kiln under the plan's tuning and each of `tunings`: a row each.
/// `scan`: the inclusive scan, else the reduction.
void run_case(const kiln::device& dev, bool scan, const std::string& what,
              const std::vector<float>& host, const std::vector<std::int32_t>& host_offsets,
              const std::vector<std::string>& tunings, bool* all_equal) {
    const kiln::queue q(dev);
    const kiln::vector<float> x(q, host);
    const kiln::vector<std::int32_t> offsets(q, host_offsets);
    const std::size_t segments = host_offsets.size() - 1;
    kiln::vector<float> results(q, scan ? host.size() : segments);
    double reference = 0;
    const char* ref_name = "";
    std::vector<float> expected;
#ifdef KILN_BENCH_HAVE_CUB
    if (!dev.is_cpu()) {
        expected.resize(results.size());
        reference =
            scan ? cub_segmented_scan_seconds(host.data(), host.size(), host_offsets.data(),
                                              segments, 10, expected.data())
                 : cub_segmented_reduce_seconds(host.data(), host.size(), host_offsets.data(),
                                                segments, 10, expected.data());
        ref_name = "CUB";
    }
#endif
    const auto on_host = [&] {
        if (scan)
            host_scan(host, host_offsets, expected);
        else
            host_sums(host, host_offsets, expected);
    };
    if (expected.empty()) {
        expected.resize(results.size());
        on_host();
        if (dev.is_cpu()) ref_name = "one host thread";
    }
    std::vector<std::string> runs{""};
    runs.insert(runs.end(), tunings.begin(), tunings.end());
    // A row: the results checked against the reference's, the time against its time (traffic
    // where timed by the wall clock).
    const auto report = [&](const std::string& label, double seconds, bool traffic,
                            const kiln::vector<float>& computed) {
        const bool right = computed.read() == expected;
        *all_equal = *all_equal && right;
        const double bytes =
            double(host.size() * sizeof(float) + host_offsets.size() * sizeof(std::int32_t) +
                   segments * sizeof(float));
        std::printf("| %s | %s | %.3f ms |", what.c_str(), label.c_str(), seconds * 1e3);
        if (traffic)
            std::printf(" %.1f GB/s |", bytes / seconds / 1e9);
        else
            std::printf(" |");
        if (reference > 0) {
            std::printf(" %.3f ms %s | %.2fx |", reference * 1e3, ref_name, reference / seconds);
            kiln::bench::record_ratio(what + ", " + label, reference / seconds,
                                      kiln::bench::measure::speed, ref_name);
        } else {
            std::printf(" | |");
        }
        std::printf(" %s |\n", right ? "right" : "WRONG");
    };
    const auto run = [&](const kiln::vector<float>& in, const kiln::vector<std::int32_t>& o,
                         kiln::vector<float>& out) {
        if (scan)
            kiln::segmented_inclusive_scan(in, o, out);
        else
            kiln::segmented_reduce(in, o, out);
    };
    for (const std::string& tuning : runs) {
        const kiln_bench::forced_tuning forced("KILN_SEGMENTED_TUNING", tuning);
        double seconds = 0;
        try {
            if (dev.is_cpu()) {
                // One host thread shares kiln's cores: timed in turn with kiln, row by row.
                std::tie(seconds, reference) = kiln::bench::best_seconds_in_turn(
                    15,
                    [&] {
                        run(x, offsets, results);
                        q.finish();
                    },
                    on_host);
            } else {
                seconds =
                    kiln::bench::best_seconds_per_call(q, 10, 1, [&] { run(x, offsets, results); });
            }
        } catch (const kiln::error& e) {
            // A tuning the device cannot run (a group past the kernel's limit) ends its row only.
            std::printf("| %s | %s | failed: %s | | | |\n", what.c_str(), tuning.c_str(), e.what());
            continue;
        }
        report(tuning.empty() ? "the plan's" : tuning, seconds, true, results);
    }
    if (reference > 0 && !dev.is_cpu()) {
        // The plan's kernels alone, as CUB's CUDA events time it: the rows above add the launch
        // and the wait for the result, a round trip that NVIDIA's OpenCL makes longer than CUDA
        // does. (One host thread, on CPU devices, is timed as kiln is: by the wall clock.)
        std::optional<kiln::vector<float>> on_x, on_results;
        std::optional<kiln::vector<std::int32_t>> on_offsets;
        const double seconds =
            kiln::bench::device_seconds_per_call(dev, 10, [&](const kiln::queue& profiled) {
                on_x.emplace(profiled, host);
                on_offsets.emplace(profiled, host_offsets);
                on_results.emplace(profiled, results.size());
                return [&] { run(*on_x, *on_offsets, *on_results); };
            });
        report("the plan's, kernels alone", seconds, false, *on_results);
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
            kiln_bench::tunings_listed_in("KILN_SEGMENTED_BENCH_TUNINGS");
        bool all_equal = true;
        for (const kiln::device& dev : chosen) {
            const int log2 = log2_n > 0 ? log2_n : (dev.is_cpu() ? 24 : 26);
            const std::size_t n = std::size_t{1} << log2;
            kiln::bench::record_rows_of(dev, "segmented");
            std::printf("\n### %s, %s (%s), n = 2^%d floats\n\n", date.c_str(), dev.name().c_str(),
                        std::string(kiln::to_string(dev.backend())).c_str(), log2);
            std::printf(
                "| segments | kiln tuning | kiln | kiln traffic | reference | ratio | "
                "check |\n");
            std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
            const std::vector<float> host = small_integers(n);
            for (const bool scan : {false, true}) {
                const std::string algorithm = scan ? "scan, " : "reduce, ";
                for (const std::size_t length : {1, 10, 100, 1000, 10000, 1000000})
                    run_case(dev, scan, algorithm + "length " + std::to_string(length), host,
                             fixed_offsets(n, length), tunings, &all_equal);
                run_case(dev, scan, algorithm + "lengths 1 .. 10^6", host, random_offsets(n),
                         tunings, &all_equal);
            }
        }
        if (!all_equal) {
            std::fprintf(stderr, "segmented_bench: results were wrong\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "segmented_bench: %s\n", e.what());
        return 1;
    }
}
