// SPDX-License-Identifier: Apache-2.0
// cl_khr_command_buffer: the entry points kiln calls, loaded per platform, and the version check
// that decides which of the extension's two argument layouts they take.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/opencl/khronos_headers.hpp"

namespace kiln::detail::opencl {

/// The extension's entry points, declared here rather than taken from cl_ext.h: the headers a
/// build finds may predate the extension, or carry another of its provisional versions.
struct command_buffer_api {
    using command_buffer = void*;  // cl_command_buffer_khr
    using sync_point = cl_uint;    // cl_sync_point_khr
    using properties = cl_ulong;   // cl_command_buffer_properties_khr, cl_command_properties_khr

    using create_fn = command_buffer(CL_API_CALL*)(cl_uint, const cl_command_queue*,
                                                   const properties*, cl_int*);
    using finalize_fn = cl_int(CL_API_CALL*)(command_buffer);
    using release_fn = cl_int(CL_API_CALL*)(command_buffer);
    using enqueue_fn = cl_int(CL_API_CALL*)(cl_uint, cl_command_queue*, command_buffer, cl_uint,
                                            const cl_event*, cl_event*);
    /// The same in every version: the kernel command always had a properties list.
    using ndrange_fn = cl_int(CL_API_CALL*)(command_buffer, cl_command_queue, const properties*,
                                            cl_kernel, cl_uint, const std::size_t*,
                                            const std::size_t*, const std::size_t*, cl_uint,
                                            const sync_point*, sync_point*, void**);
    /// Copies and fills before version 0.9.5, which gave every command a properties list.
    using copy_fn = cl_int(CL_API_CALL*)(command_buffer, cl_command_queue, cl_mem, cl_mem,
                                         std::size_t, std::size_t, std::size_t, cl_uint,
                                         const sync_point*, sync_point*, void**);
    using fill_fn = cl_int(CL_API_CALL*)(command_buffer, cl_command_queue, cl_mem, const void*,
                                         std::size_t, std::size_t, std::size_t, cl_uint,
                                         const sync_point*, sync_point*, void**);
    /// Copies and fills from version 0.9.5 on.
    using copy_with_properties_fn = cl_int(CL_API_CALL*)(command_buffer, cl_command_queue,
                                                         const properties*, cl_mem, cl_mem,
                                                         std::size_t, std::size_t, std::size_t,
                                                         cl_uint, const sync_point*, sync_point*,
                                                         void**);
    using fill_with_properties_fn = cl_int(CL_API_CALL*)(command_buffer, cl_command_queue,
                                                         const properties*, cl_mem, const void*,
                                                         std::size_t, std::size_t, std::size_t,
                                                         cl_uint, const sync_point*, sync_point*,
                                                         void**);

    create_fn create = nullptr;
    finalize_fn finalize = nullptr;
    release_fn release = nullptr;
    enqueue_fn enqueue = nullptr;
    ndrange_fn ndrange = nullptr;
    /// Exactly one pair is set, by the extension's version.
    copy_fn copy = nullptr;
    fill_fn fill = nullptr;
    copy_with_properties_fn copy_with_properties = nullptr;
    fill_with_properties_fn fill_with_properties = nullptr;

    /// The device lets a command buffer be enqueued again while a launch of it is pending.
    bool simultaneous_use = false;
    /// Command buffers recorded from out-of-order queues run out of order.
    bool out_of_order = false;
    /// Queue properties a recording queue must have.
    cl_command_queue_properties required_queue_properties = 0;
};

/// The device's cl_khr_command_buffer, or nothing where it lacks the extension, reports a
/// version other than 0.9.x or 1.x, or its platform does not hand out every entry point.
std::optional<command_buffer_api> load_command_buffer_api(cl_platform_id platform,
                                                          cl_device_id device);

}  // namespace kiln::detail::opencl
