// SPDX-License-Identifier: Apache-2.0
// CUDA programs and kernels: looking kernels up in a loaded module.
#include <algorithm>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {

namespace {
std::size_t function_attribute(CUfunction function, CUfunction_attribute attribute,
                               const char* what) {
    int value = 0;
    check(driver()->cuFuncGetAttribute(&value, attribute, function), "cuFuncGetAttribute", what);
    return static_cast<std::size_t>(value);
}
}  // namespace

std::shared_ptr<constant_area> loaded_module::constant_area_named(const std::string& symbol) {
    std::lock_guard lock(areas_mutex_);
    auto& area = areas_[symbol];
    if (area) return area;
    auto found = std::make_shared<constant_area>();
    check(driver()->cuModuleGetGlobal(&found->address, &found->bytes, module.get().raw,
                                      symbol.c_str()),
          "cuModuleGetGlobal", "the constant parameter area '" + symbol + "'");
    found->last_launch = create_event(context->get(), false);
    area = std::move(found);
    return area;
}

cuda_kernel::cuda_kernel(std::shared_ptr<loaded_module> module, CUfunction function,
                         kernel_signature signature)
    : module_(std::move(module)), function_(function), signature_(std::move(signature)) {
    max_threads_per_block_ = function_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                "max threads per block");
    static_shared_bytes_ =
        function_attribute(function_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory");
    for (std::size_t p = 0; p < signature_.parameters.size(); ++p) {
        auto& parameter = signature_.parameters[p];
        if (parameter.space != parameter_info::address_space::constant) {
            constant_areas_.emplace_back();
            continue;
        }
        constant_areas_.push_back(
            module_->constant_area_named(constant_area_symbol(signature_.symbol, p)));
        parameter.constant_bytes = constant_areas_.back()->bytes;
    }
    // Without opting in, static and dynamic shared memory together stay within 48 KiB.
    dynamic_shared_limit_ = default_shared_limit > static_shared_bytes_
                                ? default_shared_limit - static_shared_bytes_
                                : 0;
}

void cuda_kernel::allow_dynamic_shared_memory(std::size_t bytes) {
    std::lock_guard lock(shared_limit_mutex_);
    if (bytes <= dynamic_shared_limit_) return;
    check(driver()->cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(bytes)),
          "cuFuncSetAttribute",
          "kernel '" + name() + "', " + std::to_string(bytes) + " bytes of local memory");
    dynamic_shared_limit_ = bytes;
}

std::shared_ptr<kernel_impl> cuda_program::create_kernel(const std::string& name) {
    const auto found = std::find_if(kernels_.begin(), kernels_.end(),
                                    [&](const kernel_signature& k) { return k.name == name; });
    if (found == kernels_.end()) {
        std::string known;
        for (const auto& k : kernels_) known += (known.empty() ? "" : ", ") + k.name;
        throw error("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND",
                    "the program has no kernel '" + name +
                        "' (it has: " + (known.empty() ? "none" : known) + ")");
    }
    module_->context->make_current();
    CUfunction function = nullptr;
    check(
        driver()->cuModuleGetFunction(&function, module_->module.get().raw, found->symbol.c_str()),
        "cuModuleGetFunction", "kernel '" + name + "'");
    return std::make_shared<cuda_kernel>(module_, function, *found);
}

std::vector<std::string> cuda_program::kernel_names() {
    std::vector<std::string> names;
    for (const auto& k : kernels_) names.push_back(k.name);
    return names;
}

void cuda_program::set_constant(const std::string& name, const void* data, std::size_t bytes) {
    const std::string call = "kiln::program::set_constant";
    module_->context->make_current();
    CUdeviceptr address = 0;
    std::size_t size = 0;
    const CUresult found =
        driver()->cuModuleGetGlobal(&address, &size, module_->module.get().raw, name.c_str());
    if (found == CUDA_ERROR_NOT_FOUND)
        throw invalid_argument_error(call,
                                     "the program has no program-scope constant '" + name + "'");
    check(found, "cuModuleGetGlobal", "constant '" + name + "'");
    if (size != bytes)
        throw invalid_argument_error(call, "the constant '" + name + "' has " +
                                               std::to_string(size) + " bytes, not " +
                                               std::to_string(bytes));
    // kiln's streams do not synchronize with the legacy stream that cuMemcpyHtoD uses, so the
    // whole context waits on both sides: no launch enqueued earlier reads the new bytes, every
    // launch enqueued later does.
    check(driver()->cuCtxSynchronize(), "cuCtxSynchronize", "before writing '" + name + "'");
    check(driver()->cuMemcpyHtoD(address, data, bytes), "cuMemcpyHtoD", "constant '" + name + "'");
    check(driver()->cuCtxSynchronize(), "cuCtxSynchronize", "after writing '" + name + "'");
}

}  // namespace kiln::detail::cuda
