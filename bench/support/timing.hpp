// SPDX-License-Identifier: Apache-2.0
// Wall-clock timing shared by the benchmarks: best of several batches, so that a noisy machine
// costs repeats, not accuracy.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <kiln/detail/profiling.hpp>
#include <kiln/kiln.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

/// Best time of each of two pieces of work timed in turn, `rounds` times, each run once untimed
/// first: where a shared machine's speed drifts, both see the same drift, so their ratio holds
/// steadier than that of two series taken one after the other. Each piece waits for its own
/// results.
template <class First, class Second>
std::pair<double, double> best_seconds_in_turn(int rounds, First&& first, Second&& second) {
    first();
    second();
    double best_first = 1e30, best_second = 1e30;
    for (int r = 0; r < rounds; ++r) {
        auto start = clock_type::now();
        first();
        best_first = std::min(best_first, seconds_since(start));
        start = clock_type::now();
        second();
        best_second = std::min(best_second, seconds_since(start));
    }
    return {best_first, best_second};
}

/// One kernel's line of a profiling session's summary (kiln::detail::profiling::scoped_session).
struct kernel_summary {
    std::string name;
    unsigned long launches = 0;
    double total_seconds = 0, shortest_seconds = 0;
};
/// The kernels of a profiling session's summary that ran, in its order.
inline std::vector<kernel_summary> kernels_in(const std::string& summary) {
    std::vector<kernel_summary> kernels;
    std::istringstream lines(summary);
    for (std::string line; std::getline(lines, line);) {
        char name[256];
        unsigned long launches = 0;
        double total_ms = 0, mean_us = 0, shortest_us = 0;
        if (std::sscanf(line.c_str(), "kernel %255s %lu %lf %lf %lf", name, &launches, &total_ms,
                        &mean_us, &shortest_us) == 5 &&
            shortest_us > 0)
            kernels.push_back({name, launches, total_ms * 1e-3, shortest_us * 1e-6});
    }
    return kernels;
}

/// The device time of the fills and of the copies within the device that a profiling session's
/// summary lists (kiln::detail::profiling::scoped_session), in seconds.
inline double fill_and_device_copy_seconds(const std::string& summary) {
    double total = 0;
    std::istringstream lines(summary);
    for (std::string line; std::getline(lines, line);) {
        unsigned long commands = 0;
        double total_ms = 0;
        if (std::sscanf(line.c_str(), "fill %lu %lf", &commands, &total_ms) == 2 ||
            std::sscanf(line.c_str(), "copy (device to device) %lu %lf", &commands, &total_ms) == 2)
            total += total_ms * 1e-3;
    }
    return total;
}

/// Which device commands a call's device time counts: its kernels, or also its fills and its
/// copies within the device (where a call clears or moves state between kernels, as CUB's
/// calls do in kernels of their own). Transfers to and from the host are never counted.
enum class counted_commands { kernels, kernels_fills_and_copies };

/// The device time of one call of some work, the best of `calls` calls after a first one, as
/// CUDA events time the CUB references: `prepare(q)` puts the work's data on `q`, a queue of
/// `dev` profiled from its making, and returns the work. A call's time is what its commands
/// (`counted`) add to the session's total (which the summary gives to the microsecond), so that
/// a call of several kernels, or of one kernel launched on different work, counts all of them.
/// The gaps between a call's commands are not counted, where CUDA events around a CUB call count
/// them.
template <class Prepare>
double device_seconds_per_call(const kiln::device& dev, int calls, Prepare&& prepare,
                               counted_commands counted = counted_commands::kernels) {
    const kiln::detail::profiling::scoped_session session;
    const kiln::queue q(dev);
    const auto device_seconds = [&] {
        q.finish();
        const std::string summary = session.summary();
        double total = counted == counted_commands::kernels_fills_and_copies
                           ? fill_and_device_copy_seconds(summary)
                           : 0.0;
        for (const kernel_summary& kernel : kernels_in(summary)) total += kernel.total_seconds;
        return total;
    };
    auto work = prepare(q);
    work();
    double before = device_seconds(), best = 1e30;
    for (int c = 0; c < calls; ++c) {
        work();
        const double after = device_seconds();
        best = std::min(best, after - before);
        before = after;
    }
    if (best <= 0) throw std::runtime_error("no kernel ran:\n" + session.summary());
    return best;
}

}  // namespace kiln::bench
