// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's pinned staging: the pool of chunks, pooled events, and the pipelined
// device-to-host read that copies staged chunks out on several host threads.
#include <algorithm>
#include <array>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"
#include "backend/parallel_copy.hpp"

namespace kiln::detail::cuda {

// --- staging ---------------------------------------------------------------------------------

staging_pool::chunk& staging_pool::fresh_chunk() {
    auto fresh = std::make_unique<chunk>();
    void* memory = nullptr;
    check(driver()->cuMemHostAlloc(&memory, chunk_bytes, CU_MEMHOSTALLOC_PORTABLE),
          "cuMemHostAlloc", std::to_string(chunk_bytes) + " bytes of pinned staging memory");
    fresh->memory = pinned_memory_handle({context_, memory});
    fresh->last_use = create_event(context_, false);
    fresh->filled = create_event(context_, false);
    fresh->reserved = true;
    chunks_.push_back(std::move(fresh));
    return *chunks_.back();
}

staging_pool::chunk& staging_pool::acquire() {
    std::unique_lock lock(mutex_);
    while (true) {
        for (auto& c : chunks_) {
            if (c->reserved) continue;
            if (c->used) {
                const CUresult state = driver()->cuEventQuery(c->last_use.get().raw);
                if (state == CUDA_ERROR_NOT_READY) continue;
                check(state, "cuEventQuery");
            }
            c->reserved = true;
            return *c;
        }
        if (chunks_.size() < max_chunks) return fresh_chunk();
        // Every chunk is in flight: wait for one that no other thread holds to come back.
        const auto idle = std::find_if(chunks_.begin(), chunks_.end(),
                                       [](const auto& c) { return !c->reserved; });
        if (idle == chunks_.end()) {
            available_.wait(lock);
            continue;
        }
        chunk& c = **idle;
        c.reserved = true;
        lock.unlock();
        check(driver()->cuEventSynchronize(c.last_use.get().raw), "cuEventSynchronize");
        return c;
    }
}

staging_pool::chunk& staging_pool::acquire_for(CUstream stream) {
    std::unique_lock lock(mutex_);
    while (true) {
        chunk* busy = nullptr;
        for (auto& c : chunks_) {
            if (c->reserved) continue;
            if (c->used && driver()->cuEventQuery(c->last_use.get().raw) == CUDA_ERROR_NOT_READY) {
                if (busy == nullptr) busy = c.get();
                continue;
            }
            c->reserved = true;
            return *c;
        }
        if (chunks_.size() < max_chunks) return fresh_chunk();
        if (busy == nullptr) {
            available_.wait(lock);
            continue;
        }
        busy->reserved = true;
        lock.unlock();
        const CUresult waited =
            driver()->cuStreamWaitEvent(stream, busy->last_use.get().raw, CU_EVENT_WAIT_DEFAULT);
        if (waited != CUDA_SUCCESS) release(*busy, true);
        check(waited, "cuStreamWaitEvent");
        return *busy;
    }
}

void staging_pool::release_after(chunk& c, CUstream stream) {
    const CUresult recorded = driver()->cuEventRecord(c.last_use.get().raw, stream);
    release(c, recorded == CUDA_SUCCESS);
    check(recorded, "cuEventRecord");
}

void staging_pool::release(chunk& c, bool last_use_recorded) noexcept {
    {
        std::lock_guard lock(mutex_);
        c.used = c.used || last_use_recorded;
        c.reserved = false;
    }
    available_.notify_one();
}

// --- events ----------------------------------------------------------------------------------

event_handle event_pool::take() {
    {
        std::lock_guard lock(mutex_);
        if (!free_.empty()) {
            event_handle e = std::move(free_.back());
            free_.pop_back();
            return e;
        }
    }
    return create_event(context_, timing_);
}

void event_pool::give_back(event_handle e) noexcept {
    if (!e) return;
    std::lock_guard lock(mutex_);
    // Beyond the capacity reserved up front the event is destroyed instead (no allocation here).
    if (free_.size() < capacity) free_.push_back(std::move(e));
}

namespace {

struct host_copy {
    void* destination;
    const void* source;
    std::size_t bytes;
};

/// Runs on the driver's callback thread once a device-to-host copy into staging is done.
void CUDA_CB copy_on_host(void* payload) {
    std::unique_ptr<host_copy> copy(static_cast<host_copy*>(payload));
    copy_in_parallel(copy->destination, copy->source, copy->bytes);
}

}  // namespace

CUstream cuda_queue::copy_out_stream() {
    if (!copy_out_) {
        CUstream raw = nullptr;
        check(driver()->cuStreamCreate(&raw, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        copy_out_ = stream_handle({context_->get(), raw});
    }
    return copy_out_.get().raw;
}

void cuda_queue::read_through_staging(CUdeviceptr origin, std::byte* destination,
                                      std::size_t bytes) {
    // Chunk i lands in slot i % depth. The queue's stream copies it in and marks it filled; the
    // copy-out stream waits for that, copies it out on the host and records the slot's last use,
    // which the queue's stream waits for before filling the slot again. Filling runs ahead of
    // copying out by up to `depth` chunks, and neither stream waits for the host thread.
    constexpr std::size_t pipeline_depth = 4;
    auto& pool = context_->staging();
    const CUstream out = copy_out_stream();
    const std::size_t chunk_count =
        (bytes + staging_pool::chunk_bytes - 1) / staging_pool::chunk_bytes;
    const std::size_t depth = std::min(chunk_count, pipeline_depth);
    std::array<staging_pool::chunk*, pipeline_depth> slots{};
    std::array<bool, pipeline_depth> recorded{};
    std::size_t acquired = 0;
    CUresult failure = CUDA_SUCCESS;
    const char* failed_call = nullptr;
    auto attempt = [&](CUresult result, const char* call) {
        if (result != CUDA_SUCCESS) failure = result, failed_call = call;
        return result == CUDA_SUCCESS;
    };
    auto give_back_slots = [&] {
        for (std::size_t k = 0; k < acquired; ++k) pool.release(*slots[k], recorded[k]);
    };
    try {
        for (std::size_t i = 0; i < chunk_count; ++i) {
            const std::size_t k = i % depth;
            if (i < depth) slots[acquired++] = &pool.acquire_for(stream());
            auto& slot = *slots[k];
            const std::size_t done = i * staging_pool::chunk_bytes;
            const std::size_t part = std::min(staging_pool::chunk_bytes, bytes - done);
            auto copy =
                std::make_unique<host_copy>(host_copy{destination + done, slot.data(), part});
            const bool enqueued =
                (i < depth || attempt(driver()->cuStreamWaitEvent(stream(), slot.last_use.get().raw,
                                                                  CU_EVENT_WAIT_DEFAULT),
                                      "cuStreamWaitEvent")) &&
                attempt(driver()->cuMemcpyDtoHAsync(slot.data(), origin + done, part, stream()),
                        "cuMemcpyDtoHAsync") &&
                attempt(driver()->cuEventRecord(slot.filled.get().raw, stream()),
                        "cuEventRecord") &&
                attempt(
                    driver()->cuStreamWaitEvent(out, slot.filled.get().raw, CU_EVENT_WAIT_DEFAULT),
                    "cuStreamWaitEvent") &&
                attempt(driver()->cuLaunchHostFunc(out, copy_on_host, copy.get()),
                        "cuLaunchHostFunc");
            if (!enqueued) break;
            copy.release();  // copy_on_host owns it now
            if (!attempt(driver()->cuEventRecord(slot.last_use.get().raw, out), "cuEventRecord"))
                break;
            recorded[k] = true;
        }
        // The queue's later commands, and its event, follow the last chunk's copy out.
        if (failure == CUDA_SUCCESS)
            attempt(driver()->cuStreamWaitEvent(
                        stream(), slots[(chunk_count - 1) % depth]->last_use.get().raw,
                        CU_EVENT_WAIT_DEFAULT),
                    "cuStreamWaitEvent");
    } catch (...) {
        // A chunk could not be had: let what was enqueued finish before the memory is reused.
        driver()->cuStreamSynchronize(out);
        driver()->cuStreamSynchronize(stream());
        give_back_slots();
        throw;
    }
    if (failure != CUDA_SUCCESS) {
        // Nothing stays in flight behind a reported failure: host functions already enqueued
        // finish writing before the caller may free the destination. Their own errors, if any,
        // are the same failure again and are not reported twice.
        driver()->cuStreamSynchronize(out);
        driver()->cuStreamSynchronize(stream());
    }
    give_back_slots();
    check(failure, failed_call);
}

}  // namespace kiln::detail::cuda
