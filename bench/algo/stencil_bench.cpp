// SPDX-License-Identifier: Apache-2.0
// Stencils against the copy bandwidth (their limit: one read and one write of the vector) and,
// on CPU devices, a plain one-thread host loop; every result is checked against that loop.
//
// Usage: stencil_bench [1-D elements] [2-D side] [--sweep] [--extents]
//   defaults: 2^26 floats and 4096^2 on GPUs, 2^22 and 1024^2 on CPUs. --sweep also times the
//   tiled kernels under other work-group sizes and outputs per work-item, and the 2-D strips
//   kernel under other group widths, strip heights and rows a step (the tuning table's
//   candidates, src/algo/tuning.cpp). Each 2-D Laplacian is also timed under the tiles and the
//   strips forced, in the same run. --extents times the 2-D kernel over other coefficient
//   extents, to tell where its time goes: 1 x 1 streams the grid through it, 3 x 1 adds the rows
//   above and below (which the caches should serve), 1 x 3 the neighbouring columns, 3 x 3 and
//   5 x 5 the terms.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <device_limits.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/kiln.hpp>
#include <kiln/stencil.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ratio_rows.hpp"
#include "timing.hpp"

KILN_STENCIL_OPERATOR(coupling, float, 3, 1, sin(x[0] - x[-1]) + sin(x[0] - x[1]));

namespace {

using kiln::bench::best_host_seconds;
using kiln::bench::best_seconds_per_call;

std::vector<float> operand(std::size_t n) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(0.001f * float(i)) + float(i % 13) * 0.01f;
    return x;
}

bool matches(const std::vector<float>& got, const std::vector<float>& expected) {
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - expected[i]) > 1e-4f * std::max(1.0f, std::abs(expected[i])))
            return false;
    return got.size() == expected.size();
}

struct context {
    kiln::queue q;
    double copy_gb_per_s;
    bool cpu;
};

/// One table row: time, bandwidth at one read and one write of n floats, and the host ratio.
void report(const context& c, const std::string& work, std::size_t n, double seconds,
            double host_seconds, bool ok) {
    const double gb_per_s = 2.0 * double(n) * sizeof(float) / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.1f GB/s | %.0f%% of copy", work.c_str(), seconds * 1e3,
                gb_per_s, 100 * gb_per_s / c.copy_gb_per_s);
    kiln::bench::record_ratio(work, gb_per_s / c.copy_gb_per_s, kiln::bench::measure::bandwidth,
                              "copy");
    if (c.cpu)
        std::printf(", %.2fx one-thread loop (%.3f ms)", host_seconds / seconds,
                    host_seconds * 1e3);
    std::printf(" | %s |\n", ok ? "matches the host loop" : "MISMATCH");
}

const std::vector<float> five = {-1.0f / 12, 4.0f / 3, -5.0f / 2, 4.0f / 3, -1.0f / 12};

std::vector<float> host_1d(const std::vector<float>& x) {
    const std::size_t n = x.size();
    std::vector<float> y(n);
    for (std::size_t i = 0; i < n; ++i) {
        float sum = 0;
        for (std::size_t k = 0; k < 5; ++k)
            sum += five[k] * x[std::min(n - 1, i + k < 2 ? 0 : i + k - 2)];
        y[i] = sum;
    }
    return y;
}

std::vector<float> host_coupling(const std::vector<float>& x) {
    const std::size_t n = x.size();
    std::vector<float> y(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float left = x[i ? i - 1 : 0], right = x[std::min(n - 1, i + 1)];
        y[i] = std::sin(x[i] - left) + std::sin(x[i] - right);
    }
    return y;
}

std::vector<float> host_2d(const std::vector<float>& x, std::size_t side,
                           const std::vector<float>& c) {
    std::vector<float> y(x.size());
    for (std::size_t r = 0; r < side; ++r)
        for (std::size_t col = 0; col < side; ++col) {
            float sum = 0;
            for (std::size_t a = 0; a < 3; ++a)
                for (std::size_t b = 0; b < 3; ++b) {
                    const std::size_t rr = std::min(side - 1, r + a < 1 ? 0 : r + a - 1);
                    const std::size_t cc = std::min(side - 1, col + b < 1 ? 0 : col + b - 1);
                    sum += c[a * 3 + b] * x[rr * side + cc];
                }
            y[r * side + col] = sum;
        }
    return y;
}

/// Seconds per call of `assign` under the device's launch policy with the stencil windows off
/// (launch_policy::stencil_windows): each element's stencil with run-time width and centre, in
/// the element loop.
template <class Assign>
double without_stencil_windows(const context& c, Assign assign) {
    kiln::detail::launch_policy policy = kiln::detail::launch_policy_for(c.q.device());
    policy.stencil_windows = false;
    const kiln::detail::scoped_launch_policy forced(policy);
    return best_seconds_per_call(c.q, 5, 10, assign);
}

