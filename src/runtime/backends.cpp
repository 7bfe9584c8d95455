// The registry of backends compiled into this build.
#include "runtime/backends.hpp"

namespace kiln::detail {

#ifndef KILN_HAVE_CUDA
std::unique_ptr<backend> make_cuda_backend() {
    return nullptr;
}
#endif

const std::vector<std::unique_ptr<backend>>& all_backends() {
    static const std::vector<std::unique_ptr<backend>> backends = [] {
        std::vector<std::unique_ptr<backend>> list;
        list.push_back(make_opencl_backend());
        if (auto cuda = make_cuda_backend()) list.push_back(std::move(cuda));
        return list;
    }();
    return backends;
}

}  // namespace kiln::detail
