// SPDX-License-Identifier: Apache-2.0
// Work spread over host threads: the devices of step_world --devices, one thread each, and the
// rows of a large world, one band per core.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace kiln::heat {

// The cores this process may run on: mpirun may bind each rank to a few (to one core each by
// default for two ranks), where more threads than that would only take turns.
inline unsigned usable_cores() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        return static_cast<unsigned>(std::max(1, CPU_COUNT(&allowed)));
    return std::max(1u, std::thread::hardware_concurrency());
}

// Runs work(0) ... work(count - 1) at once, one thread each, and rethrows the first failure.
inline void in_parallel(std::size_t count, const std::function<void(std::size_t)>& work) {
    std::vector<std::exception_ptr> failures(count);
    {
        std::vector<std::jthread> threads;
        for (std::size_t b = 0; b < count; ++b) {
            threads.emplace_back([&work, &failures, b] {
                try {
                    work(b);
                } catch (...) {
                    failures[b] = std::current_exception();
                }
            });
        }
    }
    for (const std::exception_ptr& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

// Calls work(first, end) on bands of [0, count) that together cover it: one band per usable core
// when there are at least `per_thread` items for each, fewer otherwise (one band, on this thread,
// for small counts), since starting a thread costs more than small work.
inline void in_bands(std::size_t count, std::size_t per_thread,
                     const std::function<void(std::size_t first, std::size_t end)>& work) {
    const std::size_t bands =
        std::clamp<std::size_t>(count / std::max<std::size_t>(per_thread, 1), 1, usable_cores());
    if (bands == 1) {
        work(0, count);
        return;
    }
    in_parallel(bands,
                [&](std::size_t band) { work(count * band / bands, count * (band + 1) / bands); });
}

}  // namespace kiln::heat
