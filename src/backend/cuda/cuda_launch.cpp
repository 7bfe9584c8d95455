// SPDX-License-Identifier: Apache-2.0
// Working out a CUDA kernel launch: checks, block and grid, launch info and parameters.
#include "backend/cuda/cuda_launch.hpp"

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {

namespace {

/// The most work-groups a range may have per dimension once kiln splits it: group ids and
/// counts travel as 32-bit numbers in the launch info.
constexpr std::array<std::size_t, 3> split_grid_limits{2147483647u, 4294967295u, 4294967295u};

/// The name launch errors carry; built only when one is thrown.
std::string launch_call(const kernel_impl& kernel) {
    return "kiln::kernel '" + kernel.name() + "' launch";
}

cuda_kernel& as_cuda_kernel(kernel_impl& kernel) {
    // The message is built only when the cast fails.
    if (auto* ours = launched_as<cuda_kernel>(kernel)) return *ours;
    return backend_cast<cuda_kernel>(kernel, launch_call(kernel), "a kernel");
}

}  // namespace

void constant_area_fills::add(constant_area& area, const kernel_impl& kernel, std::size_t position,
                              const kernel_argument& arg) {
    if (arg.size > area.bytes)
        throw invalid_argument_error(
            launch_call(kernel),
            "parameter " + std::to_string(position) + " '" + kernel.parameters()[position].name +
                "': a buffer of " + std::to_string(arg.size) + " bytes is larger than the " +
                std::to_string(area.bytes) +
                " bytes of constant memory the parameter has (declare it global const)");
    CUdeviceptr source = 0;
    if (arg.memory) {
        auto* memory = launched_as<cuda_memory>(*arg.memory);
        if (memory == nullptr)
            backend_cast<cuda_memory>(*arg.memory, launch_call(kernel), "a buffer");
        source = memory->address();
    }
    fills_.push_back({&area, source, source == 0 ? 0 : arg.size});
}

void constant_area_fills::enqueue(CUstream stream) {
    for (auto& fill : fills_) {
        fill.lock = std::unique_lock(fill.area->mutex);
        if (fill.area->launched)
            check(driver()->cuStreamWaitEvent(stream, fill.area->last_launch.get().raw,
                                              CU_EVENT_WAIT_DEFAULT),
                  "cuStreamWaitEvent");
        if (fill.bytes != 0)
            check(driver()->cuMemcpyDtoDAsync(fill.area->address, fill.source, fill.bytes, stream),
                  "cuMemcpyDtoDAsync", "a constant argument into its area");
    }
}

void constant_area_fills::launched(CUstream stream) {
    for (auto& fill : fills_) {
        check(driver()->cuEventRecord(fill.area->last_launch.get().raw, stream), "cuEventRecord");
        fill.area->launched = true;
        fill.lock.unlock();
    }
}

wide_fill::wide_fill(CUdeviceptr target, const void* pattern, std::size_t pattern_size,
                     std::size_t bytes)
    : destination_(target),
      word_count_(bytes / 8),
      mask_(static_cast<unsigned int>(pattern_size / 8 - 1)) {
    std::memcpy(words_.words, pattern, pattern_size);
}

unsigned wide_fill::blocks() const noexcept {
    return static_cast<unsigned>(
        std::min<unsigned long long>((word_count_ + threads - 1) / threads, 65535));
}

prepared_launch::prepared_launch(kernel_impl& kernel, const std::shared_ptr<cuda_context>& context,
                                 const launch_geometry& geometry,
                                 std::span<const kernel_argument> args)
    : kernel_(as_cuda_kernel(kernel)), parameters_(args.size()) {
    auto& cuda = kernel_;
    if (cuda.context() != context)
        throw invalid_argument_error(launch_call(kernel),
                                     "the kernel was built for another device than the queue's");
    if (args.size() != cuda.parameter_count())
        throw invalid_argument_error(launch_call(kernel),
                                     std::to_string(args.size()) + " arguments for " +
                                         std::to_string(cuda.parameter_count()) + " parameters");

    // Block shape: as given, or a flat block of up to 256 work-items that the grid rounds up
    // to cover the range (the kernel's prologue drops the work-items past its end).
    if (geometry.local[0] == 0) {
        const std::size_t budget = std::min<std::size_t>(256, cuda.max_work_group_size());
        block_[0] = std::max<std::size_t>(1, std::min(geometry.global[0], budget));
        block_[1] = std::max<std::size_t>(1, std::min(geometry.global[1], budget / block_[0]));
        block_[2] = std::max<std::size_t>(
            1, std::min(geometry.global[2], budget / (block_[0] * block_[1])));
    } else {
        for (std::size_t d = 0; d < geometry.dims; ++d) block_[d] = geometry.local[d];
    }
    // CUDA's grid holds at most 65535 blocks in y and z: larger ranges become several launches
    // (split_grid_limits), each told its first group (for_each_part); x's limit is beyond what
    // kiln's 32-bit group ids count.
    for (std::size_t d = 0; d < 3; ++d) {
        grid_[d] = (geometry.global[d] + block_[d] - 1) / block_[d];
        if (grid_[d] > split_grid_limits[d])
            throw invalid_argument_error(
                launch_call(kernel), "the global range needs " + std::to_string(grid_[d]) +
                                         " work-groups in dimension " + std::to_string(d) +
                                         ", more than the " + std::to_string(split_grid_limits[d]) +
                                         " kiln can launch; use larger work-groups");
    }

    for (std::size_t d = 0; d < 3; ++d) {
        info_.global_offset[d] = geometry.offset[d];
        info_.global_size[d] = geometry.global[d];
    }
    info_.work_dim = static_cast<std::uint32_t>(geometry.dims);
    for (std::size_t d = 0; d < 3; ++d) info_.num_groups[d] = static_cast<std::uint32_t>(grid_[d]);
    for (std::size_t d = 0; d < 3; ++d)
        if (grid_[d] * block_[d] != geometry.global[d]) info_.overhang = 1;

    // Local-memory arguments share the dynamic shared memory block, each at a 16-byte aligned
    // offset (enough for every OpenCL C type the GPU loads in one instruction).
    parameters_.pointers()[0] = &info_;
    std::size_t next_pointer = 1;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        if (constant_area* area = cuda.area_of(i)) {
            // The entry point has no parameter for it: the kernel reads the area.
            fills_.add(*area, kernel, i, arg);
            continue;
        }
        void*& pointer = parameters_.pointers()[next_pointer++];
        switch (arg.what) {
            case kernel_argument::kind::scalar:
                pointer = const_cast<std::byte*>(arg.value());
                break;
            case kernel_argument::kind::buffer: {
                CUdeviceptr address = 0;
                if (arg.memory) {
                    auto* memory = launched_as<cuda_memory>(*arg.memory);
                    if (memory == nullptr)
                        backend_cast<cuda_memory>(*arg.memory, launch_call(kernel), "a buffer");
                    address = memory->address();
                }
                static_assert(sizeof(CUdeviceptr) == sizeof(std::uint64_t));
                parameters_.value(i) = address;
                pointer = &parameters_.value(i);
                break;
            }
            case kernel_argument::kind::image: {
                auto* image = launched_as<cuda_image>(*arg.image);
                if (image == nullptr)
                    backend_cast<cuda_image>(*arg.image, launch_call(kernel), "an image");
                // The driver copies the parameter; the argument keeps the image alive meanwhile.
                pointer = const_cast<image_parameter*>(&image->parameter());
                break;
            }
            case kernel_argument::kind::local: {
                dynamic_shared_ = (dynamic_shared_ + 15) / 16 * 16;
                // The kernel reads a 32-bit offset: the low half of the slot, on this
                // little-endian host.
                parameters_.value(i) = static_cast<unsigned int>(dynamic_shared_);
                pointer = &parameters_.value(i);
                dynamic_shared_ += arg.size;
                break;
            }
        }
    }
    const std::size_t shared_total = dynamic_shared_ + cuda.static_shared_bytes();
    if (shared_total > context->max_shared_memory_per_block())
        throw invalid_argument_error(
            launch_call(kernel),
            "the kernel needs " + std::to_string(shared_total) + " bytes of local memory (" +
                std::to_string(cuda.static_shared_bytes()) + " in local arrays, " +
                std::to_string(dynamic_shared_) + " in local arguments), more than the " +
                std::to_string(context->max_shared_memory_per_block()) +
                " a work-group can have on this device");
    cuda.allow_dynamic_shared_memory(dynamic_shared_);
}

}  // namespace kiln::detail::cuda
