// SPDX-License-Identifier: Apache-2.0
// A program's own OpenCL objects as kiln's, and kiln's as OpenCL objects: devices through its
// context, its queues, buffers and events, borrowed (the default) or adopted. Not included by
// <kiln/kiln.hpp>; a program that includes it links OpenCL itself (docs/interop.md).
//
//     kiln::device d = kiln::interop::opencl::wrap_device(cl_device, cl_ctx);
//     kiln::queue q = kiln::interop::opencl::wrap_queue(d, cl_queue);
//     auto v = kiln::interop::opencl::wrap_vector<float>(q, cl_buffer, n);  // no copy
//     v = 2 * v + 1;                       // runs on cl_queue, in its order
//     cl_mem m = kiln::interop::opencl::native(v);
#pragma once
#pragma GCC visibility push(default)

#include <CL/cl.h>

#include <cstddef>
#include <kiln/interop/native_handles.hpp>
#include <kiln/vector.hpp>

namespace kiln::interop::opencl {

/// `device` seen through `context`, a context that holds it. Where `context` is the one kiln
/// made for that device (native(d).context), kiln's own device; otherwise a kiln::device that
/// builds its programs and allocates in `context`: one per (device, context), kept with a
/// reference of kiln's own to the context until the process ends, as kiln's own devices are
/// (adopted, the reference kiln keeps is the caller's).
inline kiln::device wrap_device(cl_device_id device, cl_context context, ownership owner = borrow) {
    return kiln::detail::interop::wrap_device(
        backend_kind::opencl, kiln::detail::interop::to_handle(device),
        kiln::detail::interop::to_handle(context), owner, "kiln::interop::opencl::wrap_device");
}

/// A queue of d's context and device; kiln's commands go to it in its order, after what the
/// program enqueued before them. Its options are those it was made with.
inline kiln::queue wrap_queue(const kiln::device& d, cl_command_queue queue,
                              ownership owner = borrow) {
    return kiln::detail::interop::wrap_queue(d, kiln::detail::interop::to_handle(queue), owner,
                                             "kiln::interop::opencl::wrap_queue");
}

/// n elements of T from element `offset` of `memory`, a buffer of q's context, in place. An
/// offset other than 0 begins where the device's allocations may (CL_DEVICE_MEM_BASE_ADDR_ALIGN:
/// kiln takes the range as a sub-buffer).
template <device_value T>
kiln::buffer<T> wrap_buffer(const kiln::queue& q, cl_mem memory, std::size_t n,
                            std::size_t offset = 0, ownership owner = borrow) {
    constexpr const char* call = "kiln::interop::opencl::wrap_buffer";
    return kiln::buffer<T>(kiln::detail::interop::wrap_memory(
        q, kiln::detail::interop::to_handle(memory), kiln::detail::checked_bytes(offset, sizeof(T)),
        kiln::detail::checked_bytes(n, sizeof(T)), alignof(T), owner, call));
}

/// A kiln::vector over n elements of `memory` from element `offset` (wrap_buffer), without a
/// copy: expressions, algorithms and matrix views on it read and write the buffer itself.
template <vector_value T>
kiln::vector<T> wrap_vector(const kiln::queue& q, cl_mem memory, std::size_t n,
                            std::size_t offset = 0, ownership owner = borrow) {
    return kiln::vector<T>(q, wrap_buffer<T>(q, memory, n, offset, owner));
}

/// An event of the program's (a cl_event, of any context) that kiln's commands can wait for:
/// `q.marker(e)` orders what an in-order queue runs after it.
inline kiln::event wrap_event(const kiln::queue& q, cl_event event, ownership owner = borrow) {
    return kiln::detail::interop::wrap_event(q, kiln::detail::interop::to_handle(event), owner,
                                             "kiln::interop::opencl::wrap_event");
}

/// The buffer holding exactly v's elements: the wrapped cl_mem, a sub-buffer of it where v was
/// wrapped at an offset, or kiln's own. It lives as long as v; null for an empty vector of
/// kiln's.
template <device_value T, access A>
cl_mem native(const kiln::buffer<T, A>& b) {
    return kiln::detail::interop::from_handle<cl_mem>(kiln::detail::interop::native_memory(
        b.storage(), backend_kind::opencl, "kiln::interop::opencl::native"));
}
template <vector_value T>
cl_mem native(const kiln::vector<T>& v) {
    return native(kiln::detail::interop::only_part(v, "kiln::interop::opencl::native"));
}

/// The queue's cl_command_queue (kiln's, or the one it wraps), alive as long as q.
inline cl_command_queue native(const kiln::queue& q) {
    return kiln::detail::interop::from_handle<cl_command_queue>(kiln::detail::interop::native_queue(
        q, backend_kind::opencl, "kiln::interop::opencl::native"));
}

/// The event's cl_event, alive as long as e; null for an event that stands for no command (a
/// default-constructed one, complete already).
inline cl_event native(const kiln::event& e) {
    return kiln::detail::interop::from_handle<cl_event>(kiln::detail::interop::native_event(
        e, backend_kind::opencl, "kiln::interop::opencl::native"));
}

/// What native(device) gives for an OpenCL device: the device and the context kiln uses it in.
struct device_handles {
    cl_device_id device;  ///< the OpenCL device
    cl_context context;   ///< where kiln builds the device's programs and allocates its memory
};
/// The device and the context kiln uses it through (made on first use), alive as long as d.
inline device_handles native(const kiln::device& d) {
    const auto both = kiln::detail::interop::native_device(d, backend_kind::opencl,
                                                           "kiln::interop::opencl::native");
    return {kiln::detail::interop::from_handle<cl_device_id>(both.device),
            kiln::detail::interop::from_handle<cl_context>(both.context)};
}

}  // namespace kiln::interop::opencl
#pragma GCC visibility pop
