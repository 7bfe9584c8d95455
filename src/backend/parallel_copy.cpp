// SPDX-License-Identifier: Apache-2.0
// The helper threads behind copy_in_parallel (parallel_copy.hpp), which both backends' staging
// uses.
#include "backend/parallel_copy.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <latch>
#include <mutex>
#include <thread>

namespace kiln::detail {
namespace {

struct copy_part {
    void* destination;
    const void* source;
    std::size_t bytes;
};

/// Threads that share the copying of staged chunks to and from pageable memory: one host
/// thread's memcpy is well below the link's speed on server CPUs, so a chunk is split between
/// the calling thread (a writer, or the CUDA driver's callback thread) and these. Never
/// destroyed: CUDA host functions may still run while the process exits, and idle threads cost
/// nothing.
class copy_threads {
  public:
    static copy_threads& instance() {
        static auto* const threads = new copy_threads;
        return *threads;
    }

    /// Copies `whole`, in parts on the pool and the calling thread; returns when all are done.
    void copy(const copy_part& whole) {
        constexpr std::size_t smallest_part = std::size_t{512} << 10;
        const std::size_t parts =
            std::clamp<std::size_t>(whole.bytes / smallest_part, 1, workers_ + 1);
        if (parts == 1) {
            std::memcpy(whole.destination, whole.source, whole.bytes);
            return;
        }
        // Parts of a 64-byte multiple, so that no two threads write into one cache line.
        const std::size_t part_bytes = (whole.bytes / parts + 63) / 64 * 64;
        std::latch done(static_cast<std::ptrdiff_t>(parts - 1));
        {
            std::lock_guard lock(mutex_);
            for (std::size_t k = 1; k < parts; ++k) {
                const std::size_t begin = std::min(whole.bytes, k * part_bytes);
                const std::size_t end = std::min(whole.bytes, begin + part_bytes);
                tasks_.push_back(
                    {{static_cast<std::byte*>(whole.destination) + begin,
                      static_cast<const std::byte*>(whole.source) + begin, end - begin},
                     &done});
            }
        }
        work_.notify_all();
        std::memcpy(whole.destination, whole.source, std::min(whole.bytes, part_bytes));
        done.wait();
    }

  private:
    struct task {
        copy_part part;
        std::latch* done;
    };

    // Up to eight helpers: two GPUs uploading at once through one pool moved 14.6 GB/s each with
    // four (an H200 pair, 32 cores), where one host thread copies about 5 GB/s, 16.5-17.7 with
    // eight, and 13.5-14.3 with sixteen (one GPU alone 19.5-21.5, 17.1-18.5 with sixteen).
    copy_threads() : workers_(std::clamp(std::thread::hardware_concurrency(), 2u, 9u) - 1) {
        for (unsigned k = 0; k < workers_; ++k) std::thread([this] { serve(); }).detach();
    }

    void serve() {
        while (true) {
            task t;
            {
                std::unique_lock lock(mutex_);
                work_.wait(lock, [&] { return !tasks_.empty(); });
                t = tasks_.front();
                tasks_.pop_front();
            }
            std::memcpy(t.part.destination, t.part.source, t.part.bytes);
            t.done->count_down();
        }
    }

    unsigned workers_;
    std::mutex mutex_;
    std::condition_variable work_;
    std::deque<task> tasks_;
};

}  // namespace

void copy_in_parallel(void* destination, const void* source, std::size_t bytes) {
    copy_threads::instance().copy({destination, source, bytes});
}

}  // namespace kiln::detail
