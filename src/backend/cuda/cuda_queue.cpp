// CUDA streams as kiln queues: transfers, fills, launches and events.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"

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
            check(driver()->cuStreamWaitEvent(stream(), ours->native(), CU_EVENT_WAIT_DEFAULT),
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
        struct fill_pattern {
            unsigned long long words[16];
        } words{};
        std::memcpy(words.words, pattern, pattern_size);
        CUdeviceptr destination = target;
        unsigned long long word_count = bytes / 8;
        unsigned int mask = static_cast<unsigned int>(pattern_size / 8 - 1);
        void* parameters[] = {&destination, &word_count, &mask, &words};
        constexpr unsigned threads = 256;
        // Enough blocks to fill the device; the kernel loops over the rest.
        const unsigned long long blocks =
            std::min<unsigned long long>((word_count + threads - 1) / threads, 65535);
        check(driver()->cuLaunchKernel(context_->fill_function(), static_cast<unsigned>(blocks), 1,
                                       1, threads, 1, 1, 0, stream(), parameters, nullptr),
              "cuLaunchKernel", "the fill kernel");
    }
    return end(c);
}

namespace {

/// The most blocks one cuLaunchKernel takes per dimension.
constexpr std::array<std::size_t, 3> cuda_grid_limits{2147483647u, 65535u, 65535u};
/// The most work-groups a range may have per dimension once kiln splits it: group ids and
/// counts travel as 32-bit numbers in the launch info.
constexpr std::array<std::size_t, 3> split_grid_limits{2147483647u, 4294967295u, 4294967295u};

/// The name launch errors carry; built only when one is thrown.
std::string launch_call(const kernel_impl& kernel) {
    return "kiln::kernel '" + kernel.name() + "' launch";
}

/// What the driver reads a launch's parameters from: pointers to the launch info and to each
/// argument's value, with room for buffer addresses and local-memory offsets. Kernels with up to
/// `inline_arguments` parameters (nearly all) need no heap allocation.
class launch_parameters {
  public:
    static constexpr std::size_t inline_arguments = 15;
    explicit launch_parameters(std::size_t arguments) {
        if (arguments > inline_arguments) {
            heap_pointers_.resize(arguments + 1);
            heap_values_.resize(arguments);
        }
        pointers_ = heap_pointers_.empty() ? inline_pointers_.data() : heap_pointers_.data();
        values_ = heap_values_.empty() ? inline_values_.data() : heap_values_.data();
    }
    launch_parameters(const launch_parameters&) = delete;
    launch_parameters& operator=(const launch_parameters&) = delete;

    void** pointers() noexcept { return pointers_; }
    /// Storage for argument i's value when the argument itself does not hold it.
    std::uint64_t& value(std::size_t i) noexcept { return values_[i]; }

  private:
    std::array<void*, inline_arguments + 1> inline_pointers_;
    std::array<std::uint64_t, inline_arguments> inline_values_;
    std::vector<void*> heap_pointers_;
    std::vector<std::uint64_t> heap_values_;
    void** pointers_;
    std::uint64_t* values_;
};

/// The __constant__ areas a launch fills from its constant arguments. Each area is locked from
/// its copy until the launch's event is recorded after it, so that launches of the kernel on
/// other streams copy in only once this one has finished reading (docs/cuda.md: constant areas).
class constant_area_fills {
  public:
    /// Checks the argument against the area's size, before anything is enqueued.
    void add(constant_area& area, const kernel_impl& kernel, std::size_t position,
             const kernel_argument& arg) {
        if (arg.size > area.bytes)
            throw invalid_argument_error(
                launch_call(kernel),
                "parameter " + std::to_string(position) + " '" +
                    kernel.parameters()[position].name + "': a buffer of " +
                    std::to_string(arg.size) + " bytes is larger than the " +
                    std::to_string(area.bytes) +
                    " bytes of constant memory the parameter has (declare it global const)");
        CUdeviceptr source = 0;
        if (arg.memory) {
            auto* memory = dynamic_cast<cuda_memory*>(arg.memory.get());
            if (memory == nullptr)
                backend_cast<cuda_memory>(*arg.memory, launch_call(kernel), "a buffer");
            source = memory->address();
        }
        fills_.push_back({&area, source, source == 0 ? 0 : arg.size});
    }

