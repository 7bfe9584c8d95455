// SPDX-License-Identifier: Apache-2.0
// The stencils' tuning (include/kiln/stencil.hpp, 1-D and 2-D): their numbers' type, their keys
// in the tuning table (rows in src/algo/stencil/stencil_tuning.cpp) and their plan.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// Stencil rows (include/kiln/stencil.hpp): outputs per work-item of a tile in local memory.
/// 1-D: work_group_size 0 chooses the per-element kernel. 2-D: tiles are
/// stencil_2d_tile_columns wide and work_group_size / stencil_2d_tile_columns *
/// items_per_work_item rows high.
struct stencil_tuning {
    std::size_t work_group_size = 256;
    std::size_t items_per_work_item = 4;
    /// Not 0: the CPU shape (stencil_on_cpu.hpp), groups of one work-item each walking a run of
    /// at least this many bytes of outputs; the tile fields then serve only where a test clears
    /// it.
    std::size_t chunk_bytes = 0;
    /// 2-D, where not 0 and chunk_bytes is 0: the streaming kernel (stencil_2d_streaming.hpp),
    /// each group work_group_size adjacent columns wide walking down a strip of this many
    /// output rows, items_per_work_item rows between two barriers.
    std::size_t strip_rows = 0;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
    /// "128x8" (" runs16384" or " strips64" added), for program cache keys: the fields are
    /// compile-time constants of the kernels, or choose the kernel.
    std::string key() const;
};

namespace algorithm {

struct stencil_1d_rows {
    using tuning = stencil_tuning;
    static constexpr std::string_view name = "stencil_1d";
    static std::span<const tuning_row<stencil_tuning>> rows();
};
struct stencil_2d_rows {
    using tuning = stencil_tuning;
    static constexpr std::string_view name = "stencil_2d";
    static std::span<const tuning_row<stencil_tuning>> rows();
};
inline constexpr stencil_1d_rows stencil_1d{};
inline constexpr stencil_2d_rows stencil_2d{};

}  // namespace algorithm

/// Stencils of 1 or 2 dimensions; work_group_size 0 for 1-D: the per-element kernel. 2-D groups
/// are whole rows of stencil_2d_tile_columns work-items. `forced`: the tuning a test forces for
/// stencils of these dimensions (scoped_algorithm_policy), taken as the row.
stencil_tuning plan_stencil(const device_properties& props, unsigned dimensions,
                            const std::optional<stencil_tuning>& forced = {});
/// plan_stencil under the override in force.
inline stencil_tuning plan_stencil(const device& dev, unsigned dimensions) {
    return plan_stencil(dev.properties(), dimensions,
                        dimensions == 1 ? tuning_table<algorithm::stencil_1d_rows>::forced()
                                        : tuning_table<algorithm::stencil_2d_rows>::forced());
}

}  // namespace kiln::detail
#pragma GCC visibility pop
