// SPDX-License-Identifier: Apache-2.0
// The histogram module's tuning rows, from specific to generic, each saying where its numbers
// come from (docs/algorithms.md, "Histograms").
#include "histogram_tuning.hpp"

#include <array>
#include <string>

#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

/// The atomics strategies' rows: `loads` per work-item per step, 16 bytes each where `wide`.
constexpr histogram_tuning atomics(std::size_t group, std::size_t loads, bool wide,
                                   std::size_t copies, std::size_t groups_per_compute_unit) {
    return {.strategy = histogram_strategy::local_atomics,
            .work_group_size = group,
            .unroll = loads,
            .wide_loads = wide,
            .copies = copies,
            .groups_per_compute_unit = groups_per_compute_unit};
}

/// Groups claim `steps` steps at a time from a counter (histogram_tuning::claimed_steps).
constexpr histogram_tuning claiming(histogram_tuning t, std::size_t steps) {
    t.claimed_steps = steps;
    return t;
}

constexpr histogram_tuning chunks(std::size_t chunk_bytes, std::size_t per_compute_unit) {
    return {.strategy = histogram_strategy::cpu_chunks,
            .copies = 4,
            .chunk_bytes = chunk_bytes,
            .chunks_per_compute_unit = per_compute_unit};
}

const std::array histogram_table{
    tuning_row<histogram_tuning>{
        nvidia_gpus, claiming(atomics(256, 4, true, 8, 16), 4),
        "H100, histogram_bench beside CUB's HistogramEven, 2026-11-26: CUDA 1.00x uniform and "
        "all in one bin, NVIDIA OpenCL 0.94x / 0.97x (the grid-stride row g256 u4 c8 p4 before: "
        "0.83x / 0.87x, 4 of the 6 groups an SM holds); docs/benchmarks.md, "
        "## Histograms"},
    tuning_row<histogram_tuning>{any_gpu, atomics(256, 4, true, 4, 4),
                                 "not measured: as NVIDIA, half the copies"},
    tuning_row<histogram_tuning>{
        any_cpu, chunks(64 * 1024, 4),
        "not swept: PoCL, 2 shared cores at load 15, histogram_bench 23, 256 "
        "bins, 2026-11-25: 4 rows per chunk 0.56-0.93x (uniform), 0.88-1.12x "
        "(one bin) one host thread, whose time varied 15-34 ms; 1 row 0.57x"},
    tuning_row<histogram_tuning>{any_device, atomics(64, 1, false, 1, 2),
                                 "the fallback: small groups every OpenCL device can run"},
};

/// "local_atomics g256 u4 c8 m2 p8 q0 b65536 k4 wide single ahead" after the strategy's name.
constexpr tuning_key_number<histogram_tuning> histogram_key_numbers[] = {
    {"g", {&histogram_tuning::work_group_size}},
    {"u", {&histogram_tuning::unroll}},
    {"c", {&histogram_tuning::copies}},
    {"m", {&histogram_tuning::local_memory_share}},
    {"p", {&histogram_tuning::groups_per_compute_unit}},
    {"q", {&histogram_tuning::claimed_steps}, true},
    {"b", {&histogram_tuning::chunk_bytes}},
    {"k", {&histogram_tuning::chunks_per_compute_unit}}};
constexpr tuning_key_flag<histogram_tuning> histogram_key_flags[] = {
    {"wide", &histogram_tuning::wide_loads},
    {"single", &histogram_tuning::single_adds},
    {"ahead", &histogram_tuning::load_ahead}};
constexpr tuning_key_format<histogram_tuning> histogram_key_format{histogram_key_numbers,
                                                                   histogram_key_flags};

}  // namespace

std::span<const tuning_row<histogram_tuning>> algorithm::histogram_rows::rows() {
    return histogram_table;
}

std::string histogram_tuning::key() const {
    return write_tuning_key(to_string(strategy), *this, histogram_key_format);
}

std::optional<histogram_tuning> parse_histogram_tuning(std::string_view key) {
    return read_named_tuning_key(
        key, &histogram_tuning::strategy,
        {histogram_strategy::local_atomics, histogram_strategy::global_atomics,
         histogram_strategy::cpu_chunks},
        histogram_key_format);
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
