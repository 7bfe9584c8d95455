// SPDX-License-Identifier: Apache-2.0
// OpenCL backend internals shared by its files: the check helper, handle traits, typed queries.
#pragma once

#include <kiln/detail/handle.hpp>
#include <source_location>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/opencl/khronos_headers.hpp"

namespace kiln::detail::opencl {

/// The symbolic name of an OpenCL status code, e.g. "CL_INVALID_VALUE".
const char* error_name(cl_int code) noexcept;

/// The one error path of this backend: throws kiln::error naming the call and the status.
inline void check(cl_int status, const char* call, const std::string& detail = {},
                  std::source_location where = std::source_location::current()) {
    if (status != CL_SUCCESS) throw_api_error(call, status, error_name(status), detail, where);
}

// Reference-counted handles: copies retain, destruction releases (errors ignored there).
template <class T, cl_int (*Retain)(T), cl_int (*Release)(T)>
struct reference_counted_traits {
    using value_type = T;
    static constexpr value_type null() noexcept { return nullptr; }
    static void retain(value_type h) noexcept { (void)Retain(h); }
    static void release(value_type h) noexcept { (void)Release(h); }
};

using context_handle =
    handle<reference_counted_traits<cl_context, clRetainContext, clReleaseContext>>;
using command_queue_handle =
    handle<reference_counted_traits<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>>;
using mem_handle = handle<reference_counted_traits<cl_mem, clRetainMemObject, clReleaseMemObject>>;
using program_handle =
    handle<reference_counted_traits<cl_program, clRetainProgram, clReleaseProgram>>;
using kernel_handle = handle<reference_counted_traits<cl_kernel, clRetainKernel, clReleaseKernel>>;
using event_handle = handle<reference_counted_traits<cl_event, clRetainEvent, clReleaseEvent>>;

/// Typed clGet*Info: one template for every object kind and value type.
template <class T, class Object, class Getter, class... Extra>
T get_info(Getter getter, Object object, cl_uint name, const char* call, Extra... extra) {
    T value{};
    check(getter(object, extra..., name, sizeof(T), &value, nullptr), call);
    return value;
}

template <class Object, class Getter, class... Extra>
std::string get_info_string(Getter getter, Object object, cl_uint name, const char* call,
                            Extra... extra) {
    std::size_t size = 0;
    check(getter(object, extra..., name, 0, nullptr, &size), call);
    std::string value(size, '\0');
    if (size > 0) check(getter(object, extra..., name, size, value.data(), nullptr), call);
    while (!value.empty() && value.back() == '\0') value.pop_back();
    return value;
}

}  // namespace kiln::detail::opencl
