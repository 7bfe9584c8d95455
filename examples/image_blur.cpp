// SPDX-License-Identifier: Apache-2.0
// A Gaussian blur of the Mandelbrot picture through images: the picture is drawn into an RGBA8
// image (write_imagef), blurred along rows into a float image and along columns back into an
// RGBA8 image (read_imagef with a clamp-to-edge sampler), and checked against the same blur on
// the CPU.
//
// usage: image_blur
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <kiln/kiln.hpp>
#include <vector>

#include "image_blur_kernels.hpp"

namespace {

constexpr unsigned width = 803, height = 601, max_iterations = 256;  // neither a multiple of 16
constexpr float x_origin = -2.2f, y_origin = -1.2f, step = 3.2f / width;
constexpr int radius = 4;
constexpr float sigma = 2.0f;

std::vector<float> gaussian_weights() {
    std::vector<float> weights(2 * radius + 1);
    float total = 0.0f;
    for (int k = -radius; k <= radius; ++k)
        total += weights[k + radius] = std::exp(-0.5f * float(k * k) / (sigma * sigma));
    for (auto& w : weights) w /= total;
    return weights;
}

/// The two passes on the CPU, in the device's order: rows into floats, then columns into bytes.
std::vector<std::uint8_t> cpu_blur(const std::vector<std::uint8_t>& picture,
                                   const std::vector<float>& weights) {
    const auto at = [](int x, int y, int c) { return (std::size_t(y) * width + x) * 4 + c; };
    // One pass along (dx, dy): pixels past the edge repeat the edge, as the device's sampler does.
    const auto pass = [&](auto read, int dx, int dy, auto write) {
        for (int y = 0; y < int(height); ++y)
            for (int x = 0; x < int(width); ++x)
                for (int c = 0; c < 4; ++c) {
                    float sum = 0.0f;
                    for (int k = -radius; k <= radius; ++k)
                        sum += weights[k + radius] *
                               read(std::clamp(x + k * dx, 0, int(width) - 1),
                                    std::clamp(y + k * dy, 0, int(height) - 1), c);
                    write(at(x, y, c), sum);
                }
    };
    std::vector<float> rows(picture.size());
    pass([&](int x, int y, int c) { return picture[at(x, y, c)] / 255.0f; }, 1, 0,
         [&](std::size_t i, float sum) { rows[i] = sum; });
    std::vector<std::uint8_t> blurred(picture.size());
    pass([&](int x, int y, int c) { return rows[at(x, y, c)]; }, 0, 1,
         [&](std::size_t i, float sum) {
             blurred[i] =
                 static_cast<std::uint8_t>(std::nearbyint(std::clamp(sum, 0.0f, 1.0f) * 255.0f));
         });
    return blurred;
}

}  // namespace

int main() {
    try {
        auto dev = kiln::default_device();
        kiln::queue q(dev);
        kiln::program prog(dev, std::string(kiln::examples::image_blur_cl));
        // [doc:image_blur]
        kiln::image2d picture(q, width, height, kiln::image_format::rgba_unorm8);
        kiln::image2d rows(q, width, height, kiln::image_format::rgba_float);
        kiln::image2d blurred(q, width, height, kiln::image_format::rgba_unorm8);
        const std::vector<float> host_weights = gaussian_weights();
        kiln::buffer<float, kiln::in> weights(q, host_weights);

        const kiln::range global = {(width + 15) / 16 * 16, (height + 15) / 16 * 16};
        const kiln::range group = {16, 16};
        prog.kernel("mandelbrot_picture")(picture, x_origin, y_origin, step, max_iterations)
            .launch(q, global, group);
        auto blur = prog.kernel("blur_pass");
        blur(picture, rows, weights, radius, 1, 0).launch(q, global, group);
        blur(rows, blurred, weights, radius, 0, 1).launch(q, global, group);
        const std::vector<std::uint8_t> result = blurred.read<std::uint8_t>(q);
        // [/doc]

        // The blur against the CPU's, on the picture the device drew. Sums in another order or
        // fused may round a channel to the neighbouring byte, never further.
        const auto expected = cpu_blur(picture.read<std::uint8_t>(q), host_weights);
        std::size_t off_by_one = 0, wrong = 0;
        for (std::size_t i = 0; i < result.size(); ++i) {
            const int difference = std::abs(int(result[i]) - int(expected[i]));
            off_by_one += difference == 1;
            wrong += difference > 1;
        }
        const bool ok = wrong == 0 && off_by_one * 100 <= result.size();
        std::printf(
            "image_blur: %ux%u Mandelbrot picture, Gaussian blur of radius %d (sigma %.1f) on "
            "%s: %zu channels off by one, %zu further from the CPU: %s\n",
            width, height, radius, sigma, dev.name().c_str(), off_by_one, wrong,
            ok ? "OK" : "MISMATCH");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "image_blur: %s\n", e.what());
        return 1;
    }
}
