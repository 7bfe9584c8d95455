// SPDX-License-Identifier: Apache-2.0
// Compiled only into a kiln built without the CUDA backend: its factory makes nothing.
#include "backend/backend.hpp"

namespace kiln::detail {

std::unique_ptr<backend> make_cuda_backend() {
    return nullptr;
}

}  // namespace kiln::detail