void measure_1d(const context& c, std::size_t n) {
    const std::vector<float> host = operand(n);
    const kiln::stencil<float> S(c.q, five, 2);
    kiln::vector<float> x(c.q, host), y(c.q, n);
    std::vector<float> expected;
    const double host_s = best_host_seconds(3, [&] { expected = host_1d(host); });

    const double tiled = best_seconds_per_call(c.q, 5, 10, [&] { y = x * S; });
    report(c, "`y = x * S`, 5-point 1-D, " + std::to_string(n) + " floats, alone", n, tiled, host_s,
           matches(y.read(), expected));
    const double inline_s = best_seconds_per_call(c.q, 5, 10, [&] { y = 1.0f * (x * S); });
    report(c, "`y = 1.0f * (x * S)`, inside an expression (one fused kernel)", n, inline_s, host_s,
           matches(y.read(), expected));
    const auto inline_stencil = [&] { y = 1.0f * (x * S); };
    const double inline_old = without_stencil_windows(c, inline_stencil);
    report(c, "`y = 1.0f * (x * S)`, stencil windows off (run-time taps) forced", n, inline_old,
           host_s, matches(y.read(), expected));

    const double host_op = best_host_seconds(3, [&] { expected = host_coupling(host); });
    const double op = best_seconds_per_call(c.q, 5, 10, [&] { y = coupling(x); });
    report(c, "`y = coupling(x)`, user operator `sin(x[0] - x[-1]) + sin(x[0] - x[1])`", n, op,
           host_op, matches(y.read(), expected));
    const double op_inline = best_seconds_per_call(c.q, 5, 10, [&] { y = 1.0f * coupling(x); });
    report(c, "`y = 1.0f * coupling(x)`, inside an expression (one fused kernel)", n, op_inline,
           host_op, matches(y.read(), expected));
    const auto inline_operator = [&] { y = 1.0f * coupling(x); };
    const double op_old = without_stencil_windows(c, inline_operator);
    report(c, "`y = 1.0f * coupling(x)`, stencil windows off forced", n, op_old, host_op,
           matches(y.read(), expected));
}

/// The 2-D strategies side by side: the tiles the GPU rows ran until the strips, and the
/// strips of the NVIDIA row (src/algo/tuning.cpp).
const kiln::detail::stencil_tuning tiles_2d{.work_group_size = 256, .items_per_work_item = 4};
kiln::detail::stencil_tuning strips_2d(std::size_t group, std::size_t strip, std::size_t step) {
    return {.work_group_size = group, .items_per_work_item = step, .strip_rows = strip};
}

void measure_2d(const context& c, std::size_t side) {
    const std::size_t n = side * side;
    const std::vector<float> host = operand(n);
    kiln::slicer<2> grid({side, side});
    kiln::vector<float> x(c.q, host), y(c.q, n);
    const std::vector<std::pair<std::string, std::vector<float>>> cases = {
        {"5-point", {0, 1, 0, 1, -4, 1, 0, 1, 0}},
        {"9-point",
         {1.f / 6, 4.f / 6, 1.f / 6, 4.f / 6, -20.f / 6, 4.f / 6, 1.f / 6, 4.f / 6, 1.f / 6}}};
    for (const auto& [name, coefficients] : cases) {
        const kiln::stencil_2d<float> L(c.q, grid, coefficients, {3, 3}, {1, 1});
        std::vector<float> expected;
        const double host_s =
            best_host_seconds(3, [&] { expected = host_2d(host, side, coefficients); });
        const std::string work =
            "`y = x * L`, 2-D " + name + " Laplacian, " + std::to_string(side) + "^2 floats";
        const double s = best_seconds_per_call(c.q, 5, 10, [&] { y = x * L; });
        report(c, work, n, s, host_s, matches(y.read(), expected));
        for (const auto& [strategy, policy] :
             {std::pair<std::string, kiln::detail::stencil_tuning>{"tiles 256 x 4", tiles_2d},
              {"strips 256 wide, 128 rows, 8 a step", strips_2d(256, 128, 8)}}) {
            const kiln::detail::scoped_algorithm_policy forced(kiln::detail::algorithm::stencil_2d,
                                                               policy);
            const double forced_s = best_seconds_per_call(c.q, 5, 10, [&] { y = x * L; });
            report(c, work + ", " + strategy + " forced", n, forced_s, host_s,
                   matches(y.read(), expected));
        }
    }
}

/// The 2-D kernel over each coefficient extent, against the copy bandwidth (results unchecked:
/// the Laplacian rows check the kernel).
void extents(const context& c, std::size_t side) {
    const std::size_t n = side * side;
    kiln::slicer<2> grid({side, side});
    kiln::vector<float> x(c.q, operand(n)), y(c.q, n);
    std::printf(
        "\n| 2-D kernel, %zu^2 floats | time | %% of copy |\n"
        "|---|---|---|\n",
        side);
    const std::pair<std::size_t, std::size_t> cases[] = {{1, 1}, {3, 1}, {1, 3}, {3, 3}, {5, 5}};
    for (const auto& [rows, columns] : cases) {
        const kiln::stencil_2d<float> L(c.q, grid, std::vector<float>(rows * columns, 0.1f),
                                        {rows, columns}, {rows / 2, columns / 2});
        const double s = best_seconds_per_call(c.q, 5, 10, [&] { y = x * L; });
        std::printf("| %zu x %zu | %.3f ms | %.1f%% |\n", rows, columns, s * 1e3,
                    100 * 2.0 * double(n) * 4 / s / 1e9 / c.copy_gb_per_s);
    }
}

