// SPDX-License-Identifier: Apache-2.0
// Ownership traits for the CUDA backend's raw handles, used with kiln::detail::handle.
//
// Releasing a stream, event, module or allocation needs its context current, so those handles
// carry the context along. Release functions swallow errors: they run in destructors, often at
// process exit when the driver may already be shutting down.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <kiln/detail/handle.hpp>

namespace kiln::detail::cuda {

/// The context kiln works in on a device: the device's primary context, retained once by kiln,
/// or a context made elsewhere (kiln/interop), destroyed by kiln when it was adopted.
struct device_context {
    CUdevice device = 0;
    CUcontext context = nullptr;
    bool primary = true;
    bool operator==(const device_context&) const = default;
};

/// A raw handle and the context it lives in.
template <class Raw>
struct in_context {
    CUcontext context = nullptr;
    Raw raw{};
    bool operator==(const in_context&) const = default;
};

struct device_context_traits {
    using value_type = device_context;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct stream_traits {
    using value_type = in_context<CUstream>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct event_traits {
    using value_type = in_context<CUevent>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct module_traits {
    using value_type = in_context<CUmodule>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct device_memory_traits {
    using value_type = in_context<CUdeviceptr>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

/// Page-locked host memory from cuMemHostAlloc.
struct pinned_memory_traits {
    using value_type = in_context<void*>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

/// A CUDA array (an image's pixels) and the texture and surface objects that read and write it.
struct array_traits {
    using value_type = in_context<CUarray>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct texture_object_traits {
    using value_type = in_context<CUtexObject>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct surface_object_traits {
    using value_type = in_context<CUsurfObject>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

/// A CUDA graph and its instantiation (kiln::graph's native form on CUDA).
struct graph_traits {
    using value_type = in_context<CUgraph>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct graph_exec_traits {
    using value_type = in_context<CUgraphExec>;
    static value_type null() noexcept { return {}; }
    static void release(value_type value) noexcept;
};

struct nvrtc_program_traits {
    using value_type = nvrtcProgram;
    static value_type null() noexcept { return nullptr; }
    static void release(value_type value) noexcept;
};

using device_context_handle = handle<device_context_traits>;
using stream_handle = handle<stream_traits>;
using event_handle = handle<event_traits>;
using module_handle = handle<module_traits>;
using device_memory_handle = handle<device_memory_traits>;
using pinned_memory_handle = handle<pinned_memory_traits>;
using nvrtc_program_handle = handle<nvrtc_program_traits>;
using array_handle = handle<array_traits>;
using texture_object_handle = handle<texture_object_traits>;
using surface_object_handle = handle<surface_object_traits>;
using graph_handle = handle<graph_traits>;
using graph_exec_handle = handle<graph_exec_traits>;

/// Makes `context` current on the calling thread unless it already is. Every entry point of the
/// backend calls it, so devices can be used from any thread in any order.
void make_current(CUcontext context);

}  // namespace kiln::detail::cuda
