// SPDX-License-Identifier: Apache-2.0
// The warpgroup strategy's other feeds and schedules, for the GEMM tests that force every
// strategy.
#pragma once

#include <gtest/gtest.h>

#include <kiln/kiln.hpp>
#include <optional>

#include "algo/gemm/gemm_plan.hpp"

namespace kiln::test {

/// `body` under `tiles` in place of the device's row's warpgroup tiles.
template <class Body>
void with_warpgroup_tiles(const kiln::device& device,
                          const kiln::detail::gemm_warpgroup_tiles& tiles, Body&& body) {
    SCOPED_TRACE("warpgroup tiles " + tiles.key());
    const kiln::detail::scoped_algorithm_policy forced_tiles(
        kiln::detail::algorithm::gemm,
        kiln::detail::gemm_tuning_with(
            kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
                device.properties(), std::nullopt),
            tiles));
    body();
}

/// `body` again with wgmma fed by cp.async copies rather than the tuning row's tile maps, with
/// the row's tile maps scheduled the other way (persistent or a work-group per block, in bands
/// of 4 block rows or along whole rows), and with the multiplying warpgroups taking turns or
/// sharing blocks (whichever the row does not), so that every feed and schedule runs wherever
/// the warpgroup strategy does.
template <class Body>
void with_other_warpgroup_feeds(const kiln::device& device, Body&& body) {
    with_warpgroup_tiles(
        device, {.block_rows = 256, .block_columns = 128, .stages = 4, .tile_maps = false}, body);
    kiln::detail::gemm_warpgroup_tiles rescheduled =
        kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
            device.properties(), std::nullopt)
            .warpgroup;
    const kiln::detail::gemm_warpgroup_tiles row = rescheduled;
    rescheduled.persistent = !rescheduled.persistent;
    rescheduled.band_rows = rescheduled.band_rows == 0 ? 4 : 0;
    // A work-group per block shares it between the warpgroups.
    if (rescheduled.ping_pong) {
        rescheduled.ping_pong = false;
        rescheduled.block_rows = 128;
        rescheduled.block_columns = 256;
        rescheduled.stages = 4;
    }
    with_warpgroup_tiles(device, rescheduled, body);
    kiln::detail::gemm_warpgroup_tiles turns{.block_rows = 128,
                                             .block_columns = 128,
                                             .stages = 6,
                                             .tile_maps = true,
                                             .band_rows = 4,
                                             .persistent = true,
                                             .paired_stores = true,
                                             .ping_pong = true};
    if (row.ping_pong) {
        turns = row;
        turns.ping_pong = false;
        turns.block_rows = 128;
        turns.block_columns = 256;
        turns.stages = 4;
    }
    with_warpgroup_tiles(device, turns, body);
}

}  // namespace kiln::test
