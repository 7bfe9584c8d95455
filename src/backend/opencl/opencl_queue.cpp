// SPDX-License-Identifier: Apache-2.0
// OpenCL command queues and events.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "backend/opencl/opencl_objects.hpp"

namespace kiln::detail::opencl {

// --- events --------------------------------------------------------------------------------

void opencl_event::wait() {
    cl_event raw = event_.get();
    cl_int status = clWaitForEvents(1, &raw);
    if (status == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        auto command_status = get_info<cl_int>(clGetEventInfo, raw,
                                               CL_EVENT_COMMAND_EXECUTION_STATUS, "clGetEventInfo");
        check(command_status, "clWaitForEvents", "the command failed on the device");
    }
    check(status, "clWaitForEvents");
}

event_status opencl_event::status() {
    auto value = get_info<cl_int>(clGetEventInfo, event_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS,
                                  "clGetEventInfo");
    if (value < 0) check(value, "clGetEventInfo", "the command failed on the device");
    switch (value) {
        case CL_QUEUED:
            return event_status::queued;
        case CL_SUBMITTED:
            return event_status::submitted;
        case CL_RUNNING:
            return event_status::running;
        default:
            return event_status::complete;
    }
}

profiling_times opencl_event::times() {
    if (!profiling_)
        throw invalid_argument_error(
            "kiln::event::times",
            "the queue was created without profiling (use kiln::queue_options{.profiling = true})");
    auto read = [&](cl_profiling_info what) {
        return get_info<cl_ulong>(clGetEventProfilingInfo, event_.get(), what,
                                  "clGetEventProfilingInfo");
    };
    return {read(CL_PROFILING_COMMAND_QUEUED), read(CL_PROFILING_COMMAND_SUBMIT),
            read(CL_PROFILING_COMMAND_START), read(CL_PROFILING_COMMAND_END)};
}

// --- queues ------------------------------------------------------------------------------

opencl_queue::opencl_queue(opencl_device& device, const queue_options& options)
    : device_(device),
      context_(device.context()),
      profiling_(options.profiling),
      out_of_order_(options.out_of_order) {
    cl_command_queue_properties props = 0;
    if (options.out_of_order) props |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if (options.profiling) props |= CL_QUEUE_PROFILING_ENABLE;
    cl_int status = CL_SUCCESS;
    queue_ = command_queue_handle(clCreateCommandQueue(context_, device.id(), props, &status));
    check(status, "clCreateCommandQueue", device.properties().name);
}

opencl_queue::opencl_queue(opencl_device& device, command_queue_handle queue,
                           const queue_options& options)
    : device_(device),
      context_(device.context()),
      queue_(std::move(queue)),
      profiling_(options.profiling),
      out_of_order_(options.out_of_order) {}

std::vector<cl_event> opencl_queue::native_wait_list(event_list after) {
    std::vector<cl_event> native;
    for (const auto& e : after) {
        auto* ours = dynamic_cast<opencl_event*>(e.impl().get());
        if (ours != nullptr && ours->context() == context_)
            native.push_back(ours->get());
        else
            e.wait();
    }
    return native;
}

std::shared_ptr<event_impl> opencl_queue::wrap(cl_event raw) {
    return std::make_shared<opencl_event>(event_handle(raw), context_, profiling_);
}

namespace {
const cl_event* list_or_null(const std::vector<cl_event>& events) {
    return events.empty() ? nullptr : events.data();
}
cl_uint list_size(const std::vector<cl_event>& events) {
    return static_cast<cl_uint>(events.size());
}
cl_mem cl_mem_of(memory_impl& memory, const char* call) {
    return backend_cast<opencl_memory>(memory, call, "a buffer").get();
}
}  // namespace

std::shared_ptr<event_impl> opencl_queue::write(memory_impl& dst, std::size_t dst_offset,
                                                const void* src, std::size_t bytes,
                                                event_list after, bool blocking) {
    const cl_mem target = cl_mem_of(dst, "kiln::buffer::write");
    auto waits = native_wait_list(after);
    // A non-blocking write from pageable memory would be staged by the driver, at a fifth of
    // what pinned memory reaches on NVIDIA's (docs/runtime.md); blocking writes still go through
    // the driver, since the host waits for them anyway.
    const bool stages =
        device_.properties().type != device_type::cpu || stages_writes_on_cpu_devices();
    if (!blocking && bytes > 0 && stages && !is_kiln_pinned(src, bytes))
        return write_through_staging(target, dst_offset, static_cast<const std::byte*>(src), bytes,
                                     waits);
    cl_event done = nullptr;
    check(clEnqueueWriteBuffer(queue_.get(), target, blocking ? CL_TRUE : CL_FALSE, dst_offset,
                               bytes, src, list_size(waits), list_or_null(waits), &done),
          "clEnqueueWriteBuffer");
    return wrap(done);
}

std::shared_ptr<event_impl> opencl_queue::read(memory_impl& src, std::size_t src_offset, void* dst,
                                               std::size_t bytes, event_list after, bool blocking) {
    auto waits = native_wait_list(after);
    cl_event done = nullptr;
    check(clEnqueueReadBuffer(queue_.get(), cl_mem_of(src, "kiln::buffer::read"),
                              blocking ? CL_TRUE : CL_FALSE, src_offset, bytes, dst,
                              list_size(waits), list_or_null(waits), &done),
          "clEnqueueReadBuffer");
    return wrap(done);
}

std::shared_ptr<event_impl> opencl_queue::copy(memory_impl& src, std::size_t src_offset,
                                               memory_impl& dst, std::size_t dst_offset,
                                               std::size_t bytes, event_list after) {
    auto waits = native_wait_list(after);
    cl_event done = nullptr;
    check(clEnqueueCopyBuffer(queue_.get(), cl_mem_of(src, "kiln::buffer::copy"),
                              cl_mem_of(dst, "kiln::buffer::copy"), src_offset, dst_offset, bytes,
                              list_size(waits), list_or_null(waits), &done),
          "clEnqueueCopyBuffer");
    return wrap(done);
}

namespace {

constexpr std::size_t int32_limit = std::size_t{1} << 31;

/// The widest power-of-two pattern (up to OpenCL's 128 bytes) that `offset` is aligned to and
/// that repeats `pattern` exactly.
std::size_t widest_fill_pattern(std::size_t offset, std::size_t pattern_size) {
    std::size_t width = pattern_size;
    while (width < 128 && offset % (2 * width) == 0) width *= 2;
    return width;
}

}  // namespace

std::shared_ptr<event_impl> opencl_queue::fill(memory_impl& dst, std::size_t offset,
                                               const void* pattern, std::size_t pattern_size,
                                               std::size_t bytes, event_list after) {
    if (device_.quirks().fill_index_is_32_bit && (offset + bytes) / pattern_size >= int32_limit) {
        // Widen the pattern so its index stays below 2^31, and write the tail that the wide
        // pattern does not cover from the host.
        const std::size_t width = widest_fill_pattern(offset, pattern_size);
        if ((offset + bytes) / width < int32_limit) {
            std::vector<std::byte> wide(width);
            for (std::size_t at = 0; at < width; at += pattern_size)
                std::memcpy(wide.data() + at, pattern, pattern_size);
            const std::size_t body = bytes / width * width;
            std::shared_ptr<event_impl> body_done;
            if (body > 0) body_done = fill(dst, offset, wide.data(), width, body, after);
            if (body == bytes) return body_done;
            std::vector<event> tail_after(after.begin(), after.end());
            if (body_done) tail_after.emplace_back(body_done);
            return write(dst, offset + body, wide.data(), bytes - body, tail_after, true);
        }
        std::vector<std::byte> expanded(bytes);
        for (std::size_t at = 0; at < bytes; at += pattern_size)
            std::memcpy(expanded.data() + at, pattern, pattern_size);
        return write(dst, offset, expanded.data(), bytes, after, true);
    }
    auto waits = native_wait_list(after);
    cl_event done = nullptr;
    check(clEnqueueFillBuffer(queue_.get(), cl_mem_of(dst, "kiln::buffer::fill"), pattern,
                              pattern_size, offset, bytes, list_size(waits), list_or_null(waits),
                              &done),
          "clEnqueueFillBuffer");
    return wrap(done);
}

void* opencl_queue::map(memory_impl& memory, std::size_t offset, std::size_t bytes,
                        event_list after) {
    auto waits = native_wait_list(after);
    cl_int status = CL_SUCCESS;
    void* host = clEnqueueMapBuffer(queue_.get(), cl_mem_of(memory, "kiln::buffer map"), CL_TRUE,
                                    CL_MAP_READ | CL_MAP_WRITE, offset, bytes, list_size(waits),
                                    list_or_null(waits), nullptr, &status);
    check(status, "clEnqueueMapBuffer");
    return host;
}

void opencl_queue::unmap(memory_impl& memory, void* host) {
    cl_event done = nullptr;
    check(clEnqueueUnmapMemObject(queue_.get(), cl_mem_of(memory, "kiln::buffer unmap"), host, 0,
                                  nullptr, &done),
          "clEnqueueUnmapMemObject");
    wrap(done)->wait();
}

namespace {

/// The name launch errors carry; built only when one is thrown, so that a launch builds no
/// strings.
std::string launch_call(const kernel_impl& kernel) {
    return "kiln::kernel '" + kernel.name() + "' launch";
}

}  // namespace

void opencl_queue::check_driver_limits(const launch_geometry& geometry,
                                       const kernel_impl& kernel) const {
    const auto call = [&] { return launch_call(kernel); };
    if (device_.quirks().global_offset_is_32_bit)
        for (std::size_t d = 0; d < geometry.dims; ++d)
            if (geometry.offset[d] >= int32_limit)
                throw invalid_argument_error(
                    call(), "global offset " + std::to_string(geometry.offset[d]) +
                                " is 2^31 or more, which " + device_.properties().platform +
                                "'s OpenCL driver passes to kernels truncated; pass "
                                "the base index as a kernel argument, or use the CUDA backend");
    const auto& props = device_.properties();
    for (std::size_t d = 0; d < geometry.dims; ++d) {
        // Without a local range the driver chooses; even its largest groups may be too few.
        const bool chosen = geometry.local[0] == 0;
        const std::size_t widest =
            chosen ? std::max<std::size_t>(1, props.max_work_item_sizes[d]) : geometry.local[d];
        const std::size_t groups = geometry.global[d] / widest + (geometry.global[d] % widest != 0);
        if (groups > device_.quirks().max_work_groups[d])
            throw invalid_argument_error(
                call(), "the launch needs " + std::string(chosen ? "at least " : "") +
                            std::to_string(groups) + " work-groups in dimension " +
                            std::to_string(d) + ", more than the " +
                            std::to_string(device_.quirks().max_work_groups[d]) + " that " +
                            props.platform + "'s driver can launch; use larger work-groups");
    }
    if (device_.quirks().work_group_count_is_32_bit) {
        // Without a local range the driver may choose work-groups of one work-item.
        const bool has_local = geometry.local[0] != 0;
        std::size_t groups = 1;
        for (std::size_t d = 0; d < geometry.dims; ++d)
            groups *= geometry.global[d] / (has_local ? geometry.local[d] : 1);
        constexpr std::size_t group_limit = 0xffffffffu;
        if (groups > group_limit)
            throw invalid_argument_error(
                call(), std::string(has_local ? "the launch needs " : "the launch may need ") +
                            std::to_string(groups) + " work-groups, more than the " +
                            std::to_string(group_limit) + " that " + device_.properties().platform +
                            "'s driver can count" +
                            (has_local ? "; use larger work-groups"
                                       : " (with no local range it may choose groups of one "
                                         "work-item); pass a local range"));
    }
}

bool arguments_set::holds(std::size_t index, const kernel_argument& arg,
                          cl_mem memory) const noexcept {
    if (index >= values_.size() || !values_[index].known || values_[index].what != arg.what)
        return false;
    const value& held = values_[index];
    switch (arg.what) {
        case kernel_argument::kind::scalar:
            return held.size == arg.size &&
                   std::memcmp(
                       arg.size <= held.bytes.size() ? held.bytes.data() : held.large.data(),
                       arg.value(), arg.size) == 0;
        case kernel_argument::kind::buffer:
            return held.memory == memory && !held.owner.owner_before(arg.memory) &&
                   !arg.memory.owner_before(held.owner);
        case kernel_argument::kind::local:
            return held.size == arg.size;
        case kernel_argument::kind::image:
            return false;
    }
    return false;
}

void arguments_set::set(std::size_t index, const kernel_argument& arg, cl_mem memory) {
    if (index >= values_.size()) values_.resize(index + 1);
    value& held = values_[index];
    held.what = arg.what;
    held.size = arg.size;
    held.memory = memory;
    if (arg.what == kernel_argument::kind::buffer)
        held.owner = arg.memory;
    else
        held.owner.reset();
    // Images are set again at every launch.
    held.known = arg.what != kernel_argument::kind::image;
    if (arg.what == kernel_argument::kind::scalar) {
        if (arg.size <= held.bytes.size())
            std::memcpy(held.bytes.data(), arg.value(), arg.size);
        else
            held.large.assign(arg.value(), arg.value() + arg.size);
    }
}

void arguments_set::forget(std::size_t index) noexcept {
    if (index < values_.size()) values_[index].known = false;
}

void opencl_queue::set_arguments(cl_kernel kernel, std::span<const kernel_argument> args,
                                 const kernel_impl& named, arguments_set* already_set) {
    for (cl_uint i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        // An empty buffer has no memory: the kernel sees a null pointer.
        cl_mem mem = nullptr;
        if (arg.what == kernel_argument::kind::buffer && arg.memory) {
            auto* memory = launched_as<opencl_memory>(*arg.memory);
            if (memory == nullptr)
                backend_cast<opencl_memory>(*arg.memory, launch_call(named), "a buffer");
            mem = memory->get();
        }
        if (already_set && already_set->holds(i, arg, mem)) continue;
        cl_int status = CL_SUCCESS;
        switch (arg.what) {
            case kernel_argument::kind::scalar:
                status = clSetKernelArg(kernel, i, arg.size, arg.value());
                break;
            case kernel_argument::kind::buffer:
                status = clSetKernelArg(kernel, i, sizeof(cl_mem), &mem);
                break;
            case kernel_argument::kind::local:
                status = clSetKernelArg(kernel, i, arg.size, nullptr);
                break;
            case kernel_argument::kind::image: {
                auto* image = launched_as<opencl_image>(*arg.image);
                if (image == nullptr)
                    backend_cast<opencl_image>(*arg.image, launch_call(named), "an image");
                cl_mem image_mem = image->get();
                status = clSetKernelArg(kernel, i, sizeof(cl_mem), &image_mem);
                break;
            }
        }
        if (status != CL_SUCCESS) {
            if (already_set) already_set->forget(i);
            check(status, "clSetKernelArg", launch_call(named) + ", argument " + std::to_string(i));
        }
        if (already_set) already_set->set(i, arg, mem);
    }
}

std::shared_ptr<event_impl> opencl_queue::launch(kernel_impl& kernel,
                                                 const launch_geometry& geometry,
                                                 std::span<const kernel_argument> args,
                                                 event_list after, launch_completion completion) {
    auto* ours = launched_as<opencl_kernel>(kernel);
    if (ours == nullptr) backend_cast<opencl_kernel>(kernel, launch_call(kernel), "a kernel");
    opencl_kernel& cl_kernel_impl = *ours;
    check_driver_limits(geometry, kernel);
    auto waits = native_wait_list(after);
    std::lock_guard lock(cl_kernel_impl.launch_mutex());
    set_arguments(cl_kernel_impl.get(), args, kernel, &cl_kernel_impl.arguments());
    const bool has_local = geometry.local[0] != 0;
    const bool has_offset = geometry.offset != std::array<std::size_t, 3>{0, 0, 0};
    const bool tracked = completion == launch_completion::event;
    cl_event done = nullptr;
    const cl_int status = clEnqueueNDRangeKernel(
        queue_.get(), cl_kernel_impl.get(), static_cast<cl_uint>(geometry.dims),
        has_offset ? geometry.offset.data() : nullptr, geometry.global.data(),
        has_local ? geometry.local.data() : nullptr, list_size(waits), list_or_null(waits),
        tracked ? &done : nullptr);
    if (status != CL_SUCCESS)
        check(status, "clEnqueueNDRangeKernel", "kernel '" + kernel.name() + "'");
    return tracked ? wrap(done) : nullptr;
}

std::shared_ptr<event_impl> opencl_queue::marker(event_list after) {
    auto waits = native_wait_list(after);
    cl_event done = nullptr;
    check(clEnqueueMarkerWithWaitList(queue_.get(), list_size(waits), list_or_null(waits), &done),
          "clEnqueueMarkerWithWaitList");
    return wrap(done);
}

void opencl_queue::flush() {
    check(clFlush(queue_.get()), "clFlush");
}
void opencl_queue::finish() {
    check(clFinish(queue_.get()), "clFinish");
}

}  // namespace kiln::detail::opencl
