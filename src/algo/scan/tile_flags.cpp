// SPDX-License-Identifier: Apache-2.0
// A tile's 0/1 flags (tile_flags.hpp).
#include "tile_flags.hpp"

#include <kiln/detail/group_collectives.hpp>

namespace kiln::detail {

tile_flags::tile_flags(const tile_program& program)
    : ballots_(program.policy.ballot_flags && program.policy.sub_group_size == 32 &&
               program.policy.items_per_work_item <= 32) {}

void tile_flags::declare(source_builder& b) const {
    if (ballots_) {
        b.local_array("uint", "kiln_flag_bits", "TILE / 32 + 1");
        return;
    }
    b.define("flag_pad",
             "#define KILN_FLAG_PAD(i) ((i) + (((i) >> 7) << 2))\n"
             "#define KILN_PADDED_FLAGS (TILE + ((TILE >> 7) << 2))");
    b.local_array("uchar", "kiln_flags", "KILN_PADDED_FLAGS");
}

void tile_flags::store(source_builder& b, const std::string& flag) const {
    if (ballots_)
        b.line("kiln_flag = (" + flag + ") != 0;");
    else
        b.line("kiln_flags[KILN_FLAG_PAD(k)] = (uchar)(" + flag + ");");
}

striped_item_hooks tile_flags::ballot_hooks(const tile_program& program) const {
    return {.before = [&program] { program.b.line("uint kiln_flag = 0;"); },
            .after =
                [&program] {
                    // Every lane runs the ballot (the loop is uniform); a sub-group's 32
                    // consecutive elements make one word.
                    source_builder& b = program.b;
                    group_collectives warp(b, program.policy.sub_group_size, program.policy.target);
                    b.line("const uint kiln_bits = " + warp.ballot("kiln_flag") + ";");
                    b.line("if ((lid & 31) == 0) kiln_flag_bits[k >> 5] = kiln_bits;");
                }};
}

std::string tile_flags::at(const std::string& item) const {
    if (ballots_) return "((kiln_flag_bits[(" + item + ") >> 5] >> ((" + item + ") & 31)) & 1)";
    return "kiln_flags[KILN_FLAG_PAD(" + item + ")]";
}

}  // namespace kiln::detail
