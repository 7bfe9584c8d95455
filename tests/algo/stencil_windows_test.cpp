// SPDX-License-Identifier: Apache-2.0
// 1-D stencils inside expressions under GPU launch policies, on every device: with the stencil
// windows (launch_policy::stencil_windows: width and centre constants of the kernel, each step's
// window loaded once for its wide lanes) and without them (the run-time form, each element in
// the element loop), against host loops and against each other, at every size around the
// window and the lanes, through infinities and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <kiln/algorithm.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/kiln.hpp>
#include <kiln/stencil.hpp>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "support/device_param.hpp"

KILN_STENCIL_OPERATOR(window_coupling, float, 3, 1, sin(x[0] - x[-1]) + sin(x[0] - x[1]));
// Reaches three elements ahead and none behind.
KILN_STENCIL_OPERATOR(window_spread, double, 4, 0, fmax(fmax(x[1], x[2]), x[3]) - x[0]);
// Reaches two behind and none ahead; a comparison used as a number.
KILN_STENCIL_OPERATOR(window_falls, float, 3, 2, (x[-2] > x[0]) * 2.0f + x[-1]);

namespace {

using kiln::detail::launch_policy;
using kiln::detail::loop_style;

class stencil_windows : public kiln::test::device_queue_test {};

/// The GPU loop (strided, 16-byte lanes), few groups so that work-items loop over many steps.
launch_policy strided(bool windows) {
    return {loop_style::strided, 64, 2, 0, windows};
}

// Sizes: empty, shorter than the widest window, around the lanes (4 floats, 2 doubles), and
// long ones whose last step is partial.
const std::vector<std::size_t> sizes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 33, 1000, 1003};

template <class T>
std::vector<T> values(std::size_t n, bool special) {
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = static_cast<T>(std::sin(0.37 * double(i)) + 0.1 * double(i % 7));
    if (special) {
        for (std::size_t i = 5; i < n; i += 37)
            x[i] = (i % 2 ? 1 : -1) * std::numeric_limits<T>::infinity();
        for (std::size_t i = 11; i < n; i += 53) x[i] = std::numeric_limits<T>::quiet_NaN();
    }
    return x;
}

template <class T>
T clamped(const std::vector<T>& x, std::ptrdiff_t j) {
    return x[std::clamp<std::ptrdiff_t>(j, 0, static_cast<std::ptrdiff_t>(x.size()) - 1)];
}

/// sum over k of c[k] * x[clamp(i + k - center)], in the kernels' order.
template <class T>
std::vector<T> host_stencil(const std::vector<T>& x, const std::vector<T>& c, std::size_t center) {
    std::vector<T> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t k = 0; k < c.size(); ++k)
            y[i] += c[k] * clamped(x, std::ptrdiff_t(i + k) - std::ptrdiff_t(center));
    return y;
}

/// Equal within `tolerance` relative to the value, or both NaN, or the same infinity.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& expected, double tolerance) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i]))
            ASSERT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
        else if (std::isinf(expected[i]))
            ASSERT_EQ(got[i], expected[i]) << "element " << i;
        else
            ASSERT_NEAR(got[i], expected[i],
                        tolerance * std::max(1.0, std::fabs(double(expected[i]))))
                << "element " << i;
    }
}

/// `assign(y)` under the stencil windows and without them, each into a target filled with a
/// value no statement computes: both match `expected`, and each other exactly (the same taps in
/// the same order).
template <class T>
void expect_both_forms(const kiln::queue& q, const std::vector<T>& expected, double tolerance,
                       const std::function<void(kiln::vector<T>&)>& assign) {
    std::vector<std::vector<T>> results;
    for (const bool windows : {true, false}) {
        SCOPED_TRACE(windows ? "stencil windows" : "run-time taps");
        const kiln::detail::scoped_launch_policy forcing(strided(windows));
        kiln::vector<T> y(q, expected.size());
        if (!expected.empty()) y = T(-12345);
        assign(y);
        results.push_back(y.read());
        expect_close(results.back(), expected, tolerance);
    }
    expect_close(results[0], results[1], 0);
}

struct shape {
    std::vector<float> coefficients;
    std::size_t center;
};
// Every width and centre the stencil tests use, and one wider than a step of lanes twice over.
const std::vector<shape> shapes = {{{2}, 0},
                                   {{1, -2, 1}, 1},
                                   {{0.5f, -1, 2, 0.25f, -3}, 0},
                                   {{0.5f, -1, 2, 0.25f, -3}, 2},
                                   {{0.5f, -1, 2, 0.25f, -3}, 4},
                                   {{1, 2, 3, 4, 5, 6, 7, 8, 9}, 6}};