/// The tiled kernels under each candidate policy, to choose the tuning rows.
void sweep(const context& c, std::size_t n, std::size_t side) {
    namespace algorithm = kiln::detail::algorithm;
    const std::vector<float> host = operand(n), host_grid = operand(side * side);
    const kiln::stencil<float> S(c.q, five, 2);
    kiln::slicer<2> grid({side, side});
    const auto L = kiln::stencil_2d<float>::laplacian_5(c.q, grid);
    kiln::vector<float> x(c.q, host), y(c.q, n), gx(c.q, host_grid), gy(c.q, side * side);
    const std::vector<std::pair<std::size_t, std::size_t>> candidates = {
        {64, 4},  {64, 16}, {128, 4}, {128, 8}, {256, 1},
        {256, 2}, {256, 4}, {256, 8}, {512, 2}, {512, 4}};
    std::printf(
        "\n| tiled kernel | group x outputs per item | time | %% of copy |\n"
        "|---|---|---|---|\n");
    for (const auto& [group, items] : candidates) {
        const kiln::detail::stencil_tuning policy{group, items};
        const std::string shape = std::to_string(group) + "x" + std::to_string(items);
        {
            const kiln::detail::scoped_algorithm_policy scoped(algorithm::stencil_1d, policy);
            const double s = best_seconds_per_call(c.q, 5, 10, [&] { y = x * S; });
            std::printf("| 1-D 5-point | %s | %.3f ms | %.1f%% |\n", shape.c_str(), s * 1e3,
                        100 * 2.0 * double(n) * 4 / s / 1e9 / c.copy_gb_per_s);
        }
        const kiln::detail::scoped_algorithm_policy scoped(algorithm::stencil_2d, policy);
        const double s = best_seconds_per_call(c.q, 5, 10, [&] { gy = gx * L; });
        std::printf("| 2-D 5-point | %s | %.3f ms | %.1f%% |\n", shape.c_str(), s * 1e3,
                    100 * 2.0 * double(side * side) * 4 / s / 1e9 / c.copy_gb_per_s);
    }
    // The strips kernel's knobs: group width, strip height, rows between two barriers.
    const auto L9 = kiln::stencil_2d<float>::laplacian_9(c.q, grid);
    std::printf(
        "\n| strips kernel | columns x rows, rows a step | 5-point | 9-point |\n"
        "|---|---|---|---|\n");
    for (const std::size_t group : {64u, 128u, 256u})
        for (const std::size_t strip : {16u, 32u, 64u, 128u, 256u})
            for (const std::size_t step : {1u, 2u, 4u, 8u}) {
                const kiln::detail::scoped_algorithm_policy scoped(algorithm::stencil_2d,
                                                                   strips_2d(group, strip, step));
                const double five_s = best_seconds_per_call(c.q, 5, 10, [&] { gy = gx * L; });
                const double nine_s = best_seconds_per_call(c.q, 5, 10, [&] { gy = gx * L9; });
                const auto share = [&](double s) {
                    return 100 * 2.0 * double(side * side) * 4 / s / 1e9 / c.copy_gb_per_s;
                };
                std::printf("| 2-D | %zu x %zu, %zu | %.1f%% | %.1f%% |\n", group, strip, step,
                            share(five_s), share(nine_s));
            }
}

}  // namespace

int main(int argc, char** argv) {
    bool want_sweep = false, want_extents = false;
    std::vector<std::size_t> sizes;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--sweep") == 0)
            want_sweep = true;
        else if (std::strcmp(argv[i], "--extents") == 0)
            want_extents = true;
        else
            sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    }
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const std::size_t n = sizes.size() > 0 ? sizes[0] : std::size_t{1} << (cpu ? 22 : 26);
    const std::size_t side = sizes.size() > 1 ? sizes[1] : cpu ? 1024 : 4096;
    // The 1-D and 2-D vectors' own copy bounds (on CPUs the caches may hold one and not the
    // other; on GPUs the same device copy).
    const context c{kiln::queue(dev), kiln::bench::copy_bound(dev, n * sizeof(float)), cpu};
    context c2 = c;
    if (cpu) c2.copy_gb_per_s = kiln::bench::copy_bound(dev, side * side * sizeof(float));
    kiln::bench::record_rows_of(dev, "stencils");
    std::printf("### kiln stencils, %s (%s)\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str());
    std::printf("copy bandwidth (%s, the limit): %.1f GB/s (1-D), %.1f GB/s (2-D)\n\n",
                kiln::bench::copy_bound_name(dev), c.copy_gb_per_s, c2.copy_gb_per_s);
    std::printf("| work | time | bandwidth (one read, one write) | check |\n|---|---|---|---|\n");
    measure_1d(c, n);
    measure_2d(c2, side);
    if (want_extents) extents(c2, side);
    if (want_sweep) sweep(c, n, side);
    return 0;
}
