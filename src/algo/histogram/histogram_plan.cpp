// SPDX-License-Identifier: Apache-2.0
// The histogram module's plan (histogram_plan.hpp).
#include "histogram_plan.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <kiln/error.hpp>
#include <optional>
#include <string>

#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

std::atomic<histogram_strategy> forced_strategy{histogram_strategy::automatic};

std::size_t ceil_div(std::size_t a, std::size_t b) {
    return (a + b - 1) / b;
}

/// What local memory a group may take: devices that do not say are given the 16 KiB OpenCL
/// promises every device.
std::size_t local_budget(const device_properties& props, const histogram_tuning& tuning) {
    const std::size_t bytes =
        props.local_memory_bytes ? static_cast<std::size_t>(props.local_memory_bytes) : 16384;
    return bytes / std::max<std::size_t>(1, tuning.local_memory_share);
}

}  // namespace

histogram_plan plan_histogram(const device_properties& props, const histogram_plan_input& input) {
    histogram_plan plan;
    plan.tuning = tuning_table<algorithm::histogram_rows>::tuning_for(props, input.tuning);
    const histogram_tuning& tuning = plan.tuning;
    plan.strategy = input.forced != histogram_strategy::automatic ? input.forced : tuning.strategy;
    const std::size_t compute_units = std::max(1u, props.compute_units);
    if (plan.strategy == histogram_strategy::cpu_chunks) {
        const std::size_t least = std::max<std::size_t>(1, tuning.chunk_bytes / input.value_bytes);
        plan.chunks = std::clamp<std::size_t>(ceil_div(input.elements, least), 1,
                                              compute_units * tuning.chunks_per_compute_unit);
        plan.chunk_elements = ceil_div(input.elements, plan.chunks);
        // Rows beyond the first only where a chunk's elements outnumber their bins.
        plan.copies = plan.chunk_elements >= tuning.copies * input.bins ? tuning.copies : 1;
        return plan;
    }
    const std::size_t bin_bytes = input.bins * sizeof(std::uint32_t);
    if (plan.strategy == histogram_strategy::local_atomics &&
        bin_bytes > local_budget(props, tuning))
        plan.strategy = histogram_strategy::global_atomics;
    plan.work_group_size = std::min(tuning.work_group_size, props.max_work_group_size);
    plan.unroll = std::max<std::size_t>(1, tuning.unroll);
    plan.lanes = tuning.wide_loads ? std::max<std::size_t>(1, input.load_lanes) : 1;
    plan.single_adds = tuning.single_adds;
    const std::size_t steps =
        ceil_div(input.elements, plan.work_group_size * plan.unroll * plan.lanes);
    if (steps < (std::size_t{1} << 31)) plan.claimed_steps = tuning.claimed_steps;
    // A claimed step's next is known only within its claim: loads ahead walk the grid's stride.
    plan.load_ahead = tuning.load_ahead && plan.lanes > 1 && plan.claimed_steps == 0;
    if (plan.strategy == histogram_strategy::local_atomics)
        plan.copies = std::clamp<std::size_t>(local_budget(props, tuning) / bin_bytes, 1,
                                              std::max<std::size_t>(1, tuning.copies));
    plan.groups = std::clamp<std::size_t>(
        ceil_div(input.elements, plan.work_group_size * plan.unroll * plan.lanes), 1,
        compute_units * std::max<std::size_t>(1, tuning.groups_per_compute_unit));
    return plan;
}

histogram_strategy histogram_strategy_in_force() {
    if (const histogram_strategy forced = forced_strategy.load();
        forced != histogram_strategy::automatic)
        return forced;
    const char* text = std::getenv("KILN_HISTOGRAM_STRATEGY");
    if (!text || !*text) return histogram_strategy::automatic;
    for (histogram_strategy s :
         {histogram_strategy::local_atomics, histogram_strategy::global_atomics,
          histogram_strategy::cpu_chunks})
        if (to_string(s) == text) return s;
    throw invalid_argument_error("kiln::histogram",
                                 "KILN_HISTOGRAM_STRATEGY is '" + std::string(text) +
                                     "'; it takes local_atomics, global_atomics or cpu_chunks");
}

scoped_histogram_strategy::scoped_histogram_strategy(histogram_strategy strategy)
    : previous_(forced_strategy.exchange(strategy)) {}
scoped_histogram_strategy::~scoped_histogram_strategy() {
    forced_strategy.store(previous_);
}

std::optional<histogram_tuning> histogram_tuning_in_force() {
    return tuning_in_force<algorithm::histogram_rows>("KILN_HISTOGRAM_TUNING",
                                                      parse_histogram_tuning, "kiln::histogram",
                                                      "local_atomics g256 u4 c8 p8 wide");
}

}  // namespace kiln::detail
