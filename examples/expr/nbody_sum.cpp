// SPDX-License-Identifier: Apache-2.0
// An n-body-style sum: a user function loops over the whole vector through a raw pointer, for
// every element; checked against a double-precision loop on the CPU.
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <vector>

// Potential at body i from all others: sum over j != i of 1 / sqrt(|x_i - x_j|^2 + softening).
KILN_FUNCTION(
    float, potential, (ulong n, ulong i, const float* x, float softening), const float xi = x[i];
    float total = 0; for (ulong j = 0; j < n; ++j) {
        const float d = x[j] - xi;
        if (j != i) total += rsqrt(d * d + softening);
    } return total;);

int main() {
    try {
        const std::size_t n = 4096;
        const float softening = 0.01f;
        std::vector<float> host(n);
        for (std::size_t i = 0; i < n; ++i)
            host[i] = std::cos(0.37f * static_cast<float>(i)) * 10.0f;

        kiln::queue q(kiln::default_device());
        kiln::vector<float> x(q, host), y(q, n);
        y = potential(n, kiln::element_index(), kiln::raw_pointer(x), softening);
        const std::vector<float> result = y.read();

        for (std::size_t i = 0; i < n; ++i) {
            double expected = 0;
            for (std::size_t j = 0; j < n; ++j) {
                const double d = double(host[j]) - double(host[i]);
                if (j != i) expected += 1.0 / std::sqrt(d * d + softening);
            }
            if (std::fabs(result[i] - expected) > 1e-4 * expected) {
                std::fprintf(stderr, "nbody_sum: y[%zu] = %.9g, expected %.9g\n", i, result[i],
                             expected);
                return 1;
            }
        }
        std::printf("nbody_sum: %zu bodies on %s match the CPU\n", n, q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nbody_sum: %s\n", e.what());
        return 1;
    }
}
