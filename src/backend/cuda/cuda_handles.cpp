// SPDX-License-Identifier: Apache-2.0
// Release functions of the CUDA handle traits, and switching the current context.
#include "backend/cuda/cuda_handles.hpp"

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {

namespace {
/// In a destructor the context may be gone (process exit): switching is best effort.
void try_make_current(CUcontext context) noexcept {
    CUcontext current = nullptr;
    if (driver()->cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context)
        driver()->cuCtxSetCurrent(context);
}
}  // namespace

void make_current(CUcontext context) {
    CUcontext current = nullptr;
    check(driver()->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current != context) check(driver()->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

void device_context_traits::release(value_type value) noexcept {
    if (value.primary)
        driver()->cuDevicePrimaryCtxRelease(value.device);
    else if (const auto* api = interop_driver())  // only interop adopts other contexts
        api->cuCtxDestroy(value.context);
}

void stream_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuStreamDestroy(value.raw);
}

void event_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuEventDestroy(value.raw);
}

void module_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuModuleUnload(value.raw);
}

void device_memory_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuMemFree(value.raw);
}

void pinned_memory_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuMemFreeHost(value.raw);
}

void array_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuArrayDestroy(value.raw);
}

void texture_object_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuTexObjectDestroy(value.raw);
}

void surface_object_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    driver()->cuSurfObjectDestroy(value.raw);
}

void graph_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    graph_driver()->cuGraphDestroy(value.raw);
}

void graph_exec_traits::release(value_type value) noexcept {
    try_make_current(value.context);
    graph_driver()->cuGraphExecDestroy(value.raw);
}

void nvrtc_program_traits::release(value_type value) noexcept {
    nvrtc()->nvrtcDestroyProgram(&value);
}

}  // namespace kiln::detail::cuda
