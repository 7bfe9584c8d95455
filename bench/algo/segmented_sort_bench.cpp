// SPDX-License-Identifier: Apache-2.0
// kiln::segmented_sort beside CUB's DeviceSegmentedSort (CUDA machines) and one host thread's
// std::sort per segment (CPU devices), on the same keys in the same run: uint32 and float keys in
// segments of 16, 128, 1000 and 10^5 keys, and of random lengths (uniform over [0, 2000)); uint32
// keys also with uint32 values (SortPairs; the host sorts (key, value) pairs).
//
//     segmented_sort_bench [log2(n)] [segment length]
//
// A segment length (0: the random lengths) runs that length alone. Measures every device
// KILN_DEVICE matches, or every device when it is unset; n defaults to 2^24.
// KILN_SEGMENTED_SORT_STRATEGY (group_tile, lane_tile, radix_twice, cpu_chunks) forces kiln's
// strategy. kiln sorts in place, so each timed call first copies the keys (and values) from a
// pristine vector on the device; the copy, timed alone, is taken off. CUB sorts out of place
// from the same data each run. The sorted keys are checked against the host's. On GPUs a last row
// per case times the plan's kernels alone, as CUB's CUDA events time the reference.
// KILN_SEGMENTED_SORT_BENCH_TUNINGS lists tunings to time after the plan's own, separated by ';',
// as segmented_sort_tuning::key() writes them; each gets a row of its own:
//
//     KILN_SEGMENTED_SORT_BENCH_TUNINGS="group_tile w256;group_tile w128 i4"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <kiln/kiln.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"
#include "tuning_sweep.hpp"

#ifdef KILN_BENCH_HAVE_CUB
#include "cub_segmented_sort_reference.hpp"
#endif

namespace {

/// Offsets of segments of `length` keys (the last one shorter), or of random lengths below 2000
/// where length is 0.
std::vector<std::int32_t> segment_offsets(std::size_t n, std::size_t length) {
    std::mt19937_64 engine(42);
    std::vector<std::int32_t> offsets{0};
    while (std::size_t(offsets.back()) < n) {
        const std::size_t next = length != 0 ? length : engine() % 2000;
        offsets.push_back(std::int32_t(std::min(n, std::size_t(offsets.back()) + next)));
    }
    return offsets;
}

std::vector<std::uint32_t> random_bits(std::size_t n, bool floats) {
    std::mt19937_64 engine(20261125);
    std::vector<std::uint32_t> keys(n);
    std::uniform_real_distribution<float> uniform(-1000.0f, 1000.0f);
    for (std::uint32_t& k : keys) {
        if (floats) {
            const float f = uniform(engine);
            std::memcpy(&k, &f, sizeof k);
        } else {
            k = std::uint32_t(engine());
        }
    }
    return keys;
}

/// One host thread: std::sort of each segment, floats by value; with `pairs`, of (key, value)
/// pairs, the values being the keys' positions (which a stable sort's ties keep in order).
void host_sort(std::vector<std::uint32_t>& keys, const std::vector<std::int32_t>& offsets,
               bool floats, bool pairs) {
    std::vector<std::uint64_t> packed;
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
        const auto begin = keys.begin() + offsets[s], end = keys.begin() + offsets[s + 1];
        if (pairs) {
            packed.clear();
            for (auto k = begin; k != end; ++k)
                packed.push_back(std::uint64_t(*k) << 32 | std::uint64_t(k - keys.begin()));
            std::sort(packed.begin(), packed.end());
            for (std::size_t i = 0; i < packed.size(); ++i)
                begin[std::ptrdiff_t(i)] = std::uint32_t(packed[i] >> 32);
        } else if (floats) {
            float* first = reinterpret_cast<float*>(&*begin);
            std::sort(first, first + (end - begin));
        } else {
            std::sort(begin, end);
        }
    }
}

