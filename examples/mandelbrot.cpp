// SPDX-License-Identifier: Apache-2.0
// Mandelbrot set on a 2-D range, written to a PNG; iteration counts and the written pixels are
// checked against a CPU computation.
//
// usage: mandelbrot [output.png]   (default: mandelbrot.png in the current directory)
#include <png.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* source = R"(
// Without contraction into fused multiply-adds every operation rounds as on the host, so the
// CPU check can expect the very same iteration counts.
#pragma OPENCL FP_CONTRACT OFF
kernel void mandelbrot(global uint* iterations, uint width, uint height, float x_origin, float y_origin, float step,
                       uint max_iterations) {
    size_t px = get_global_id(0), py = get_global_id(1);
    if (px >= width || py >= height) return;  // the range is rounded up to whole work-groups
    float cx = x_origin + (float)px * step, cy = y_origin + (float)py * step;
    float x = 0.0f, y = 0.0f;
    uint i = 0;
    while (i < max_iterations && x * x + y * y <= 4.0f) {
        float next_x = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = next_x;
        ++i;
    }
    iterations[py * width + px] = i;
}
)";

constexpr unsigned width = 803, height = 601,
                   max_iterations = 256;  // neither side a multiple of 16
constexpr float x_origin = -2.2f, y_origin = -1.2f, step = 3.2f / width;

unsigned cpu_iterations(unsigned px, unsigned py) {
    const float cx = x_origin + static_cast<float>(px) * step,
                cy = y_origin + static_cast<float>(py) * step;
    float x = 0.0f, y = 0.0f;
    unsigned i = 0;
    while (i < max_iterations && x * x + y * y <= 4.0f) {
        const float next_x = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = next_x;
        ++i;
    }
    return i;
}

/// Points inside the set are black; outside, a smooth palette over the escape time.
std::array<png_byte, 3> colour(unsigned iterations) {
    if (iterations >= max_iterations) return {0, 0, 0};
    const double t = static_cast<double>(iterations) / max_iterations, u = 1.0 - t;
    return {static_cast<png_byte>(9.0 * u * t * t * t * 255.0),
            static_cast<png_byte>(15.0 * u * u * t * t * 255.0),
            static_cast<png_byte>(8.5 * u * u * u * t * 255.0)};
}

/// The picture as the bytes of a PNG file.
std::vector<png_byte> encode_png(const std::vector<png_byte>& rgb) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;  // a first pass without memory measures the file
    if (png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), 0, nullptr) == 0) {
        throw std::runtime_error(std::string("cannot encode the PNG: ") + image.message);
    }
    std::vector<png_byte> file(size);
    if (png_image_write_to_memory(&image, file.data(), &size, 0, rgb.data(), 0, nullptr) == 0) {
        throw std::runtime_error(std::string("cannot encode the PNG: ") + image.message);
    }
    file.resize(size);
    return file;
}

/// Decodes the PNG again, so the check covers the bytes that are written, not just what was
/// computed.
std::vector<png_byte> decode_png(const std::vector<png_byte>& file) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (png_image_begin_read_from_memory(&image, file.data(), file.size()) == 0) {
        throw std::runtime_error(std::string("cannot decode the PNG: ") + image.message);
    }
    if (image.width != width || image.height != height) {
        png_image_free(&image);
        throw std::runtime_error("the PNG is " + std::to_string(image.width) + "x" +
                                 std::to_string(image.height) + ", not " + std::to_string(width) +
                                 "x" + std::to_string(height));
    }
    image.format = PNG_FORMAT_RGB;
    std::vector<png_byte> rgb(PNG_IMAGE_SIZE(image));
    if (png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr) == 0) {
        throw std::runtime_error(std::string("cannot decode the PNG: ") + image.message);
    }
    return rgb;
}

/// Writes the file at `path`; a failure, such as a full disk, names the file and the reason.
void write_file(const std::string& path, const std::vector<png_byte>& bytes) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    bool written =
        file != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    int error = errno;
    // The bytes may wait in the stream's buffer: closing writes them, and can fail too.
    if (file != nullptr && std::fclose(file) != 0 && written) {
        written = false;
        error = errno;
    }
    if (!written) {
        throw std::runtime_error("writing '" + path + "' failed: " + std::strerror(error));
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string output = argc > 1 ? argv[1] : "mandelbrot.png";
        auto dev = kiln::default_device();
        kiln::queue q(dev);
        auto mandelbrot = kiln::program(dev, source).kernel("mandelbrot");
        kiln::buffer<unsigned, kiln::out> iterations(q, kiln::shape{height, width});

        const std::size_t group = 16;
        const kiln::range global = {(width + group - 1) / group * group,
                                    (height + group - 1) / group * group};
        auto done = mandelbrot(iterations, width, height, x_origin, y_origin, step, max_iterations)
                        .launch(q, global, {group, group});
        const auto counts = iterations.read(q, done);

        // Every pixel against the CPU. Devices may still round a few boundary points
        // differently (e.g. a different float conversion); more than 0.1% would be a real
        // error.
        std::size_t differing = 0;
        for (unsigned py = 0; py < height; ++py)
            for (unsigned px = 0; px < width; ++px)
                differing += counts[py * width + px] != cpu_iterations(px, py);
        const std::size_t pixels = std::size_t(width) * height;
        bool ok = differing * 1000 <= pixels;

        // Landmarks that no rounding can move: deep inside the set, and far outside it.
        struct landmark {
            unsigned px, py;
            const char* where;
        };
        const landmark landmarks[] = {
            {static_cast<unsigned>((-0.25f - x_origin) / step), height / 2, "main cardioid"},
            {static_cast<unsigned>((-1.0f - x_origin) / step), height / 2, "period-2 bulb"},
            {0, 0, "corner"},
            {width - 1, height - 1, "opposite corner"}};
        for (const auto& l : landmarks) {
            const unsigned got = counts[l.py * width + l.px], expected = cpu_iterations(l.px, l.py);
            if (got != expected) {
                std::fprintf(stderr, "mandelbrot: %s (%u, %u): %u iterations, CPU %u\n", l.where,
                             l.px, l.py, got, expected);
                ok = false;
            }
        }
        if (counts[(height / 2) * width + landmarks[0].px] != max_iterations) ok = false;

        std::vector<png_byte> rgb;
        rgb.reserve(pixels * 3);
        for (unsigned n : counts)
            for (png_byte channel : colour(n)) rgb.push_back(channel);
        const std::vector<png_byte> file = encode_png(rgb);
        const std::vector<png_byte> reread = decode_png(file);
        for (const auto& l : landmarks) {
            const auto expected = colour(cpu_iterations(l.px, l.py));
            const std::size_t at = (std::size_t(l.py) * width + l.px) * 3;
            if (reread[at] != expected[0] || reread[at + 1] != expected[1] ||
                reread[at + 2] != expected[2]) {
                std::fprintf(stderr, "mandelbrot: %s has the wrong colour in the PNG\n", l.where);
                ok = false;
            }
        }
        ok = ok && reread == rgb;
        write_file(output, file);

        std::printf(
            "mandelbrot: %ux%u, %u iterations at most, on %s: %zu of %zu pixels differ from "
            "the CPU; wrote %s: %s\n",
            width, height, max_iterations, dev.name().c_str(), differing, pixels, output.c_str(),
            ok ? "OK" : "MISMATCH");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mandelbrot: %s\n", e.what());
        return 1;
    }
}
