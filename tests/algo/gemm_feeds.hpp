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

/// `body` again with wgmma fed by cp.async copies rather than the tuning row's tile maps, and
/// with the row's tile maps scheduled the other way (persistent or a work-group per block, in
/// bands of 4 block rows or along whole rows), so that every feed and schedule runs wherever the
/// warpgroup strategy does.
template <class Body>
void with_other_warpgroup_feeds(const kiln::device& device, Body&& body) {
    with_warpgroup_tiles(
        device, {.block_rows = 256, .block_columns = 128, .stages = 4, .tile_maps = false}, body);
    kiln::detail::gemm_warpgroup_tiles rescheduled =
        kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
            device.properties(), std::nullopt)
            .warpgroup;
    rescheduled.persistent = !rescheduled.persistent;
    rescheduled.band_rows = rescheduled.band_rows == 0 ? 4 : 0;
    with_warpgroup_tiles(device, rescheduled, body);
}

}  // namespace kiln::test
