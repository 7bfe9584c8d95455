// SPDX-License-Identifier: Apache-2.0
// A 1-D Laplace operator through raw pointers: each element reads its neighbours; checked
// against the CPU.
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <vector>

int main() {
    try {
        const std::size_t n = std::size_t{1} << 20;
        std::vector<float> host(n);
        for (std::size_t i = 0; i < n; ++i) host[i] = std::sin(0.001f * static_cast<float>(i));

        kiln::queue q(kiln::default_device());
        kiln::vector<float> x(q, host), y(q, n);
        auto data = kiln::raw_pointer(x);
        auto i = kiln::element_index();
        // Reflecting boundaries: the missing neighbour is the element itself.
        y = 2 * data[i] - data[kiln::if_else(i > 0, i - 1, i)] -
            data[kiln::if_else(i + 1 < n, i + 1, i)];
        const std::vector<float> result = y.read();

        for (std::size_t k = 0; k < n; ++k) {
            const float expected =
                2 * host[k] - host[k > 0 ? k - 1 : k] - host[k + 1 < n ? k + 1 : k];
            if (std::fabs(result[k] - expected) > 1e-6f) {
                std::fprintf(stderr, "laplace_1d: y[%zu] = %.9g, expected %.9g\n", k, result[k],
                             expected);
                return 1;
            }
        }
        std::printf("laplace_1d: %zu points on %s match the CPU\n", n, q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "laplace_1d: %s\n", e.what());
        return 1;
    }
}
