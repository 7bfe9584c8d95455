// SPDX-License-Identifier: Apache-2.0
// step_world --devices: a world's rows split over several devices of this process.
#pragma once

#include <kiln/runtime/device.hpp>
#include <memory>
#include <string_view>
#include <vector>

#include "engine.hpp"
#include "row_blocks.hpp"
#include "world.hpp"

namespace kiln::heat {

// The devices of a --devices list: comma-separated KILN_DEVICE-style terms, each standing for
// every device it matches ("gpu": every GPU, seen through one backend; "0": device 0), in
// order. Throws std::invalid_argument when a term is empty or matches no device.
std::vector<kiln::device> parse_device_list(std::string_view list);

// One instance of `entry`'s engine per device, made (kernels built) before the world is read,
// so that a missing device fails fast and the stepping's time holds no compilation.
std::vector<std::unique_ptr<engine>> make_device_engines(const engine_entry& entry,
                                                         const engine_options& options,
                                                         const std::vector<kiln::device>& devices);

// Steps `w` by `steps` steps of `dt` (and advances w.t): one block of rows per engine, each on
// its device, with `halo_rows` rows of halo exchanged between the devices once per `halo_rows`
// steps. Returns where the time went.
stepping_totals step_on_devices(world& w, std::vector<std::unique_ptr<engine>>& engines, float dt,
                                unsigned steps, unsigned halo_rows,
                                const progress_callback& progress);

}  // namespace kiln::heat
