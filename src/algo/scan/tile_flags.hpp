// SPDX-License-Identifier: Apache-2.0
// How a tile keeps 0/1 flags per element in local memory (a compaction's counts, reduce_by_key's
// run heads): as bits, one word per 32 elements, each written by a sub-group ballot where
// sub-groups of 32 exist, else as bytes, padded by one word per 32 words so that work-items
// reading their ITEMS consecutive bytes fall on different banks. Either leaves room for more
// groups per compute unit beside the values the tile stages.
#pragma once

#include <string>

#include "tile_program.hpp"

namespace kiln::detail {

class tile_flags {
  public:
    explicit tile_flags(const tile_program& program);

    /// Whether the flags are ballot words (ballot_hooks).
    bool ballots() const { return ballots_; }
    /// What a striped load (tile_loader::striped) writes around each element that store()
    /// flags, where the flags are ballot words: each sub-group's 32 consecutive flags become
    /// one word of kiln_flag_bits.
    striped_item_hooks ballot_hooks(const tile_program& program) const;
    /// The local array (and its padding's macros).
    void declare(source_builder& b) const;
    /// In a striped load: stores `flag`'s value as element k's flag.
    void store(source_builder& b, const std::string& flag) const;
    /// The flag of the tile's element `item`.
    std::string at(const std::string& item) const;

  private:
    bool ballots_;
};

}  // namespace kiln::detail
