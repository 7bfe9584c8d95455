// SPDX-License-Identifier: Apache-2.0
// SAXPY, y = a * x + y, as one vector expression; checked against a loop on the CPU.
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <vector>

int main() {
    try {
        const std::size_t n = std::size_t{1} << 22;
        const float a = 2.5f;
        std::vector<float> host_x(n), host_y(n);
        for (std::size_t i = 0; i < n; ++i) {
            host_x[i] = static_cast<float>(i % 1000) * 0.001f;
            host_y[i] = 1.0f - static_cast<float>(i % 7);
        }

        // [doc:saxpy]
        kiln::queue q(kiln::default_device());
        kiln::vector<float> x(q, host_x), y(q, host_y);
        y = a * x + y;
        std::vector<float> result = y.read();
        // [/doc]

        for (std::size_t i = 0; i < n; ++i) {
            const float expected = a * host_x[i] + host_y[i];
            // The device may fuse the multiply-add (OpenCL allows contraction): one rounding less.
            if (std::fabs(result[i] - expected) > 1e-6f * std::fmax(1.0f, std::fabs(expected))) {
                std::fprintf(stderr, "saxpy: y[%zu] = %.9g, expected %.9g\n", i, result[i],
                             expected);
                return 1;
            }
        }
        std::printf("saxpy: %zu elements on %s match the CPU\n", n, q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "saxpy: %s\n", e.what());
        return 1;
    }
}
