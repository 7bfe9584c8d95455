// SPDX-License-Identifier: Apache-2.0
// A program's own OpenCL objects as kiln's (kiln/interop/opencl.hpp): devices through its
// context, its queues, buffers and events, borrowed or adopted.
#include <algorithm>
#include <map>
#include <mutex>

#include "backend/opencl/opencl_objects.hpp"

namespace kiln::detail::opencl {

namespace {

/// A query about an object the caller handed in: a status other than success means the handle
/// is not what it claims to be, which is the caller's mistake.
void check_given(cl_int status, const char* call, const char* what) {
    if (status != CL_SUCCESS)
        throw invalid_argument_error(
            call,
            std::string(what) + " is not a valid object of its kind (" + error_name(status) + ")");
}

template <class T, class Object, class Getter>
T given_info(Getter getter, Object object, cl_uint name, const char* call, const char* what) {
    T value{};
    check_given(getter(object, name, sizeof(T), &value, nullptr), call, what);
    return value;
}

[[noreturn]] void refuse_null(const char* call, const char* what) {
    throw invalid_argument_error(call, std::string("the ") + what + " is null");
}

}  // namespace

std::shared_ptr<device_impl> wrap_device(native_handle device, native_handle context,
                                         ownership owner,
                                         std::span<const std::shared_ptr<device_impl>> listed,
                                         const char* call) {
    if (device == 0) refuse_null(call, "cl_device_id");
    if (context == 0) refuse_null(call, "cl_context");
    const auto id = native_as<cl_device_id>(device);
    const auto ctx = native_as<cl_context>(context);
    std::size_t bytes = 0;
    check_given(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, nullptr, &bytes), call,
                "the cl_context");
    std::vector<cl_device_id> held_devices(bytes / sizeof(cl_device_id));
    check_given(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, bytes, held_devices.data(), nullptr),
                call, "the cl_context");
    if (std::find(held_devices.begin(), held_devices.end(), id) == held_devices.end())
        throw invalid_argument_error(call, "the cl_device_id is not one of the cl_context's " +
                                               std::to_string(held_devices.size()) + " devices");
    const opencl_device* twin = nullptr;
    for (const auto& candidate : listed) {
        auto* ours = dynamic_cast<opencl_device*>(candidate.get());
        if (ours == nullptr || ours->id() != id) continue;
        if (ours->context_if_made() == ctx) {
            // kiln's own context: its device is the one, and holds a reference of its own.
            if (owner == ownership::adopted) clReleaseContext(ctx);
            return candidate;
        }
        twin = ours;
    }
    // One device per (device, context), kept with a reference of its own to the context for the
    // rest of the process, as kiln's own devices are: kiln's caches of programs and plans are
    // per device, and the reference keeps the context's handle from naming another context.
    static std::mutex mutex;
    static std::map<std::pair<cl_device_id, cl_context>, std::shared_ptr<device_impl>> wrapped;
    const std::lock_guard lock(mutex);
    if (auto known = wrapped.find({id, ctx}); known != wrapped.end()) {
        if (owner == ownership::adopted) clReleaseContext(ctx);
        return known->second;
    }
    const auto platform = given_info<cl_platform_id>(clGetDeviceInfo, id, CL_DEVICE_PLATFORM, call,
                                                     "the cl_device_id");
    device_properties properties =
        twin != nullptr ? twin->properties() : read_device_properties(platform, id);
    if (owner == ownership::borrowed) clRetainContext(ctx);
    auto made =
        std::make_shared<opencl_device>(platform, id, context_handle(ctx), std::move(properties));
    wrapped.emplace(std::make_pair(id, ctx), made);
    return made;
}

device_impl::native_device opencl_device::native() {
    return {reinterpret_cast<std::uintptr_t>(device_), reinterpret_cast<std::uintptr_t>(context())};
}

