// SPDX-License-Identifier: Apache-2.0
// kiln::fft beside cuFFT (GPUs) or FFTW on one thread and on every host thread (CPUs) on the same
// data and shapes.
//
//     fft_bench [max elements [shape,...]]   (default: every workload; KILN_DEVICE picks the
//                                            device; shapes by name, e.g. 2d_4096^2)
//
// KILN_FFT_POLICY=WxI replaces the tuning row's FFT policy (W work-items, W x I complex floats
// of local memory per group) for the run, to compare rows in one session.
// KILN_FFT_PIPELINE=KxSxL[s][f][,...] first times the batched workload with the pipelined pair
// of passes (fft_pipeline_kernel) in chunks of K KiB, S ring slots, second passes L chunks behind,
// streaming accesses with an s after it, waits per array with an f (0x0x0: without it), where the
// device may run it, to compare ring shapes in one session.
//
// Prints one markdown table: complex float, forward, out of place; time per call (best of
// batches of back-to-back calls, wall clock), the FFT's nominal rate 5 N log2 N / t, and kiln's
// time divided by cuFFT's on the same data (bench/algo/cufft_reference.cu, run by this program when
// it was built) or, on CPUs, to FFTW's single-threaded FFTW_MEASURE plan when FFTW was found.
// The check column is the relative L2 error of a forward-then-inverse round trip through kiln.
// A second table gives each kernel of each transform from kiln's profiler (device timestamps):
// launches per transform, its best time, and the bandwidth of reading and writing the N elements
// once, which is what a Stockham pass moves (Bluestein's kernels move their padded lines).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/profiling.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fft_workloads.hpp"
#include "ratio_rows.hpp"
#include "timing.hpp"

#ifdef KILN_FFT_BENCH_FFTW
#include <fftw3.h>
#endif

namespace {

using kiln::bench::best_seconds_per_call;
using kiln::bench::clock_type;
using kiln::bench::seconds_since;

using cfloat = std::complex<float>;

/// The workloads' input, the same values as the cuFFT reference program's.
std::vector<cfloat> workload_input(std::size_t n) {
    std::vector<cfloat> host(n);
    for (std::size_t i = 0; i < n; ++i)
        host[i] = {fft_workloads::value(i, 0), fft_workloads::value(i, 1)};
    return host;
}

/// cuFFT's seconds per workload, from the reference program's `cufft <name> <seconds>` lines.
std::map<std::string, double> cufft_reference() {
    std::map<std::string, double> times;
#ifdef KILN_FFT_CUFFT_REFERENCE
    if (FILE* pipe = popen(KILN_FFT_CUFFT_REFERENCE, "r")) {
        char name[64];
        double seconds = 0;
        while (std::fscanf(pipe, "cufft %63s %lf\n", name, &seconds) == 2) times[name] = seconds;
        pclose(pipe);
    }
#endif
    return times;
}

/// FFTW's best seconds for the workload on `threads` threads (FFTW_MEASURE), or 0 without FFTW
/// (or without its threads library, for more than one).
double fftw_seconds(const fft_workloads::workload& w, const std::vector<cfloat>& host,
                    int threads) {
#ifdef KILN_FFT_BENCH_FFTW
#ifdef KILN_FFT_BENCH_FFTW_THREADS
    static const bool threads_ready = fftwf_init_threads() != 0;
    if (!threads_ready && threads > 1) return 0;
    if (threads_ready) fftwf_plan_with_nthreads(threads);
#else
    if (threads > 1) return 0;
#endif
    // FFTW's own allocation: its SIMD codelets need the vector width's alignment, which a
    // std::vector of this size (glibc's mmap, 16 bytes past a page) does not give.
    const auto allocate = [&] {
        return std::unique_ptr<cfloat[], decltype(&fftwf_free)>(
            reinterpret_cast<cfloat*>(fftwf_alloc_complex(host.size())), &fftwf_free);
    };
    const auto in = allocate(), out = allocate();
    int sizes[3] = {int(w.sizes[0]), int(w.sizes[1]), int(w.sizes[2])};
    const int each = int(w.elements() / w.batch);
    // Planning with FFTW_MEASURE overwrites the arrays, so the data goes in afterwards.
    fftwf_plan plan = fftwf_plan_many_dft(
        w.rank, sizes, int(w.batch), reinterpret_cast<fftwf_complex*>(in.get()), nullptr, 1, each,
        reinterpret_cast<fftwf_complex*>(out.get()), nullptr, 1, each, FFTW_FORWARD, FFTW_MEASURE);
    std::copy(host.begin(), host.end(), in.get());
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
        const auto start = clock_type::now();
        fftwf_execute(plan);
        best = std::min(best, seconds_since(start));
    }
    fftwf_destroy_plan(plan);
    return best;
#else
    (void)w, (void)host, (void)threads;
    return 0;
#endif
}

