// SPDX-License-Identifier: Apache-2.0
// What the profiler costs: the expression benchmark's `y = 2*x + 3*z` with profiling off, on a
// queue with device timestamps only, and under KILN_PROFILE's recorder (docs/profiling.md).
//
//     profile_overhead_bench [log2(n)...]   (default 10 and 26 on GPUs, 10 and 24 on CPUs;
//                                            KILN_DEVICE picks the device)
//
// Small vectors show the cost per command (launch-bound), large ones what it is beside real
// work. The modes take turns, several rounds each, and the best batch of each mode counts, so a
// noisy machine costs repeats rather than a bias against whichever mode ran last.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <kiln/detail/profiling.hpp>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <memory>
#include <string>
#include <vector>

#include "report_start.hpp"
#include "timing.hpp"

namespace {

enum class mode { off, profiled_queue, recorder };
constexpr int modes = 3, rounds = 3, batches = 5, calls = 50;

/// Best seconds per `y = 2*x + 3*z` on a new queue of `dev` in the given mode.
double seconds_per_assignment(const kiln::device& dev, std::size_t n, mode m) {
    std::unique_ptr<kiln::detail::profiling::scoped_session> session;
    if (m == mode::recorder) session = std::make_unique<kiln::detail::profiling::scoped_session>();
    kiln::queue q(dev, m == mode::profiled_queue ? kiln::profiled : kiln::in_order);
    kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
        y(q, n);
    const double best =
        kiln::bench::best_seconds_per_call(q, batches, calls, [&] { y = 2 * x + 3 * z; });
    if (session) {
        // The recorder must have seen every launch, or it measured nothing.
        const std::string summary = session->summary();
        std::string expected(1, ' ');
        expected += std::to_string(1 + batches * calls);
        expected += ' ';
        if (summary.find("\nkernel ") == std::string::npos ||
            summary.find(expected) == std::string::npos) {
            std::fprintf(stderr, "profile_overhead_bench: the recorder missed launches:\n%s",
                         summary.c_str());
            std::exit(1);
        }
    }
    if (y.read()[n - 1] != 8.0f) {
        std::fprintf(stderr, "profile_overhead_bench: wrong result\n");
        std::exit(1);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const kiln::device dev = kiln::default_device();
        std::vector<int> sizes;
        for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
        if (sizes.empty()) sizes = {10, dev.is_gpu() ? 26 : 24};

        const std::string date = kiln::bench::today();
        std::printf("### %s, %s (%s): profiler overhead on `y = 2*x + 3*z`\n\n", date.c_str(),
                    dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str());
        std::printf(
            "| n | profiling off | profiled queue (device times only) | KILN_PROFILE recorder | "
            "recorder vs off |\n|---|---|---|---|---|\n");
        for (int log2_n : sizes) {
            const std::size_t n = std::size_t{1} << log2_n;
            std::vector<double> best(modes, 1e30);
            for (int r = 0; r < rounds; ++r)
                for (int m = 0; m < modes; ++m)
                    best[m] = std::min(best[m], seconds_per_assignment(dev, n, mode(m)));
            std::printf("| 2^%d | %.2f us | %.2f us | %.2f us | %+.1f%% (%+.2f us) |\n", log2_n,
                        best[0] * 1e6, best[1] * 1e6, best[2] * 1e6,
                        100.0 * (best[2] / best[0] - 1.0), (best[2] - best[0]) * 1e6);
        }
        std::printf(
            "\nwall clock per assignment, best batch of %d back-to-back calls, %d batches "
            "in each of %d rounds per mode\n",
            calls, batches, rounds);
        return 0;
    } catch (const kiln::error& e) {
        std::fprintf(stderr, "profile_overhead_bench: %s\n", e.what());
        return 2;
    }
}
