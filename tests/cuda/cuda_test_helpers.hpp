// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that drive the CUDA backend through the backend interface on a real GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <kiln/runtime/program.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace kiln_test {

using kiln::detail::kernel_argument;

/// The CUDA devices of this machine; tests skip when there are none (no driver or no GPU).
inline const std::vector<std::shared_ptr<kiln::detail::device_impl>>& cuda_devices() {
    static const auto devices = [] {
        static const auto backend = kiln::detail::make_cuda_backend();
        return backend ? backend->devices()
                       : std::vector<std::shared_ptr<kiln::detail::device_impl>>{};
    }();
    return devices;
}

#define KILN_REQUIRE_CUDA_DEVICE()                                                                 \
    do {                                                                                           \
        if (::kiln_test::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device on this machine"; \
    } while (false)

inline kernel_argument buffer_argument(const std::shared_ptr<kiln::detail::memory_impl>& memory) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::buffer;
    arg.memory = memory;
    arg.size = memory->size_bytes();
    return arg;
}

inline kernel_argument local_argument(std::size_t bytes) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::local;
    arg.size = bytes;
    return arg;
}

template <class T>
kernel_argument scalar_argument(const T& value) {
    return kiln::detail::make_argument(value);
}

inline kiln::detail::launch_geometry geometry(std::initializer_list<std::size_t> global,
                                              std::initializer_list<std::size_t> local = {},
                                              std::initializer_list<std::size_t> offset = {}) {
    kiln::detail::launch_geometry g;
    g.dims = global.size();
    std::size_t d = 0;
    for (auto v : global) g.global[d++] = v;
    d = 0;
    for (auto v : local) g.local[d++] = v;
    d = 0;
    for (auto v : offset) g.offset[d++] = v;
    return g;
}

/// Device memory holding a copy of `values`.
template <class T>
std::shared_ptr<kiln::detail::memory_impl> upload(kiln::detail::device_impl& device,
                                                  kiln::detail::queue_impl& queue,
                                                  const std::vector<T>& values) {
    std::shared_ptr<kiln::detail::memory_impl> memory =
        device.allocate(values.size() * sizeof(T), kiln::inout);
    queue.write(*memory, 0, values.data(), values.size() * sizeof(T), {}, true);
    return memory;
}

template <class T>
std::vector<T> download(kiln::detail::queue_impl& queue, kiln::detail::memory_impl& memory) {
    std::vector<T> values(memory.size_bytes() / sizeof(T));
    queue.read(memory, 0, values.data(), memory.size_bytes(), {}, true);
    return values;
}

}  // namespace kiln_test
