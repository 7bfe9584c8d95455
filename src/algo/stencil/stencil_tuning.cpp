// SPDX-License-Identifier: Apache-2.0
// The stencils' tuning rows (1-D and 2-D) and their plan.
#include <algorithm>
#include <array>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>

namespace kiln::detail {
namespace {

constexpr stencil_tuning stencil(std::size_t work_group_size, std::size_t items_per_work_item) {
    return {.work_group_size = work_group_size, .items_per_work_item = items_per_work_item};
}

/// By runs of one work-item each (stencil_tuning::chunk_bytes).
constexpr stencil_tuning chunks(stencil_tuning p, std::size_t chunk_bytes) {
    p.chunk_bytes = chunk_bytes;
    return p;
}

/// 2-D stencils by strips (stencil_2d_streaming.hpp): groups `group_columns` wide walk down
/// `strip_rows` output rows, `rows_per_step` of them between two barriers.
constexpr stencil_tuning strips(std::size_t group_columns, std::size_t strip_rows,
                                std::size_t rows_per_step) {
    return {.work_group_size = group_columns,
            .items_per_work_item = rows_per_step,
            .strip_rows = strip_rows};
}

using row = tuning_row<stencil_tuning>;

// Outputs per work-item; 2-D tiles are 32 columns wide and work_group_size / 32 * items rows
// high, 2-D strips work_group_size columns wide. Each row's provenance names where its numbers
// were measured and the docs/benchmarks.md section (by its heading) that holds the figures.
// clang-format off
constexpr std::array stencil_1d_table{
    row{nvidia_gpus, stencil(128, 8),
        "H100, CUDA, stencil_bench --sweep, 5-point over 2^26 floats, 2026-11-22; "
        "docs/benchmarks.md, ## Stencils"},
    row{any_gpu, stencil(256, 4), "not measured: as NVIDIA"},
    row{any_cpu, chunks(stencil(1, 1), 16 * 1024),
        "PoCL 3.1, 2 cores, stencil_bench against tiles and per element, 2026-11-24; "
        "docs/benchmarks.md, ## Stencils"},
    row{any_device, stencil(64, 4), "not measured: small and safe"},
};

constexpr std::array stencil_2d_table{
    row{nvidia_gpus, strips(256, 128, 8),
        "H100, CUDA and NVIDIA OpenCL, stencil_bench --sweep, 4096^2, 2026-11-25; "
        "docs/benchmarks.md, ## Stencils"},
    row{any_gpu, stencil(256, 4), "not measured: the tiles NVIDIA ran before the strips"},
    row{any_cpu, chunks(stencil(1, 1), 16 * 1024),
        "PoCL 3.1, 2 cores, stencil_bench against tiles and per element, 2026-11-24; "
        "docs/benchmarks.md, ## Stencils"},
    row{any_device, stencil(64, 4), "not measured: small and safe"},
};
// clang-format on

}  // namespace

std::span<const tuning_row<stencil_tuning>> algorithm::stencil_1d_rows::rows() {
    return stencil_1d_table;
}
std::span<const tuning_row<stencil_tuning>> algorithm::stencil_2d_rows::rows() {
    return stencil_2d_table;
}

std::string stencil_tuning::key() const {
    return std::to_string(work_group_size) + "x" + std::to_string(items_per_work_item) +
           (chunk_bytes ? " runs" + std::to_string(chunk_bytes) : "") +
           (strip_rows ? " strips" + std::to_string(strip_rows) : "");
}

stencil_tuning plan_stencil(const device_properties& props, unsigned dimensions,
                            const std::optional<stencil_tuning>& forced) {
    if (dimensions == 1) return tuning_table<algorithm::stencil_1d_rows>::tuning_for(props, forced);
    stencil_tuning policy = tuning_table<algorithm::stencil_2d_rows>::tuning_for(props, forced);
    policy.work_group_size =
        std::max(stencil_2d_tile_columns,
                 policy.work_group_size / stencil_2d_tile_columns * stencil_2d_tile_columns);
    return policy;
}

}  // namespace kiln::detail