TEST_P(stencil_windows, convolutions_in_expressions_at_every_size_and_shape) {
    for (const bool special : {false, true}) {
        for (const std::size_t n : sizes) {
            const auto host = values<float>(n, special);
            kiln::vector<float> x(q, host);
            for (const auto& [c, center] : shapes) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", width " + std::to_string(c.size()) +
                             ", center " + std::to_string(center) + (special ? ", inf/NaN" : ""));
                const kiln::stencil<float> S(q, c, center);
                auto expected = host_stencil(host, c, center);
                for (std::size_t i = 0; i < n; ++i) expected[i] = 2 * host[i] - expected[i];
                expect_both_forms<float>(q, expected, 1e-5,
                                         [&](kiln::vector<float>& y) { y = 2 * x - x * S; });
            }
        }
    }
}

// One statement type, stencils of other widths and centres one after the other: each needs its
// own kernel (the cache's variant), not the first one's. 40 coefficients are past the windows'
// widest (the run-time form lane by lane).
TEST_P(stencil_windows, each_width_and_center_gets_its_own_kernel) {
    const auto host = values<float>(101, false);
    kiln::vector<float> x(q, host);
    for (const bool windows : {true, false}) {
        const kiln::detail::scoped_launch_policy forcing(strided(windows));
        auto wide_shapes = shapes;
        wide_shapes.push_back({std::vector<float>(40, 0.25f), 17});
        for (int round = 0; round < 2; ++round) {
            for (const auto& [c, center] : wide_shapes) {
                SCOPED_TRACE("width " + std::to_string(c.size()) + ", center " +
                             std::to_string(center) + (windows ? ", windows" : ""));
                const kiln::stencil<float> S(q, c, center);
                kiln::vector<float> y(q, host.size());
                y = 1.0f * (x * S);
                expect_close(y.read(), host_stencil(host, c, center), 1e-5);
            }
        }
    }
}

TEST_P(stencil_windows, several_stencils_and_operators_in_one_statement) {
    const std::vector<float> a = {1, -2, 1}, b = {0.5f, -1, 2, 0.25f, -3};
    for (const bool special : {false, true}) {
        for (const std::size_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n) + (special ? ", inf/NaN" : ""));
            const auto host = values<float>(n, special), other = values<float>(n + 3, false);
            kiln::vector<float> x(q, host),
                z(q, std::vector<float>(other.begin(), other.end() - 3));
            const kiln::stencil<float> A(q, a, 1), B(q, b, 3);
            const auto sa = host_stencil(host, a, 1);
            const auto sb = host_stencil(std::vector<float>(other.begin(), other.end() - 3), b, 3);
            std::vector<float> expected(n);
            for (std::size_t i = 0; i < n; ++i) {
                const auto at = [&](std::ptrdiff_t j) { return clamped(host, j); };
                const auto k = std::ptrdiff_t(i);
                const float coupling = std::sin(at(k) - at(k - 1)) + std::sin(at(k) - at(k + 1));
                const float falls = float(at(k - 2) > at(k)) * 2.0f + at(k - 1);
                expected[i] = sa[i] - 0.5f * sb[i] + coupling * falls;
            }
            expect_both_forms<float>(q, expected, 1e-5, [&](kiln::vector<float>& y) {
                y = x * A - 0.5f * (z * B) + window_coupling(x) * window_falls(x);
            });
        }
    }
}

TEST_P(stencil_windows, double_precision) {
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    const std::vector<double> c = {1.0 / 12, -2.0 / 3, 0, 2.0 / 3, -1.0 / 12};
    for (const bool special : {false, true}) {
        for (const std::size_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n) + (special ? ", inf/NaN" : ""));
            const auto host = values<double>(n, special);
            kiln::vector<double> x(q, host);
            const kiln::stencil<double> S(q, c, 2);
            const auto s = host_stencil(host, c, 2);
            std::vector<double> expected(n);
            for (std::size_t i = 0; i < n; ++i) {
                const auto at = [&](std::ptrdiff_t j) { return clamped(host, j); };
                const auto k = std::ptrdiff_t(i);
                expected[i] =
                    s[i] + (std::fmax(std::fmax(at(k + 1), at(k + 2)), at(k + 3)) - at(k));
            }
            expect_both_forms<double>(
                q, expected, 1e-13, [&](kiln::vector<double>& y) { y = x * S + window_spread(x); });
        }
    }
}

