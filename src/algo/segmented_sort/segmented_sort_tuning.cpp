// SPDX-License-Identifier: Apache-2.0
// The segmented sort module's tuning rows, from specific to generic, each saying where its
// numbers come from (docs/algorithms.md, "Segmented sort").
#include "segmented_sort_tuning.hpp"

#include <array>

#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};

constexpr segmented_sort_tuning group_tiles(std::size_t max_group, std::size_t min_group,
                                            std::size_t items, std::size_t max_tile,
                                            std::size_t lane_tile_up_to) {
    return {.strategy = segmented_sort_strategy::group_tile,
            .max_work_group_size = max_group,
            .min_work_group_size = min_group,
            .items_per_work_item = items,
            .max_tile = max_tile,
            .lane_tile_up_to = lane_tile_up_to};
}

constexpr segmented_sort_tuning chunks(std::size_t chunk_bytes, std::size_t per_compute_unit,
                                       std::size_t digits_from) {
    return {.strategy = segmented_sort_strategy::cpu_chunks,
            .chunk_bytes = chunk_bytes,
            .chunks_per_compute_unit = per_compute_unit,
            .digits_from = digits_from};
}

using row = tuning_row<segmented_sort_tuning>;

const std::array rows{
    row{any_gpu, group_tiles(128, 128, 8, 2048, 16),
        "H100 segmented_sort_bench 24, CUDA and OpenCL: groups of 256 2-10% faster than 32; "
        "128, and segments of 16 in registers, faster again 2026-11-27; docs/algorithms.md, "
        "Segmented sort"},
    row{any_cpu, chunks(64 * 1024, 4, 64),
        "chunks not swept (4 per core, as the histogram's); digits from 64 keys: 2 cores, PoCL "
        "3.1, segmented_sort_bench 24; docs/algorithms.md, Segmented sort"},
    row{any_device,
        {.strategy = segmented_sort_strategy::radix_twice},
        "the fallback: kiln::sort's passes, which every device runs"},
};

}  // namespace

namespace algorithm {
std::span<const tuning_row<segmented_sort_tuning>> segmented_sort_rows::rows() {
    return kiln::detail::rows;
}
}  // namespace algorithm

namespace {

/// "group_tile g256 w32 i8 t2048 l16 b65536 k4 d0" after the strategy's name.
constexpr tuning_key_number<segmented_sort_tuning> segmented_sort_key_numbers[] = {
    {"g", {&segmented_sort_tuning::max_work_group_size}},
    {"w", {&segmented_sort_tuning::min_work_group_size}},
    {"i", {&segmented_sort_tuning::items_per_work_item}},
    {"t", {&segmented_sort_tuning::max_tile}},
    {"l", {&segmented_sort_tuning::lane_tile_up_to}, true},
    {"b", {&segmented_sort_tuning::chunk_bytes}},
    {"k", {&segmented_sort_tuning::chunks_per_compute_unit}},
    {"d", {&segmented_sort_tuning::digits_from}, true}};
constexpr tuning_key_format<segmented_sort_tuning> segmented_sort_key_format{
    segmented_sort_key_numbers};

}  // namespace

std::string segmented_sort_tuning::key() const {
    return write_tuning_key(to_string(strategy), *this, segmented_sort_key_format);
}

std::optional<segmented_sort_tuning> parse_segmented_sort_tuning(std::string_view key) {
    return read_named_tuning_key(
        key, &segmented_sort_tuning::strategy,
        {segmented_sort_strategy::group_tile, segmented_sort_strategy::lane_tile,
         segmented_sort_strategy::radix_twice, segmented_sort_strategy::cpu_chunks},
        segmented_sort_key_format);
}

std::string_view to_string(segmented_sort_strategy s) noexcept {
    switch (s) {
        case segmented_sort_strategy::automatic:
            return "automatic";
        case segmented_sort_strategy::group_tile:
            return "group_tile";
        case segmented_sort_strategy::lane_tile:
            return "lane_tile";
        case segmented_sort_strategy::radix_twice:
            return "radix_twice";
        case segmented_sort_strategy::cpu_chunks:
            return "cpu_chunks";
    }
    return "?";
}

}  // namespace kiln::detail
