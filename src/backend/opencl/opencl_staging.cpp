// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's pinned staging (opencl_staging.hpp) and the writes that go through it.
#include "backend/opencl/opencl_staging.hpp"

#include <algorithm>
#include <atomic>

#include "backend/opencl/opencl_objects.hpp"
#include "backend/parallel_copy.hpp"

namespace kiln::detail::opencl {
namespace {

std::atomic<bool> staging_on_cpu_devices{false};
std::atomic<std::uint64_t> staged_chunks{0};

/// Whether the transfer behind `transfer` no longer reads its chunk: it completed, or it failed
/// (a negative status), and its error goes to whoever waits for the write's event.
bool has_finished(cl_event transfer) {
    return get_info<cl_int>(clGetEventInfo, transfer, CL_EVENT_COMMAND_EXECUTION_STATUS,
                            "clGetEventInfo") <= CL_COMPLETE;
}

}  // namespace

void stage_writes_on_cpu_devices(bool on) noexcept {
    staging_on_cpu_devices = on;
}
bool stages_writes_on_cpu_devices() noexcept {
    return staging_on_cpu_devices;
}
std::uint64_t staged_chunk_count() noexcept {
    return staged_chunks;
}

staging_pool::~staging_pool() {
    for (auto& c : chunks_) {
        cl_event transfer = c->last_use.get();
        if (transfer != nullptr) (void)clWaitForEvents(1, &transfer);
    }
}

std::size_t staging_pool::size() const {
    std::lock_guard lock(mutex_);
    return chunks_.size();
}

staging_pool::chunk& staging_pool::fresh_chunk() {
    auto fresh = std::make_unique<chunk>();
    fresh->memory = device_.allocate_mapped_host(chunk_bytes);
    fresh->reserved = true;
    chunks_.push_back(std::move(fresh));
    return *chunks_.back();
}

staging_pool::lease staging_pool::acquire() {
    std::unique_lock lock(mutex_);
    while (true) {
        chunk* oldest = nullptr;
        for (auto& c : chunks_) {
            if (c->reserved) continue;
            if (!c->last_use || has_finished(c->last_use.get())) {
                c->reserved = true;
                return lease(*this, *c);
            }
            if (oldest == nullptr || c->use < oldest->use) oldest = c.get();
        }
        if (chunks_.size() < max_chunks) return lease(*this, fresh_chunk());
        if (oldest == nullptr) {
            // Other writers hold every chunk: one comes back when its writer has enqueued it.
            available_.wait(lock);
            continue;
        }
        oldest->reserved = true;
        lock.unlock();
        lease held(*this, *oldest);  // given back, still in use, if the wait throws
        cl_event transfer = oldest->last_use.get();
        const cl_int waited = clWaitForEvents(1, &transfer);
        // A transfer that failed no longer reads the chunk; its error is its write's to report.
        if (waited != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
            check(waited, "clWaitForEvents", "a staging chunk's last transfer");
        return held;
    }
}

void staging_pool::give_back(chunk& c, event_handle last_use) noexcept {
    {
        std::lock_guard lock(mutex_);
        // Without a new transfer the chunk's last one stands: it had finished, or is waited for
        // again by the next writer.
        if (last_use) {
            c.last_use = std::move(last_use);
            c.use = ++uses_;
        }
        c.reserved = false;
    }
    available_.notify_one();
}

std::shared_ptr<event_impl> opencl_queue::write_through_staging(
    cl_mem target, std::size_t offset, const std::byte* source, std::size_t bytes,
    const std::vector<cl_event>& after) {
    staging_pool& pool = device_.staging();
    std::vector<event_handle> pieces;
    pieces.reserve((bytes + staging_pool::chunk_bytes - 1) / staging_pool::chunk_bytes);
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t part = std::min(staging_pool::chunk_bytes, bytes - done);
        staging_pool::lease chunk = pool.acquire();
        copy_in_parallel(chunk.data(), source + done, part);
        // Every piece waits for `after`: on an out-of-order queue nothing else would hold the
        // later pieces back (on an in-order queue the first piece's wait would do).
        cl_event landed = nullptr;
        check(clEnqueueWriteBuffer(queue_.get(), target, CL_FALSE, offset + done, part,
                                   chunk.data(), static_cast<cl_uint>(after.size()),
                                   after.empty() ? nullptr : after.data(), &landed),
              "clEnqueueWriteBuffer", "a staged piece of a write");
        pieces.emplace_back(landed);
        chunk.read_by(pieces.back());
        // Let the copy engine start on this piece while the next is copied in: a driver may
        // hold enqueued commands until a flush, and polling a chunk's event does not flush.
        check(clFlush(queue_.get()), "clFlush", "after a staged piece of a write");
        ++staged_chunks;
        done += part;
    }
    // In order, the last piece lands after the others; out of order, a marker waits for all.
    if (!out_of_order_) return wrap(pieces.back().release());
    std::vector<cl_event> landed(pieces.size());
    std::transform(pieces.begin(), pieces.end(), landed.begin(),
                   [](const event_handle& piece) { return piece.get(); });
    cl_event all = nullptr;
    check(clEnqueueMarkerWithWaitList(queue_.get(), static_cast<cl_uint>(landed.size()),
                                      landed.data(), &all),
          "clEnqueueMarkerWithWaitList", "after a staged write's pieces");
    return wrap(all);
}

}  // namespace kiln::detail::opencl
