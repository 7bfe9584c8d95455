// SPDX-License-Identifier: Apache-2.0
// The registry of backends compiled into this build.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.hpp"

namespace kiln::detail {

/// Every backend, created once on first use: OpenCL, then CUDA when built.
const std::vector<std::unique_ptr<backend>>& all_backends();

}  // namespace kiln::detail
