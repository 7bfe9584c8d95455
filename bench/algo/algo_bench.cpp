// SPDX-License-Identifier: Apache-2.0
// Benchmarks of kiln's scan family beside CUB (GPUs) or one host thread (CPUs), same data.
//
//     algo_bench [log2(n scan)] [log2(n reduce_by_key)] [log2(n copy_if)] [GxI] [local]
//                [--works=LIST]
//                (defaults 28 26 28 on GPUs, 24 22 24 on CPUs; KILN_DEVICE picks the device;
//                GxI replaces the tuning table's scan, select and reduce_by_key policies by
//                work-groups of G items with I items each, to measure candidates for the table;
//                GxI,GxI,GxI gives each its own; GxIdM also sets the look-back depth M,
//                GxIdMu and GxIdMw full tiles through unrolled loops or 16-byte accesses, and
//                then b keeps compaction and reduce_by_key flags as bytes, and r keeps
//                reduce_by_key's runs in registers (policy register_runs), then k keeps
//                their values there from load to write, K their values and keys
//                (kept_run_items), then D writes runs where they are found rather than
//                staged (staged_writes off), e.g. 256x16d2ub, 256x16d2wr, 256x16d1wrK or
//                256x16d1wrkD; cB instead
//                of GxI: chunk kernels of B bytes, the CPU strategy, e.g. c65536; local:
//                group scans through local memory where sub-groups exist; --works=LIST, anywhere,
//                runs only the works listed of copy,scan,reduce_by_key,copy_if,unique, e.g.
//                --works=scan,unique)
//     KILN_ALGO_BENCH_TILES="384x16u,384x16u,256x20wr;256x16u,256x16u,256x16wr" algo_bench
//                (after the rows of the table's policies, or of GxI, every row again under each
//                shape listed, separated by ';', as GxI takes it: sweeps tile shapes in one run;
//                with --works, only those works)
//
// Prints one markdown table: y = x (kiln's own copy); inclusive_scan and exclusive_scan of int32
// and of float; reduce_by_key over runs of 1, 8, 32 and 1024 (int32 keys and values, sum);
// copy_if keeping 1%, half and 99% of hashed int32 elements (half also with the input tagged
// once); unique of sorted int32 keys in runs of 1 to 15 (n of copy_if's size; kiln::unique works
// in place, so its time is that of restoring the input and unique, less the restore's). Each row
// gives the time per call (best of batches of back-to-back calls, wall clock; reduce_by_key,
// copy_if and unique return their count, so each call waits for it), bandwidth (bytes read +
// written once) and its ratio to the copy bound (the device's copy; on CPU devices the host's
// memcpy on all cores, STREAM's copy, at the scan's size, beside each row), the ratio to CUB's time
// on the same data (bench/algo/cub_algo_reference.cu, run by this program when it was built; both
// generate their data with algo_data.hpp) or, on CPUs, to the same work as a plain single-threaded
// loop (std::inclusive_scan and friends), and the check against the host's result. On GPUs
// beside CUB, each reduce_by_key, copy_if and unique row is followed by its device work alone
// (kernels, fills and copies within the device, from kiln's profiler, best of 10 calls), as
// CUB's CUDA events time its calls, whose counts stay on the device. Each work runs
// with the tuning table's policies, then, without GxI or cB, with the other kernels in the same
// run: where compaction stages its writes, the earlier kernels (staged_writes off); local-memory
// group scans (where shuffles are used), reduce-then-scan (where look-back is), and on devices
// whose rows take chunk kernels, the chunks' element loops (where the rows take their vector or
// cursor forms) and the tile kernels. These comparisons repeat the rows of the headline shapes only
// (int32 inclusive and float exclusive scans, runs of 8, keeping half).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <device_limits.hpp>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "algo_data.hpp"
#include "ratio_rows.hpp"
#include "timing.hpp"

