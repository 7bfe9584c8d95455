// SPDX-License-Identifier: Apache-2.0
// kiln::sort and kiln::sort_by_key beside CUB's DeviceRadixSort (CUDA machines) and std::sort on
// one host thread (CPU devices), on the same random data in the same run. On CPU devices a last
// column adds oneTBB's parallel_sort on every host core, where oneTBB (libtbb-dev) was found.
//
//     sort_bench [log2(n)] [--sweep [SHAPES]] [--case TEXT]
//
// Measures every device KILN_DEVICE matches (e.g. KILN_DEVICE=cuda, KILN_DEVICE=opencl,gpu), or
// every device when it is unset. n defaults to 2^28 on GPUs and 2^24 on CPU devices. Key types:
// uint32 (alone and with uint32 values), float, uint64, kiln::half and kiln::bfloat16 (random
// values in [-1, 1), as the float keys). --sweep
// also times every case under other multi-split tuning shapes, to fill the table in
// sort_tuning.cpp: SHAPES is a comma-separated list of GROUPxITEMS, each followed by any of the
// letters radix_shape reads (b: values beside keys; m: peers by match.any; r: rounds; the
// histogram's h<copies>, s, d, a; g<registers> for keys alone, v<registers> with values), e.g.
// 256x20b,384x20m,384x20h8d,384x20mh8da,384x19bg56v80 (a default list without it); a row names its
// shape as written. --case keeps only the cases whose name contains TEXT (e.g. "uint64").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <kiln/algo/sort.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"

#ifdef KILN_BENCH_HAVE_CUB
#include "cub_sort_reference.hpp"
#endif
#ifdef KILN_BENCH_HAVE_TBB
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_sort.h>
#endif

