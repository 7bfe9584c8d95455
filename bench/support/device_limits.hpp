// SPDX-License-Identifier: Apache-2.0
// The device's own limits, measured in the same run as a benchmark so that ratios are honest.
#pragma once

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <kiln/kiln.hpp>
#include <memory>
#include <thread>
#include <vector>

namespace kiln::bench {

/// The host's copy bandwidth in GB/s on all its cores, STREAM's copy kernel: each of
/// hardware_concurrency threads copies its share of `bytes` with memcpy (first touched by the
/// thread that copies it), counting bytes read plus bytes written, best of `repeats`. The
/// threads start once and meet at a barrier around each copy, so that no repeat pays for
/// starting them. The bound of memory-bound work on a CPU device, which shares this memory.
inline double host_copy_bandwidth(std::size_t bytes, int repeats = 10) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t share = std::max<std::size_t>(64, bytes / threads / 64 * 64);
    std::unique_ptr<char[]> source(new char[share * threads]);
    std::unique_ptr<char[]> destination(new char[share * threads]);
    double best_seconds = 1e30;
    std::chrono::steady_clock::time_point start;
    std::barrier meet(threads);
    {
        std::vector<std::jthread> workers;
        for (unsigned t = 0; t < threads; ++t)
            workers.emplace_back([&, t] {
                char* from = source.get() + t * share;
                char* to = destination.get() + t * share;
                std::memset(from, 1, share);
                std::memset(to, 0, share);
                for (int r = 0; r < repeats; ++r) {
                    meet.arrive_and_wait();
                    if (t == 0) start = std::chrono::steady_clock::now();
                    meet.arrive_and_wait();
                    std::memcpy(to, from, share);
                    meet.arrive_and_wait();
                    if (t == 0)
                        best_seconds = std::min(
                            best_seconds,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                .count());
                }
            });
    }
    return 2.0 * static_cast<double>(share * threads) / best_seconds / 1e9;
}

/// Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written, the best of
/// `repeats` copies of `bytes` bytes timed with device profiling events.
inline double measure_copy_bandwidth(const kiln::device& dev, std::size_t bytes, int repeats = 10) {
    kiln::queue q(dev, kiln::profiled);
    const std::size_t count = bytes / sizeof(float);
    kiln::buffer<float> source(q, count), destination(q, count);
    source.fill(q, 1.0f).wait();
    source.copy_to(q, destination).wait();  // warm-up: first touch of the pages
    double best_seconds = 1e30;
    for (int i = 0; i < repeats; ++i) {
        auto done = source.copy_to(q, destination);
        best_seconds =
            std::min(best_seconds, std::chrono::duration<double>(done.duration()).count());
    }
    return 2.0 * static_cast<double>(count * sizeof(float)) / best_seconds / 1e9;
}

/// A copy size big enough to leave the caches behind but within the device's allocation limit.
inline std::size_t copy_benchmark_bytes(const kiln::device& dev) {
    const auto& p = dev.properties();
    std::size_t wanted = std::size_t{1} << 30;  // 1 GiB: far above any GPU's L2 (H100: 50 MB)
    return std::min<std::size_t>(wanted, p.max_allocation_bytes / 2);
}

/// The copy bound of memory-bound work moving about `bytes` bytes, in GB/s: on a CPU device the
/// host's copy on all cores at that size (host_copy_bandwidth: the device shares the host's
/// memory, and a copy of a size that fits the caches runs at the caches' speed), on other devices
/// their own device-to-device copy of a size far past their caches.
inline double copy_bound(const kiln::device& dev, std::size_t bytes) {
    return dev.is_cpu() ? host_copy_bandwidth(bytes)
                        : measure_copy_bandwidth(dev, copy_benchmark_bytes(dev));
}

/// How copy_bound measured, for a benchmark's header line.
inline const char* copy_bound_name(const kiln::device& dev) {
    return dev.is_cpu() ? "host memcpy on every core, at the work's size" : "device to device";
}

}  // namespace kiln::bench
