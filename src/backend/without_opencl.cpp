// SPDX-License-Identifier: Apache-2.0
// Compiled only into a kiln built without the OpenCL backend: its factory makes nothing.
#include "backend/backend.hpp"

namespace kiln::detail {

std::unique_ptr<backend> make_opencl_backend() {
    return nullptr;
}

}  // namespace kiln::detail
