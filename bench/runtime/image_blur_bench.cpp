// SPDX-License-Identifier: Apache-2.0
// image_blur_bench: the two passes of examples/image_blur.cpp's separable Gaussian blur (radius 4)
// on a 4096 x 4096 RGBA8 picture, through images, against the device's buffer copy bandwidth.
// Each pass reads one image and writes another: rows read 4 bytes a pixel (RGBA8) and write 16
// (RGBA float), columns the reverse; GB/s counts those bytes once, though each pixel is sampled
// nine times (the texture cache serves the rest). The copy is a buffer-to-buffer copy of the
// float image's size, counted as read plus write. Devices: the GPUs, or those of a
// KILN_DEVICE-style spec given as the first argument.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "image_blur_kernels.hpp"

namespace {

std::size_t side = 4096;  // the second argument may change it, e.g. for a quick check on a CPU
constexpr int radius = 4;

double best_seconds(int repeats, const std::function<kiln::event()>& run) {
    run().wait();
    double best = 1e30;
    for (int r = 0; r < repeats; ++r)
        best = std::min(best, std::chrono::duration<double>(run().duration()).count());
    return best;
}

void measure(const kiln::device& dev) {
    kiln::queue q(dev, kiln::profiled);
    kiln::program prog(dev, std::string(kiln::examples::image_blur_cl));
    std::vector<std::uint8_t> host(side * side * 4);
    for (std::size_t i = 0; i < host.size(); ++i)
        host[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
    kiln::image2d picture(q, side, side, kiln::image_format::rgba_unorm8, host);
    kiln::image2d rows(q, side, side, kiln::image_format::rgba_float);
    kiln::image2d blurred(q, side, side, kiln::image_format::rgba_unorm8);
    std::vector<float> host_weights(2 * radius + 1, 1.0f / (2 * radius + 1));
    kiln::buffer<float, kiln::in> weights(q, host_weights);
    auto blur = prog.kernel("blur_pass");
    const kiln::range global = {side, side}, group = {16, 16};

    const double pixels = double(side) * side;
    const double row_pass = best_seconds(
        20, [&] { return blur(picture, rows, weights, radius, 1, 0).launch(q, global, group); });
    const double column_pass = best_seconds(
        20, [&] { return blur(rows, blurred, weights, radius, 0, 1).launch(q, global, group); });
    kiln::buffer<std::uint8_t> from(q, side * side * 16), to(q, side * side * 16);
    from.fill(q, 1);
    const double copy = best_seconds(20, [&] { return from.copy_to(q, to); });
    const double copy_gb_s = 2.0 * double(from.bytes()) / copy / 1e9;

    // The blurred corner against the host: a box blur of the clamped edge pixels.
    const auto result = blurred.read<std::uint8_t>(q);
    float corner = 0.0f;
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx)
            corner += host[(std::size_t(std::max(dy, 0)) * side + std::max(dx, 0)) * 4] / 255.0f;
    corner /= float((2 * radius + 1) * (2 * radius + 1));
    const bool correct = std::abs(result[0] - corner * 255.0f) <= 1.0f;

    std::printf("\n### %s (%s), %zu x %zu RGBA8, radius %d, work-groups of 16 x 16\n\n",
                dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(), side, side,
                radius);
    std::printf("| pass | time (ms) | GB/s | share of copy bandwidth | correct |\n");
    std::printf("|---|---:|---:|---:|---|\n");
    auto row = [&](const char* name, double seconds, double bytes_per_pixel) {
        const double gb_s = bytes_per_pixel * pixels / seconds / 1e9;
        std::printf("| %s | %.3f | %.0f | %.0f%% | %s |\n", name, seconds * 1e3, gb_s,
                    100.0 * gb_s / copy_gb_s, correct ? "yes" : "NO");
    };
    row("rows: RGBA8 image to float image", row_pass, 20.0);
    row("columns: float image to RGBA8 image", column_pass, 20.0);
    row("both passes", row_pass + column_pass, 40.0);
    std::printf("| buffer copy (%zu MiB) | %.3f | %.0f | 100%% | |\n", from.bytes() >> 20,
                copy * 1e3, copy_gb_s);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 2) side = std::stoul(argv[2]);
    const auto devices = argc > 1 ? kiln::devices(kiln::filters::from_spec(argv[1]))
                                  : kiln::devices(kiln::filters::gpu());
    for (const auto& dev : devices) measure(dev);
    return 0;
}
