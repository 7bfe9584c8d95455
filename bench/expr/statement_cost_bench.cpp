// SPDX-License-Identifier: Apache-2.0
// What a small statement costs: `y = 2*x + z` and one RK4 step of the Lorenz ensemble
// (examples/expr/lorenz_ensemble.cpp, a multivector<double, 3>), each eager and inside
// kiln::fused, at n = 1024 by default.
//
//     statement_cost_bench [n]   (KILN_DEVICE picks the device)
//
// Three figures a row, each the median over batches of back-to-back calls: the host's time to
// enqueue one (what kiln and the driver spend before the call returns), the calling thread's CPU
// time for it (the same cost, but unmoved by other processes and by a CPU device's own threads
// competing for the cores: the figure to compare on a shared machine), and the time per call of
// a batch that ends with finish() (the device's work overlaps the enqueueing).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <tuple>
#include <vector>

#include "lorenz_rk4.hpp"
#include "timing.hpp"

namespace {

constexpr int batches = 41, calls = 100;

struct cost {
    double enqueue, thread_cpu, total;  ///< seconds per call, medians
};

/// CPU time of the calling thread, in seconds.
double thread_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double median(std::vector<double> values) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
}

template <class Work>
cost measure(const kiln::queue& q, Work&& work) {
    work();
    q.finish();
    std::vector<double> enqueue, thread_cpu, total;
    for (int b = 0; b < batches; ++b) {
        const auto start = kiln::bench::clock_type::now();
        const double cpu_start = thread_cpu_seconds();
        for (int c = 0; c < calls; ++c) work();
        thread_cpu.push_back((thread_cpu_seconds() - cpu_start) / calls);
        enqueue.push_back(kiln::bench::seconds_since(start) / calls);
        q.finish();
        total.push_back(kiln::bench::seconds_since(start) / calls);
    }
    return {median(enqueue), median(thread_cpu), median(total)};
}

void row(const char* work, const cost& c) {
    std::printf("| %s | %.2f us | %.2f us | %.2f us | %zu |\n", work, c.enqueue * 1e6,
                c.thread_cpu * 1e6, c.total * 1e6,
                kiln::expression_cache::stats().sources_generated);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
        kiln::queue q(kiln::default_device());
        std::printf("### %s (%s), n = %zu: medians of %d batches of %d calls\n\n",
                    q.device().name().c_str(),
                    std::string(kiln::to_string(q.device().backend())).c_str(), n, batches, calls);
        std::printf(
            "| work | host enqueue a call | host thread's CPU a call | a call, with the device's "
            "work | kernels generated so far |\n"
            "|---|---|---|---|---|\n");
        kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
            y(q, n);
        row("`y = 2*x + z`, eager", measure(q, [&] { y = 2 * x + z; }));
        row("`y = 2*x + z`, fused alone",
            measure(q, [&] { kiln::fused(q, [&] { y = 2 * x + z; }); }));
        if (q.device().properties().double_precision) {
            kiln::examples::lorenz_ensemble ensemble(q, n);
            row("Lorenz RK4 step, eager (8 kernels)", measure(q, [&] { ensemble.step(1e-4); }));
            row("Lorenz RK4 step, fused (1 kernel)",
                measure(q, [&] { kiln::fused(q, [&] { ensemble.step(1e-4); }); }));
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "statement_cost_bench: %s\n", e.what());
        return 1;
    }
}