namespace {

using kiln::bench::best_host_seconds;
using kiln::bench::best_seconds_per_call;

/// CUB's seconds per work, from the reference program's `cub <work> <seconds>` lines.
std::map<std::string, double> cub_reference(int log2_scan, int log2_key, int log2_select) {
    std::map<std::string, double> times;
#ifdef KILN_ALGO_CUB_REFERENCE
    const std::string command = std::string(KILN_ALGO_CUB_REFERENCE) + " " +
                                std::to_string(log2_scan) + " " + std::to_string(log2_key) + " " +
                                std::to_string(log2_select);
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char work[64];
        double seconds = 0;
        while (std::fscanf(pipe, "cub %63s %lf\n", work, &seconds) == 2) times[work] = seconds;
        pclose(pipe);
    }
#else
    (void)log2_scan, (void)log2_key, (void)log2_select;
#endif
    return times;
}

/// The bound of memory-bound rows: the device's copy bandwidth, or on a CPU device the host's
/// copy on all cores (GB/s, bytes read plus written).
double copy_bound_gb_per_s = 0;
/// On CPU devices, the size at which each row measures the host's copy again, beside its own
/// measurement: a shared machine's memory bandwidth drifts by a third within minutes (56-89
/// GB/s on the 2-core machine, 2026-11-25), so that one bound taken at the start would move
/// every later ratio.
std::size_t host_bound_bytes = 0;

void row(const std::string& what, double seconds, double bytes, double elements, double reference,
         const char* reference_name, const char* check) {
    if (host_bound_bytes) copy_bound_gb_per_s = kiln::bench::host_copy_bandwidth(host_bound_bytes);
    const double gb_per_s = bytes / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.1f GB/s | %.2f | %.2f Gelem/s |", what.c_str(), seconds * 1e3,
                gb_per_s, gb_per_s / copy_bound_gb_per_s, elements / seconds / 1e9);
    if (reference > 0) {
        std::printf(" %.2fx %s (%.3f ms) | %s |\n", reference / seconds, reference_name,
                    reference * 1e3, check);
        kiln::bench::record_ratio(what, reference / seconds, kiln::bench::measure::speed,
                                  reference_name);
    } else
        std::printf(" | %s |\n", check);
    // Row by row into a log, so that a run its caller's timeout ends keeps the rows it measured.
    std::fflush(stdout);
}

/// The works a run measures, named by --works=LIST (comma-separated; all by default).
constexpr const char* all_works = "copy,scan,reduce_by_key,copy_if,unique";

/// Calls `f` with each of the scan family's algorithms in turn: scan, select, reduce_by_key.
template <class F>
void for_each_scan_algorithm(F&& f) {
    f(kiln::detail::algorithm::scan);
    f(kiln::detail::algorithm::select);
    f(kiln::detail::algorithm::reduce_by_key);
}

/// The policies a shape argument forces (GxI... or cB for all three algorithms, or three of them
/// separated by commas for scan, copy_if and reduce_by_key in turn; see the top of the file),
/// in force while the returned overrides live.
std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> forced_shapes(
    const char* shape, const kiln::device& dev) {
    std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> forced;
    for_each_scan_algorithm([&](auto a) {
        using forcing = kiln::detail::scoped_algorithm_policy<decltype(a)>;
        if (*shape == 'c') {
            // cB: chunk kernels of B bytes (the CPU strategy) with the row's other numbers.
            auto chunked = kiln::detail::policy_for(a, dev);
            chunked.chunk_bytes = std::strtoul(shape + 1, nullptr, 10);
            forced.push_back(std::make_unique<forcing>(chunked));
            if (const char* next = std::strchr(shape, ',')) shape = next + 1;
            return;
        }
        char* rest = nullptr;
        kiln::detail::scan_policy policy{std::strtoul(shape, nullptr, 10),
                                         std::strtoul(std::strchr(shape, 'x') + 1, &rest, 10)};
        // GxIdM: look-back lanes read M earlier tiles at once; then u or w moves full tiles
        // through unrolled loops or 16-byte accesses (else guarded loops), and b keeps
        // compaction flags as bytes rather than ballot words, r reduce_by_key's runs in
        // registers, then k keeping their values there from load to write, K values and keys,
        // then D writing each run where its work-item found it (staged_writes off).
        if (*rest == 'd') policy.lookback_depth = std::strtoul(rest + 1, &rest, 10);
        if (*rest == 'u') policy.full_tiles = kiln::detail::tile_access::unrolled;
        if (*rest == 'w') policy.full_tiles = kiln::detail::tile_access::wide;
        if (*rest == 'u' || *rest == 'w') ++rest;
        if (*rest == 'b') policy.ballot_flags = false, ++rest;
        if (*rest == 'r') policy.register_runs = true, ++rest;
        if (*rest == 'k') policy.kept_run_items = kiln::detail::run_items::values, ++rest;
        if (*rest == 'K') policy.kept_run_items = kiln::detail::run_items::values_and_keys, ++rest;
        if (*rest == 'D') policy.staged_writes = false;
        forced.push_back(std::make_unique<forcing>(policy));
        if (const char* next = std::strchr(shape, ',')) shape = next + 1;
    });
    return forced;
}

