// SPDX-License-Identifier: Apache-2.0
// The two-level compile cache behind kiln::program: in memory per device, on disk across runs.
#pragma once

#include <chrono>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/program.hpp>
#include <memory>
#include <span>
#include <string>

#include "backend/backend.hpp"

namespace kiln::detail {

struct cached_program {
    std::shared_ptr<program_impl> impl;
    program_origin origin = program_origin::compiled;
    std::chrono::nanoseconds build_time{0};
};

/// Returns the program for (device, sources, options): from memory, else from the disk cache,
/// else compiled (and then stored in both). Thread-safe.
cached_program get_or_build(const device& dev, std::span<const std::string> sources,
                            const std::string& options);

}  // namespace kiln::detail
