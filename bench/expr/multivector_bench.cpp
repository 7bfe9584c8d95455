// SPDX-License-Identifier: Apache-2.0
// Multivector statements and reductions along a dimension against the device's copy bandwidth.
//
// Usage: multivector_bench [systems] [matrix side]
//        (defaults 2^24 and 8192 on GPUs, 2^20 and 2048 on CPUs; KILN_DEVICE picks the device)
// Prints one markdown table for docs/benchmarks.md: the copy bandwidth measured in the same run,
// then, on a multivector<double, 3> of `systems` elements per component, an RK4-style update,
// the Lorenz right-hand side and one whole RK4 step of the Lorenz ensemble (eight kernels), and
// row sums and column sums of a float matrix. "Of copy" is the statement's minimum traffic (every
// operand read once, every result written once) over its time, divided by the copy bandwidth.
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <kiln/reduce_dimension.hpp>
#include <string>
#include <tuple>

#include "device_limits.hpp"
#include "lorenz_rk4.hpp"
#include "ratio_rows.hpp"
#include "timing.hpp"

namespace {

using state = kiln::examples::lorenz_state;

}  // namespace

int main(int argc, char** argv) {
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const std::size_t n =
        argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << (cpu ? 20 : 24);
    const std::size_t side = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : cpu ? 2048 : 8192;
    if (!dev.properties().double_precision) {
        std::printf("multivector_bench: %s has no double precision\n", dev.name().c_str());
        return 0;
    }
    kiln::queue q(dev);
    kiln::bench::record_rows_of(dev, "vector expressions");
    // The bound at the float matrix's size (the reductions'; the systems' components are
    // n doubles each).
    const double copy = kiln::bench::copy_bound(dev, side * side * sizeof(float));
    std::printf("device: %s (%s), %zu systems, matrix %zu x %zu\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str(), n, side, side);
    std::printf("| work | time | bandwidth | of copy |\n|---|---|---|---|\n");
    const auto row = [&](const char* what, double seconds, double bytes) {
        const double gb_per_s = bytes / seconds / 1e9;
        std::printf("| %s | %.3f ms | %.0f GB/s | %.0f%% |\n", what, seconds * 1e3, gb_per_s,
                    100 * gb_per_s / copy);
        kiln::bench::record_ratio(what, gb_per_s / copy, kiln::bench::measure::bandwidth, "copy");
    };
    std::printf("| copy (%s: the limit) | | %.0f GB/s | 100%% |\n",
                kiln::bench::copy_bound_name(dev), copy);

    const double component = 8.0 * static_cast<double>(n);  // bytes of one component
    kiln::vector<double> R(q, n);
    R = 28.0;
    state x(q, n), k1(q, n), k2(q, n), k3(q, n), k4(q, n), tmp(q, n);
    for (state* s : {&x, &k1, &k2, &k3, &k4, &tmp}) *s = 1.0;
    const double dt = 0.01;
    row("`X = X + dt * F` (3 components)",
        kiln::bench::best_seconds_per_call(q, 5, 20, [&] { tmp = x + dt * k1; }), 9 * component);
    row("`x + dt/6 * (k1 + 2 k2 + 2 k3 + k4)`",
        kiln::bench::best_seconds_per_call(
            q, 5, 20, [&] { tmp = x + (dt / 6) * (k1 + 2 * k2 + 2 * k3 + k4); }),
        18 * component);
    const kiln::examples::lorenz_system lorenz{R};
    row("Lorenz right-hand side",
        kiln::bench::best_seconds_per_call(q, 5, 20, [&] { lorenz(x, k1, 0.0); }), 7 * component);
    // One RK4 step: four right-hand sides (7 components each), three stage updates (9) and the
    // final update (18).
    kiln::examples::lorenz_ensemble ensemble(q, n);
    row("one RK4 step of the ensemble (8 kernels)",
        kiln::bench::best_seconds_per_call(q, 3, 10, [&] { ensemble.step(dt); }),
        (4 * 7 + 3 * 9 + 18) * component);

    kiln::vector<float> matrix(q, side * side);
    matrix = 0.5f;
    const kiln::extents shape{side, side};
    const double matrix_bytes = 4.0 * static_cast<double>(side * side);
    row("row sums (`reduce<sum>` along dimension 1)",
        kiln::bench::best_seconds_per_call(
            q, 5, 10, [&] { (void)kiln::reduce<kiln::reducers::sum>(shape, matrix, 1); }),
        matrix_bytes);
    row("column sums (`reduce<sum>` along dimension 0)",
        kiln::bench::best_seconds_per_call(
            q, 5, 10, [&] { (void)kiln::reduce<kiln::reducers::sum>(shape, matrix, 0); }),
        matrix_bytes);
    row("`sum(matrix)` (all elements, for comparison)",
        kiln::bench::best_seconds_per_call(q, 5, 10, [&] { (void)kiln::sum(matrix); }),
        matrix_bytes);
    return 0;
}
