// SPDX-License-Identifier: Apache-2.0
// The FFT's tuning: its numbers' type, its key in the tuning table (rows in
// src/algo/fft/fft_tuning.cpp), its plan and the pipeline's table and override.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <span>
#include <string_view>

namespace kiln::detail {

/// FFT pass rows: at most work_group_size work-items and tile_size() complex floats of local
/// memory per group (plan_fft's fft_pass_limits).
struct fft_tuning {
    std::size_t work_group_size = 64;
    std::size_t items_per_work_item = 16;
    /// Lines longer than local memory may stay in a group's registers (fft_register_pass); false:
    /// they take two passes through local memory.
    bool register_passes = true;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
};

namespace algorithm {

struct fft_rows {
    using tuning = fft_tuning;
    static constexpr std::string_view name = "fft";
    static std::span<const tuning_row<fft_tuning>> rows();
};
inline constexpr fft_rows fft{};

}  // namespace algorithm

scoped_algorithm_policy(fft_tuning)->scoped_algorithm_policy<algorithm::fft_rows>;

/// FFT lines of two passes through local memory done by one kernel in chunks, the data between
/// the passes in a ring that stays in the L2 cache (fft_pipeline_kernel): chunk_bytes of lines
/// per chunk, `slots` chunks in the ring, second passes `lag` chunks behind the first (1 to
/// slots - 1). chunk_bytes 0: not used. `target`: whose fences and streaming accesses the kernel
/// calls (set from the device, not the table).
struct fft_pipeline_policy {
    std::size_t chunk_bytes = 0, slots = 0, lag = 1;
    bool streaming = false;  ///< fft_pipeline_kernel::streaming
    bool fine = false;       ///< fft_pipeline_kernel::fine
    target_features target{};
};

/// How FFT passes fit a device: local memory per group (bytes, and complex elements of the
/// plan's precision), the elements a group takes when its lines are short, work-items per group
/// (the policy's, and the device's most), and how many lines a group must take so that its loads
/// across lines fill whole memory transactions.
struct fft_pass_limits {
    std::size_t local_bytes = 0, local_elements = 0, group_elements = 0, work_group_size = 0,
                max_work_group_size = 0, coalesced_lines = 0;
    bool double_precision = false;
    bool radix_per_pass = false;  ///< one stage per pass, from one shared program
    bool register_passes = true;  ///< lines may take fft_register_pass
};
struct fft_policy {
    fft_pass_limits passes;
    fft_pipeline_policy pipeline;
    /// Work-items per group of the steps that are not passes (halves, chirps, copies).
    std::size_t step_work_group_size = 64;
};
/// The FFT plan's overrides: the shared ones and the forced passes' tuning, beside the pipeline
/// (scoped_fft_pipeline_policy) and the per-length kernels (scoped_fft_length_kernels).
struct fft_overrides : tuning_overrides<algorithm::fft_rows> {
    std::optional<fft_pipeline_policy> pipeline;
    bool length_kernels = false;
};
/// The FFT's overrides in scope now.
fft_overrides fft_overrides_in_force();

fft_policy plan_fft(const device_properties& props, bool double_precision,
                    const fft_overrides& overrides = {});
/// plan_fft under the overrides in force, for the callers that hold a device.
inline fft_policy plan_fft(const device& dev, bool double_precision) {
    return plan_fft(dev.properties(), double_precision, fft_overrides_in_force());
}
/// plan_fft's pipeline on `dev` under the overrides in force.
fft_pipeline_policy fft_pipeline_policy_for(const device& dev);

/// Test and benchmark only: while alive, fft_pipeline_policy_for answers `policy` (its
/// target still from the device) wherever the pipeline may run.
class scoped_fft_pipeline_policy {
  public:
    explicit scoped_fft_pipeline_policy(fft_pipeline_policy policy);

  private:
    scoped_override<std::optional<fft_pipeline_policy>> override_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
