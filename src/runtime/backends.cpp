// SPDX-License-Identifier: Apache-2.0
// The registry of backends compiled into this build.
#include "runtime/backends.hpp"

namespace kiln::detail {

// A backend left out of the build has a factory that makes nothing (src/backend/without_*.cpp).
const std::vector<std::unique_ptr<backend>>& all_backends() {
    static const std::vector<std::unique_ptr<backend>> backends = [] {
        std::vector<std::unique_ptr<backend>> list;
        if (auto opencl = make_opencl_backend()) list.push_back(std::move(opencl));
        if (auto cuda = make_cuda_backend()) list.push_back(std::move(cuda));
        return list;
    }();
    return backends;
}

}  // namespace kiln::detail
