// The scan family's tile store: a scanned tile from local memory (kiln_tile) to `out`, the
// group's stores coalesced, element by element or 16 bytes at a time.
#pragma once

#include <cstddef>

#include "tile_program.hpp"

namespace kiln::detail {

class tile_store {
  public:
    explicit tile_store(tile_program& program) : p_(program) {}

    /// Each work-item stores its ITEMS elements WG apart, behind bounds checks where `guarded`.
    void striped(bool guarded);
    /// A full tile through 16-byte stores of `lanes` consecutive results each.
    void striped_wide(std::size_t lanes);

  private:
    tile_program& p_;
};

}  // namespace kiln::detail