// A statement that reads a vector beside its stencil, and targets that differ in type from the
// stencil (the element loop with the constant taps).
TEST_P(stencil_windows, mixed_terms_and_element_loops) {
    for (const std::size_t n : {3u, 17u, 1000u}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = values<float>(n, true);
        kiln::vector<float> x(q, host);
        const std::vector<float> c = {0.5f, -1, 2, 0.25f, -3};
        const kiln::stencil<float> S(q, c, 2);
        const auto s = host_stencil(host, c, 2);
        std::vector<float> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = host[i] * s[i] + 1;
        expect_both_forms<float>(q, expected, 1e-5,
                                 [&](kiln::vector<float>& y) { y = x * (x * S) + 1; });
        if (!has_double()) continue;
        for (const bool windows : {true, false}) {
            const kiln::detail::scoped_launch_policy forcing(strided(windows));
            kiln::vector<double> d(q, n);
            d = 1.0 * (x * S);
            const auto got = d.read();
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(s[i]))
                    ASSERT_TRUE(std::isnan(got[i])) << i;
                else if (std::isinf(s[i]))
                    ASSERT_EQ(got[i], double(s[i])) << i;
                else
                    ASSERT_NEAR(got[i], s[i], 1e-5 * std::max(1.0f, std::fabs(s[i]))) << i;
            }
        }
    }
}

// Scans' 16-byte tiles read a stencil input lane by lane, each lane in the run-time form at its
// own position (the stencil nodes' contiguous_width).
TEST_P(stencil_windows, scans_read_stencils_in_wide_tiles) {
    namespace algorithm = kiln::detail::algorithm;
    using kiln::detail::tile_access;
    auto policy = kiln::detail::policy_for(algorithm::scan, device());
    policy.chunk_bytes = 0;
    policy.full_tiles = tile_access::wide;
    if (device().is_cpu()) policy.items_per_work_item = 8;
    const kiln::detail::scoped_algorithm_policy scan_policy(algorithm::scan, policy);
    const std::vector<float> c = {0.5f, -1, 2, 0.25f, -3};
    for (const std::size_t n : {1u, 7u, 1000u, 5000u}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = values<float>(n, false);
        kiln::vector<float> x(q, host), y(q, n);
        const kiln::stencil<float> S(q, c, 2);
        kiln::inclusive_scan(x * S + window_coupling(x), y);
        auto terms = host_stencil(host, c, 2);
        for (std::size_t i = 0; i < n; ++i) {
            const auto k = std::ptrdiff_t(i);
            terms[i] +=
                std::sin(host[i] - clamped(host, k - 1)) + std::sin(host[i] - clamped(host, k + 1));
        }
        std::vector<float> expected(n);
        std::inclusive_scan(terms.begin(), terms.end(), expected.begin());
        expect_close(y.read(), expected, 1e-3);
    }
}

// Statements without stencils keep their text; statements with them take the windows only where
// the policy says.
TEST_P(stencil_windows, only_stencil_statements_change) {
    kiln::vector<float> x(q, 64), y(q, 64), z(q, 64);
    const kiln::stencil<float> S(q, {1, -2, 1}, 1);
    const auto texts = [&](bool windows) {
        const kiln::detail::scoped_launch_policy forcing(strided(windows));
        return std::vector<std::string>{
            kiln::assignment_source(device(), y, 2 * x + kiln::sin(z)),
            kiln::assignment_source(device(), y, x * z - 1),
            kiln::assignment_source(device(), y, 1.0f * (x * S)),
            kiln::assignment_source(device(), y, 1.0f * window_coupling(x))};
    };
    const auto on = texts(true), off = texts(false);
    EXPECT_EQ(on[0], off[0]);
    EXPECT_EQ(on[1], off[1]);
    for (std::size_t i = 2; i < 4; ++i) {
        EXPECT_NE(on[i].find("kiln_wide_n"), std::string::npos) << on[i];
        EXPECT_NE(on[i].find("kiln_stencil_window_float_3_1_4"), std::string::npos) << on[i];
        EXPECT_EQ(off[i].find("kiln_wide_n"), std::string::npos) << off[i];
        EXPECT_EQ(off[i].find("kiln_stencil_window"), std::string::npos) << off[i];
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(stencil_windows);

}  // namespace
