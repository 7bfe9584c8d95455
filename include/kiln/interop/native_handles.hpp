// SPDX-License-Identifier: Apache-2.0
// What kiln/interop's headers share: who owns an object made elsewhere, and the calls beneath
// them, which take and give the backends' handles as integers, so that no kiln header but
// kiln/interop/opencl.hpp and kiln/interop/cuda.hpp names an OpenCL or CUDA type (and the
// library is the same whichever of them a program includes).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>

namespace kiln::interop {

/// Who releases an object made elsewhere that kiln uses: the program (borrow, the default: it
/// keeps the object alive while kiln uses it, and kiln never releases it), or kiln (adopt: the
/// program hands kiln its reference, which kiln releases when its last use of the object ends).
/// A call that throws adopts nothing.
enum class ownership { borrow, adopt };
inline constexpr ownership borrow = ownership::borrow;
inline constexpr ownership adopt = ownership::adopt;

}  // namespace kiln::interop

namespace kiln::detail::interop {

/// A backend's handle as an integer: a pointer's bits (cl_mem, CUstream...), a CUdevice or a
/// CUdeviceptr.
using handle = std::uint64_t;

template <class Pointer>
handle to_handle(Pointer raw) noexcept {
    return reinterpret_cast<std::uintptr_t>(raw);
}
template <class Pointer>
Pointer from_handle(handle h) noexcept {
    return reinterpret_cast<Pointer>(static_cast<std::uintptr_t>(h));
}

/// Each throws invalid_argument_error naming `call` for a null handle, an object of another
/// context or device, and memory too short or misaligned, before it makes or enqueues anything.
device wrap_device(backend_kind backend, handle device, handle context,
                   kiln::interop::ownership owner, const char* call);
queue wrap_queue(const kiln::device& d, handle queue, kiln::interop::ownership owner,
                 const char* call);
/// `bytes` bytes from byte `offset` of memory made elsewhere (a cl_mem; a CUDA address, which
/// the offset is added to), whose first element, of `alignment`-byte alignment, begins where
/// the device's allocations do (device_properties::memory_base_alignment_bytes): kiln's kernels
/// read vectors in wide loads from their first element.
buffer_storage wrap_memory(const queue& q, handle memory, std::size_t offset, std::size_t bytes,
                           std::size_t alignment, kiln::interop::ownership owner, const char* call);
/// Host memory that q's device uses in place, where it can (PoCL's CPU device).
buffer_storage wrap_host_memory(const queue& q, void* host, std::size_t bytes,
                                std::size_t alignment, const char* call);
event wrap_event(const queue& q, handle event, kiln::interop::ownership owner, const char* call);

/// The one part of a kiln::vector, whose memory native() gives; invalid_argument_error naming
/// `call` for a vector split over several devices.
[[noreturn]] void throw_split_vector(const char* call, std::size_t parts);
template <class Vector>
const auto& only_part(const Vector& v, const char* call) {
    if (v.part_count() != 1) throw_split_vector(call, v.part_count());
    return v.part(0);
}

/// Each throws invalid_argument_error naming `call` for an object of another backend.
handle native_memory(const buffer_storage& storage, backend_kind backend, const char* call);
handle native_queue(const queue& q, backend_kind backend, const char* call);
/// 0 for an event that stands for no command (a default-constructed one, complete already).
handle native_event(const event& e, backend_kind backend, const char* call);
struct device_handles {
    handle device = 0, context = 0;
};
device_handles native_device(const kiln::device& d, backend_kind backend, const char* call);

/// Where `storage` lies in the host's address space, for the host to use while no command does;
/// null where the backend cannot say (device memory, or a driver not known to map in place).
void* host_address(const buffer_storage& storage);
/// From now on kiln refuses to write the memory (transfers into it, launches that may write it).
void make_read_only(const buffer_storage& storage);

}  // namespace kiln::detail::interop
#pragma GCC visibility pop
