// The scan family's tile loader: how a tile's elements come from global memory, written once for
// every algorithm's tiles. Striped loads give each work-item its ITEMS elements WG apart (the
// group's loads coalesce) into local memory; blocked loads give each work-item its ITEMS
// consecutive elements in registers (reduce_by_key's register runs).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tile_program.hpp"

namespace kiln::detail {

class tile_loader {
  public:
    explicit tile_loader(tile_program& program) : p_(program) {}

    /// Striped, `k` the element's index in the tile and `idx` in the input, behind a bounds check
    /// where `guarded`: runs `statements`, then `element()`, which stores it. Where
    /// `ballot_flags`, `element()` sets `kiln_flag` (0 or 1), and each sub-group's 32 consecutive
    /// flags become one word of kiln_flag_bits.
    void striped(bool guarded, const std::vector<std::string>& statements,
                 const std::function<void()>& element, bool ballot_flags = false);

    /// A full tile through 16-byte loads into kiln_tile: each work-item its ITEMS / lanes loads,
    /// WG apart, each giving `input.lanes.size()` consecutive elements. The padding puts a pad slot
    /// only every 2^s elements, a multiple of the lanes, so a load's elements stay consecutive in
    /// the tile.
    void striped_wide(const wide_input& input);

    /// Writes the code of one blocked item given its value's and key's texts (`j`: its index
    /// among the work-item's items, `idx`: in the input).
    using item_writer = std::function<void(const std::string& value, const std::string& key)>;
    /// Blocked, a full tile through 16-byte loads of `input.lanes.size()` items each, and of the
    /// keys (`kiln_keys`, of `key_type`, as wide as the values) where `key_type` is not empty;
    /// else the key's text is `key`.
    void blocked_wide(const wide_input& input, const std::string& key_type, const std::string& key,
                      const item_writer& item);
    /// Blocked, this work-item's `count` items element by element (a part's last tile).
    void blocked_guarded(const element_input& element, const std::string& key,
                         const item_writer& item);

  private:
    /// Each of `loads` as a 16-byte load `name`_in at `index`.
    void wide_loads(const std::vector<wide_load>& loads, const std::string& index);

    tile_program& p_;
};

}  // namespace kiln::detail
