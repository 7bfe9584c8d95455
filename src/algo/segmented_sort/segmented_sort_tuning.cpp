// The segmented sort module's tuning rows, from specific to generic, each saying where its
// numbers come from (docs/algorithms.md, "Segmented sort").
#include "segmented_sort_tuning.hpp"

#include <array>

namespace kiln::detail {
namespace {

constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};

constexpr segmented_sort_tuning group_tiles(std::size_t max_group, std::size_t min_group,
                                            std::size_t items, std::size_t max_tile) {
    return {.strategy = segmented_sort_strategy::group_tile,
            .max_work_group_size = max_group,
            .min_work_group_size = min_group,
            .items_per_work_item = items,
            .max_tile = max_tile};
}

constexpr segmented_sort_tuning chunks(std::size_t chunk_bytes, std::size_t per_compute_unit) {
    return {.strategy = segmented_sort_strategy::cpu_chunks,
            .chunk_bytes = chunk_bytes,
            .chunks_per_compute_unit = per_compute_unit};
}

using row = tuning_row<segmented_sort_tuning>;

const std::array rows{
    row{any_gpu, group_tiles(256, 32, 8, 2048),
        "chosen, not measured yet: 2048 keys of 8 bytes and their 4-byte positions take 24 KiB "
        "of local memory, within CUDA's 48 KB; groups of a warp at least. segmented_sort_bench "
        "measures it beside CUB's DeviceSegmentedSort"},
    row{any_cpu, chunks(64 * 1024, 4),
        "not swept: as the histogram's CPU chunks, 4 per core balance segments of unequal "
        "lengths"},
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

std::string segmented_sort_tuning::key() const {
    const auto field = [](const char* name, std::size_t value) {
        return " " + std::string(name) + std::to_string(value);
    };
    return std::string(to_string(strategy)) + field("g", max_work_group_size) +
           field("w", min_work_group_size) + field("i", items_per_work_item) +
           field("t", max_tile) + field("b", chunk_bytes) + field("k", chunks_per_compute_unit);
}

std::string_view to_string(segmented_sort_strategy s) noexcept {
    switch (s) {
        case segmented_sort_strategy::automatic:
            return "automatic";
        case segmented_sort_strategy::group_tile:
            return "group_tile";
        case segmented_sort_strategy::radix_twice:
            return "radix_twice";
        case segmented_sort_strategy::cpu_chunks:
            return "cpu_chunks";
    }
    return "?";
}

}  // namespace kiln::detail
