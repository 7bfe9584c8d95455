// The device's own limits, measured in the same run as a benchmark so that ratios are honest.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <kiln/kiln.hpp>

namespace kiln::bench {

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

}  // namespace kiln::bench