    /// Waits for the last launch that read each area, then copies the argument in.
    void enqueue(CUstream stream) {
        for (auto& fill : fills_) {
            fill.lock = std::unique_lock(fill.area->mutex);
            if (fill.area->launched)
                check(driver()->cuStreamWaitEvent(stream, fill.area->last_launch.get().raw,
                                                  CU_EVENT_WAIT_DEFAULT),
                      "cuStreamWaitEvent");
            if (fill.bytes != 0)
                check(driver()->cuMemcpyDtoDAsync(fill.area->address, fill.source, fill.bytes,
                                                  stream),
                      "cuMemcpyDtoDAsync", "a constant argument into its area");
        }
    }

    /// Marks the end of the launch for the next launch's copy, and unlocks the areas.
    void launched(CUstream stream) {
        for (auto& fill : fills_) {
            check(driver()->cuEventRecord(fill.area->last_launch.get().raw, stream),
                  "cuEventRecord");
            fill.area->launched = true;
            fill.lock.unlock();
        }
    }

  private:
    struct fill {
        constant_area* area;
        CUdeviceptr source;
        std::size_t bytes;
        std::unique_lock<std::mutex> lock{};
    };
    std::vector<fill> fills_;
};

}  // namespace

std::shared_ptr<event_impl> cuda_queue::launch(kernel_impl& kernel, const launch_geometry& geometry,
                                               std::span<const kernel_argument> args,
                                               event_list after) {
    auto* found = dynamic_cast<cuda_kernel*>(&kernel);
    if (found == nullptr) backend_cast<cuda_kernel>(kernel, launch_call(kernel), "a kernel");
    auto& cuda = *found;
    context_->make_current();
    if (cuda.context() != context_)
        throw invalid_argument_error(launch_call(kernel),
                                     "the kernel was built for another device than the queue's");
    if (args.size() != cuda.parameter_count())
        throw invalid_argument_error(launch_call(kernel),
                                     std::to_string(args.size()) + " arguments for " +
                                         std::to_string(cuda.parameter_count()) + " parameters");

    // Block shape: as given, or a flat block of up to 256 work-items that the grid rounds up
    // to cover the range (the kernel's prologue drops the work-items past its end).
    std::array<std::size_t, 3> block{1, 1, 1};
    if (geometry.local[0] == 0) {
        const std::size_t budget = std::min<std::size_t>(256, cuda.max_work_group_size());
        block[0] = std::max<std::size_t>(1, std::min(geometry.global[0], budget));
        block[1] = std::max<std::size_t>(1, std::min(geometry.global[1], budget / block[0]));
        block[2] =
            std::max<std::size_t>(1, std::min(geometry.global[2], budget / (block[0] * block[1])));
    } else {
        for (std::size_t d = 0; d < geometry.dims; ++d) block[d] = geometry.local[d];
    }
    // CUDA's grid holds at most 65535 blocks in y and z: larger ranges become several launches
    // (split_grid_limits), each told its first group; x's limit is beyond what kiln's 32-bit
    // group ids count.
    std::array<std::size_t, 3> grid{};
    for (std::size_t d = 0; d < 3; ++d) {
        grid[d] = (geometry.global[d] + block[d] - 1) / block[d];
        if (grid[d] > split_grid_limits[d])
            throw invalid_argument_error(
                launch_call(kernel), "the global range needs " + std::to_string(grid[d]) +
                                         " work-groups in dimension " + std::to_string(d) +
                                         ", more than the " + std::to_string(split_grid_limits[d]) +
                                         " kiln can launch; use larger work-groups");
    }

    launch_info info{};
    for (std::size_t d = 0; d < 3; ++d) {
        info.global_offset[d] = geometry.offset[d];
        info.global_size[d] = geometry.global[d];
    }
    info.work_dim = static_cast<std::uint32_t>(geometry.dims);
    for (std::size_t d = 0; d < 3; ++d) info.num_groups[d] = static_cast<std::uint32_t>(grid[d]);
    for (std::size_t d = 0; d < 3; ++d)
        if (grid[d] * block[d] != geometry.global[d]) info.overhang = 1;

    // Local-memory arguments share the dynamic shared memory block, each at a 16-byte aligned
    // offset (enough for every OpenCL C type the GPU loads in one instruction).
    launch_parameters parameters(args.size());
    parameters.pointers()[0] = &info;
    std::size_t dynamic_shared = 0;
    std::size_t next_pointer = 1;
    constant_area_fills fills;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        if (constant_area* area = cuda.area_of(i)) {
            // The entry point has no parameter for it: the kernel reads the area.
            fills.add(*area, kernel, i, arg);
            continue;
        }
        void*& pointer = parameters.pointers()[next_pointer++];
        switch (arg.what) {
            case kernel_argument::kind::scalar:
                pointer = const_cast<std::byte*>(arg.scalar_bytes.data());
                break;
            case kernel_argument::kind::buffer: {
                CUdeviceptr address = 0;
                if (arg.memory) {
                    auto* memory = dynamic_cast<cuda_memory*>(arg.memory.get());
                    if (memory == nullptr)
                        backend_cast<cuda_memory>(*arg.memory, launch_call(kernel), "a buffer");
                    address = memory->address();
                }
                static_assert(sizeof(CUdeviceptr) == sizeof(std::uint64_t));
                parameters.value(i) = address;
                pointer = &parameters.value(i);
                break;
            }
            case kernel_argument::kind::image: {
                auto* image = dynamic_cast<cuda_image*>(arg.image.get());
                if (image == nullptr)
                    backend_cast<cuda_image>(*arg.image, launch_call(kernel), "an image");
                // The driver copies the parameter; the argument keeps the image alive meanwhile.
                pointer = const_cast<image_parameter*>(&image->parameter());
                break;
            }
            case kernel_argument::kind::local: {
                dynamic_shared = (dynamic_shared + 15) / 16 * 16;
                // The kernel reads a 32-bit offset: the low half of the slot, on this
                // little-endian host.
                parameters.value(i) = static_cast<unsigned int>(dynamic_shared);
                pointer = &parameters.value(i);
                dynamic_shared += arg.size;
                break;
            }
        }
    }
    const std::size_t shared_total = dynamic_shared + cuda.static_shared_bytes();
    if (shared_total > context_->max_shared_memory_per_block())
        throw invalid_argument_error(
            launch_call(kernel),
            "the kernel needs " + std::to_string(shared_total) + " bytes of local memory (" +
                std::to_string(cuda.static_shared_bytes()) + " in local arrays, " +
                std::to_string(dynamic_shared) + " in local arguments), more than the " +
                std::to_string(context_->max_shared_memory_per_block()) +
                " a work-group can have on this device");
    cuda.allow_dynamic_shared_memory(dynamic_shared);

    auto c = begin(after);
    fills.enqueue(stream());
    // cuLaunchKernel copies the parameters, so one launch_info serves every part of a split grid.
    for (std::size_t z = 0; z < grid[2]; z += cuda_grid_limits[2]) {
        for (std::size_t y = 0; y < grid[1]; y += cuda_grid_limits[1]) {
            info.group_offset[1] = static_cast<std::uint32_t>(y);
            info.group_offset[2] = static_cast<std::uint32_t>(z);
            const CUresult launched = driver()->cuLaunchKernel(
                cuda.function(), static_cast<unsigned>(grid[0]),
                static_cast<unsigned>(std::min(grid[1] - y, cuda_grid_limits[1])),
                static_cast<unsigned>(std::min(grid[2] - z, cuda_grid_limits[2])),
                static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                static_cast<unsigned>(block[2]), static_cast<unsigned>(dynamic_shared), stream(),
                parameters.pointers(), nullptr);
            if (launched != CUDA_SUCCESS)
                throw_driver_error(launched, "cuLaunchKernel", "kernel '" + cuda.name() + "'",
                                   std::source_location::current());
        }
    }
    fills.launched(stream());
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
