// SPDX-License-Identifier: Apache-2.0
// Device scratch memory shared by every pass of every algorithm, reused across calls.
//
// Algorithms need short-lived device bytes (reduction partials, scan carries and look-back
// states, compaction counts). Allocating them per call costs more than a small algorithm itself
// on some backends, so one pool per process keeps the idle blocks of each device and hands them
// out as leases. A lease goes back to the pool when it is destroyed; if kernels still use it,
// the lease is told the event after which the memory is free (release_after), and the pool
// does not hand the block to another queue before that event has completed.
//
// The pool shrinks: a request far smaller than the idle block that would serve it frees that
// block instead of pinning it (a scan of 2^28 elements does not keep its megabytes for the small
// scans that follow), at most a few idle blocks are kept per device, and trim() frees them all.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <optional>

namespace kiln::detail {

class temporary_pool;

/// Device bytes borrowed from the temporary pool, returned when the lease is destroyed.
class temporary_lease {
  public:
    temporary_lease() = default;
    temporary_lease(temporary_lease&& other) noexcept;
    temporary_lease& operator=(temporary_lease&& other) noexcept;
    temporary_lease(const temporary_lease&) = delete;
    temporary_lease& operator=(const temporary_lease&) = delete;
    ~temporary_lease();

    /// The borrowed block: at least the requested bytes, maybe more. Kernels take it as a
    /// pointer of any element type (OpenCL and CUDA do not check the pointee of a buffer).
    const buffer<std::byte>& bytes() const noexcept { return block_; }
    std::size_t size() const noexcept { return block_.size(); }
    bool empty() const noexcept { return block_.empty(); }
    /// Work enqueued on `q` uses the block until `done`: another queue gets it only afterwards
    /// (the same in-order queue may reuse it at once, its commands being ordered anyway).
    void release_after(const queue& q, const event& done);
    /// Sets the first `count` bytes to zero on `q` (look-back states and counters start at 0).
    event zero(const queue& q, std::size_t count, const wait_list& after = {}) const;

  private:
    friend class temporary_pool;
    buffer<std::byte> block_;
    std::optional<queue> last_queue_;  // where the last use was enqueued, if it may still run
    event last_use_;
};

/// The process-wide pool of temporary device memory.
class temporary_pool {
  public:
    /// At least `bytes` (rounded up to a power of two, at least 4 KiB) on q's device.
    static temporary_lease acquire(const queue& q, std::size_t bytes);
    /// Frees every idle block of `dev` (blocks on lease are freed when they come back).
    static void trim(const device& dev);
    /// Bytes in idle blocks of `dev`, for tests and diagnostics.
    static std::size_t idle_bytes(const device& dev);

    /// Idle blocks kept per device; returning one more frees the smallest.
    static constexpr std::size_t max_idle_blocks = 8;
    /// A block is handed out for a request only if it is at most this many times larger (or
    /// small in absolute terms); otherwise it is freed and a fitting one allocated: the shrink.
    static constexpr std::size_t max_oversize_factor = 8;
    static constexpr std::size_t small_block_bytes = std::size_t{1} << 20;

  private:
    friend class temporary_lease;
    static void give_back(temporary_lease& lease) noexcept;
};

/// At least `bytes` of page-locked host memory for the calling thread's `slot`, allocated
/// through `dev` and kept for the thread's later calls with that slot: where small results
/// (reduction partials) from several devices land, so that every read can be enqueued before one
/// wait. Into ordinary memory an asynchronous read costs CUDA a host callback and a blocking read
/// one round trip per device; into pinned memory neither. Valid until the thread's next call
/// with the same slot.
std::byte* thread_pinned_scratch(const device& dev, std::size_t slot, std::size_t bytes);

}  // namespace kiln::detail
#pragma GCC visibility pop
