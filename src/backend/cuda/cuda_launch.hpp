// SPDX-License-Identifier: Apache-2.0
// A kernel launch worked out before anything is enqueued: its block and grid, its launch info and
// the parameter list the driver reads. cuda_queue::launch enqueues it at once; a CUDA graph
// (cuda_graph.cpp) keeps it as kernel nodes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.hpp"

namespace kiln::detail::cuda {

/// What the driver reads a launch's parameters from: pointers to the launch info and to each
/// argument's value, with room for buffer addresses and local-memory offsets. Kernels with up to
/// `inline_arguments` parameters (nearly all: a fused RK4 step of a multivector<double, 3> has 46,
/// its eager statements up to 29) need no heap allocation; the room is on the stack of the launch.
class launch_parameters {
  public:
    static constexpr std::size_t inline_arguments = 48;
    explicit launch_parameters(std::size_t arguments) {
        if (arguments > inline_arguments) {
            heap_pointers_.resize(arguments + 1);
            heap_values_.resize(arguments);
        }
        pointers_ = heap_pointers_.empty() ? inline_pointers_.data() : heap_pointers_.data();
        values_ = heap_values_.empty() ? inline_values_.data() : heap_values_.data();
    }
    launch_parameters(const launch_parameters&) = delete;
    launch_parameters& operator=(const launch_parameters&) = delete;

    void** pointers() noexcept { return pointers_; }
    /// Storage for argument i's value when the argument itself does not hold it.
    std::uint64_t& value(std::size_t i) noexcept { return values_[i]; }

  private:
    std::array<void*, inline_arguments + 1> inline_pointers_;
    std::array<std::uint64_t, inline_arguments> inline_values_;
    std::vector<void*> heap_pointers_;
    std::vector<std::uint64_t> heap_values_;
    void** pointers_;
    std::uint64_t* values_;
};

/// The __constant__ areas a launch fills from its constant arguments. Each area is locked from
/// its copy until the launch's event is recorded after it, so that launches of the kernel on
/// other streams copy in only once this one has finished reading (docs/cuda.md: constant areas).
class constant_area_fills {
  public:
    /// Checks the argument against the area's size, before anything is enqueued.
    void add(constant_area& area, const kernel_impl& kernel, std::size_t position,
             const kernel_argument& arg);
    /// Waits for the last launch that read each area, then copies the argument in.
    void enqueue(CUstream stream);
    /// Marks the end of the launch for the next launch's copy, and unlocks the areas.
    void launched(CUstream stream);
    bool empty() const noexcept { return fills_.empty(); }

  private:
    struct fill {
        constant_area* area;
        CUdeviceptr source;
        std::size_t bytes;
        std::unique_lock<std::mutex> lock{};
    };
    std::vector<fill> fills_;
};

/// The fill kernel's launch for patterns of 8 to 128 bytes (cuda_context::fill_function), which
/// cuMemsetD* cannot repeat.
class wide_fill {
  public:
    static constexpr unsigned threads = 256;
    wide_fill(CUdeviceptr target, const void* pattern, std::size_t pattern_size, std::size_t bytes);
    wide_fill(const wide_fill&) = delete;
    wide_fill& operator=(const wide_fill&) = delete;
    /// Enough blocks to fill the device; the kernel loops over the rest.
    unsigned blocks() const noexcept;
    void** parameters() noexcept { return parameters_.data(); }

  private:
    struct fill_pattern {
        unsigned long long words[16];
    };
    CUdeviceptr destination_;
    unsigned long long word_count_;
    unsigned int mask_;
    fill_pattern words_{};
    std::array<void*, 4> parameters_{&destination_, &word_count_, &mask_, &words_};
};

/// One cuLaunchKernel's grid and block: a range past CUDA's 65535 blocks in y or z is several.
struct launch_shape {
    std::array<unsigned, 3> grid, block;
    unsigned dynamic_shared;
};

/// A launch checked and laid out for the driver. The context must be current.
class prepared_launch {
  public:
    prepared_launch(kernel_impl& kernel, const std::shared_ptr<cuda_context>& context,
                    const launch_geometry& geometry, std::span<const kernel_argument> args);
    prepared_launch(const prepared_launch&) = delete;
    prepared_launch& operator=(const prepared_launch&) = delete;

    CUfunction function() const noexcept { return kernel_.function(); }
    constant_area_fills& constant_fills() noexcept { return fills_; }

    /// Calls `launch(shape, parameters)` for each part of the grid, with the launch info telling
    /// the part its first group. The driver copies the parameters at each call.
    template <class Launch>
    void for_each_part(Launch&& launch) {
        for (std::size_t z = 0; z < grid_[2]; z += grid_limits[2]) {
            for (std::size_t y = 0; y < grid_[1]; y += grid_limits[1]) {
                info_.group_offset[1] = static_cast<std::uint32_t>(y);
                info_.group_offset[2] = static_cast<std::uint32_t>(z);
                const launch_shape shape{
                    {static_cast<unsigned>(grid_[0]),
                     static_cast<unsigned>(std::min(grid_[1] - y, grid_limits[1])),
                     static_cast<unsigned>(std::min(grid_[2] - z, grid_limits[2]))},
                    {static_cast<unsigned>(block_[0]), static_cast<unsigned>(block_[1]),
                     static_cast<unsigned>(block_[2])},
                    static_cast<unsigned>(dynamic_shared_)};
                launch(shape, parameters_.pointers());
            }
        }
    }

  private:
    /// The most blocks one cuLaunchKernel takes per dimension.
    static constexpr std::array<std::size_t, 3> grid_limits{2147483647u, 65535u, 65535u};

    cuda_kernel& kernel_;
    std::array<std::size_t, 3> block_{1, 1, 1};
    std::array<std::size_t, 3> grid_{};
    launch_info info_{};
    launch_parameters parameters_;
    std::size_t dynamic_shared_ = 0;
    constant_area_fills fills_;
};

}  // namespace kiln::detail::cuda
