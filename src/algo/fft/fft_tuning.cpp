// SPDX-License-Identifier: Apache-2.0
// The FFT's tuning rows, its pipeline's table and its plan.
#include <algorithm>
#include <array>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/target_features.hpp>
#include <string_view>

#include "algo/fft/fft_steps.hpp"
#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

constexpr fft_tuning passes(std::size_t work_group_size, std::size_t items_per_work_item) {
    return {.work_group_size = work_group_size, .items_per_work_item = items_per_work_item};
}

/// Lines longer than local memory in two passes through it, not in registers.
constexpr fft_tuning without_register_passes(fft_tuning p) {
    p.register_passes = false;
    return p;
}

using row = tuning_row<fft_tuning>;

// At most G work-items and G x I complex floats of local memory per group. Each row's provenance
// names where its numbers were measured and the docs/benchmarks.md section (by its heading) that
// holds the figures.
// clang-format off
constexpr std::array fft_table{
    row{nvidia_cuda, passes(256, 64),
        "H100, CUDA (16384-point lines in dynamic shared memory), fft_bench, 2026-11-22; "
        "docs/benchmarks.md, ## FFT"},
    row{nvidia_gpus, without_register_passes(passes(256, 16)),
        "H100, NVIDIA's OpenCL (4096-point lines in 48 KiB), fft_bench, 2026-11-22; two passes "
        "beat registers for 16384, 2026-11-27; docs/benchmarks.md, ## FFT"},
    row{any_gpu, passes(256, 8),
        "not measured: half the NVIDIA tile (16 KiB), for GPUs with less local memory"},
    row{any_cpu, passes(64, 16),
        "not measured: CPU passes take no local memory, GPU kernels forced in tests do"},
    row{any_device, passes(64, 16), "not measured: small and safe"},
};

// Lines of two passes in one kernel: where the pipeline runs, and how.
constexpr std::array fft_pipeline_table{
    tuning_row<fft_pipeline_policy>{nvidia_opencl,
                     {.chunk_bytes = 1u << 20, .slots = 16, .lag = 4, .streaming = true, .fine = true},
                     "H100 under NVIDIA's OpenCL, fft_bench KILN_FFT_PIPELINE sweeps of 1024 x 16384, "
                     "2026-11-23; docs/benchmarks.md, ## FFT"},
};
// clang-format on

std::optional<fft_pipeline_policy> pipeline_override;

fft_pass_limits fft_passes(const fft_tuning& policy, const device_properties& props,
                           bool double_precision, bool length_kernels_forced) {
    const std::size_t element_bytes = double_precision ? 16 : 8;
    // The policy counts complex floats (8 bytes). The device's limit is the hard one: on CUDA
    // the opt-in one, since passes take their local memory as an argument (dynamic shared
    // memory). Lines take 1/16 more for padding.
    const std::size_t bytes =
        std::max<std::size_t>(props.local_memory_bytes, props.shared_memory_per_block_bytes);
    const std::size_t elements = std::max<std::size_t>(
        std::min(policy.tile_size() * 8 / element_bytes, bytes * 15 / 16 / element_bytes), 16);
    const std::size_t max_group = std::max<std::size_t>(props.max_work_group_size, 1);
    const std::size_t group = std::clamp<std::size_t>(policy.work_group_size, 1, max_group);
    // PoCL takes about half a second to compile each local-memory pass kernel (barriers): on
    // CPUs, passes of one radix each without local memory (the caches serve any order) need
    // at most 36 small kernels per precision, where kernels per pass length would need one
    // for every length used. Tests can force the per-length kernels, laid out as on GPUs.
    const bool radix_per_pass = props.type != device_type::gpu && !length_kernels_forced;
    return {.local_bytes = bytes,
            .local_elements = elements,
            // Short lines: as many as give each of the policy's work-items one radix-16
            // butterfly.
            .group_elements = std::min(group * fft_radices[0], elements),
            .work_group_size = group,
            .max_work_group_size = max_group,
            // GPUs read global memory in 32-byte sectors; CPUs through caches, where any order
            // serves.
            .coalesced_lines = radix_per_pass ? 1 : std::max<std::size_t>(32 / element_bytes, 1),
            .double_precision = double_precision,
            .radix_per_pass = radix_per_pass,
            .register_passes = policy.register_passes};
}

/// Lines of two passes in one kernel whose groups wait for earlier groups' signals: the groups
/// must make progress, and kiln_fence_acq_rel must order the data before the signal.
fft_pipeline_policy fft_pipeline(const device_properties& props, const fft_overrides& overrides) {
    const target_features target = target_features_for(props);
    const bool progress =
        overrides.groups_make_progress.value_or(device_quirks_for(props).groups_make_progress);
    if (!progress || !target.device_fence) return {};
    fft_pipeline_policy chosen;
    if (overrides.pipeline)
        chosen = *overrides.pipeline;
    else
        for (const auto& row : fft_pipeline_table)
            if (matches(row.devices, props)) {
                chosen = row.tuning;
                break;
            }
    chosen.target = target;
    return chosen;
}

}  // namespace

std::span<const tuning_row<fft_tuning>> algorithm::fft_rows::rows() {
    return fft_table;
}

fft_overrides fft_overrides_in_force() {
    fft_overrides overrides;
    static_cast<tuning_overrides<algorithm::fft_rows>&>(overrides) =
        overrides_in_force<algorithm::fft_rows>();
    {
        std::lock_guard lock(tuning_override_mutex());
        overrides.pipeline = pipeline_override;
    }
    overrides.length_kernels = fft_length_kernels_forced();
    return overrides;
}

scoped_fft_pipeline_policy::scoped_fft_pipeline_policy(fft_pipeline_policy policy)
    : override_(pipeline_override, policy, tuning_override_mutex()) {}

fft_policy plan_fft(const device_properties& props, bool double_precision,
                    const fft_overrides& overrides) {
    return {
        .passes = fft_passes(tuning_table<algorithm::fft_rows>::tuning_for(props, overrides.tuning),
                             props, double_precision, overrides.length_kernels),
        .pipeline = fft_pipeline(props, overrides),
        .step_work_group_size = 64};
}

fft_pipeline_policy fft_pipeline_policy_for(const device& dev) {
    return fft_pipeline(dev.properties(), fft_overrides_in_force());
}

}  // namespace kiln::detail
