// SPDX-License-Identifier: Apache-2.0
// Tile stores, as CUB's BlockStore: a tile from local memory (kiln_tile) to `out`, striped (the
// group's stores coalesced), element by element or 16 bytes at a time. The scan family's tiles
// store their results through them.
#pragma once

#include <cstddef>
#include <string>

#include "algo/tiles/tile_load.hpp"

namespace kiln::detail {

class tile_store {
  public:
    explicit tile_store(tile_frame frame) : frame_(frame) {}

    /// Each work-item stores its ITEMS elements WG apart, behind bounds checks where `guarded`.
    void striped(bool guarded);
    /// A full tile of `type` through 16-byte stores of `lanes` consecutive elements each.
    void striped_wide(const std::string& type, std::size_t lanes);

  private:
    tile_frame frame_;
};

}  // namespace kiln::detail
