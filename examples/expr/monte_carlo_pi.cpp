// SPDX-License-Identifier: Apache-2.0
// Monte Carlo pi: random points in the unit square counted inside the quarter circle, with
// counter-based random numbers and a count reduction; checked against the same stream on the CPU.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <numbers>

int main() {
    try {
        const std::size_t n = std::size_t{1} << 22;
        const std::uint64_t seed = 2024;
        kiln::queue q(kiln::default_device());

        // [doc:monte-carlo-pi]
        kiln::random_uniform<float> uniform;
        auto i = kiln::element_index(0, n);  // the size comes from here: no vector is needed
        auto x = uniform(2 * i, seed);       // point i uses counters 2i and 2i + 1
        auto y = uniform(2 * i + 1, seed);
        std::uint64_t inside = kiln::count(q, x * x + y * y < 1);
        double pi = 4.0 * static_cast<double>(inside) / static_cast<double>(n);
        // [/doc]

        std::uint64_t host_inside = 0;
        for (std::uint64_t k = 0; k < n; ++k) {
            const float hx = uniform.on_host(2 * k, seed), hy = uniform.on_host(2 * k + 1, seed);
            host_inside += hx * hx + hy * hy < 1;
        }
        // Points within a rounding of the circle may fall either way if the device fuses the
        // multiply-add; the streams themselves are identical.
        const double difference =
            std::fabs(static_cast<double>(inside) - static_cast<double>(host_inside));
        if (difference > 1e-6 * static_cast<double>(n) || std::fabs(pi - std::numbers::pi) > 1e-2) {
            std::fprintf(
                stderr,
                "monte_carlo_pi: %llu points inside on the device, %llu on the CPU (pi ~ %.6f)\n",
                static_cast<unsigned long long>(inside),
                static_cast<unsigned long long>(host_inside), pi);
            return 1;
        }
        std::printf("monte_carlo_pi: pi ~ %.6f from %zu points on %s (CPU agrees)\n", pi, n,
                    q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "monte_carlo_pi: %s\n", e.what());
        return 1;
    }
}