template <class K>
void run_case(const kiln::device& dev, const std::vector<std::uint32_t>& bits,
              const std::vector<std::int32_t>& host_offsets, std::size_t length, bool floats,
              bool pairs, const std::vector<std::string>& tunings, bool* all_right) {
    const kiln::queue q(dev);
    const std::size_t n = bits.size(), segments = host_offsets.size() - 1;
    std::vector<K> host_keys(n);
    std::memcpy(host_keys.data(), bits.data(), n * sizeof(K));
    std::vector<std::uint32_t> host_values(n);
    for (std::size_t i = 0; i < n; ++i) host_values[i] = std::uint32_t(i);
    const kiln::vector<K> pristine(q, host_keys);
    const kiln::vector<std::uint32_t> pristine_values(q, host_values);
    const kiln::vector<std::int32_t> offsets(q, host_offsets);
    kiln::vector<K> keys(q, n);
    kiln::vector<std::uint32_t> values(q, n);

    std::vector<std::uint32_t> expected = bits;
    double reference = 0;
    const char* ref_name = "";
#ifdef KILN_BENCH_HAVE_CUB
    if (!dev.is_cpu()) {
        reference =
            cub_segmented_sort_seconds(bits.data(), floats, pairs ? host_values.data() : nullptr, n,
                                       host_offsets.data(), segments, 10, expected.data());
        ref_name = "CUB";
    }
#endif
    if (reference == 0) {
        std::vector<std::uint32_t> sorted;
        const double host = kiln::bench::best_host_seconds(
            dev.is_cpu() ? 3 : 1, [&] { sorted = bits; },
            [&] { host_sort(sorted, host_offsets, floats, pairs); });
        expected = sorted;
        if (dev.is_cpu()) {
            reference = host;
            ref_name = "one host thread";
        }
    }
    const int repeats = dev.is_cpu() ? 3 : 10;
    const auto copy = [&] {
        keys = pristine;
        if (pairs) values = pristine_values;
    };
    const double copy_seconds = kiln::bench::best_seconds_per_call(q, repeats, 1, copy);
    std::vector<std::string> runs{""};
    runs.insert(runs.end(), tunings.begin(), tunings.end());
    const std::string lengths = length ? std::to_string(length) : "random < 2000";
    // A row: the sorted keys checked against the host's, the time against the reference's.
    const auto report = [&](const std::string& label, double seconds,
                            const kiln::vector<K>& sorted) {
        const std::vector<K> result = sorted.read();
        const bool right = std::memcmp(result.data(), expected.data(), n * sizeof(K)) == 0;
        *all_right = *all_right && right;
        std::printf("| %s %s | %s | %zu | %s | %.3f ms | %.3g Gkeys/s |",
                    floats ? "float" : "uint32", pairs ? "+ uint32 values" : "keys",
                    lengths.c_str(), segments, label.c_str(), seconds * 1e3,
                    double(n) / seconds / 1e9);
        if (reference > 0) {
            std::printf(" %.3f ms %s | %.2fx |", reference * 1e3, ref_name, reference / seconds);
            kiln::bench::record_ratio(std::string("sort ") + (floats ? "float" : "uint32") +
                                          (pairs ? " + uint32 values" : " keys") +
                                          ", segments of " + lengths + ", " + label,
                                      reference / seconds, kiln::bench::measure::speed, ref_name);
        } else {
            std::printf(" | |");
        }
        std::printf(" %s |\n", right ? "sorted right" : "WRONG");
    };
    const auto sort = [&](kiln::vector<K>& k, kiln::vector<std::uint32_t>& v,
                          const kiln::vector<std::int32_t>& o) {
        if (pairs)
            kiln::segmented_sort_by_key(k, v, o);
        else
            kiln::segmented_sort(k, o);
    };
    for (const std::string& tuning : runs) {
        const kiln_bench::forced_tuning forced("KILN_SEGMENTED_SORT_TUNING", tuning);
        const double seconds = kiln::bench::best_seconds_per_call(q, repeats, 1,
                                                                  [&] {
                                                                      copy();
                                                                      sort(keys, values, offsets);
                                                                  }) -
                               copy_seconds;
        report(tuning.empty() ? "plan" : tuning, seconds, keys);
    }
    if (reference > 0 && !dev.is_cpu()) {
        // The plan's kernels alone, as CUB's CUDA events time it (the copies are not kernels).
        std::optional<kiln::vector<K>> on_pristine, on_keys;
        std::optional<kiln::vector<std::uint32_t>> on_pristine_values, on_values;
        std::optional<kiln::vector<std::int32_t>> on_offsets;
        const double seconds =
            kiln::bench::device_seconds_per_call(dev, repeats, [&](const kiln::queue& profiled) {
                on_pristine.emplace(profiled, host_keys);
                on_pristine_values.emplace(profiled, host_values);
                on_offsets.emplace(profiled, host_offsets);
                on_keys.emplace(profiled, n);
                on_values.emplace(profiled, n);
                return [&] {
                    *on_keys = *on_pristine;
                    if (pairs) *on_values = *on_pristine_values;
                    sort(*on_keys, *on_values, *on_offsets);
                };
            });
        report("plan, kernels alone", seconds, *on_keys);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 24;
    const std::vector<std::size_t> lengths =
        argc > 2 ? std::vector<std::size_t>{std::size_t(std::strtoull(argv[2], nullptr, 10))}
                 : std::vector<std::size_t>{16, 128, 1000, 100000, 0};
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        const std::string date = kiln::bench::today();
        const std::vector<kiln::device> chosen = kiln::bench::devices_chosen();
        const std::size_t n = std::size_t{1} << log2_n;
        bool all_right = true;
        const std::vector<std::string> tunings =
            kiln_bench::tunings_listed_in("KILN_SEGMENTED_SORT_BENCH_TUNINGS");
        for (const kiln::device& dev : chosen) {
            kiln::bench::record_rows_of(dev, "segmented");
            std::printf("\n### %s, %s (%s), n = 2^%d\n\n", date.c_str(), dev.name().c_str(),
                        std::string(kiln::to_string(dev.backend())).c_str(), log2_n);
            std::printf(
                "| keys | segment length | segments | kiln tuning | kiln | kiln rate | reference | "
                "ratio | check |\n");
            std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
            for (const std::size_t length : lengths) {
                const std::vector<std::int32_t> offsets = segment_offsets(n, length);
                for (const bool floats : {false, true}) {
                    const std::vector<std::uint32_t> bits = random_bits(n, floats);
                    if (floats)
                        run_case<float>(dev, bits, offsets, length, true, false, tunings,
                                        &all_right);
                    else
                        run_case<std::uint32_t>(dev, bits, offsets, length, false, false, tunings,
                                                &all_right);
                }
                run_case<std::uint32_t>(dev, random_bits(n, false), offsets, length, false, true,
                                        tunings, &all_right);
            }
        }
        if (!all_right) {
            std::fprintf(stderr, "segmented_sort_bench: keys were sorted wrong\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "segmented_sort_bench: %s\n", e.what());
        return 1;
    }
}
