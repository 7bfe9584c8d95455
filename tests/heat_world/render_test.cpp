// SPDX-License-Identifier: Apache-2.0
// Tests of the BMP and PNG pictures of a world.
#include "render.hpp"

#include <gtest/gtest.h>
#include <png.h>

#include <cstring>

#include "test_worlds.hpp"
#include "world.hpp"

namespace kiln::heat {
namespace {

// 3 x 2:  y=0: insulator, 0.0, 1.0
//         y=1: fixed 0.5, 0.25, insulator (0.75)
world tiny_world() {
    world w;
    w.width = 3;
    w.height = 2;
    w.flags = {cell_insulator, cell_normal, cell_normal, cell_fixed, cell_normal, cell_insulator};
    w.temperatures = {0.0f, 0.0f, 1.0f, 0.5f, 0.25f, 0.75f};
    return w;
}

TEST(encode_bmp, writes_the_originals_header_and_pixels) {
    // Rows of 9 pixel bytes padded to 12; 0.5 * 255 = 127.5 -> 127, 0.25 * 255 = 63.75 -> 63.
    // The table is laid out as the header's fields.
    // clang-format off
    const std::vector<std::uint8_t> expected = {
        'B', 'M', 78, 0, 0, 0,  0, 0, 0, 0,  54, 0, 0, 0,  // file header: size 78, pixels at 54
        40, 0, 0, 0,  3, 0, 0, 0,  2, 0, 0, 0,  1, 0,  24, 0,  0, 0, 0, 0,  // 3 x 2, 24 bpp
        0, 0, 0, 0,         // image size left 0, as the original did
        24, 0, 0, 0,        // the original's pixel-data size in the horizontal resolution
        0x13, 0x0b, 0, 0,   // 2835 pixels per metre
        0, 0, 0, 0,  0, 0, 0, 0,
        0, 255, 0,  255, 0, 0,  0, 0, 255,  0, 0, 0,        // y = 0 (B, G, R) + 3 bytes padding
        128, 0, 127,  192, 0, 63,  0, 255, 0,  0, 0, 0,      // y = 1
    };
    // clang-format on
    EXPECT_EQ(encode_bmp(tiny_world()), expected);
}

TEST(encode_bmp, can_pad_rows_as_the_original_did) {
    // The original padded (4 - 3 % 4) % 4 = 1 byte per row: rows of 10 bytes.
    const std::vector<std::uint8_t> bmp = encode_bmp(tiny_world(), bmp_padding::original);
    ASSERT_EQ(bmp.size(), 54u + 20u);
    EXPECT_EQ(bmp[2], 74);
    EXPECT_EQ(bmp[38], 20);        // pixel-data size, where the original put it
    EXPECT_EQ(bmp[54 + 10], 128);  // y = 1 starts right after 9 bytes and 1 byte of padding
}

TEST(encode_bmp, pads_even_widths_like_the_original) {
    const world w = make_test_world(10, 0.1f);
    EXPECT_EQ(encode_bmp(w, bmp_padding::standard), encode_bmp(w, bmp_padding::original));
    EXPECT_EQ(encode_bmp(w).size(), 54u + 10 * 32);
}

struct decoded_png {
    std::uint32_t width = 0, height = 0;
    std::vector<std::uint8_t> rgb;
};

decoded_png decode_png(const std::vector<std::uint8_t>& file) {
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    decoded_png result;
    if (!png_image_begin_read_from_memory(&image, file.data(), file.size())) {
        ADD_FAILURE() << "libpng: " << image.message;
        return result;
    }
    image.format = PNG_FORMAT_RGB;
    result.width = image.width;
    result.height = image.height;
    result.rgb.resize(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, result.rgb.data(), 0, nullptr)) {
        ADD_FAILURE() << "libpng: " << image.message;
    }
    return result;
}

// The BMP's pixel at picture row `row` counted from the top, as (R, G, B).
std::array<std::uint8_t, 3> bmp_pixel(const std::vector<std::uint8_t>& bmp, std::uint32_t width,
                                      std::uint32_t height, std::uint32_t row, std::uint32_t x) {
    const std::size_t row_bytes = (3 * width + 3) / 4 * 4;
    const std::size_t stored_row = height - 1 - row;  // positive height: bottom row stored first
    const std::uint8_t* bgr = bmp.data() + 54 + stored_row * row_bytes + 3 * x;
    return {bgr[2], bgr[1], bgr[0]};
}

TEST(encode_png, decodes_to_the_pixels_of_the_bmp) {
    if (!png_supported()) GTEST_SKIP() << "built without libpng";
    std::vector<world> worlds = {tiny_world(), make_test_world(10, 0.1f),
                                 testing::random_world({.width = 37, .height = 11}, 5)};
    for (const world& w : worlds) {
        const std::vector<std::uint8_t> bmp = encode_bmp(w);
        const decoded_png png = decode_png(encode_png(w));
        ASSERT_EQ(png.width, w.width);
        ASSERT_EQ(png.height, w.height);
        for (std::uint32_t row = 0; row < w.height; ++row) {
            for (std::uint32_t x = 0; x < w.width; ++x) {
                const std::uint8_t* rgb = png.rgb.data() + (std::size_t{row} * w.width + x) * 3;
                const auto expected = bmp_pixel(bmp, w.width, w.height, row, x);
                ASSERT_EQ(rgb[0], expected[0])
                    << w.width << "x" << w.height << " row " << row << " x " << x;
                ASSERT_EQ(rgb[1], expected[1]);
                ASSERT_EQ(rgb[2], expected[2]);
            }
        }
    }
}

TEST(cell_colour, follows_the_original_palette) {
    const world w = tiny_world();
    EXPECT_EQ(cell_colour(w, 0), (rgb{0, 255, 0}));
    EXPECT_EQ(cell_colour(w, 1), (rgb{0, 0, 255}));
    EXPECT_EQ(cell_colour(w, 2), (rgb{255, 0, 0}));
    EXPECT_EQ(cell_colour(w, 3), (rgb{127, 0, 128}));
}

}  // namespace
}  // namespace kiln::heat
