// SPDX-License-Identifier: Apache-2.0
// A program's own CUDA objects as kiln's, and kiln's as CUDA objects: devices through its
// context, its streams, device memory and events, borrowed (the default) or adopted. Not
// included by <kiln/kiln.hpp>; a program that includes it finds the CUDA toolkit's cuda.h
// itself (docs/interop.md).
//
//     kiln::device d = kiln::interop::cuda::wrap_device(cu_device);  // the primary context
//     kiln::queue s = kiln::interop::cuda::wrap_stream(d, stream);
//     auto w = kiln::interop::cuda::wrap_vector<float>(s, pointer, n);  // no copy
//     w = 2 * w + 1;                       // runs on `stream`, in its order
//     CUdeviceptr p = kiln::interop::cuda::native(w);
#pragma once
#pragma GCC visibility push(default)

#include <cuda.h>

#include <cstddef>
#include <kiln/interop/native_handles.hpp>
#include <kiln/vector.hpp>

namespace kiln::interop::cuda {

/// kiln's device for `device`, which works in the device's primary context (the CUDA runtime
/// API's too).
inline kiln::device wrap_device(CUdevice device) {
    return kiln::detail::interop::wrap_device(backend_kind::cuda,
                                              static_cast<kiln::detail::interop::handle>(device), 0,
                                              borrow, "kiln::interop::cuda::wrap_device");
}

/// The device of `context`, seen through it: kiln's own device where `context` is the device's
/// primary context; otherwise a new kiln::device whose programs, memory and streams are in
/// `context`, which kiln keeps, as its own devices, until the process ends (wrap once and keep
/// it; the context must live as long). Adopted, kiln destroys the context (cuCtxDestroy) then;
/// a primary context adopted is released (cuDevicePrimaryCtxRelease) at once.
inline kiln::device wrap_device(CUcontext context, ownership owner = borrow) {
    if (context == nullptr)
        throw invalid_argument_error("kiln::interop::cuda::wrap_device", "the CUcontext is null");
    return kiln::detail::interop::wrap_device(backend_kind::cuda, 0,
                                              kiln::detail::interop::to_handle(context), owner,
                                              "kiln::interop::cuda::wrap_device");
}

/// A stream of d's context, which kiln's commands go to in its order, after what the program
/// enqueued on it before them. The null stream is refused: pass CU_STREAM_LEGACY to mean the
/// legacy default stream, or CU_STREAM_PER_THREAD.
inline kiln::queue wrap_stream(const kiln::device& d, CUstream stream, ownership owner = borrow) {
    return kiln::detail::interop::wrap_queue(d, kiln::detail::interop::to_handle(stream), owner,
                                             "kiln::interop::cuda::wrap_stream");
}

/// n elements of T at `address`, device memory of q's device and context, in place. `address`
/// begins where the device's allocations may (a multiple of 256 bytes, as cuMemAlloc's do);
/// adopted, it is a whole allocation from cuMemAlloc, which kiln frees (cuMemFree).
template <device_value T>
kiln::buffer<T> wrap_buffer(const kiln::queue& q, CUdeviceptr address, std::size_t n,
                            ownership owner = borrow) {
    return kiln::buffer<T>(
        kiln::detail::interop::wrap_memory(q, address, 0, kiln::detail::checked_bytes(n, sizeof(T)),
                                           alignof(T), owner, "kiln::interop::cuda::wrap_buffer"));
}

/// A kiln::vector over n elements at `address` (wrap_buffer), without a copy: expressions,
/// algorithms and matrix views on it read and write that memory itself.
template <vector_value T>
kiln::vector<T> wrap_vector(const kiln::queue& q, CUdeviceptr address, std::size_t n,
                            ownership owner = borrow) {
    return kiln::vector<T>(q, wrap_buffer<T>(q, address, n, owner));
}

/// An event of the program's (a CUevent) that kiln's commands can wait for: `q.marker(e)` makes
/// what q's stream runs after it wait (cuStreamWaitEvent).
inline kiln::event wrap_event(const kiln::queue& q, CUevent event, ownership owner = borrow) {
    return kiln::detail::interop::wrap_event(q, kiln::detail::interop::to_handle(event), owner,
                                             "kiln::interop::cuda::wrap_event");
}

/// The address of b's first element; 0 for an empty buffer of kiln's.
template <device_value T, access A>
CUdeviceptr native(const kiln::buffer<T, A>& b) {
    return kiln::detail::interop::native_memory(b.storage(), backend_kind::cuda,
                                                "kiln::interop::cuda::native");
}
template <vector_value T>
CUdeviceptr native(const kiln::vector<T>& v) {
    return native(kiln::detail::interop::only_part(v, "kiln::interop::cuda::native"));
}

/// The queue's stream (kiln's, or the one it wraps), alive as long as q.
inline CUstream native(const kiln::queue& q) {
    return kiln::detail::interop::from_handle<CUstream>(
        kiln::detail::interop::native_queue(q, backend_kind::cuda, "kiln::interop::cuda::native"));
}

/// The event's CUevent, which kiln records its command's end on; valid while e lives (kiln
/// reuses it afterwards). Null for an event that stands for no command (a default-constructed
/// one, complete already).
inline CUevent native(const kiln::event& e) {
    return kiln::detail::interop::from_handle<CUevent>(
        kiln::detail::interop::native_event(e, backend_kind::cuda, "kiln::interop::cuda::native"));
}

/// What native(device) gives for a CUDA device: the driver's device and kiln's context on it.
struct device_handles {
    CUdevice device;    ///< the driver's device
    CUcontext context;  ///< where kiln's work on the device runs (retained on first use)
};
inline device_handles native(const kiln::device& d) {
    const auto both =
        kiln::detail::interop::native_device(d, backend_kind::cuda, "kiln::interop::cuda::native");
    return {static_cast<CUdevice>(both.device),
            kiln::detail::interop::from_handle<CUcontext>(both.context)};
}

}  // namespace kiln::interop::cuda
#pragma GCC visibility pop
