// SPDX-License-Identifier: Apache-2.0
// A program's own CUDA objects as kiln's (kiln/interop/cuda.hpp): devices through its context,
// its streams, device memory and events, borrowed or adopted.
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {

namespace {

const interop_api& interop(const char* call) {
    const interop_api* api = interop_driver();
    if (api == nullptr)
        throw error(call, 0, "KILN_FEATURE_UNSUPPORTED",
                    "the CUDA driver lacks an entry point that kiln/interop calls "
                    "(cuMemGetAddressRange, cuStreamGetCtx, cuCtxGetDevice, cuCtxPushCurrent, "
                    "cuCtxPopCurrent or cuCtxDestroy)");
    return *api;
}

[[noreturn]] void refuse_null(const char* call, const char* what, const char* instead = "") {
    throw invalid_argument_error(call, std::string("the ") + what + " is null" + instead);
}

/// The device of a context made elsewhere; invalid_argument_error where the driver does not
/// know it as a context.
CUdevice device_of(CUcontext context, const char* call) {
    const interop_api& api = interop(call);
    if (api.cuCtxPushCurrent(context) != CUDA_SUCCESS)
        throw invalid_argument_error(call, "the CUcontext is not a context the driver knows");
    CUdevice device = 0;
    const CUresult asked = api.cuCtxGetDevice(&device);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
    check(asked, "cuCtxGetDevice");
    return device;
}

bool is_special_stream(CUstream stream) noexcept {
    return stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

}  // namespace

std::shared_ptr<device_impl> cuda_backend::wrap_device(
    native_handle device, native_handle context, ownership owner,
    std::span<const std::shared_ptr<device_impl>> listed, const char* call) {
    const auto given = native_as<CUcontext>(context);
    const CUdevice id = given != nullptr ? device_of(given, call) : static_cast<CUdevice>(device);
    cuda_device* twin = nullptr;
    std::shared_ptr<device_impl> twin_owner;
    for (const auto& candidate : listed)
        if (auto* ours = dynamic_cast<cuda_device*>(candidate.get()); ours && ours->id() == id) {
            twin = ours;
            twin_owner = candidate;
        }
    if (twin == nullptr)
        throw invalid_argument_error(
            call, "CUDA device " + std::to_string(id) + " is not one of kiln's devices");
    // The primary context is the one kiln works in: its device is kiln's own.
    if (given == nullptr) return twin_owner;
    if (twin->context()->get() == given) {
        if (owner == ownership::adopted) driver()->cuDevicePrimaryCtxRelease(id);
        return twin_owner;
    }
    // Kept for the rest of the process, as kiln's own devices are: kiln's caches of programs
    // and plans are per device, and its modules live in the context. A CUcontext has no
    // reference count that would keep its handle from naming a later context, so each call
    // makes a device of its own.
    auto made = std::make_shared<cuda_device>(
        id, held<device_context_handle>({id, given, false}, owner), twin->properties());
    static std::mutex mutex;
    static std::vector<std::shared_ptr<device_impl>> kept;
    const std::lock_guard lock(mutex);
    kept.push_back(made);
    return made;
}

device_impl::native_device cuda_device::native() {
    return {static_cast<native_handle>(device_),
            reinterpret_cast<std::uintptr_t>(context()->get())};
}

device_impl::wrapped_queue cuda_device::wrap_queue(native_handle queue, ownership owner,
                                                   bool profiling, const char* call) {
    const auto stream = native_as<CUstream>(queue);
    if (stream == nullptr)
        refuse_null(call, "CUstream",
                    " (the legacy default stream: pass CU_STREAM_LEGACY to mean it, or "
                    "CU_STREAM_PER_THREAD)");
    const auto& ctx = context();
    if (owner == ownership::adopted && is_special_stream(stream))
        throw invalid_argument_error(call,
                                     "CU_STREAM_LEGACY and CU_STREAM_PER_THREAD cannot be "
                                     "adopted: no one destroys them");
    // The special streams are the stream of whichever context is current, which kiln makes its
    // own before each command.
    if (!is_special_stream(stream)) {
        CUcontext of = nullptr;
        if (interop(call).cuStreamGetCtx(stream, &of) != CUDA_SUCCESS)
            throw invalid_argument_error(call, "the CUstream is not a stream the driver knows");
        if (of != ctx->get()) {
            const CUdevice other = device_of(of, call);
            throw invalid_argument_error(
                call, other != device_
                          ? "the CUstream is a stream of another device (CUDA device " +
                                std::to_string(other) + ") than " + properties_.name
                          : std::string("the CUstream is a stream of another context than the "
                                        "device's (wrap_device with its CUcontext)"));
        }
    }
    const queue_options options{.profiling = profiling};
    return {std::make_unique<cuda_queue>(ctx, held<stream_handle>({ctx->get(), stream}, owner),
                                         options),
            options};
}

std::unique_ptr<memory_impl> cuda_device::wrap_memory(native_handle memory, std::size_t offset,
                                                      std::size_t bytes, ownership owner,
                                                      const char* call) {
    if (memory == 0) refuse_null(call, "CUdeviceptr");
    const auto& ctx = context();
    const CUdeviceptr address = memory + offset;
    ctx->make_current();
    // Whose memory it is: device memory of this context (or of no context, as the virtual memory
    // API's is) on this device.
    unsigned int type = 0;
    CUcontext of = nullptr;
    int ordinal = -1;
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        CU_POINTER_ATTRIBUTE_CONTEXT,
                                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* answers[] = {&type, &of, &ordinal};
    check(driver()->cuPointerGetAttributes(3, attributes, answers, address),
          "cuPointerGetAttributes");
    if (type != CU_MEMORYTYPE_DEVICE)
        throw invalid_argument_error(call, type == CU_MEMORYTYPE_HOST
                                               ? "the address is host memory, not device memory"
                                               : "the address is not memory the CUDA driver "
                                                 "allocated");
    if (ordinal != device_)
        throw invalid_argument_error(call, "the address is memory of another device (CUDA device " +
                                               std::to_string(ordinal) + ") than " +
                                               properties_.name);
    if (of != nullptr && of != ctx->get())
        throw invalid_argument_error(call,
                                     "the address is memory of another context than the "
                                     "device's");
    CUdeviceptr base = 0;
    std::size_t size = 0;
    check(interop(call).cuMemGetAddressRange(&base, &size, address), "cuMemGetAddressRange");
    const std::size_t room = size - static_cast<std::size_t>(address - base);
    if (bytes > room)
        throw invalid_argument_error(
            call, std::to_string(bytes) +
                      " bytes from the address pass the end of its allocation (" +
                      std::to_string(room) + " bytes left of " + std::to_string(size) +
                      ", cuMemGetAddressRange)");
    if (owner == ownership::adopted && address != base)
        throw invalid_argument_error(call,
                                     "adopted memory is a whole allocation, from the address "
                                     "cuMemAlloc gave: this one is " +
                                         std::to_string(address - base) +
                                         " bytes into its allocation");
    if (owner == ownership::adopted)
        return std::make_unique<cuda_memory>(ctx, device_memory_handle({ctx->get(), address}),
                                             bytes);
    return std::make_unique<cuda_memory>(ctx, address, bytes);
}

std::unique_ptr<memory_impl> cuda_device::wrap_host_memory(void*, std::size_t, const char* call) {
    throw invalid_argument_error(call,
                                 "host memory is not device memory under CUDA: kiln's CUDA "
                                 "devices take only device memory in place");
}

std::shared_ptr<event_impl> cuda_device::wrap_event(native_handle event, ownership owner,
                                                    const char* call) {
    const auto raw = native_as<CUevent>(event);
    if (raw == nullptr) refuse_null(call, "CUevent");
    const auto& ctx = context();
    ctx->make_current();
    const CUresult state = driver()->cuEventQuery(raw);
    if (state != CUDA_SUCCESS && state != CUDA_ERROR_NOT_READY)
        throw invalid_argument_error(call, "the CUevent is not an event the driver knows (" +
                                               driver_error_name(state) + ")");
    return std::make_shared<cuda_event>(ctx, nullptr, held<event_handle>({ctx->get(), raw}, owner),
                                        event_handle(), nullptr, 0, 0);
}

}  // namespace kiln::detail::cuda