double round_trip_error(const kiln::queue& q, const fft_workloads::workload& w,
                        const kiln::vector<cfloat>& spectrum, const std::vector<cfloat>& host) {
    std::vector<std::size_t> sizes(w.sizes, w.sizes + w.rank);
    const kiln::fft<float> inverse(q, sizes, kiln::inverse, w.batch);
    const kiln::vector<cfloat> back_vector = inverse(spectrum);
    const std::vector<cfloat> back = back_vector.read();
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < host.size(); ++i) {
        error += std::norm(std::complex<double>(back[i]) - std::complex<double>(host[i]));
        norm += std::norm(std::complex<double>(host[i]));
    }
    return std::sqrt(error / norm);
}

/// The per-kernel rows of one workload: `runs` transforms on a profiled queue of their own.
void print_kernels(const kiln::device& dev, const fft_workloads::workload& w,
                   const std::vector<cfloat>& host, int runs) {
    std::string summary;
    {
        const kiln::detail::profiling::scoped_session session;
        const kiln::queue profiled(dev);
        const kiln::vector<cfloat> x(profiled, host);
        kiln::vector<cfloat> y(profiled, host.size());
        const kiln::fft<float> forward(
            profiled, std::vector<std::size_t>(w.sizes, w.sizes + w.rank), w.batch);
        for (int r = 0; r < runs; ++r) forward(x, y);
        profiled.finish();
        summary = session.summary();
    }
    for (const kiln::bench::kernel_summary& kernel : kiln::bench::kernels_in(summary)) {
        const double bytes = 2.0 * double(host.size()) * sizeof(cfloat);
        std::printf("| %s | %s | %.1f | %.1f us | %.0f GB/s |\n", w.name, kernel.name.c_str(),
                    double(kernel.launches) / runs, kernel.shortest_seconds * 1e6,
                    bytes / kernel.shortest_seconds / 1e9);
    }
}

