// SPDX-License-Identifier: Apache-2.0
// The segmented module's plan (segmented_plan.hpp).
#include "segmented_plan.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <kiln/detail/target_features.hpp>
#include <kiln/error.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <optional>
#include <string>

#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

std::atomic<segmented_strategy> forced_strategy{segmented_strategy::automatic};

std::size_t ceil_div(std::size_t a, std::size_t b) {
    return (a + b - 1) / b;
}

/// The reproducible strategy's teams: on GPUs a power of two of lanes, each about the row's
/// exact_elements_per_lane (scans: exact_scan_elements_per_lane) of a mean segment, in groups of
/// the row's size; on CPUs a work-item per segment, whose work-items are loops of one core (teams
/// where a test forces a tuning, so that CI runs them).
segmented_plan plan_reproducible_segments(const device_properties& props,
                                          const segmented_plan_input& input, std::size_t mean,
                                          segmented_plan plan) {
    plan.strategy = segmented_strategy::reproducible;
    plan.work_group_size = std::bit_floor(
        std::max<std::size_t>(1, std::min(plan.tuning.work_group_size, props.max_work_group_size)));
    // A state per work-item in local memory.
    while (plan.work_group_size > 1 &&
           plan.work_group_size * sizeof(exact_sum_state) > props.local_memory_bytes)
        plan.work_group_size /= 2;
    plan.team_lanes = 1;
    const std::size_t per_lane = input.algorithm == segmented_algorithm::reduce
                                     ? plan.tuning.exact_elements_per_lane
                                     : plan.tuning.exact_scan_elements_per_lane;
    if (props.type != device_type::cpu || input.tuning)
        plan.team_lanes = std::min(plan.work_group_size,
                                   std::bit_ceil(std::max<std::size_t>(
                                       1, ceil_div(mean, std::max<std::size_t>(1, per_lane)))));
    plan.groups =
        ceil_div(std::max<std::size_t>(1, input.segments), plan.work_group_size / plan.team_lanes);
    return plan;
}

}  // namespace