/// The shapes KILN_ALGO_BENCH_TILES lists, separated by ';', each as the shape argument takes it.
std::vector<std::string> listed_tiles() {
    std::vector<std::string> shapes;
    const char* listed = std::getenv("KILN_ALGO_BENCH_TILES");
    for (std::string_view rest = listed ? listed : ""; !rest.empty();) {
        const std::size_t end = std::min(rest.find(';'), rest.size());
        if (end > 0) shapes.emplace_back(rest.substr(0, end));
        rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return shapes;
}

}  // namespace

int main(int argc, char** argv) {
    // --works=LIST, anywhere: only those works; the other arguments keep their places.
    std::string works = all_works;
    std::vector<char*> arguments;
    for (int i = 0; i < argc; ++i) {
        if (std::string_view(argv[i]).starts_with("--works="))
            works = argv[i] + std::strlen("--works=");
        else
            arguments.push_back(argv[i]);
    }
    argc = static_cast<int>(arguments.size());
    argv = arguments.data();
    const auto listed = [](const std::string& list, const std::string& work) {
        return ("," + list + ",").find("," + work + ",") != std::string::npos;
    };
    const auto wanted = [&](const char* work) { return listed(works, work); };
    for (std::size_t at = 0; at <= works.size();) {
        const std::size_t comma = std::min(works.find(',', at), works.size());
        if (!listed(all_works, works.substr(at, comma - at))) {
            std::fprintf(stderr, "algo_bench: --works takes some of %s\n", all_works);
            return 2;
        }
        at = comma + 1;
    }
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const int log2_scan = argc > 1 ? std::atoi(argv[1]) : cpu ? 24 : 28;
    const int log2_key = argc > 2 ? std::atoi(argv[2]) : cpu ? 22 : 26;
    const int log2_select = argc > 3 ? std::atoi(argv[3]) : cpu ? 24 : 28;
    const std::size_t n_scan = std::size_t{1} << log2_scan, n_key = std::size_t{1} << log2_key,
                      n_select = std::size_t{1} << log2_select;
    std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> candidate;
    if (argc > 4) candidate = forced_shapes(argv[4], dev);
    // A fifth argument "local": group scans through local memory even where sub-groups exist.
    std::optional<kiln::detail::scoped_local_memory_group_scans> local_memory;
    if (argc > 5 && std::string_view(argv[5]) == "local") local_memory.emplace();
    kiln::queue q(dev);
    kiln::bench::record_rows_of(dev, "scan family");
    const double copy_gb_per_s =
        kiln::bench::measure_copy_bandwidth(dev, kiln::bench::copy_benchmark_bytes(dev));
    std::map<std::string, double> reference;
    if (!cpu) reference = cub_reference(log2_scan, log2_key, log2_select);
    const auto cub = [&](const std::string& work) {
        const auto found = reference.find(work);
        return found == reference.end() ? 0.0 : found->second;
    };
    const bool dispatch_lookback = kiln::detail::groups_make_progress(dev);
    const auto scan_policy = kiln::detail::policy_for(kiln::detail::algorithm::scan, dev);

    std::printf(
        "### kiln algorithms, %s (%s), scan strategy: %s, scan path: %s, scan tile %zux%zu "
        "depth %zu, full tiles: %s, group scans: %s%s\n\n",
        dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(),
        scan_policy.chunk_bytes
            ? ("chunks of " + std::to_string(scan_policy.chunk_bytes) + " bytes").c_str()
            : "tiles",
        dispatch_lookback ? "decoupled look-back" : "reduce-then-scan", scan_policy.work_group_size,
        scan_policy.items_per_work_item, scan_policy.lookback_depth,
        scan_policy.full_tiles == kiln::detail::tile_access::wide       ? "16-byte accesses"
        : scan_policy.full_tiles == kiln::detail::tile_access::unrolled ? "unrolled loops"
                                                                        : "guarded loops",
        scan_policy.sub_group_size ? "sub-group shuffles" : "local memory",
        scan_policy.target.vocabulary == kiln::detail::vocabulary_target::inline_ptx
            ? " (inline PTX)"
            : "");
    std::printf("copy bandwidth (device to device, limit): %.1f GB/s\n", copy_gb_per_s);
    copy_bound_gb_per_s = copy_gb_per_s;
    if (cpu) {
        // The memory the CPU device shares, copied by every core (STREAM's copy), at the scan's
        // size: the bound that "of copy" divides by.
        copy_bound_gb_per_s = kiln::bench::host_copy_bandwidth(n_scan * 4);
        host_bound_bytes = n_scan * 4;
        std::printf(
            "host copy on %u threads (memcpy, %zu MiB, the bound, measured again beside "
            "each row): %.1f GB/s\n",
            std::max(1u, std::thread::hardware_concurrency()), n_scan * 4 >> 20,
            copy_bound_gb_per_s);
    }
    std::printf(
        "\n| work | time | bandwidth | of copy | elements | reference | check |\n"
        "|---|---|---|---|---|---|---|\n");

    // A candidate shape a device cannot build (too much local memory) fails its own row only.
    const auto guarded = [](const char* what, const auto& work) {
        try {
            work();
        } catch (const std::exception& e) {
            std::printf("| %s | failed: %s | | | | | |\n", what, e.what());
        }
    };
    // On GPUs beside CUB: a work's device time alone (its kernels, fills and copies within the
    // device), as CUB's CUDA events time its calls, whose counts stay on the device. The wall
    // clock rows also count each call's launch and its wait for the count it returns.
    const auto device_work_alone = [&](double reference, const auto& prepare) -> double {
        if (cpu || reference <= 0) return 0;
        return kiln::bench::device_seconds_per_call(
            dev, 10, prepare, kiln::bench::counted_commands::kernels_fills_and_copies);
    };
    constexpr const char* device_work_note = ", device work alone";
    // Every shape the issues name (every_shape), or today's rows only: those the comparisons
    // below repeat with other kernels, so that the run stays short.
    const auto measure = [&](const char* variant, bool every_shape = false) {
        const auto named = [&](const std::string& what, int log2_n) {
            return what + ", n = 2^" + std::to_string(log2_n) + variant;
        };
        if (wanted("copy"))
            guarded("y = x", [&] {
                std::vector<std::int32_t> host(n_scan), copied(n_scan);
                for (std::size_t i = 0; i < n_scan; ++i) host[i] = algo_data::scan_value(i);
                kiln::vector<std::int32_t> x(q, host), y(q, n_scan);
                const double s = best_seconds_per_call(q, 5, 10, [&] { y = x; });
                const double host_s = best_host_seconds(
                    cpu ? 3 : 1, [&] { std::copy(host.begin(), host.end(), copied.begin()); });
                row(named("y = x int32", log2_scan), s, 2.0 * n_scan * 4, double(n_scan),
                    cpu ? host_s : 0, "std::copy, 1 thread",
                    y.read() == host ? "matches" : "MISMATCH");
            });
        // Partial sums of scan_value stay small whole numbers: exact in float in any order.
        const auto scan = [&](auto zero, bool inclusive) {
            using T = decltype(zero);
            const std::string type = std::is_same_v<T, float> ? "float" : "int32";
            const std::string kind = inclusive ? "inclusive_scan" : "exclusive_scan";
            guarded(kind.c_str(), [&] {
                std::vector<T> host(n_scan), expected(n_scan);
                for (std::size_t i = 0; i < n_scan; ++i) host[i] = T(algo_data::scan_value(i));
                kiln::vector<T> x(q, host), y(q, n_scan);
                const double s = best_seconds_per_call(q, 5, 10, [&] {
                    if (inclusive)
                        kiln::inclusive_scan(x, y);
                    else
                        kiln::exclusive_scan(x, y, zero);
                });
                const double host_s = best_host_seconds(cpu ? 5 : 1, [&] {
                    if (inclusive)
                        std::inclusive_scan(host.begin(), host.end(), expected.begin());
                    else
                        std::exclusive_scan(host.begin(), host.end(), expected.begin(), zero);
                });
                const std::string reference_name =
                    cpu ? "std::" + kind + ", 1 thread"
                        : std::string("CUB DeviceScan::") +
                              (inclusive ? "Inclusive" : "Exclusive") + "Sum";
                row(named(kind + " " + type, log2_scan), s, 2.0 * n_scan * sizeof(T),
                    double(n_scan), cpu ? host_s : cub(kind + "_" + type), reference_name.c_str(),
                    y.read() == expected ? "matches std" : "MISMATCH");
            });
        };
        if (wanted("scan")) {
            scan(std::int32_t{0}, true);
            if (every_shape) scan(std::int32_t{0}, false), scan(0.0f, true);
            scan(0.0f, false);
        }
        for (const std::size_t length : algo_data::run_lengths) {
            if (!wanted("reduce_by_key") || (!every_shape && length != 8)) continue;
            guarded("reduce_by_key", [&] {
                std::vector<std::int32_t> keys(n_key), values(n_key);
                for (std::size_t i = 0; i < n_key; ++i) {
                    keys[i] = algo_data::run_key(i, length);
                    values[i] = algo_data::run_value(i);
                }
                kiln::vector<std::int32_t> k(q, keys), v(q, values), ok_(q, n_key), ov(q, n_key);
                std::size_t runs = 0;
                const double s = best_seconds_per_call(
                    q, 5, 10, [&] { runs = kiln::reduce_by_key(k, v, ok_, ov); });
                // Into outputs of n elements, touched before, as kiln's are.
                std::vector<std::int32_t> hk(n_key), hv(n_key);
                std::size_t host_runs = 0;
                const double host_s = best_host_seconds(cpu ? 5 : 1, [&] {
                    std::size_t r = 0;
                    for (std::size_t i = 0; i < n_key; ++i) {
                        if (i == 0 || keys[i] != keys[i - 1]) {
                            hk[r] = keys[i];
                            hv[r++] = values[i];
                        } else {
                            hv[r - 1] += values[i];
                        }
                    }
                    host_runs = r;
                });
                hk.resize(host_runs);
                hv.resize(host_runs);
                const auto matches = [&](const kiln::vector<std::int32_t>& out_keys,
                                         const kiln::vector<std::int32_t>& out_values) {
                    auto gk = out_keys.read(), gv = out_values.read();
                    gk.resize(runs);
                    gv.resize(runs);
                    return gk == hk && gv == hv ? "matches host" : "MISMATCH";
                };
                const std::string what =
                    named("reduce_by_key int32, runs of " + std::to_string(length), log2_key);
                const double reference =
                    cpu ? host_s : cub("reduce_by_key_" + std::to_string(length));
                const char* reference_name =
                    cpu ? "host loop, 1 thread" : "CUB DeviceReduce::ReduceByKey";
                row(what, s, n_key * 8.0 + runs * 8.0, double(n_key), reference, reference_name,
                    matches(ok_, ov));
                std::optional<kiln::vector<std::int32_t>> dk, dv, dok, dov;
                const double alone = device_work_alone(reference, [&](const kiln::queue& profiled) {
                    dk.emplace(profiled, keys);
                    dv.emplace(profiled, values);
                    dok.emplace(profiled, n_key);
                    dov.emplace(profiled, n_key);
                    return [&] { runs = kiln::reduce_by_key(*dk, *dv, *dok, *dov); };
                });
                if (alone > 0)
                    row(what + device_work_note, alone, n_key * 8.0 + runs * 8.0, double(n_key),
                        reference, reference_name, matches(*dok, *dov));
            });
        }
        std::vector<std::int32_t> select_input(wanted("copy_if") ? n_select : 0);
        for (std::size_t i = 0; i < select_input.size(); ++i)
            select_input[i] = algo_data::select_value(i);
        for (const int percent : algo_data::kept_percents) {
            if (!wanted("copy_if") || (!every_shape && percent != 50)) continue;
            std::vector<std::int32_t> select_expected(n_select);
            std::size_t host_kept = 0;
            const double select_host_s = best_host_seconds(cpu ? 5 : 1, [&] {
                // Into an output of n elements, touched before, as kiln's is.
                host_kept =
                    std::copy_if(select_input.begin(), select_input.end(), select_expected.begin(),
                                 [&](std::int32_t v) { return algo_data::kept(v, percent); }) -
                    select_expected.begin();
            });
            select_expected.resize(host_kept);
            // Keeping half, input and stencil read the same vector: as two kernel arguments,
            // loaded twice, and, tagged as one terminal (kiln::tag), loaded once, as CUB's
            // select reads its input.
            for (const bool tagged : {false, true}) {
                if (tagged && percent != 50) continue;
                guarded("copy_if", [&] {
                    kiln::vector<std::int32_t> x(q, select_input), out(q, n_select);
                    std::size_t kept = 0;
                    const std::int32_t bound = algo_data::select_bound(percent);
                    const auto keep = [&](const kiln::vector<std::int32_t>& in,
                                          kiln::vector<std::int32_t>& kept_out) {
                        const auto tagged_in = kiln::tag<1>(in);
                        return percent != 50 ? kiln::copy_if(in, in < bound, kept_out)
                               : tagged ? kiln::copy_if(tagged_in, (tagged_in & 1) == 0, kept_out)
                                        : kiln::copy_if(in, (in & 1) == 0, kept_out);
                    };
                    const double s = best_seconds_per_call(q, 5, 10, [&] { kept = keep(x, out); });
                    const auto matches = [&](const kiln::vector<std::int32_t>& kept_out) {
                        auto got = kept_out.read();
                        got.resize(kept);
                        return got == select_expected ? "matches std" : "MISMATCH";
                    };
                    const std::string share =
                        percent == 50 ? "half" : std::to_string(percent) + "%";
                    const std::string what =
                        named("copy_if int32 keeping " + share + (tagged ? ", x tagged once" : ""),
                              log2_select);
                    const double reference =
                        cpu ? select_host_s : cub("copy_if_" + std::to_string(percent));
                    const char* reference_name =
                        cpu ? "std::copy_if, 1 thread" : "CUB DeviceSelect::If";
                    row(what, s, n_select * 4.0 + kept * 4.0, double(n_select), reference,
                        reference_name, matches(out));
                    std::optional<kiln::vector<std::int32_t>> dx, dout;
                    const double alone =
                        device_work_alone(reference, [&](const kiln::queue& profiled) {
                            dx.emplace(profiled, select_input);
                            dout.emplace(profiled, n_select);
                            return [&] { kept = keep(*dx, *dout); };
                        });
                    if (alone > 0)
                        row(what + device_work_note, alone, n_select * 4.0 + kept * 4.0,
                            double(n_select), reference, reference_name, matches(*dout));
                });
            }
        }
        if (every_shape && wanted("unique"))
            guarded("unique", [&] {
                std::vector<std::int32_t> keys(n_select), expected(n_select);
                for (std::size_t i = 0; i < n_select; ++i) keys[i] = algo_data::unique_key(i);
                kiln::vector<std::int32_t> x(q, keys), y(q, n_select);
                // kiln::unique works in place: each call first restores its input (y = x), and
                // the row's time is that pair's less the restore's, best of each, alternately.
                std::size_t runs = 0;
                double restore = 1e30, both = 1e30;
                for (int round = 0; round < 2; ++round) {
                    restore = std::min(restore, best_seconds_per_call(q, 5, 10, [&] { y = x; }));
                    both = std::min(both, best_seconds_per_call(q, 5, 10, [&] {
                                        y = x;
                                        runs = kiln::unique(y);
                                    }));
                }
                if (both <= restore)
                    throw std::runtime_error(
                        "no time: restoring the input took as long as "
                        "restoring it and unique");
                std::size_t host_runs = 0;
                const double host_s = best_host_seconds(cpu ? 5 : 1, [&] {
                    host_runs = std::unique_copy(keys.begin(), keys.end(), expected.begin()) -
                                expected.begin();
                });
                expected.resize(host_runs);
                auto got = y.read();
                got.resize(runs);
                const std::string what =
                    named("unique int32, sorted, runs of 1 to 15", log2_select);
                const double reference = cpu ? host_s : cub("unique");
                const char* reference_name =
                    cpu ? "std::unique_copy, 1 thread" : "CUB DeviceSelect::Unique";
                row(what, both - restore, n_select * 4.0 + runs * 4.0, double(n_select), reference,
                    reference_name, got == expected ? "matches std" : "MISMATCH");
                // The restore's device time, measured alike, is taken from the pair's.
                std::optional<kiln::vector<std::int32_t>> dx, dy;
                const auto on = [&](const kiln::queue& profiled) {
                    dx.emplace(profiled, keys);
                    dy.emplace(profiled, n_select);
                };
                const double restored = device_work_alone(reference, [&](const kiln::queue& p) {
                    on(p);
                    return [&] { *dy = *dx; };
                });
                const double restored_and_unique =
                    device_work_alone(reference, [&](const kiln::queue& p) {
                        on(p);
                        return [&] {
                            *dy = *dx;
                            runs = kiln::unique(*dy);
                        };
                    });
                if (restored_and_unique > restored && restored > 0) {
                    auto unique_got = dy->read();
                    unique_got.resize(runs);
                    row(what + device_work_note, restored_and_unique - restored,
                        n_select * 4.0 + runs * 4.0, double(n_select), reference, reference_name,
                        unique_got == expected ? "matches std" : "MISMATCH");
                }
            });
    };
    measure("", true);
    // Each shape KILN_ALGO_BENCH_TILES lists, every row of the works asked for, in the same run.
    for (const std::string& shape : listed_tiles()) {
        const auto forced = forced_shapes(shape.c_str(), dev);
        measure((" (tiles " + shape + ")").c_str(), true);
    }
    // The same work with the earlier compaction kernels (each work-item writes its own kept
    // elements, 64-bit counts), in the same run; scan and reduce_by_key run as above. Only
    // with the table's shapes.
    if (candidate.empty() &&
        !kiln::detail::policy_for(kiln::detail::algorithm::select, dev).chunk_bytes) {
        std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> before;
        for_each_scan_algorithm([&](auto a) {
            auto policy = kiln::detail::policy_for(a, dev);
            policy.staged_writes = false;
            before.push_back(
                std::make_unique<kiln::detail::scoped_algorithm_policy<decltype(a)>>(policy));
        });
        measure(" (before: direct writes)");
    }
    // With the table's shapes only: the same work through the other paths the dispatch could
    // take, so that one run compares them.
    if (candidate.empty() && !local_memory) {
        if (scan_policy.sub_group_size != 0) {
            const kiln::detail::scoped_local_memory_group_scans local;
            measure(" (local-memory group scans)");
        }
        if (dispatch_lookback) {
            const kiln::detail::scoped_forward_progress three_passes(false);
            measure(" (reduce-then-scan)");
        }
        const auto select_policy = kiln::detail::policy_for(kiln::detail::algorithm::select, dev);
        if (select_policy.chunk_vector_writes) {
            // Compaction's chunks writing at a cursor element by element, in the same run.
            auto cursor = select_policy;
            cursor.chunk_vector_writes = false;
            cursor.chunk_cursor_writes = true;
            const kiln::detail::scoped_algorithm_policy writes(kiln::detail::algorithm::select,
                                                               cursor);
            measure(" (chunks, cursor writes)");
        }
        if (scan_policy.chunk_lanes || select_policy.chunk_cursor_writes ||
            select_policy.chunk_vector_writes) {
            // The chunks' element loops (no vectors, writes behind a branch), which the chunk
            // kernels ran before their CPU forms, in the same run.
            std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> elements;
            for_each_scan_algorithm([&](auto a) {
                auto policy = kiln::detail::policy_for(a, dev);
                policy.chunk_lanes = 0;
                policy.chunk_cursor_writes = false;
                policy.chunk_vector_writes = false;
                elements.push_back(
                    std::make_unique<kiln::detail::scoped_algorithm_policy<decltype(a)>>(policy));
            });
            measure(" (chunks element by element)");
        }
        if (scan_policy.chunk_bytes) {
            // The tile kernels (the rows' tile shapes), which every device ran before the CPU
            // strategy, in the same run.
            std::vector<std::unique_ptr<kiln::detail::scoped_tuning_override>> tiles;
            for_each_scan_algorithm([&](auto a) {
                auto policy = kiln::detail::policy_for(a, dev);
                policy.chunk_bytes = 0;
                tiles.push_back(
                    std::make_unique<kiln::detail::scoped_algorithm_policy<decltype(a)>>(policy));
            });
            measure(" (tiles)");
        }
    }
    return 0;
}