/// The batched workload under each pipeline shape of `list` ("MxS,MxS..."), with its kernels.
void sweep_pipeline(const kiln::device& dev, const kiln::queue& q,
                    const std::map<std::string, double>& cufft, const char* list) {
    const fft_workloads::workload* batched = nullptr;
    for (const auto& w : fft_workloads::all)
        if (w.batch > 1) batched = &w;
    if (!batched) return;
    const std::vector<cfloat> host = workload_input(batched->elements());
    const std::vector<std::size_t> sizes(batched->sizes, batched->sizes + batched->rank);
    const kiln::vector<cfloat> x(q, host);
    kiln::vector<cfloat> y(q, host.size());
    const auto found = cufft.find(batched->name);
    std::printf(
        "### %s, pipelined passes (KILN_FFT_PIPELINE)\n\n| chunk KiB x slots x lag | kiln | "
        "kiln / cuFFT | round-trip error |\n|---|---|---|---|\n",
        batched->name);
    for (std::istringstream items(list); !items.eof();) {
        std::string item;
        std::getline(items, item, ',');
        std::size_t kib = 0, slots = 0, lag = 0;
        if (std::sscanf(item.c_str(), "%zux%zux%zu", &kib, &slots, &lag) != 3) continue;
        const bool streaming = item.find('s') != std::string::npos;
        const bool fine = item.find('f') != std::string::npos;
        const kiln::detail::scoped_fft_pipeline_policy policy(
            {kib << 10, slots, lag, streaming, fine});
        try {
            const kiln::fft<float> forward(q, sizes, batched->batch);
            const double s = best_seconds_per_call(q, 5, 20, [&] { forward(x, y); });
            std::printf("| %s | %.3f ms | %.2fx | %.2g |\n", item.c_str(), s * 1e3,
                        found != cufft.end() ? s / found->second : 0.0,
                        round_trip_error(q, *batched, y, host));
            print_kernels(dev, *batched, host, 5);
        } catch (const std::exception& e) {
            std::printf("| %s | failed: %s |\n", item.c_str(), e.what());
        }
        std::fflush(stdout);
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const std::size_t max_elements = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : ~0ull;
    // FFTW's planning takes minutes per shape on a many-core CPU: a call may time a few.
    const std::string chosen = argc > 2 ? "," + std::string(argv[2]) + "," : "";
    const auto wanted = [&](const fft_workloads::workload& w) {
        return w.elements() <= max_elements &&
               (chosen.empty() ||
                chosen.find("," + std::string(w.name) + ",") != std::string::npos);
    };
    kiln::queue q(dev);
    kiln::bench::record_rows_of(dev, "FFT");
    const std::map<std::string, double> cufft =
        cpu ? std::map<std::string, double>{} : cufft_reference();
    std::unique_ptr<kiln::detail::scoped_algorithm_policy<kiln::detail::algorithm::fft_rows>>
        policy;
    if (const char* text = std::getenv("KILN_FFT_POLICY")) {
        std::size_t group = 0, items = 0;
        if (std::sscanf(text, "%zux%zu", &group, &items) == 2) {
            policy = std::make_unique<
                kiln::detail::scoped_algorithm_policy<kiln::detail::algorithm::fft_rows>>(
                kiln::detail::fft_tuning{group, items});
            std::printf("(FFT policy %zux%zu from KILN_FFT_POLICY)\n\n", group, items);
        }
    }

    if (const char* list = std::getenv("KILN_FFT_PIPELINE")) sweep_pipeline(dev, q, cufft, list);

    const bool host_library = kiln::fft<float>(q, {1024}).plan().on_host_library();
    std::printf("### kiln::fft, %s (%s), complex float, forward, out of place, on %s\n\n",
                dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(),
                host_library
                    ? "FFTW (the host-library strategy; KILN_FFT_STRATEGY=kernels for kiln's)"
                    : "kiln's kernels");
    std::printf(
        "| shape | kiln | 5 N log2 N / t | kiln time / reference time | round-trip error |%s\n"
        "|---|---|---|---|---|%s\n",
        cpu ? " kiln time / FFTW on every host thread |" : "", cpu ? "---|" : "");
    for (const auto& w : fft_workloads::all) {
        const std::size_t n = w.elements();
        if (!wanted(w)) continue;
        const std::vector<cfloat> host = workload_input(n);
        const std::vector<std::size_t> sizes(w.sizes, w.sizes + w.rank);
        const kiln::vector<cfloat> x(q, host);
        kiln::vector<cfloat> y(q, n);
        const kiln::fft<float> forward(q, sizes, w.batch);
        forward(x, y);
        forward.plan().wait_for_host_measuring();
        const double s = best_seconds_per_call(q, 5, cpu ? 2 : 20, [&] { forward(x, y); });
        const double transform = double(n / w.batch);
        const double gflops = 5.0 * double(n) * std::log2(transform) / s / 1e9;
        std::printf("| %s | %.3f ms | %.1f GFLOP/s |", w.name, s * 1e3, gflops);
        double reference = 0;
        const char* reference_name = "";
        if (cpu) {
            reference = fftw_seconds(w, host, 1);
            reference_name = "FFTW 1 thread, MEASURE";
        } else if (auto found = cufft.find(w.name); found != cufft.end()) {
            reference = found->second;
            reference_name = "cuFFT";
        }
        if (reference > 0) {
            std::printf(" %.2fx %s (%.3f ms) |", s / reference, reference_name, reference * 1e3);
            kiln::bench::record_ratio(w.name, s / reference, kiln::bench::measure::time,
                                      reference_name);
        } else {
            std::printf(" none |");
        }
        std::printf(" %.2g |", round_trip_error(q, w, y, host));
        if (cpu) {
            const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            if (const double all = fftw_seconds(w, host, threads); all > 0)
                std::printf(" %.2fx FFTW %d threads (%.3f ms) |", s / all, threads, all * 1e3);
            else
                std::printf(" none |");
        }
        std::printf("\n");
        std::fflush(stdout);
    }

    std::printf(
        "\n### Kernels per transform (profiler)\n\n"
        "| shape | kernel | launches | best | 2 N x 8 bytes / best |\n|---|---|---|---|---|\n");
    for (const auto& w : fft_workloads::all) {
        if (!wanted(w)) continue;
        print_kernels(dev, w, workload_input(w.elements()), cpu ? 1 : 5);
        std::fflush(stdout);
    }
    return 0;
}
