// SPDX-License-Identifier: Apache-2.0
// Tile loads, written once for every algorithm that reads a tile of its input into a work-group,
// as CUB's BlockLoad: the scan family's tiles (scan/tile_program.hpp) and the radix sort's
// multi-split (sort/radix_multi_split.cpp). A load is given by its items' arrangement, their
// type and count per work-item, and its elements per load: 16-byte loads where the input's type
// allows them (wide_input, which the input's declaration fills from the element type), else one
// element at a time. The kernel's frame (tile_frame) says what its loops may assume.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/element_inputs.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>
#include <vector>

namespace kiln::detail {

/// What a tile part may assume of the kernel it is written into: its builder, and whether full
/// tiles' loops over a work-item's items are unrolled (the scan family's tile_access).
struct tile_frame {
    source_builder& b;
    bool unrolled_items = false;
};

/// Code a striped load writes for each item beside the element: `before` ahead of the bounds
/// check, `after` behind it, so that every work-item runs both (the scan family's ballots of
/// flags, tile_flags.hpp).
struct striped_item_hooks {
    std::function<void()> before{}, after{};
};

/// A tile's loads, by where a work-item's items lie in the tile (CUB's BlockLoad arrangements):
/// - striped: item j of work-item lid is the tile's j * WG + lid, so that each of the group's
///   loads coalesces;
/// - warp-striped: item j of a sub-group's lane is 32 j past the lane's first, so that each
///   sub-group reads a run of the tile, its loads coalesced, and ranks the run by ballots (the
///   radix multi-split);
/// - blocked: item j is the work-item's first + j, its items consecutive (scans in registers).
/// The striped and blocked loads read the frame's names: ITEMS and WG (items per work-item,
/// work-items), lid, `base` (the tile's first index in the input), `valid` (its elements), and
/// for blocked loads `first` and `count` (the work-item's first item and items); the
/// warp-striped one reads `left`, the lane's items left in the tile.
class tile_loader {
  public:
    explicit tile_loader(tile_frame frame) : frame_(frame) {}

    /// Striped, `k` the element's index in the tile and `idx` in the input, behind a bounds check
    /// where `guarded`: runs `statements`, then `element()`, which stores it, with `hooks` around.
    void striped(bool guarded, const std::vector<std::string>& statements,
                 const std::function<void()>& element, const striped_item_hooks& hooks = {});

    /// Striped, a full tile through 16-byte loads into kiln_tile: each work-item its ITEMS /
    /// lanes loads, WG apart, each giving `input.lanes.size()` consecutive elements. The padding
    /// puts a pad slot only every 2^s elements, a multiple of the lanes, so a load's elements
    /// stay consecutive in the tile.
    void striped_wide(const wide_input& input);

    /// Warp-striped into registers: declares `name`J of `type` for J < `items`, item J at
    /// `run`[`lanes` J] (`run`: the lane's first item in global memory), items at or past `left`
    /// read as 0; every load is issued before any is used.
    void warp_striped(const std::string& type, const std::string& name, const std::string& run,
                      std::size_t items, std::size_t lanes);

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

    tile_frame frame_;
};

}  // namespace kiln::detail
