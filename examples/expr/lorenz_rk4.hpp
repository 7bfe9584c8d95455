// SPDX-License-Identifier: Apache-2.0
// The Lorenz ensemble of lorenz_ensemble.cpp: the classical RK4 stepper, the system and the
// ensemble's starting values, written once for the example, the tests that check its fused and
// captured steps, and the benchmarks that time a step.
#pragma once

#include <cstddef>
#include <kiln/multivector.hpp>
#include <kiln/vector.hpp>
#include <tuple>
#include <vector>

namespace kiln::examples {

// [doc:runge_kutta4]
/// The classical Runge-Kutta method, written once for any state that supports
/// `state = state + scalar * state` (kiln::vector, kiln::multivector...). `system(x, dxdt, t)`
/// writes the derivative of x into dxdt.
template <class State>
class runge_kutta4 {
  public:
    /// Scratch states shaped like `like` (their values are overwritten).
    explicit runge_kutta4(const State& like)
        : k1_(like), k2_(like), k3_(like), k4_(like), x_(like) {}

    template <class System>
    void step(const System& system, State& x, double t, double dt) {
        system(x, k1_, t);
        x_ = x + (dt / 2) * k1_;
        system(x_, k2_, t + dt / 2);
        x_ = x + (dt / 2) * k2_;
        system(x_, k3_, t + dt / 2);
        x_ = x + dt * k3_;
        system(x_, k4_, t + dt);
        x = x + (dt / 6) * (k1_ + 2 * k2_ + 2 * k3_ + k4_);  // one kernel for every component
    }

  private:
    State k1_, k2_, k3_, k4_, x_;
};
// [/doc]

/// x, y and z of every system, each component a vector of its own.
using lorenz_state = kiln::multivector<double, 3>;

// [doc:lorenz_system_type]
/// dx/dt = sigma (y - x), dy/dt = R x - y - x z, dz/dt = x y - beta z, for every system at once,
/// each with its own Rayleigh number R.
struct lorenz_system {
    static constexpr double sigma = 10.0, beta = 8.0 / 3.0;
    const kiln::vector<double>& R;

    void operator()(const lorenz_state& s, lorenz_state& dsdt, double /*t*/) const {
        dsdt = std::make_tuple(sigma * (s(1) - s(0)), R * s(0) - s(1) - s(0) * s(2),
                               s(0) * s(1) - beta * s(2));
    }
};
// [/doc]

/// Rayleigh numbers from 0.1 to 50 over `n` systems: some settle to a fixed point, most are
/// chaotic.
inline std::vector<double> lorenz_rayleigh_numbers(std::size_t n) {
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = n > 1 ? 0.1 + 49.9 * double(i) / double(n - 1) : 0.1;
    return r;
}

/// Every system starting at (10, 10, 10), as a lorenz_state holds it: all x, then y, then z.
inline std::vector<double> lorenz_start(std::size_t n) {
    return std::vector<double>(3 * n, 10.0);
}

/// An ensemble of `n` systems at their start, with the scratch states of its stepper: what the
/// tests and benchmarks step eagerly, fused and captured.
struct lorenz_ensemble {
    lorenz_ensemble(const kiln::queue& q, std::size_t n)
        : R(q, lorenz_rayleigh_numbers(n)), X(q, lorenz_start(n)), stepper(X) {}

    /// One RK4 step: eight statements (four evaluations of the system, four updates).
    void step(double dt) { stepper.step(lorenz_system{R}, X, 0.0, dt); }

    kiln::vector<double> R;
    lorenz_state X;
    runge_kutta4<lorenz_state> stepper;
};

}  // namespace kiln::examples