segmented_plan plan_segmented(const device_properties& props, const segmented_plan_input& input) {
    segmented_plan plan;
    plan.tuning = tuning_table<algorithm::segmented_reduce_rows>::tuning_for(props, input.tuning);
    const segmented_tuning& tuning = plan.tuning;
    plan.strategy = input.forced != segmented_strategy::automatic ? input.forced : tuning.strategy;
    const std::size_t segments = std::max<std::size_t>(1, input.segments);
    const std::size_t mean = input.elements / segments;
    if (input.reproducible_sum) return plan_reproducible_segments(props, input, mean, plan);
    if (plan.strategy == segmented_strategy::cpu_chunks) {
        // A chunk's work is its elements and its segments (each a loop's start and a store).
        const std::size_t work = input.elements + segments;
        const std::size_t most = std::max(1u, props.compute_units) * tuning.chunks_per_compute_unit;
        plan.chunks = std::clamp<std::size_t>(ceil_div(work, tuning.chunk_elements), 1,
                                              std::min(most, segments));
        plan.chunk_segments = ceil_div(segments, plan.chunks);
        plan.chunks = ceil_div(segments, plan.chunk_segments);
        // A reduction's independent accumulators: one would chain every addition of a segment
        // on the previous one's latency. Segments of a few elements pay more to start and join
        // them than they save (2 cores, PoCL 3.1, segmented_bench 2026-11-26: segments of 1 took
        // 2x as long with 4 as with one, of 10 as long, of 100 and more 2-5x less).
        const std::size_t unroll = std::max<std::size_t>(1, tuning.unroll);
        plan.unroll = mean >= 8 * unroll ? unroll : 1;
        if (input.algorithm == segmented_algorithm::inclusive_scan && mean >= tuning.scan_block)
            plan.scan_block = std::max<std::size_t>(1, tuning.scan_block);
        return plan;
    }
    const bool automatic = input.forced == segmented_strategy::automatic;
    const bool reduce = input.algorithm == segmented_algorithm::reduce;
    // A power of two of lanes, so that a fold halves evenly, and a multiple of it fills the
    // group.
    plan.work_group_size = std::bit_floor(
        std::max<std::size_t>(1, std::min(tuning.work_group_size, props.max_work_group_size)));
    // The tile strategies need an element to launch a tile: without any, every segment is empty
    // and threads write their identities.
    if (input.elements > 0 && reduce &&
        (plan.strategy == segmented_strategy::tile_reductions ||
         (automatic && mean >= tuning.tile_reduce_from))) {
        plan.strategy = segmented_strategy::tile_reductions;
        plan.unroll = std::max<std::size_t>(1, tuning.unroll);
        // The tile and the group's partials in local memory, which the tiles that hold more
        // than one segment piece stage.
        plan.tile_items = std::max<std::size_t>(1, tuning.tile_items);
        while (plan.tile_items > 1 &&
               (plan.tile_items + 1) * plan.work_group_size * input.value_bytes >
                   props.local_memory_bytes)
            plan.tile_items /= 2;
        const std::size_t tile = plan.work_group_size * plan.tile_items;
        plan.groups = ceil_div(input.elements, tile);
        // The fix pass: a team per segment, a lane for each piece a mean segment leaves (its
        // tiles and the one it starts in).
        plan.team_lanes = std::min(plan.work_group_size, std::bit_ceil(ceil_div(mean, tile) + 1));
        plan.fix_groups = ceil_div(segments, plan.work_group_size / plan.team_lanes);
        return plan;
    }
    if (input.elements > 0 && (plan.strategy == segmented_strategy::flat_tiles ||
                               plan.strategy == segmented_strategy::tile_reductions ||
                               (automatic && !reduce && mean >= tuning.flat_scan_from))) {
        plan.strategy = segmented_strategy::flat_tiles;
        // A scan's tiles of the values (the tile holds values; only the group scan holds pairs),
        // as tile kernels on every device (chunk_bytes 0), of at most 32 items a work-item,
        // whose heads are one uint's bits, loaded element by element (not wide).
        plan.tiles = plan_scan(props, input.value_bytes);
        plan.tiles.chunk_bytes = 0;
        plan.tiles.items_per_work_item = std::min<std::size_t>(32, plan.tiles.items_per_work_item);
        if (plan.tiles.full_tiles == tile_access::wide)
            plan.tiles.full_tiles = tile_access::unrolled;
        // The schedule of tiles (not the chunks plan_scan may have planned) whose look-back
        // states are the pairs, packed as pair_operation packs them.
        plan.tiles.schedule = plan_schedule(
            props, input.overrides, plan.tiles,
            input.value_bytes == 4 ? state_packing::pair_30_32_bits : state_packing::separate);
        return plan;
    }
    plan.unroll = std::max<std::size_t>(1, tuning.unroll);
    plan.team_lanes =
        std::min(plan.work_group_size,
                 std::bit_ceil(std::max<std::size_t>(
                     1, ceil_div(mean, std::max<std::size_t>(1, tuning.elements_per_lane)))));
    if (input.forced == segmented_strategy::thread_per_segment) plan.team_lanes = 1;
    if (input.forced == segmented_strategy::team_per_segment)
        plan.team_lanes = std::min(plan.work_group_size, std::max<std::size_t>(2, plan.team_lanes));
    plan.strategy = plan.team_lanes == 1 ? segmented_strategy::thread_per_segment
                                         : segmented_strategy::team_per_segment;
    if (tuning.wide_loads && reduce && plan.strategy == segmented_strategy::team_per_segment &&
        (input.value_bytes == 4 || input.value_bytes == 8))
        plan.lanes = 16 / input.value_bytes;
    if (tuning.shuffle_fold && reduce && plan.strategy == segmented_strategy::team_per_segment &&
        (input.value_bytes == 4 || input.value_bytes == 8)) {
        const target_features target = plan_target(props, input.overrides);
        const std::size_t fixed = group_scan_sub_group_size(target, plan.work_group_size);
        // The emulation is OpenCL C; the CUDA prelude has warps of 32 whatever the group.
        plan.emulated_shuffles = fixed == 0 && target.vocabulary != vocabulary_target::cuda_prelude;
        plan.fold_sub_group = plan.emulated_shuffles ? 32 : fixed;
    }
    plan.groups = ceil_div(segments, plan.work_group_size / plan.team_lanes);
    return plan;
}

segmented_strategy segmented_strategy_in_force() {
    if (const segmented_strategy forced = forced_strategy.load();
        forced != segmented_strategy::automatic)
        return forced;
    const char* text = std::getenv("KILN_SEGMENTED_STRATEGY");
    if (!text || !*text) return segmented_strategy::automatic;
    for (segmented_strategy s :
         {segmented_strategy::thread_per_segment, segmented_strategy::team_per_segment,
          segmented_strategy::cpu_chunks, segmented_strategy::flat_tiles,
          segmented_strategy::tile_reductions})
        if (to_string(s) == text) return s;
    throw invalid_argument_error("kiln::segmented_reduce",
                                 "KILN_SEGMENTED_STRATEGY is '" + std::string(text) +
                                     "'; it takes thread_per_segment, team_per_segment, "
                                     "cpu_chunks, flat_tiles or tile_reductions");
}

scoped_segmented_strategy::scoped_segmented_strategy(segmented_strategy strategy)
    : previous_(forced_strategy.exchange(strategy)) {}
scoped_segmented_strategy::~scoped_segmented_strategy() {
    forced_strategy.store(previous_);
}

std::optional<segmented_tuning> segmented_tuning_in_force() {
    return tuning_in_force<algorithm::segmented_reduce_rows>(
        "KILN_SEGMENTED_TUNING", parse_segmented_tuning, "kiln::segmented_reduce",
        "team_per_segment g256 e8 u4");
}

}  // namespace kiln::detail
