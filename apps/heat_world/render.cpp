// SPDX-License-Identifier: Apache-2.0
// Pictures of a heat world: the original program's 24-bit BMP, and the same picture as a PNG.
#include "render.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#if KILN_HEAT_HAVE_PNG
#include <png.h>
#endif

namespace kiln::heat {
namespace {

constexpr std::size_t bmp_header_bytes = 14 + 40;
constexpr std::uint32_t bmp_pixels_per_metre = 2835;  // 72 dpi, the original's vertical resolution

void put_u16(std::uint8_t* at, std::uint16_t value) {
    at[0] = static_cast<std::uint8_t>(value);
    at[1] = static_cast<std::uint8_t>(value >> 8);
}

void put_u32(std::uint8_t* at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) at[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

void check_sizes(const world& w) {
    if (w.flags.size() != w.cell_count() || w.temperatures.size() != w.cell_count()) {
        throw std::invalid_argument("render: the world's arrays do not match its size");
    }
}

}  // namespace

rgb cell_colour(const world& w, std::size_t index) {
    if (w.flags[index] & cell_insulator) return {0, 255, 0};
    // The float product truncated to a byte, exactly as the original converted it.
    const auto heat = static_cast<std::uint8_t>(w.temperatures[index] * 255);
    return {heat, 0, static_cast<std::uint8_t>(255 - heat)};
}

std::vector<std::uint8_t> encode_bmp(const world& w, bmp_padding padding) {
    check_sizes(w);
    constexpr std::uint64_t max_bmp_side = std::numeric_limits<std::int32_t>::max();
    if (w.width > max_bmp_side || w.height > max_bmp_side) {
        throw std::length_error("a " + std::to_string(w.width) + " x " + std::to_string(w.height) +
                                " world is too large for a BMP file");
    }
    const std::uint64_t pixel_bytes = 3 * std::uint64_t{w.width};
    const std::uint64_t pad =
        padding == bmp_padding::standard ? (4 - pixel_bytes % 4) % 4 : (4 - w.width % 4) % 4;
    const std::uint64_t row_bytes = pixel_bytes + pad;
    const std::uint64_t data_bytes = row_bytes * w.height;
    const std::uint64_t file_bytes = data_bytes + bmp_header_bytes;
    if (file_bytes > std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error("a " + std::to_string(w.width) + " x " + std::to_string(w.height) +
                                " world needs a BMP file larger than the format's 4 GiB");
    }

    std::vector<std::uint8_t> file(static_cast<std::size_t>(file_bytes), 0);
    std::uint8_t* header = file.data();
    header[0] = 'B';
    header[1] = 'M';
    put_u32(header + 2, static_cast<std::uint32_t>(file_bytes));
    put_u32(header + 10, bmp_header_bytes);  // where the pixels start
    std::uint8_t* info = header + 14;
    put_u32(info + 0, 40);  // BITMAPINFOHEADER
    put_u32(info + 4, w.width);
    put_u32(info + 8, w.height);  // positive: rows stored bottom-up, y = 0 first
    put_u16(info + 12, 1);        // colour planes
    put_u16(info + 14, 24);       // bits per pixel
    put_u32(info + 16, 0);        // no compression
    // The original wrote the pixel data's size into the horizontal resolution (offset 24) and
    // left the image-size field (offset 20) zero, which uncompressed BMPs allow. Viewers ignore
    // the resolution, so we keep the original's bytes rather than "fix" them.
    put_u32(info + 20, 0);
    put_u32(info + 24, static_cast<std::uint32_t>(data_bytes));
    put_u32(info + 28, bmp_pixels_per_metre);
    // Palette sizes at 32 and 36 stay zero.

    std::uint8_t* row = file.data() + bmp_header_bytes;
    for (std::uint32_t y = 0; y < w.height; ++y, row += row_bytes) {
        std::uint8_t* pixel = row;
        for (std::uint32_t x = 0; x < w.width; ++x, pixel += 3) {
            const rgb colour = cell_colour(w, w.index(x, y));
            pixel[0] = colour.blue;
            pixel[1] = colour.green;
            pixel[2] = colour.red;
        }
    }
    return file;
}

#if KILN_HEAT_HAVE_PNG

bool png_supported() {
    return true;
}

std::vector<std::uint8_t> encode_png(const world& w) {
    check_sizes(w);
    const std::uint64_t row_bytes = 3 * std::uint64_t{w.width};
    if (row_bytes > std::numeric_limits<png_int_32>::max() || w.height > PNG_UINT_31_MAX) {
        throw std::length_error("a " + std::to_string(w.width) + " x " + std::to_string(w.height) +
                                " world is too large for a PNG file");
    }
    // PNG rows go top to bottom, and the BMP shows y = 0 at the bottom, so the first PNG row is
    // the world's last.
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(row_bytes * w.height));
    for (std::uint32_t row = 0; row < w.height; ++row) {
        const std::uint32_t y = w.height - 1 - row;
        std::uint8_t* pixel = pixels.data() + row * row_bytes;
        for (std::uint32_t x = 0; x < w.width; ++x, pixel += 3) {
            const rgb colour = cell_colour(w, w.index(x, y));
            pixel[0] = colour.red;
            pixel[1] = colour.green;
            pixel[2] = colour.blue;
        }
    }

    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = w.width;
    image.height = w.height;
    image.format = PNG_FORMAT_RGB;
    // The simplified API needs no setjmp in our code; it reports failure in image.message.
    std::vector<std::uint8_t> file(PNG_IMAGE_PNG_SIZE_MAX(image));
    png_alloc_size_t file_bytes = file.size();
    const int ok = png_image_write_to_memory(&image, file.data(), &file_bytes, 0, pixels.data(),
                                             static_cast<png_int_32>(row_bytes), nullptr);
    if (!ok) {
        const std::string message = image.message;
        png_image_free(&image);
        throw std::runtime_error("libpng could not encode the picture: " + message);
    }
    file.resize(file_bytes);
    return file;
}

#else

bool png_supported() {
    return false;
}

std::vector<std::uint8_t> encode_png(const world&) {
    throw std::runtime_error("this build of kiln has no PNG support (libpng was not found)");
}

#endif

}  // namespace kiln::heat
