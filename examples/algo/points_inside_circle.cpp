// SPDX-License-Identifier: Apache-2.0
// Stream compaction of Monte Carlo points: the random points of the unit square that fall inside
// the quarter circle are gathered, in order, with kiln::copy_if; checked against the CPU.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <numbers>
#include <vector>

int main() {
    try {
        const std::size_t n = std::size_t{1} << 20;
        const std::uint64_t seed = 2024;
        kiln::queue q(kiln::default_device());

        // [doc:points-inside-circle]
        kiln::random_uniform<float> uniform;
        kiln::vector<float> x(q, n), y(q, n), inside_x(q, n), inside_y(q, n);
        kiln::vector<std::uint64_t> inside_index(q, n);
        x = uniform(2 * kiln::element_index(), seed);  // point i uses counters 2i and 2i + 1
        y = uniform(2 * kiln::element_index() + 1, seed);
        auto inside = x * x + y * y < 1;
        const std::size_t kept = kiln::copy_if(x, inside, inside_x);
        kiln::copy_if(y, inside, inside_y);
        kiln::copy_if(kiln::element_index(0, n), inside, inside_index);
        const double pi = 4.0 * static_cast<double>(kept) / static_cast<double>(n);
        // [/doc]

        // The same points on the CPU. One within a rounding of the circle may fall either way if
        // the device fuses the multiply-add; every kept point must be one of the CPU's points,
        // in increasing order, and the count must match kiln::count of the same condition.
        const auto hx = inside_x.read(), hy = inside_y.read();
        const auto hi = inside_index.read();
        bool ok = kept == kiln::count(inside) && std::fabs(pi - std::numbers::pi) < 1e-2;
        for (std::size_t k = 0; ok && k < kept; ++k) {
            const std::uint64_t i = hi[k];
            const float px = uniform.on_host(2 * i, seed), py = uniform.on_host(2 * i + 1, seed);
            ok = (k == 0 || i > hi[k - 1]) && px == hx[k] && py == hy[k] &&
                 px * px + py * py < 1 + 1e-6f;
        }
        std::size_t host_kept = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            const float px = uniform.on_host(2 * i, seed), py = uniform.on_host(2 * i + 1, seed);
            host_kept += px * px + py * py < 1;
        }
        const double difference = std::fabs(double(kept) - double(host_kept));
        if (!ok || difference > 1e-6 * double(n)) {
            std::fprintf(stderr, "points_inside_circle: %zu points kept, %zu on the CPU\n", kept,
                         host_kept);
            return 1;
        }
        std::printf(
            "points_inside_circle: %zu of %zu points inside, pi ~ %.6f, on %s (CPU "
            "agrees)\n",
            kept, n, pi, q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "points_inside_circle: %s\n", e.what());
        return 1;
    }
}