namespace {

/// The same random keys for every case of one type and size, generated once (2^28 keys take
/// seconds on the host).
template <class T>
const std::vector<T>& random_keys(std::size_t n) {
    static std::vector<T> keys;
    if (keys.size() == n) return keys;
    std::mt19937_64 engine(20261122);
    keys.resize(n);
    for (auto& k : keys) {
        if constexpr (std::is_same_v<T, float>)
            k = std::uniform_real_distribution<float>(-1.0f, 1.0f)(engine);
        else if constexpr (kiln::detail::is_binary16_v<T>)
            k = T(std::uniform_real_distribution<float>(-1.0f, 1.0f)(engine));
        else
            k = static_cast<T>(engine());
    }
    return keys;
}

/// Best wall-clock time of sort(keys[, values]) over `repeats` runs, each on a fresh copy of the
/// input (the copy is not timed). kiln's sorts return when the data is sorted.
template <class K>
double best_kiln_seconds(const kiln::queue& q, const std::vector<K>& host,
                         const std::vector<std::uint32_t>* values, int repeats, bool* sorted) {
    kiln::vector<K> pristine(q, host), keys(q, host.size());
    kiln::vector<std::uint32_t> pristine_values, vals;
    if (values) {
        pristine_values = kiln::vector<std::uint32_t>(q, *values);
        vals = kiln::vector<std::uint32_t>(q, values->size());
    }
    const auto restore = [&] {
        keys = pristine;
        if (values) vals = pristine_values;
        q.finish();
    };
    const auto sort = [&] {
        if (values)
            kiln::sort_by_key(keys, vals);
        else
            kiln::sort(keys);
    };
    restore();
    sort();  // builds the programs
    const double best = kiln::bench::best_host_seconds(repeats, restore, sort);
    const std::vector<K> result = keys.read();
    *sorted = std::is_sorted(result.begin(), result.end());
    if (values && *sorted) {
        // Each value is its key's input index: it must point at an equal key.
        const auto moved = vals.read();
        for (std::size_t i = 0; i < moved.size() && *sorted; i += 4099)
            *sorted = host[moved[i]] == result[i];
    }
    return best;
}

/// Best of two runs of `sort_fn` over fresh copies of the input (not timed): `copy` of the keys
/// alone, or (key, index) pairs ordered by key.
template <class K, class Sort>
double best_host_sort_seconds(const std::vector<K>& host, const std::vector<std::uint32_t>& index,
                              bool with_values, Sort sort_fn) {
    std::vector<std::pair<K, std::uint32_t>> pairs;
    std::vector<K> copy;
    return kiln::bench::best_host_seconds(
        2,
        [&] {
            if (!with_values) {
                copy = host;
                return;
            }
            pairs.clear();
            for (std::size_t i = 0; i < host.size(); ++i) pairs.emplace_back(host[i], index[i]);
        },
        [&] {
            if (with_values)
                sort_fn(pairs.begin(), pairs.end(),
                        [](const auto& a, const auto& b) { return a.first < b.first; });
            else
                sort_fn(copy.begin(), copy.end(), std::less<>{});
        });
}

void report(const char* what, std::size_t n, double seconds, double reference, const char* ref_name,
            bool sorted, double parallel_reference) {
    const double rate = static_cast<double>(n) / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.3g Gkeys/s |", what, seconds * 1e3, rate);
    if (reference > 0) {
        std::printf(" %.3f ms | %.3g Gkeys/s | %.2fx %s |", reference * 1e3,
                    static_cast<double>(n) / reference / 1e9, reference / seconds, ref_name);
        kiln::bench::record_ratio(what, reference / seconds, kiln::bench::measure::speed, ref_name);
    } else
        std::printf(" | | |");
    std::printf(" %s |", sorted ? "sorted" : "WRONG");
    if (parallel_reference > 0) {
        std::printf(" %.3f ms, %.2fx |", parallel_reference * 1e3, parallel_reference / seconds);
        kiln::bench::record_ratio(what, parallel_reference / seconds, kiln::bench::measure::speed,
                                  "oneTBB parallel_sort, every host thread");
    }
    std::printf("\n");
}

template <class K>
void run_case(const kiln::device& dev, const char* what, std::size_t n, bool with_values,
              [[maybe_unused]] int cub_case, int repeats, bool* all_sorted) {
    const std::vector<K>& host = random_keys<K>(n);
    std::vector<std::uint32_t> index;
    if (with_values) {
        index.resize(n);
        for (std::size_t i = 0; i < n; ++i) index[i] = static_cast<std::uint32_t>(i);
    }
    kiln::queue q(dev);
    bool sorted = false;
    double kiln_time = 0;
    try {
        kiln_time = best_kiln_seconds(q, host, with_values ? &index : nullptr, repeats, &sorted);
    } catch (const kiln::error& e) {
        // A shape the device refuses (local memory, work-group size) ends this row only.
        std::printf("| %s | failed: %s |\n", what, e.what());
        return;
    }
    *all_sorted = *all_sorted && sorted;
    double reference = 0;
    const char* ref_name = "";
    double parallel_reference = 0;
    if (dev.is_cpu()) {
        // std::sort on one host thread, same data (pairs sorted as (key, value) structs).
        reference = best_host_sort_seconds(
            host, index, with_values,
            [](auto first, auto last, auto less) { std::sort(first, last, less); });
        ref_name = "std::sort";
#ifdef KILN_BENCH_HAVE_TBB
        parallel_reference = best_host_sort_seconds(
            host, index, with_values,
            [](auto first, auto last, auto less) { tbb::parallel_sort(first, last, less); });
#endif
    }
#ifdef KILN_BENCH_HAVE_CUB
    else {
        // Once per case and size: the sweep's rows compare with the same CUB time.
        static std::map<std::pair<int, std::size_t>, double> cub_seconds;
        auto& cub = cub_seconds[{cub_case, n}];
        if (cub == 0)
            cub = cub_sort_seconds(static_cast<cub_sort_case>(cub_case), host.data(),
                                   with_values ? index.data() : nullptr, n, repeats);
        reference = cub;
        ref_name = "CUB";
    }
#endif
    report(what, n, kiln_time, reference, ref_name, sorted, parallel_reference);
}

/// The six cases of one device under the policy in force: `label` is appended to each name;
/// only cases whose name contains `only` run.
void run_cases(const kiln::device& dev, std::size_t n, int repeats, const std::string& label,
               const std::string& only, bool* all_sorted) {
    const auto name = [&](const char* what) { return std::string(what) + label; };
    const auto wanted = [&](const char* what) {
        return only.empty() || name(what).find(only) != std::string::npos;
    };
    if (wanted("uint32 keys"))
        run_case<std::uint32_t>(dev, name("uint32 keys").c_str(), n, false, 0, repeats, all_sorted);
    if (wanted("uint32 key + uint32 value"))
        run_case<std::uint32_t>(dev, name("uint32 key + uint32 value").c_str(), n, true, 1, repeats,
                                all_sorted);
    if (wanted("float keys"))
        run_case<float>(dev, name("float keys").c_str(), n, false, 2, repeats, all_sorted);
    if (wanted("uint64 keys"))
        run_case<std::uint64_t>(dev, name("uint64 keys").c_str(), n, false, 3, repeats, all_sorted);
    // Against CUB on __half and __nv_bfloat16 keys, which it sorts natively in 2 passes.
    if (wanted("half keys"))
        run_case<kiln::half>(dev, name("half keys").c_str(), n, false, 4, repeats, all_sorted);
    if (wanted("bfloat16 keys"))
        run_case<kiln::bfloat16>(dev, name("bfloat16 keys").c_str(), n, false, 5, repeats,
                                 all_sorted);
}

/// "256x20" as a multi-split policy with 8-bit digits, and after it any of: b (values beside
/// keys), m (peers by match.any), r (ranked in rounds, not by the multi-split), and the single
/// pass's histogram: h<copies>, s (a copy per sub-group), d (a digit's copies side by side),
/// a (peers add once); and g<registers> (a work-item's registers at most, NVIDIA GPUs). E.g.
/// "384x20mh8da", "384x20g56".
kiln::detail::radix_sort_tuning radix_shape(const std::string& text) {
    kiln::detail::radix_sort_tuning p{.radix_bits = 8, .multi_split = true};
    const auto bad = [&] { return std::runtime_error("sort_bench: bad shape " + text); };
    const auto x = text.find('x');
    if (x == std::string::npos) throw bad();
    p.work_group_size = std::stoul(text.substr(0, x));
    std::size_t digits = 0;
    p.items_per_work_item = std::stoul(text.substr(x + 1), &digits);
    // The number that follows the letter at `i`, which then moves to its last digit.
    const auto number_after = [&](std::size_t& i) {
        std::size_t number_digits = 0;
        const auto number = static_cast<unsigned>(std::stoul(text.substr(i + 1), &number_digits));
        i += number_digits;
        return number;
    };
    for (std::size_t i = x + 1 + digits; i < text.size(); ++i) {
        switch (text[i]) {
            case 'b':
                p.values_beside_keys = true;
                break;
            case 'm':
                p.match_any = true;
                break;
            case 'r':
                p.multi_split = false;
                break;
            case 's':
                p.histogram.per_sub_group = true;
                break;
            case 'd':
                p.histogram.digit_major = true;
                break;
            case 'a':
                p.histogram.aggregated = true;
                break;
            case 'g':
                p.register_limit = number_after(i);
                break;
            case 'v':
                p.register_limit_with_values = number_after(i);
                break;
            case 'h':
                p.histogram.copies = number_after(i);
                break;
            default:
                throw bad();
        }
    }
    return p;
}

std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> items;
    std::size_t begin = 0;
    while (begin < list.size()) {
        const std::size_t end = std::min(list.find(',', begin), list.size());
        items.push_back(list.substr(begin, end - begin));
        begin = end + 1;
    }
    return items;
}

}  // namespace

