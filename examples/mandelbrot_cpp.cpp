// SPDX-License-Identifier: Apache-2.0
// mandelbrot.cpp's kernel written in C++ (KILN_KERNEL), with the pragma it needs: iteration counts
// on a 2-D range, checked against the CPU pixel for pixel (the picture itself is mandelbrot.cpp's).
//
// usage: mandelbrot_cpp
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <vector>

namespace {

// Without contraction into fused multiply-adds every operation rounds as on the host, so the
// CPU check can expect the very same iteration counts. A #pragma cannot stand in a macro
// argument: KILN_PRAGMA puts it at the head of the kernel's program.
// [doc:cpp_mandelbrot]
KILN_KERNEL(mandelbrot,
            (kiln::global_ptr<kiln::uint> iterations, kiln::uint width, kiln::uint height,
             float x_origin, float y_origin, float step, kiln::uint max_iterations),
            {
                KILN_PRAGMA(OPENCL FP_CONTRACT OFF);
                const size_t px = get_global_id(0), py = get_global_id(1);
                if (px >= width || py >= height) return;  // the range is rounded up to groups
                const float cx = x_origin + float(px) * step, cy = y_origin + float(py) * step;
                float x = 0.0f, y = 0.0f;
                kiln::uint i = 0;
                while (i < max_iterations && x * x + y * y <= 4.0f) {
                    const float next_x = x * x - y * y + cx;
                    y = 2.0f * x * y + cy;
                    x = next_x;
                    ++i;
                }
                iterations[py * width + px] = i;
            });
// [/doc]

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

}  // namespace

int main() {
    try {
        auto dev = kiln::default_device();
        kiln::queue q(dev);
        kiln::buffer<kiln::uint, kiln::out> iterations(q, kiln::shape{height, width});

        const std::size_t group = 16;
        const kiln::range global = {(width + group - 1) / group * group,
                                    (height + group - 1) / group * group};
        auto done =
            mandelbrot.bind(iterations, width, height, x_origin, y_origin, step, max_iterations)
                .launch(q, global, {group, group});
        const auto counts = iterations.read(q, done);

        // Every pixel against the CPU, with mandelbrot.cpp's tolerance: devices may still round
        // a few boundary points differently (e.g. a different float conversion).
        std::size_t differing = 0;
        for (unsigned py = 0; py < height; ++py)
            for (unsigned px = 0; px < width; ++px)
                differing += counts[py * width + px] != cpu_iterations(px, py);
        const std::size_t pixels = std::size_t(width) * height;
        bool ok = differing * 1000 <= pixels;

        // Landmarks that no rounding can move: deep inside the set, and far outside it.
        const unsigned cardioid = static_cast<unsigned>((-0.25f - x_origin) / step);
        ok = ok && counts[(height / 2) * width + cardioid] == max_iterations &&
             counts[0] == cpu_iterations(0, 0) &&
             counts[pixels - 1] == cpu_iterations(width - 1, height - 1);

        std::printf(
            "mandelbrot_cpp: %ux%u, %u iterations at most, on %s: %zu of %zu pixels differ from "
            "the CPU: %s\n",
            width, height, max_iterations, dev.name().c_str(), differing, pixels,
            ok ? "OK" : "MISMATCH");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mandelbrot_cpp: %s\n", e.what());
        return 1;
    }
}
