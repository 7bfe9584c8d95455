// The histogram module's tuning rows, from specific to generic, each saying where its numbers
// come from (docs/algorithms.md, "Histograms").
#include "histogram_tuning.hpp"

#include <array>

namespace kiln::detail {
namespace {

constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};
// Through CUDA or NVIDIA's OpenCL alike: the platform or vendor name says NVIDIA.
constexpr device_class nvidia_gpus{std::nullopt, device_type::gpu, "nvidia", 0, 0};

constexpr histogram_tuning atomics(histogram_strategy strategy, std::size_t group,
                                   std::size_t unroll, std::size_t copies,
                                   std::size_t groups_per_compute_unit) {
    return {.strategy = strategy,
            .work_group_size = group,
            .unroll = unroll,
            .copies = copies,
            .groups_per_compute_unit = groups_per_compute_unit};
}

constexpr histogram_tuning chunks(std::size_t chunk_bytes, std::size_t per_compute_unit) {
    return {.strategy = histogram_strategy::cpu_chunks,
            .copies = 4,
            .chunk_bytes = chunk_bytes,
            .chunks_per_compute_unit = per_compute_unit};
}

const std::array rows{
    histogram_tuning_row{nvidia_gpus, atomics(histogram_strategy::local_atomics, 256, 4, 8, 8),
                         "chosen, not measured yet: 8 groups of 256 fill an H100 SM's 2048 "
                         "threads; 8 copies of 256 bins take 8 KiB of local memory"},
    histogram_tuning_row{any_gpu, atomics(histogram_strategy::local_atomics, 256, 4, 4, 4),
                         "not measured: as NVIDIA, half the groups and copies"},
    histogram_tuning_row{any_cpu, chunks(64 * 1024, 4),
                         "not swept: PoCL, 2 shared cores at load 15, histogram_bench 23, 256 "
                         "bins, 2026-11-25: 4 rows per chunk 0.56-0.93x (uniform), 0.88-1.12x "
                         "(one bin) one host thread, whose time varied 15-34 ms; 1 row 0.57x"},
    histogram_tuning_row{any_device, atomics(histogram_strategy::local_atomics, 64, 1, 1, 2),
                         "the fallback: small groups every OpenCL device can run"},
};

}  // namespace

std::span<const histogram_tuning_row> histogram_tuning_rows() {
    return rows;
}

const histogram_tuning_row& histogram_row_for(const device_properties& props) {
    for (const histogram_tuning_row& row : rows)
        if (matches(row.devices, props)) return row;
    return rows.back();
}

std::string_view to_string(histogram_strategy s) noexcept {
    switch (s) {
        case histogram_strategy::automatic:
            return "automatic";
        case histogram_strategy::local_atomics:
            return "local_atomics";
        case histogram_strategy::global_atomics:
            return "global_atomics";
        case histogram_strategy::cpu_chunks:
            return "cpu_chunks";
    }
    return "?";
}

}  // namespace kiln::detail
