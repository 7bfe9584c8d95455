// SPDX-License-Identifier: Apache-2.0
// CUDA streams as kiln queues: transfers, fills, launches and events.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"
#include "backend/cuda/cuda_launch.hpp"
#include "backend/parallel_copy.hpp"

namespace kiln::detail::cuda {

std::uint64_t host_now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

event_handle create_event(CUcontext context, bool timing) {
    CUevent raw = nullptr;
    check(driver()->cuEventCreate(&raw, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
    return event_handle({context, raw});
}

namespace {

/// Page-locked host memory can be transferred from directly, without staging. The plural query
/// answers "unknown" for ordinary memory instead of failing (which tools would report).
bool is_pinned(const void* host) {
    unsigned int type = 0;
    CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    void* answer = &type;
    return driver()->cuPointerGetAttributes(1, &attribute, &answer,
                                            reinterpret_cast<CUdeviceptr>(host)) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_HOST;
}

cuda_memory& as_cuda_memory(memory_impl& memory, const char* call) {
    // The message is built only when the cast fails.
    if (auto* ours = dynamic_cast<cuda_memory*>(&memory)) return *ours;
    return backend_cast<cuda_memory>(memory, call, "a buffer");
}

}  // namespace

cuda_event::~cuda_event() {
    if (!pool_) return;  // an event made elsewhere: its handle releases it if adopted
    pool_->give_back(std::move(end_));
    pool_->give_back(std::move(start_));
}

void cuda_event::wait() {
    context_->make_current();
    check(driver()->cuEventSynchronize(end_.get().raw), "cuEventSynchronize");
}

event_status cuda_event::status() {
    context_->make_current();
    const CUresult state = driver()->cuEventQuery(end_.get().raw);
    if (state == CUDA_ERROR_NOT_READY) return event_status::submitted;
    check(state, "cuEventQuery");
    return event_status::complete;
}

profiling_times cuda_event::times() {
    if (!timeline_)
        throw invalid_argument_error(
            "kiln::event::times",
            "the queue was created without profiling (use kiln::queue_options{.profiling = true})");
    wait();
    // Both ends are placed from the same reference, so the times of the commands of a queue are
    // ordered exactly as they ran; the reference is at most a moment older than the command
    // unless the stream never idles (elapsed times are float milliseconds: they lose precision
    // as they grow).
    auto since_reference_ns = [&](CUevent to) {
        float ms = 0.0f;
        check(driver()->cuEventElapsedTime(&ms, timeline_->reference.get().raw, to),
              "cuEventElapsedTime");
        return timeline_->host_ns +
               static_cast<std::uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
    };
    return {queued_ns_, submitted_ns_, since_reference_ns(start_.get().raw),
            since_reference_ns(end_.get().raw)};
}

// --- queues ----------------------------------------------------------------------------------

cuda_queue::cuda_queue(std::shared_ptr<cuda_context> context, const queue_options& options)
    : context_(std::move(context)),
      profiling_(options.profiling),
      events_(std::make_shared<event_pool>(context_->get(), profiling_)) {
    context_->make_current();
    CUstream raw = nullptr;
    // Non-blocking: no implicit ordering with the legacy default stream of other CUDA code.
    check(driver()->cuStreamCreate(&raw, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    stream_ = stream_handle({context_->get(), raw});
    if (profiling_) timeline_ = new_timeline();
}

cuda_queue::cuda_queue(std::shared_ptr<cuda_context> context, stream_handle stream,
                       const queue_options& options)
    : context_(std::move(context)),
      stream_(std::move(stream)),
      profiling_(options.profiling),
      events_(std::make_shared<event_pool>(context_->get(), profiling_)) {
    context_->make_current();
    if (profiling_) timeline_ = new_timeline();
}

std::shared_ptr<const profiling_timeline> cuda_queue::new_timeline() {
    auto timeline = std::make_shared<profiling_timeline>();
    timeline->reference = create_event(context_->get(), true);
    check(driver()->cuEventRecord(timeline->reference.get().raw, stream()), "cuEventRecord");
    check(driver()->cuEventSynchronize(timeline->reference.get().raw), "cuEventSynchronize");
    timeline->host_ns = host_now_ns();
    return timeline;
}

cuda_queue::command cuda_queue::begin(event_list after) {
    command c;
    c.queued_ns = host_now_ns();
    context_->make_current();
    if (profiling_) {
        // A new reference when the current one has aged and waiting for it costs nothing.
        constexpr std::uint64_t reference_lifetime_ns = 100'000'000;
        if (c.queued_ns - timeline_->host_ns > reference_lifetime_ns &&
            driver()->cuStreamQuery(stream()) == CUDA_SUCCESS)
            timeline_ = new_timeline();
        c.timeline = timeline_;
    }
    std::vector<event> foreign;
    for (const auto& e : after) {
        if (!e.impl()) continue;
        if (auto* ours = dynamic_cast<cuda_event*>(e.impl().get())) {
            // Works across contexts and devices too.
            check(driver()->cuStreamWaitEvent(stream(), ours->get(), CU_EVENT_WAIT_DEFAULT),
                  "cuStreamWaitEvent");
        } else {
            foreign.push_back(e);
        }
    }
    if (!foreign.empty()) wait_on_host(foreign);
    if (profiling_) {
        c.start = events_->take();
        check(driver()->cuEventRecord(c.start.get().raw, stream()), "cuEventRecord");
    }
    // Taken before the command itself is enqueued: the device cannot have started it earlier.
    c.submitted_ns = host_now_ns();
    return c;
}

std::shared_ptr<cuda_event> cuda_queue::end(command& c) {
    auto done = events_->take();
    check(driver()->cuEventRecord(done.get().raw, stream()), "cuEventRecord");
    return std::make_shared<cuda_event>(context_, events_, std::move(done), std::move(c.start),
                                        std::move(c.timeline), c.queued_ns, c.submitted_ns);
}

CUdeviceptr cuda_queue::device_address(memory_impl& memory, std::size_t offset, std::size_t bytes,
                                       const char* call) const {
    auto& cuda = as_cuda_memory(memory, call);
    if (offset > cuda.size_bytes() || bytes > cuda.size_bytes() - offset)
        throw invalid_argument_error(call, std::to_string(bytes) + " bytes at offset " +
                                               std::to_string(offset) + " exceed the buffer's " +
                                               std::to_string(cuda.size_bytes()) + " bytes");
    return cuda.address() + offset;
}

std::shared_ptr<event_impl> cuda_queue::write(memory_impl& dst, std::size_t dst_offset,
                                              const void* src, std::size_t bytes, event_list after,
                                              bool blocking) {
    const CUdeviceptr target = device_address(dst, dst_offset, bytes, "kiln::buffer write");
    auto c = begin(after);
    const auto* source = static_cast<const std::byte*>(src);
    if (bytes == 0) {
        // nothing to move; the event still orders like a write
    } else if (blocking || is_kiln_pinned(src, bytes) || is_pinned(src)) {
        // Blocking: the driver stages pageable memory itself and the host waits anyway.
        check(driver()->cuMemcpyHtoDAsync(target, src, bytes, stream()), "cuMemcpyHtoDAsync");
    } else {
        for (std::size_t done = 0; done < bytes;) {
            const std::size_t part = std::min(staging_pool::chunk_bytes, bytes - done);
            auto& chunk = context_->staging().acquire();
            copy_in_parallel(chunk.data(), source + done, part);
            const CUresult copied =
                driver()->cuMemcpyHtoDAsync(target + done, chunk.data(), part, stream());
            context_->staging().release_after(chunk, stream());
            check(copied, "cuMemcpyHtoDAsync");
            done += part;
        }
    }
    auto done = end(c);
    if (blocking) done->wait();
    return done;
}

std::shared_ptr<event_impl> cuda_queue::read(memory_impl& src, std::size_t src_offset, void* dst,
                                             std::size_t bytes, event_list after, bool blocking) {
    const CUdeviceptr origin = device_address(src, src_offset, bytes, "kiln::buffer read");
    auto c = begin(after);
    auto* destination = static_cast<std::byte*>(dst);
    if (bytes == 0) {
        // nothing to move; the event still orders like a read
    } else if (blocking || is_kiln_pinned(dst, bytes) || is_pinned(dst)) {
        check(driver()->cuMemcpyDtoHAsync(dst, origin, bytes, stream()), "cuMemcpyDtoHAsync");
    } else {
        read_through_staging(origin, destination, bytes);
    }
    auto done = end(c);
    if (blocking) done->wait();
    return done;
}

std::shared_ptr<event_impl> cuda_queue::copy(memory_impl& src, std::size_t src_offset,
                                             memory_impl& dst, std::size_t dst_offset,
                                             std::size_t bytes, event_list after) {
    const CUdeviceptr origin = device_address(src, src_offset, bytes, "kiln::buffer copy (source)");
    const CUdeviceptr target =
        device_address(dst, dst_offset, bytes, "kiln::buffer copy (destination)");
    const auto& source_context = as_cuda_memory(src, "kiln::buffer copy").context();
    const auto& target_context = as_cuda_memory(dst, "kiln::buffer copy").context();
    // This queue's stream moves the data: it reaches its own context's memory, and a peer's
    // where the driver lets it.
    const auto reaches = [this](cuda_context& other) {
        return &other == context_.get() || context_->peer_access_to(other);
    };
    auto c = begin(after);
    if (bytes == 0) {
        // nothing to move
    } else if (source_context == target_context) {
        check(driver()->cuMemcpyDtoDAsync(target, origin, bytes, stream()), "cuMemcpyDtoDAsync");
    } else if (reaches(*source_context) && reaches(*target_context)) {
        check(driver()->cuMemcpyPeerAsync(target, target_context->get(), origin,
                                          source_context->get(), bytes, stream()),
              "cuMemcpyPeerAsync");
    } else {
        copy_through_staging(origin, target, bytes);
    }
    return end(c);
}

void cuda_queue::copy_through_staging(CUdeviceptr origin, CUdeviceptr target, std::size_t bytes) {
    staging_pool& pool = context_->staging();
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t piece = std::min(staging_pool::chunk_bytes, bytes - done);
        staging_pool::chunk& chunk = pool.acquire_for(stream());
        try {
            check(driver()->cuMemcpyDtoHAsync(chunk.data(), origin + done, piece, stream()),
                  "cuMemcpyDtoHAsync");
            check(driver()->cuMemcpyHtoDAsync(target + done, chunk.data(), piece, stream()),
                  "cuMemcpyHtoDAsync");
        } catch (...) {
            pool.release_after(chunk, stream());
            throw;
        }
        pool.release_after(chunk, stream());
        done += piece;
    }
}

// Only CPU devices map (fft's host-library strategy); a GPU's memory would need staging.
void* cuda_queue::map(memory_impl&, std::size_t, std::size_t, event_list) {
    throw error("kiln::buffer map", 0, "KILN_FEATURE_UNSUPPORTED",
                "the CUDA backend does not map device memory into the host");
}

void cuda_queue::unmap(memory_impl&, void*) {}

std::shared_ptr<event_impl> cuda_queue::fill(memory_impl& dst, std::size_t offset,
                                             const void* pattern, std::size_t pattern_size,
                                             std::size_t bytes, event_list after) {
    const CUdeviceptr target = device_address(dst, offset, bytes, "kiln::buffer fill");
    const bool supported =
        pattern_size != 0 && pattern_size <= 128 && (pattern_size & (pattern_size - 1)) == 0;
    if (!supported || bytes % pattern_size != 0 || target % pattern_size != 0)
        throw invalid_argument_error(
            "kiln::buffer fill", "a pattern of " + std::to_string(pattern_size) + " bytes over " +
                                     std::to_string(bytes) + " bytes at offset " +
                                     std::to_string(offset) +
                                     " (patterns are 1 to 128 bytes, "
                                     "a power of two, aligned and repeated whole)");
    auto c = begin(after);
    const std::size_t count = bytes / pattern_size;
    if (count == 0) {
        // nothing to fill
    } else if (pattern_size == 1) {
        check(driver()->cuMemsetD8Async(target, *static_cast<const unsigned char*>(pattern), count,
                                        stream()),
              "cuMemsetD8Async");
    } else if (pattern_size == 2) {
        unsigned short value = 0;
        std::memcpy(&value, pattern, 2);
        check(driver()->cuMemsetD16Async(target, value, count, stream()), "cuMemsetD16Async");
    } else if (pattern_size == 4) {
        unsigned int value = 0;
        std::memcpy(&value, pattern, 4);
        check(driver()->cuMemsetD32Async(target, value, count, stream()), "cuMemsetD32Async");
    } else {
        wide_fill fill(target, pattern, pattern_size, bytes);
        check(driver()->cuLaunchKernel(context_->fill_function(), fill.blocks(), 1, 1,
                                       wide_fill::threads, 1, 1, 0, stream(), fill.parameters(),
                                       nullptr),
              "cuLaunchKernel", "the fill kernel");
    }
    return end(c);
}

std::shared_ptr<event_impl> cuda_queue::launch(kernel_impl& kernel, const launch_geometry& geometry,
                                               std::span<const kernel_argument> args,
                                               event_list after, launch_completion completion) {
    context_->make_current();
    prepared_launch prepared(kernel, context_, geometry, args);
    auto c = begin(after);
    prepared.constant_fills().enqueue(stream());
    prepared.for_each_part([&](const launch_shape& shape, void** parameters) {
        const CUresult launched = driver()->cuLaunchKernel(
            prepared.function(), shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0],
            shape.block[1], shape.block[2], shape.dynamic_shared, stream(), parameters, nullptr);
        if (launched != CUDA_SUCCESS)
            throw_driver_error(launched, "cuLaunchKernel", "kernel '" + kernel.name() + "'",
                               std::source_location::current());
    });
    prepared.constant_fills().launched(stream());
    if (completion == launch_completion::untracked) return nullptr;
    return end(c);
}

std::shared_ptr<event_impl> cuda_queue::marker(event_list after) {
    auto c = begin(after);
    return end(c);
}

// CUDA submits work as it is enqueued; there is nothing to flush.
void cuda_queue::flush() {}

void cuda_queue::finish() {
    context_->make_current();
    check(driver()->cuStreamSynchronize(stream()), "cuStreamSynchronize");
}

}  // namespace kiln::detail::cuda