int main(int argc, char** argv) {
    int log2_n = 0;
    bool sweep = false;
    std::string shapes = "256x20,256x24,384x16,384x20,512x12";
    std::string only;  // --case TEXT: only the cases whose name contains TEXT
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--sweep") == 0) {
            sweep = true;
            if (i + 1 < argc && std::strchr(argv[i + 1], 'x') != nullptr) shapes = argv[++i];
        } else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            log2_n = std::atoi(argv[i]);
    }
    // Rows appear as they are measured, and survive a time limit that ends the run.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        const std::string date = kiln::bench::today();
        bool all_sorted = true;
        const std::vector<kiln::device> chosen = kiln::bench::devices_chosen();
        for (const kiln::device& dev : chosen) {
            const int log2 = log2_n > 0 ? log2_n : (dev.is_cpu() ? 24 : 28);
            const std::size_t n = std::size_t{1} << log2;
            const int repeats = dev.is_cpu() ? 2 : 5;
            kiln::bench::record_rows_of(dev, "sorting");
            std::printf("\n### %s, %s (%s), n = 2^%d\n\n", date.c_str(), dev.name().c_str(),
                        std::string(kiln::to_string(dev.backend())).c_str(), log2);
            std::string header =
                "| sort | kiln | kiln rate | reference | reference rate | ratio | check |";
            std::string rule = "| --- | --- | --- | --- | --- | --- | --- |";
#ifdef KILN_BENCH_HAVE_TBB
            if (dev.is_cpu()) {
                header += " tbb::parallel_sort (" +
                          std::to_string(tbb::info::default_concurrency()) + " threads), ratio |";
                rule += " --- |";
            }
#endif
            std::printf("%s\n%s\n", header.c_str(), rule.c_str());
            run_cases(dev, n, repeats, "", only, &all_sorted);
            if (!sweep || dev.is_cpu()) continue;
            // Other shapes for every case; items per work-item are for 4-byte keys alone
            // (sort.cpp scales them for wider keys and values).
            for (const std::string& text : split_list(shapes)) {
                kiln::detail::scoped_algorithm_policy scoped(radix_shape(text));
                run_cases(dev, n, 3, ", " + text, only, &all_sorted);
            }
            if (kiln::detail::groups_make_progress(dev)) {
                // The reduce-then-scan path that devices without forward progress take.
                kiln::detail::scoped_forward_progress classic(false);
                run_cases(dev, n, 3, ", reduce-then-scan", only.empty() ? "uint32 keys" : only,
                          &all_sorted);
            }
        }
        if (!all_sorted) {
            std::fprintf(stderr, "sort_bench: a result was not sorted\n");
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sort_bench: %s\n", e.what());
        return 1;
    }
}
