// SPDX-License-Identifier: Apache-2.0
// The warpgroup strategy's second feed, for the GEMM tests that force every strategy.
#pragma once

#include <gtest/gtest.h>

#include <kiln/kiln.hpp>
#include <optional>

#include "algo/gemm/gemm_plan.hpp"

namespace kiln::test {

/// `body` again with wgmma fed by cp.async copies rather than the tuning row's tile maps, so
/// that both feeds run wherever the warpgroup strategy does.
template <class Body>
void with_warpgroup_copy_feed(const kiln::device& device, Body&& body) {
    SCOPED_TRACE("cp.async copies");
    const kiln::detail::gemm_warpgroup_tiles copies{
        .block_rows = 256, .block_columns = 128, .stages = 4, .tile_maps = false};
    const kiln::detail::scoped_algorithm_policy forced_tiles(
        kiln::detail::algorithm::gemm,
        kiln::detail::gemm_tuning_with(
            kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
                device.properties(), std::nullopt),
            copies));
    body();
}

}  // namespace kiln::test
