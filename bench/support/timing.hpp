// Wall-clock timing shared by the benchmarks: best of several batches, so that a noisy machine
// costs repeats, not accuracy.
#pragma once

#include <algorithm>
#include <chrono>
#include <kiln/kiln.hpp>
#include <span>

namespace kiln::bench {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Best time per call of `work` over `batches` batches of `calls` back-to-back calls: device
/// work queues up while the host enqueues, so launch overheads overlap with execution as they
/// would in a real program. finish() ends each batch; a first call (building kernels, first
/// touch of the pages) is not timed.
template <class Work>
double best_seconds_per_call(const kiln::queue& q, int batches, int calls, Work&& work) {
    work();
    q.finish();
    double best = 1e30;
    for (int b = 0; b < batches; ++b) {
        const auto start = clock_type::now();
        for (int c = 0; c < calls; ++c) work();
        q.finish();
        best = std::min(best, seconds_since(start) / calls);
    }
    return best;
}

/// The same over several queues (a split vector's devices): each batch ends when all finished.
template <class Work>
double best_seconds_per_call(std::span<const kiln::queue> queues, int batches, int calls,
                             Work&& work) {
    const auto finish_all = [&] {
        for (const kiln::queue& q : queues) q.finish();
    };
    work();
    finish_all();
    double best = 1e30;
    for (int b = 0; b < batches; ++b) {
        const auto start = clock_type::now();
        for (int c = 0; c < calls; ++c) work();
        finish_all();
        best = std::min(best, seconds_since(start) / calls);
    }
    return best;
}

/// Best time of `repeats` runs of `work`, each after an untimed `setup` (such as copying back
/// the input that the work overwrites).
template <class Setup, class Work>
double best_host_seconds(int repeats, Setup&& setup, Work&& work) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        setup();
        const auto start = clock_type::now();
        work();
        best = std::min(best, seconds_since(start));
    }
    return best;
}

/// Best time of `repeats` runs of host work.
template <class Work>
double best_host_seconds(int repeats, Work&& work) {
    return best_host_seconds(
        repeats, [] {}, work);
}

}  // namespace kiln::bench
