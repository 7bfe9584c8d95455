// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's pinned staging: page-locked chunks that non-blocking writes of pageable
// host memory go through, so that the copy engine reads them at the link's speed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/opencl/opencl_common.hpp"

namespace kiln::detail::opencl {

class opencl_device;

/// A device's page-locked chunks, created on demand as mapped CL_MEM_ALLOC_HOST_PTR buffers (how
/// kiln::host_vector's memory is made) and reused once the transfer that last read one has
/// completed. Several queues and threads may stage at once.
class staging_pool {
  public:
    // As the CUDA backend's pool (cuda_backend.hpp): 16 chunks of 4 MiB keep the copy engine
    // busy while the host fills the next chunk, and cost 64 MiB of page-locked memory at most.
    static constexpr std::size_t chunk_bytes = std::size_t{4} << 20;
    static constexpr std::size_t max_chunks = 16;

    class lease;

    explicit staging_pool(opencl_device& device) : device_(device) {}
    /// Waits for every transfer still reading a chunk, so that no chunk is unmapped under one.
    ~staging_pool();
    staging_pool(const staging_pool&) = delete;
    staging_pool& operator=(const staging_pool&) = delete;

    /// A chunk that no transfer reads any more, for the host to fill: a free one, a new one
    /// while there are fewer than max_chunks, or else the one used longest ago, waited for on
    /// the host.
    lease acquire();
    /// How many chunks the pool holds.
    std::size_t size() const;

  private:
    struct chunk {
        std::unique_ptr<host_memory_impl> memory;
        event_handle last_use;  ///< the transfer that last read the chunk; null before the first
        std::uint64_t use = 0;  ///< when last_use was set, in the pool's order of uses
        bool reserved = false;  ///< leased and not yet given back
    };
    chunk& fresh_chunk();  // called with the lock held, below max_chunks
    void give_back(chunk& c, event_handle last_use) noexcept;

    opencl_device& device_;
    mutable std::mutex mutex_;
    std::condition_variable available_;
    std::vector<std::unique_ptr<chunk>> chunks_;
    std::uint64_t uses_ = 0;
};

/// One chunk, held by one writer until it is destroyed; then back in the pool, with the event
/// of the transfer that reads it if one was enqueued (read_by).
class staging_pool::lease {
  public:
    lease(staging_pool& pool, chunk& c) noexcept : pool_(&pool), chunk_(&c) {}
    lease(lease&& other) noexcept
        : pool_(other.pool_), chunk_(other.chunk_), last_use_(std::move(other.last_use_)) {
        other.chunk_ = nullptr;
    }
    lease& operator=(lease&&) = delete;
    ~lease() {
        if (chunk_ != nullptr) pool_->give_back(*chunk_, std::move(last_use_));
    }

    std::byte* data() const noexcept { return static_cast<std::byte*>(chunk_->memory->data()); }
    /// The chunk is in use until `transfer` completes.
    void read_by(event_handle transfer) noexcept { last_use_ = std::move(transfer); }

  private:
    staging_pool* pool_;
    chunk* chunk_;
    event_handle last_use_;
};

// Test hooks (tests/runtime/opencl_staging_test.cpp). A CPU device's buffers are host memory, so
// its writes go straight from the caller's memory and staging would only add a copy; CI has
// only PoCL's CPU device, where the tests turn staging on to run its path.

/// Whether non-blocking writes to CPU devices are staged as those to other devices are.
void stage_writes_on_cpu_devices(bool on) noexcept;
bool stages_writes_on_cpu_devices() noexcept;
/// How many chunks writes have staged in this process, on every device.
std::uint64_t staged_chunk_count() noexcept;

}  // namespace kiln::detail::opencl