device_impl::wrapped_queue opencl_device::wrap_queue(native_handle queue, ownership owner,
                                                     bool /*profiling*/, const char* call) {
    if (queue == 0) refuse_null(call, "cl_command_queue");
    const auto raw = native_as<cl_command_queue>(queue);
    const char* what = "the cl_command_queue";
    if (given_info<cl_context>(clGetCommandQueueInfo, raw, CL_QUEUE_CONTEXT, call, what) !=
        context())
        throw invalid_argument_error(call,
                                     "the cl_command_queue is a queue of another context "
                                     "than the device's");
    if (given_info<cl_device_id>(clGetCommandQueueInfo, raw, CL_QUEUE_DEVICE, call, what) !=
        device_)
        throw invalid_argument_error(
            call, "the cl_command_queue is a queue of another device than " + properties_.name);
    const auto properties = given_info<cl_command_queue_properties>(
        clGetCommandQueueInfo, raw, CL_QUEUE_PROPERTIES, call, what);
    const queue_options options{
        .out_of_order = (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0,
        .profiling = (properties & CL_QUEUE_PROFILING_ENABLE) != 0};
    return {std::make_unique<opencl_queue>(*this, held<command_queue_handle>(raw, owner), options),
            options};
}

std::unique_ptr<memory_impl> opencl_device::wrap_memory(native_handle memory, std::size_t offset,
                                                        std::size_t bytes, ownership owner,
                                                        const char* call) {
    if (memory == 0) refuse_null(call, "cl_mem");
    const auto mem = native_as<cl_mem>(memory);
    const char* what = "the cl_mem";
    if (given_info<cl_mem_object_type>(clGetMemObjectInfo, mem, CL_MEM_TYPE, call, what) !=
        CL_MEM_OBJECT_BUFFER)
        throw invalid_argument_error(call, "the cl_mem is an image, not a buffer");
    if (given_info<cl_context>(clGetMemObjectInfo, mem, CL_MEM_CONTEXT, call, what) != context())
        throw invalid_argument_error(call,
                                     "the cl_mem is a buffer of another context than the "
                                     "device's");
    const auto size = given_info<std::size_t>(clGetMemObjectInfo, mem, CL_MEM_SIZE, call, what);
    if (offset > size || bytes > size - offset)
        throw invalid_argument_error(
            call, "bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                      std::to_string(bytes) + ") pass the end of the cl_mem's " +
                      std::to_string(size) + " bytes (CL_MEM_SIZE)");
    if (offset == 0 || bytes == 0)
        return std::make_unique<opencl_memory>(held<mem_handle>(mem, owner), bytes);
    auto whole = std::make_shared<opencl_memory>(held<mem_handle>(mem, owner), size);
    // A range at an offset is a sub-buffer of its own, which every command takes as it takes
    // kiln's memory; a sub-buffer cannot have sub-buffers, so a range of one is cut from its
    // parent.
    cl_mem parent = mem;
    std::size_t start = offset;
    if (auto above =
            given_info<cl_mem>(clGetMemObjectInfo, mem, CL_MEM_ASSOCIATED_MEMOBJECT, call, what)) {
        start += given_info<std::size_t>(clGetMemObjectInfo, mem, CL_MEM_OFFSET, call, what);
        parent = above;
    }
    const cl_buffer_region region{start, bytes};
    cl_int status = CL_SUCCESS;
    mem_handle range(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &status));
    check(
        status, "clCreateSubBuffer",
        std::to_string(bytes) + " bytes at byte " + std::to_string(start) + " of a wrapped cl_mem");
    auto ranged = std::make_unique<opencl_memory>(std::move(range), bytes);
    ranged->make_range_of(std::move(whole), {});
    return ranged;
}

std::unique_ptr<memory_impl> opencl_device::wrap_host_memory(void* host, std::size_t bytes,
                                                             const char* call) {
    if (!quirks_.host_memory_in_place)
        throw invalid_argument_error(call, properties_.name + " (" + properties_.platform +
                                               ") is not known to use host memory in place: "
                                               "kiln takes host memory as device memory only on "
                                               "PoCL's CPU device");
    if (bytes == 0) return std::make_unique<opencl_memory>(mem_handle(), 0);
    cl_int status = CL_SUCCESS;
    mem_handle mem(
        clCreateBuffer(context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &status));
    check(status, "clCreateBuffer", std::to_string(bytes) + " bytes of host memory in place");
    return std::make_unique<opencl_memory>(std::move(mem), bytes);
}

void* opencl_device::memory_in_host(memory_impl& memory) {
    auto& ours = backend_cast<opencl_memory>(memory, "kiln interop", "memory");
    if (!quirks_.host_memory_in_place || ours.size_bytes() == 0) return nullptr;
    // The device maps its buffers where they lie (opencl_quirks::host_memory_in_place): the
    // address a map gives stays the buffer's once the map ends.
    cl_int status = CL_SUCCESS;
    command_queue_handle queue(clCreateCommandQueue(context(), device_, 0, &status));
    check(status, "clCreateCommandQueue", properties_.name);
    void* host = clEnqueueMapBuffer(queue.get(), ours.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                    ours.size_bytes(), 0, nullptr, nullptr, &status);
    check(status, "clEnqueueMapBuffer");
    check(clEnqueueUnmapMemObject(queue.get(), ours.get(), host, 0, nullptr, nullptr),
          "clEnqueueUnmapMemObject");
    check(clFinish(queue.get()), "clFinish");
    return host;
}

std::shared_ptr<event_impl> opencl_device::wrap_event(native_handle event, ownership owner,
                                                      const char* call) {
    if (event == 0) refuse_null(call, "cl_event");
    const auto raw = native_as<cl_event>(event);
    const auto ctx =
        given_info<cl_context>(clGetEventInfo, raw, CL_EVENT_CONTEXT, call, "the cl_event");
    // Its queue's profiling is unknown (a user event has none): times() is not offered.
    return std::make_shared<opencl_event>(held<event_handle>(raw, owner), ctx, false);
}

}  // namespace kiln::detail::opencl
