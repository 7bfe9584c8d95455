// SPDX-License-Identifier: Apache-2.0
// The segmented sort module's plan (segmented_sort_plan.hpp).
#include "segmented_sort_plan.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <kiln/error.hpp>
#include <string>

#include "algo/ceil_div.hpp"
#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

std::atomic<segmented_sort_strategy> forced_strategy{segmented_sort_strategy::automatic};

}  // namespace

segmented_sort_plan plan_segmented_sort(const device_properties& props,
                                        const segmented_sort_plan_input& input) {
    segmented_sort_plan plan;
    plan.tuning = tuning_table<algorithm::segmented_sort_rows>::tuning_for(props, input.tuning);
    const segmented_sort_tuning& tuning = plan.tuning;
    plan.elements = input.elements;
    plan.strategy =
        input.forced != segmented_sort_strategy::automatic ? input.forced : tuning.strategy;
    if (plan.strategy == segmented_sort_strategy::cpu_chunks) {
        const std::size_t least = std::max<std::size_t>(1, tuning.chunk_bytes / input.key_bytes);
        const std::size_t compute_units = std::max(1u, props.compute_units);
        plan.chunks = std::clamp<std::size_t>(ceil_div(input.elements, least), 1,
                                              compute_units * tuning.chunks_per_compute_unit);
        plan.chunk_elements = std::max<std::size_t>(1, ceil_div(input.elements, plan.chunks));
        return plan;
    }
    if (plan.strategy != segmented_sort_strategy::group_tile &&
        plan.strategy != segmented_sort_strategy::lane_tile)
        return plan;
    // The tile holds every key of the longest segment with its position; a device that gives
    // less local memory than the row's tile needs takes a smaller largest tile.
    const std::size_t pair_bytes = input.key_bytes + 4;
    const std::size_t local_bytes =
        props.local_memory_bytes ? static_cast<std::size_t>(props.local_memory_bytes) : 16384;
    const std::size_t max_tile = std::min(
        tuning.max_tile, std::bit_floor(std::max<std::size_t>(1, local_bytes / pair_bytes)));
    plan.tile = std::bit_ceil(std::max<std::size_t>(2, input.longest));
    if (plan.tile > max_tile) {
        plan.strategy = segmented_sort_strategy::radix_twice;
        plan.tile = 0;
        return plan;
    }
    const std::size_t largest_group =
        std::min(tuning.max_work_group_size, std::max<std::size_t>(1, props.max_work_group_size));
    // A work-item per segment, the group's keys staged as 4-byte words with one spare word in
    // 33 (segmented_sort_lane.cpp).
    const bool lanes_hold = input.key_bytes <= 4 && plan.tile <= largest_lane_tile;
    if (lanes_hold && (plan.strategy == segmented_sort_strategy::lane_tile ||
                       plan.tile <= tuning.lane_tile_up_to)) {
        plan.strategy = segmented_sort_strategy::lane_tile;
        const std::size_t staged_work_items = local_bytes / (4 * (plan.tile + plan.tile / 32 + 1));
        plan.work_group_size = std::clamp<std::size_t>(
            std::bit_floor(std::max<std::size_t>(1, staged_work_items)), 1, largest_group);
        plan.segments_per_group = plan.work_group_size;
        return plan;
    }
    plan.strategy = segmented_sort_strategy::group_tile;
    plan.work_group_size = std::clamp<std::size_t>(
        ceil_div(plan.tile, std::max<std::size_t>(1, tuning.items_per_work_item)),
        std::min(tuning.min_work_group_size, largest_group), largest_group);
    const std::size_t keys_per_group = std::min(
        max_tile, plan.work_group_size * std::max<std::size_t>(1, tuning.items_per_work_item));
    plan.segments_per_group = std::max<std::size_t>(1, keys_per_group / plan.tile);
    return plan;
}

segmented_sort_strategy segmented_sort_strategy_in_force() {
    if (const segmented_sort_strategy forced = forced_strategy.load();
        forced != segmented_sort_strategy::automatic)
        return forced;
    const char* text = std::getenv("KILN_SEGMENTED_SORT_STRATEGY");
    if (!text || !*text) return segmented_sort_strategy::automatic;
    for (segmented_sort_strategy s :
         {segmented_sort_strategy::group_tile, segmented_sort_strategy::lane_tile,
          segmented_sort_strategy::radix_twice, segmented_sort_strategy::cpu_chunks})
        if (to_string(s) == text) return s;
    throw invalid_argument_error("kiln::segmented_sort",
                                 "KILN_SEGMENTED_SORT_STRATEGY is '" + std::string(text) +
                                     "'; it takes group_tile, lane_tile, radix_twice or "
                                     "cpu_chunks");
}

std::optional<segmented_sort_tuning> segmented_sort_tuning_in_force() {
    return tuning_in_force<algorithm::segmented_sort_rows>(
        "KILN_SEGMENTED_SORT_TUNING", parse_segmented_sort_tuning, "kiln::segmented_sort",
        "group_tile g256 w64 i8");
}

scoped_segmented_sort_strategy::scoped_segmented_sort_strategy(segmented_sort_strategy strategy)
    : previous_(forced_strategy.exchange(strategy)) {}
scoped_segmented_sort_strategy::~scoped_segmented_sort_strategy() {
    forced_strategy.store(previous_);
}

}  // namespace kiln::detail
