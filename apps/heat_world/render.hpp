// SPDX-License-Identifier: Apache-2.0
// Pictures of a heat world: the original program's 24-bit BMP, and the same picture as a PNG.
#pragma once

#include <cstdint>
#include <vector>

#include "world.hpp"

namespace kiln::heat {

enum class bmp_padding {
    // Each row padded to a multiple of 4 bytes, as the BMP format requires.
    standard,
    // The original program padded each row by (4 - width % 4) % 4 bytes: the same as standard
    // padding for even widths, but not a valid BMP for odd ones (its rows are 3 bytes too long
    // or too short). Only for reproducing the original's files byte for byte.
    original,
};

// The pixel of one cell as (red, green, blue): insulators green, every other cell from blue (0)
// to red (1) with heat = (uint8)(temperature * 255).
struct rgb {
    std::uint8_t red, green, blue;
    friend bool operator==(const rgb&, const rgb&) = default;
};
rgb cell_colour(const world& w, std::size_t index);

// A complete .bmp file, byte-identical to the original program's (for every width with
// bmp_padding::original, for even widths with the default): 54-byte header, positive height
// (so y = 0 is the bottom row of the picture), rows from y = 0, pixels as B, G, R. Like the
// original it leaves the image-size field 0 and stores the pixel data's size where the
// horizontal resolution belongs; the vertical resolution is 2835 pixels per metre. Throws
// std::length_error when the file would exceed the format's 4 GiB.
std::vector<std::uint8_t> encode_bmp(const world& w, bmp_padding padding = bmp_padding::standard);

// A complete .png file (8-bit RGB) showing the same picture as encode_bmp: y = 0 at the bottom.
// Throws std::runtime_error when libpng fails or kiln was built without libpng.
std::vector<std::uint8_t> encode_png(const world& w);

// Whether encode_png works in this build.
bool png_supported();

}  // namespace kiln::heat
