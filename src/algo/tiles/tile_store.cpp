// SPDX-License-Identifier: Apache-2.0
// Tile stores (tile_store.hpp).
#include "algo/tiles/tile_store.hpp"

namespace kiln::detail {

void tile_store::striped(bool guarded) {
    source_builder& b = frame_.b;
    if (frame_.unrolled_items) b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS; ++j)");
    b.line("const uint k = j * WG + lid;");
    b.line(std::string(guarded ? "if (k < valid) " : "") +
           "out[base + k] = kiln_tile[KILN_PAD(k)];");
    b.close();
}

void tile_store::striped_wide(const std::string& type, std::size_t lanes) {
    source_builder& b = frame_.b;
    const std::string count = std::to_string(lanes), wide = type + count;
    std::string parts;
    for (std::size_t lane = 0; lane < lanes; ++lane)
        parts +=
            (lane ? ", " : "") + std::string("kiln_tile[kiln_slot + ") + std::to_string(lane) + "]";
    b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS / " + count + "; ++j)");
    b.line("const uint kiln_q = j * WG + lid;");
    b.line("const uint kiln_slot = KILN_PAD(" + count + " * kiln_q);");
    b.line("((global " + wide + "*)(out + base))[kiln_q] = (" + wide + ")(" + parts + ");");
    b.close();
}

}  // namespace kiln::detail
