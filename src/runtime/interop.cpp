// SPDX-License-Identifier: Apache-2.0
// Objects made elsewhere as kiln's devices, queues, memory and events, and their handles out
// (kiln/interop): the checks every backend shares, then the backend's own.
#include <kiln/interop/native_handles.hpp>

#include "backend/backend.hpp"
#include "runtime/backends.hpp"
#include "runtime/device_label.hpp"
#include "runtime/profiler.hpp"

namespace kiln::detail::interop {

namespace {

ownership owner_of(kiln::interop::ownership owner) noexcept {
    return owner == kiln::interop::adopt ? ownership::adopted : ownership::borrowed;
}

void check_backend(backend_kind expected, backend_kind actual, const char* call, const char* what) {
    if (expected != actual)
        throw invalid_argument_error(
            call, std::string(what) + " is of the " + std::string(to_string(actual)) +
                      " backend, not of the " + std::string(to_string(expected)) + " backend");
}

/// Memory beginning at `start` (an address, or an offset into memory the driver aligned) holds
/// elements of `alignment`-byte alignment from where the device's kernels expect a vector to.
void check_alignment(std::uint64_t start, std::size_t alignment, const kiln::device& d,
                     const char* call) {
    if (alignment > 1 && start % alignment != 0)
        throw invalid_argument_error(call,
                                     "the memory begins " + std::to_string(start % alignment) +
                                         " bytes past a multiple of " + std::to_string(alignment) +
                                         ": it is misaligned for the element type");
    const std::size_t base = d.properties().memory_base_alignment_bytes;
    if (base > 1 && start % base != 0)
        throw invalid_argument_error(
            call, "the memory begins " + std::to_string(start % base) +
                      " bytes past a multiple of " + std::to_string(base) + ", where " +
                      detail::device_label(d) +
                      "'s allocations begin and kiln's kernels expect a vector's first element "
                      "(they read it in wide loads): wrap the whole allocation and take a view "
                      "(kiln::slice, a matrix_view's offset)");
}

}  // namespace

device wrap_device(backend_kind backend, handle device_handle, handle context,
                   kiln::interop::ownership owner, const char* call) {
    for (const auto& b : all_backends()) {
        if (b->kind() != backend) continue;
        std::vector<std::shared_ptr<device_impl>> listed;
        for (const kiln::device& d : devices())
            if (d.backend() == backend) listed.push_back(d.shared_impl());
        return kiln::device(b->wrap_device(device_handle, context, owner_of(owner), listed, call));
    }
    throw invalid_argument_error(
        call, "kiln was built without the " + std::string(to_string(backend)) + " backend");
}

queue wrap_queue(const kiln::device& d, handle queue_handle, kiln::interop::ownership owner,
                 const char* call) {
    auto wrapped =
        d.impl().wrap_queue(queue_handle, owner_of(owner), profiling::active() != nullptr, call);
    return queue(d, std::move(wrapped.queue), wrapped.options);
}

buffer_storage wrap_memory(const queue& q, handle memory, std::size_t offset, std::size_t bytes,
                           std::size_t alignment, kiln::interop::ownership owner,
                           const char* call) {
    const kiln::device& d = q.device();
    // A CUDA handle is the memory's address; an OpenCL buffer's start is aligned by its driver.
    if (memory != 0)
        check_alignment(d.backend() == backend_kind::cuda ? memory + offset : offset, alignment, d,
                        call);
    return buffer_storage(d, d.impl().wrap_memory(memory, offset, bytes, owner_of(owner), call),
                          bytes);
}

buffer_storage wrap_host_memory(const queue& q, void* host, std::size_t bytes,
                                std::size_t alignment, const char* call) {
    const kiln::device& d = q.device();
    if (host == nullptr && bytes > 0)
        throw invalid_argument_error(call, "the host address is null");
    check_alignment(reinterpret_cast<std::uintptr_t>(host), alignment, d, call);
    return buffer_storage(d, d.impl().wrap_host_memory(host, bytes, call), bytes);
}

event wrap_event(const queue& q, handle event_handle, kiln::interop::ownership owner,
                 const char* call) {
    return event(q.device().impl().wrap_event(event_handle, owner_of(owner), call));
}

void throw_split_vector(const char* call, std::size_t parts) {
    throw invalid_argument_error(call, "the vector is split over " + std::to_string(parts) +
                                           " devices: take each part's (v.part(k))");
}

handle native_memory(const buffer_storage& storage, backend_kind backend, const char* call) {
    if (storage.memory() == nullptr) return 0;  // kiln's zero-byte buffers hold no memory
    check_backend(backend, storage.memory()->backend(), call, "the memory");
    return storage.memory()->native();
}

handle native_queue(const queue& q, backend_kind backend, const char* call) {
    check_backend(backend, q.device().backend(), call, "the queue");
    return q.impl().native();
}

handle native_event(const event& e, backend_kind backend, const char* call) {
    if (!e) return 0;
    const auto native = e.impl()->native();
    if (!native)
        throw invalid_argument_error(call,
                                     "the event stands for recorded work (kiln::capture), "
                                     "which no backend event is");
    check_backend(backend, native->backend, call, "the event");
    return native->handle;
}

device_handles native_device(const kiln::device& d, backend_kind backend, const char* call) {
    check_backend(backend, d.backend(), call, "the device");
    const auto native = d.impl().native();
    return {native.device, native.context};
}

void* host_address(const buffer_storage& storage) {
    if (storage.memory() == nullptr) return nullptr;
    return storage.device().impl().memory_in_host(*storage.memory());
}

void make_read_only(const buffer_storage& storage) {
    if (storage.memory() != nullptr) storage.memory()->make_read_only();
}

}  // namespace kiln::detail::interop
