// SPDX-License-Identifier: Apache-2.0
// An ensemble of Lorenz systems integrated with the classical fourth-order Runge-Kutta method on
// a kiln::multivector<double, 3> (one system per element, x, y and z as the components), with a
// stepper written once for any state type; checked against the same integration on the host,
// and the same steps captured once and replayed as a kiln::graph, and run as one kernel a step
// (kiln::fused).
//
// The systems differ in the Rayleigh number R (from 0.1 to 50, so that some settle to a fixed
// point and most are chaotic). The device and the host round differently (fused multiply-adds),
// and chaos amplifies those differences by about e^(1.5 t): integrated to t = 5 they stay near
// 1e-10, to t = 10 near 1e-7 (measured on PoCL). So the check runs to t = 5 with a tolerance of
// 1e-6, which a wrong term in the system or the stepper exceeds by orders of magnitude.
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <tuple>
#include <vector>

#include "lorenz_rk4.hpp"

int main() {
    try {
        const std::size_t n = 1024, steps = 500;
        const double dt = 0.01;
        kiln::queue q(kiln::default_device());
        if (!q.device().properties().double_precision) {
            std::printf("lorenz_ensemble: %s has no double precision\n", q.device().name().c_str());
            return 1;
        }

        // The stepper, the system and these values are in lorenz_rk4.hpp.
        using kiln::examples::lorenz_system;
        using kiln::examples::runge_kutta4;
        const std::vector<double> r_host = kiln::examples::lorenz_rayleigh_numbers(n);
        const std::vector<double> start = kiln::examples::lorenz_start(n);  // all x, y, then z

        // [doc:lorenz_system]
        kiln::vector<double> R(q, r_host);         // one Rayleigh number per system
        kiln::multivector<double, 3> X(q, start);  // X(0), X(1), X(2): x, y, z of every system
        const lorenz_system lorenz{R};
        runge_kutta4<kiln::multivector<double, 3>> stepper(X);
        for (std::size_t k = 0; k < steps; ++k) stepper.step(lorenz, X, double(k) * dt, dt);
        // [/doc]
        const std::vector<double> device = X.read();

        // The same integration recorded once, ten steps to a graph, and replayed: the system
        // does not depend on t, so every launch is the same work on the state it finds. The
        // replay runs the same kernels in the same order, so it matches the eager run bit for bit.
        kiln::multivector<double, 3> Y(q, start);
        runge_kutta4<kiln::multivector<double, 3>> replay_stepper(Y);
        const std::size_t steps_per_graph = 10;
        const kiln::graph ten_steps = kiln::capture(q, [&] {
            for (std::size_t k = 0; k < steps_per_graph; ++k)
                replay_stepper.step(lorenz, Y, 0.0, dt);
        });
        for (std::size_t k = 0; k < steps; k += steps_per_graph) ten_steps.launch();
        const bool replay_matches = Y.read() == device;
        std::printf("%zu steps replayed as %zu launches of a graph of %zu commands: %s\n", steps,
                    steps / steps_per_graph, ten_steps.size(),
                    replay_matches ? "the same bits as the eager steps" : "DIFFERENT");
        if (!replay_matches) {
            std::printf("lorenz_ensemble: FAILED, the replayed steps differ from the eager ones\n");
            return 1;
        }

        // The same integration with each step's eight statements joined into one kernel: the
        // intermediate states and slopes are still stored, but each statement reads the ones
        // before it from registers. It matches the eager run bit for bit.
        kiln::multivector<double, 3> Z(q, start);
        runge_kutta4<kiln::multivector<double, 3>> fused_stepper(Z);
        const std::size_t launches_before = kiln::expression_cache::stats().launches;
        // [doc:lorenz_fused]
        for (std::size_t k = 0; k < steps; ++k)
            kiln::fused(q, [&] { fused_stepper.step(lorenz, Z, double(k) * dt, dt); });
        // [/doc]
        const std::size_t fused_launches =
            kiln::expression_cache::stats().launches - launches_before;
        const bool fused_matches = Z.read() == device;
        std::printf("%zu steps fused into %zu kernel launches: %s\n", steps, fused_launches,
                    fused_matches ? "the same bits as the eager steps" : "DIFFERENT");
        if (!fused_matches || fused_launches != steps) {
            std::printf("lorenz_ensemble: FAILED, the fused steps differ from the eager ones\n");
            return 1;
        }

        // Both: ten fused steps recorded as a graph of ten kernels, replayed.
        kiln::multivector<double, 3> W(q, start);
        runge_kutta4<kiln::multivector<double, 3>> fused_replay_stepper(W);
        const kiln::graph ten_fused_steps = kiln::capture(q, [&] {
            for (std::size_t k = 0; k < steps_per_graph; ++k)
                kiln::fused(q, [&] { fused_replay_stepper.step(lorenz, W, 0.0, dt); });
        });
        for (std::size_t k = 0; k < steps; k += steps_per_graph) ten_fused_steps.launch();
        const bool fused_replay_matches = W.read() == device;
        std::printf("%zu fused steps replayed as %zu launches of a graph of %zu commands: %s\n",
                    steps, steps / steps_per_graph, ten_fused_steps.size(),
                    fused_replay_matches ? "the same bits as the eager steps" : "DIFFERENT");
        if (!fused_replay_matches || ten_fused_steps.size() != steps_per_graph) {
            std::printf(
                "lorenz_ensemble: FAILED, the replayed fused steps differ from the eager ones\n");
            return 1;
        }

        // The same integration on the host, one system at a time.
        double largest_difference = 0;
        for (std::size_t i = 0; i < n; ++i) {
            using state = std::array<double, 3>;
            constexpr double sigma = lorenz_system::sigma, beta = lorenz_system::beta;
            const auto derivative = [&](const state& s) {
                return state{sigma * (s[1] - s[0]), r_host[i] * s[0] - s[1] - s[0] * s[2],
                             s[0] * s[1] - beta * s[2]};
            };
            const auto along = [](const state& s, double h, const state& d) {
                return state{s[0] + h * d[0], s[1] + h * d[1], s[2] + h * d[2]};
            };
            state s{start[i], start[n + i], start[2 * n + i]};
            for (std::size_t k = 0; k < steps; ++k) {
                const state k1 = derivative(s), k2 = derivative(along(s, dt / 2, k1)),
                            k3 = derivative(along(s, dt / 2, k2)),
                            k4 = derivative(along(s, dt, k3));
                for (int c = 0; c < 3; ++c)
                    s[c] += dt / 6 * (k1[c] + 2 * k2[c] + 2 * k3[c] + k4[c]);
            }
            for (std::size_t c = 0; c < 3; ++c)
                largest_difference =
                    std::fmax(largest_difference, std::fabs(device[c * n + i] - s[c]) /
                                                      std::fmax(1.0, std::fabs(s[c])));
        }
        std::printf(
            "%zu Lorenz systems, %zu RK4 steps of %g on %s: largest difference from the "
            "host %.3g (relative)\n",
            n, steps, dt, q.device().name().c_str(), largest_difference);
        std::printf("system %zu (R = %g) ends at (%.6f, %.6f, %.6f)\n", n - 1, r_host[n - 1],
                    device[n - 1], device[2 * n - 1], device[3 * n - 1]);
        if (!(largest_difference < 1e-6)) {
            std::printf("lorenz_ensemble: FAILED, the device and the host disagree\n");
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lorenz_ensemble: %s\n", e.what());
        return 1;
    }
}
