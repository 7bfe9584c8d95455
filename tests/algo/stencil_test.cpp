// SPDX-License-Identifier: Apache-2.0
// Stencils on every device against host loops: 1-D convolutions (tiled alone, per element in
// expressions), user-defined stencil operators, split vectors, and 2-D stencils over grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/kiln.hpp>
#include <kiln/stencil.hpp>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "algo/key_changes.hpp"
#include "support/device_param.hpp"

// [doc:stencil-operator]
// At namespace scope: y[i] = sin(x[i] - x[i-1]) + sin(x[i] - x[i+1]), clamped at the ends.
KILN_STENCIL_OPERATOR(coupling, float, 3, 1, sin(x[0] - x[-1]) + sin(x[0] - x[1]));
// [/doc]
// Reaches three elements ahead and none behind: an asymmetric halo.
KILN_STENCIL_OPERATOR(forward_spread, double, 4, 0, fmax(fmax(x[1], x[2]), x[3]) - x[0]);
// A comparison used as a number: 1 where the next element is larger (over vectors of lanes a
// comparison gives -1, so this body must run one element at a time).
KILN_STENCIL_OPERATOR(rises, float, 2, 0, (x[1] > x[0]) * 2.0f + x[0]);
// Unary built-ins and arithmetic alone (vectors of lanes on CPUs), with a float literal.
KILN_STENCIL_OPERATOR(smoothed, float, 5, 2, exp(-0.5f * x[-2]) + sqrt(fabs(x[2] - x[1])) / 3);

namespace {

/// sum over k of c[k] * x[clamp(i + k - center, 0, n - 1)]
template <class T>
std::vector<T> host_stencil(const std::vector<T>& x, const std::vector<T>& c, std::size_t center) {
    const auto n = static_cast<std::ptrdiff_t>(x.size());
    std::vector<T> y(x.size());
    for (std::ptrdiff_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < c.size(); ++k) {
            const std::ptrdiff_t j = std::clamp<std::ptrdiff_t>(
                i + static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(center), 0, n - 1);
            y[i] += c[k] * x[j];
        }
    return y;
}

template <class T>
std::vector<T> values(std::size_t n) {
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = static_cast<T>(std::sin(0.37 * double(i)) + 0.1 * double(i % 7));
    return x;
}

template <class T>
void expect_near_all(const std::vector<T>& actual, const std::vector<T>& expected,
                     double tolerance) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
        ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

/// The CPU shape (stencil_on_cpu.hpp) with short runs: at most 16 floats per work-item where the
/// device has compute units enough, so that runs have seams every few outputs.
kiln::detail::stencil_tuning short_runs() {
    return {.work_group_size = 1, .items_per_work_item = 1, .chunk_bytes = 64};
}

/// The 2-D strips kernel: groups `group` columns wide walking down `strip` rows, `step` rows
/// between two barriers.
kiln::detail::stencil_tuning strips(std::size_t group, std::size_t strip, std::size_t step) {
    return {.work_group_size = group, .items_per_work_item = step, .strip_rows = strip};
}

/// Runs `body` under every strategy of `a`: the device's own choice, small tiles (32 x 2
/// outputs, seams every 64 elements; 2-D: 32 x 8 outputs), short runs of one work-item each,
/// for 1-D stencils the per-element kernel of expressions, and for 2-D ones strips: short ones
/// (5 rows, batches of 2, so that strips and batches end part-way) and tall ones (64 rows, more
/// than most grids of the tests have, a row a step).
template <class Body, class Family = kiln::detail::algorithm::stencil_1d_rows>
void with_every_strategy(Body body, Family family = {}) {
    using kiln::detail::stencil_tuning;
    {
        SCOPED_TRACE("the device's kernel");
        body();
    }
    std::vector<std::pair<std::string, stencil_tuning>> forced = {{"small tiles", {32, 2}},
                                                                  {"short runs", short_runs()}};
    if constexpr (std::is_same_v<Family, kiln::detail::algorithm::stencil_1d_rows>) {
        forced.emplace_back("per element", stencil_tuning{0, 0});
    } else {
        forced[0].second = {64, 4};
        forced.emplace_back("short strips", strips(32, 5, 2));
        forced.emplace_back("tall strips", strips(64, 64, 1));
    }
    for (const auto& [name, policy] : forced) {
        const kiln::detail::scoped_algorithm_policy forcing(family, policy);
        SCOPED_TRACE(name + " forced");
        body();
    }
}

class stencils : public kiln::test::device_queue_test {};

TEST_P(stencils, clamped_convolutions_match_the_host) {
    // Sizes shorter than the stencil, a single element, and one long vector; centres at the
    // first, a middle and the last coefficient.
    const std::vector<float> five = {0.5f, -1, 2, 0.25f, -3};
    with_every_strategy([&] {
        for (const std::size_t n : {1u, 3u, 1000u}) {
            for (const std::size_t center : {0u, 2u, 4u}) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", center " + std::to_string(center));
                const auto host = values<float>(n);
                kiln::stencil<float> S(q, five, center);
                kiln::vector<float> x(q, host), y(q, n);
                y = x * S;
                expect_near_all(y.read(), host_stencil(host, five, center), 1e-5);
            }
        }
    });
}

TEST_P(stencils, are_terms_of_expressions) {
    const std::size_t n = 777;
    const auto host = values<float>(n);
    kiln::stencil<float> laplacian(q, {1, -2, 1}, 1);
    kiln::vector<float> x(q, host), y(q, n);
    y = 2 * x - 0.5f * (x * laplacian);
    auto expected = host_stencil(host, {1, -2, 1}, 1);
    double host_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        host_sum += expected[i];
        expected[i] = 2 * host[i] - 0.5f * expected[i];
    }
    expect_near_all(y.read(), expected, 1e-5);
    EXPECT_NEAR(kiln::sum(x * laplacian), host_sum, 1e-3);  // reductions read stencils too
}

TEST_P(stencils, double_coefficients) {
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    const std::vector<double> c = {1.0 / 12, -2.0 / 3, 0, 2.0 / 3, -1.0 / 12};
    const auto host = values<double>(300);
    kiln::stencil<double> S(q, c, 2);
    kiln::vector<double> x(q, host), y(q, 300);
    y = x * S;
    expect_near_all(y.read(), host_stencil(host, c, 2), 1e-13);
}

TEST_P(stencils, bad_arguments_are_rejected) {
    EXPECT_THROW(kiln::stencil<float>(q, {1, 2, 3}, 3), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::stencil<float>(q, std::vector<float>{}, 0), kiln::invalid_argument_error);
    kiln::stencil<float> S(q, {1, 2, 3}, 1);
    kiln::vector<float> x(q, 10), y(q, 11);
    x = 1;
    EXPECT_THROW(y = x * S, kiln::invalid_argument_error);
}

TEST_P(stencils, tiles_and_runs_cover_every_size_and_reach) {
    // Small tiles (32 x 2 outputs), so that sizes of a few tiles check their seams and partial
    // last tile on every device; stencils wider than a tile's share of one work-item.
    // Short runs likewise: runs of 16 outputs, shorter than the stencil's reach.
    for (const auto& [name, policy] :
         {std::pair<std::string, kiln::detail::stencil_tuning>{"small tiles", {32, 2}},
          {"short runs", short_runs()}}) {
        SCOPED_TRACE(name);
        const kiln::detail::scoped_algorithm_policy forcing(kiln::detail::algorithm::stencil_1d,
                                                            policy);
        const std::vector<float> nine = {1, -2, 3, -4, 5, -6, 7, -8, 9};
        for (const std::size_t center : {0u, 4u, 8u}) {
            kiln::stencil<float> S(q, nine, center);
            for (const std::size_t n : {1u, 2u, 63u, 64u, 65u, 200u}) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", center " + std::to_string(center));
                const auto host = values<float>(n);
                kiln::vector<float> x(q, host), y(q, n);
                y = x * S;
                expect_near_all(y.read(), host_stencil(host, nine, center), 1e-4);
            }
        }
    }
}

TEST_P(stencils, groups_above_the_devices_limit_halve) {
    // 8192 work-items is more than any kiln device allows: the group halves until the device
    // takes it, each work-item computing more outputs, so the tile stays 8192 elements.
    const kiln::detail::scoped_algorithm_policy huge_groups(kiln::detail::algorithm::stencil_1d,
                                                            kiln::detail::stencil_tuning{8192, 1});
    const std::vector<float> five = {0.5f, -1, 2, 0.25f, -3};
    kiln::stencil<float> S(q, five, 2);
    const std::size_t n = 20000;
    const auto host = values<float>(n);
    kiln::vector<float> x(q, host), y(q, n);
    y = x * S;
    expect_near_all(y.read(), host_stencil(host, five, 2), 1e-4);
}

/// The user operators' bodies, on the host, with x[k] clamped.
std::vector<float> host_coupling(const std::vector<float>& x) {
    const auto n = static_cast<std::ptrdiff_t>(x.size());
    const auto at = [&](std::ptrdiff_t j) { return x[std::clamp<std::ptrdiff_t>(j, 0, n - 1)]; };
    std::vector<float> y(x.size());
    for (std::ptrdiff_t i = 0; i < n; ++i)
        y[i] = std::sin(at(i) - at(i - 1)) + std::sin(at(i) - at(i + 1));
    return y;
}
std::vector<double> host_forward_spread(const std::vector<double>& x) {
    const auto n = static_cast<std::ptrdiff_t>(x.size());
    const auto at = [&](std::ptrdiff_t j) { return x[std::min(j, n - 1)]; };
    std::vector<double> y(x.size());
    for (std::ptrdiff_t i = 0; i < n; ++i)
        y[i] = std::max(std::max(at(i + 1), at(i + 2)), at(i + 3)) - at(i);
    return y;
}

void user_operators(const kiln::queue& q, bool has_double) {
    for (const std::size_t n : {1u, 2u, 1000u}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto host = values<float>(n);
        // [doc:stencil-operator-use]
        kiln::vector<float> x(q, host), y(q, n), z(q, n);
        y = coupling(x);                 // alone: a kernel of its own
        z = 2 * x - 0.5f * coupling(x);  // in an expression: one kernel
        // [/doc]
        const auto expected = host_coupling(host);
        expect_near_all(y.read(), expected, 1e-5);
        auto combined = expected;
        for (std::size_t i = 0; i < n; ++i) combined[i] = 2 * host[i] - 0.5f * expected[i];
        expect_near_all(z.read(), combined, 1e-5);
    }
    if (!has_double) return;
    const auto host = values<double>(301);
    kiln::vector<double> x(q, host), y(q, 301);
    y = forward_spread(x);
    expect_near_all(y.read(), host_forward_spread(host), 1e-13);
    y = 1.0 * forward_spread(x);
    expect_near_all(y.read(), host_forward_spread(host), 1e-13);
}

TEST_P(stencils, user_operators_alone_and_in_expressions) {
    with_every_strategy([&] { user_operators(q, has_double()); });
}

// User operators over vectors on CPUs: outputs whose vector of lanes also holds an inf or a NaN
// still match the host's (maths functions over vectors see the other lanes' values).
TEST_P(stencils, user_operators_next_to_inf_and_nan) {
    with_every_strategy([&] {
        std::vector<float> host = values<float>(1000);
        // Differences far from 0, as a vector's argument reduction takes another path there.
        for (std::size_t i = 0; i < host.size(); i += 3) host[i] *= 1000;
        host[37] = std::numeric_limits<float>::quiet_NaN();
        host[70] = std::numeric_limits<float>::infinity();
        host[999] = -std::numeric_limits<float>::infinity();
        kiln::vector<float> x(q, host), y(q, host.size()), z(q, host.size());
        y = coupling(x);
        z = 1.0f * coupling(x);
        const auto expected = host_coupling(host);
        for (const auto& got : {y.read(), z.read()}) {
            for (std::size_t i = 0; i < host.size(); ++i) {
                if (std::isnan(expected[i]))
                    EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
                else
                    EXPECT_NEAR(got[i], expected[i], 1e-5) << "at " << i;
            }
        }
    });
}

TEST_P(stencils, user_operators_with_comparisons_and_unary_functions) {
    with_every_strategy([&] {
        for (const std::size_t n : {1u, 15u, 16u, 17u, 1000u}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto host = values<float>(n);
            const auto m = static_cast<std::ptrdiff_t>(n);
            const auto at = [&](std::ptrdiff_t j) {
                return host[std::clamp<std::ptrdiff_t>(j, 0, m - 1)];
            };
            std::vector<float> expected_rises(n), expected_smoothed(n);
            for (std::ptrdiff_t i = 0; i < m; ++i) {
                expected_rises[i] = float(at(i + 1) > at(i)) * 2.0f + at(i);
                expected_smoothed[i] =
                    std::exp(-0.5f * at(i - 2)) + std::sqrt(std::fabs(at(i + 2) - at(i + 1))) / 3;
            }
            kiln::vector<float> x(q, host), y(q, n), z(q, n);
            y = rises(x);
            z = smoothed(x);
            expect_near_all(y.read(), expected_rises, 1e-6);
            expect_near_all(z.read(), expected_smoothed, 1e-5);
        }
    });
}

TEST_P(stencils, empty_vectors_and_aliasing) {
    kiln::stencil<float> S(q, {1, 2, 1}, 1);
    kiln::vector<float> x(q, 0), y(q, 0);
    EXPECT_NO_THROW(y = x * S);
    EXPECT_NO_THROW(y = coupling(x));
    kiln::vector<float> z(q, 10);
    z = 1;
    // Tiles are written while others still read: in place would read new values.
    EXPECT_THROW(z = z * S, kiln::invalid_argument_error);
    EXPECT_THROW(z = coupling(z), kiln::invalid_argument_error);
}

// x = x * S was refused, x = 2 * x + x * S was not (99,998 of 100,000 elements wrong): in any
// statement, a target read at its neighbours may be read after other work-items wrote them.
TEST_P(stencils, a_target_read_through_a_stencil_is_refused_in_any_statement) {
    kiln::stencil<float> S(q, {1, 2, 1}, 1);
    const std::size_t n = 100000;
    kiln::vector<float> x(q, n), y(q, n);
    x = 1;
    y = 1;
    try {
        x = 2 * x + x * S;
        FAIL() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("other positions"), std::string::npos) << e.what();
    }
    EXPECT_THROW(x = y + coupling(x), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::tie(y, x) = std::make_tuple(x, y * S + x * S), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::inclusive_scan(x * S, x), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::inclusive_scan(kiln::reverse(x), x), kiln::invalid_argument_error);
    EXPECT_EQ(x.read(), std::vector<float>(n, 1));  // refused before anything was written
    // Reading the target element by element, and stencils of other vectors, are fine.
    x = 2 * x + y * S;
    EXPECT_EQ(x.read(), std::vector<float>(n, 6));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(stencils);

// Vectors split over two devices (CTest runs this with POCL_DEVICES="pthread pthread"): each
// part fetches the few elements it reaches from its neighbour, and the result is the one a
// single device gives (bit for bit on two devices of one kind).
class stencil_split : public kiln::test::two_devices_test {};

TEST_F(stencil_split, results_match_one_device_exactly) {
    const std::vector<float> nine = {1, -2, 3, -4, 5, -6, 7, -8, 9};
    // Two devices of one kind (PoCL's two) compute bit for bit alike; a CPU and a GPU differ in
    // the last bits of sin and of contracted multiply-adds.
    const bool same_kind = queues[0].device().name() == queues[1].device().name() &&
                           queues[0].device().backend() == queues[1].device().backend();
    // Parts shorter than the reach (n = 3, 5) take their halo from beyond the neighbour's
    // part, clamped at the vector's ends.
    with_every_strategy([&] {
        for (const std::size_t n : {3u, 5u, 1001u}) {
            for (const std::size_t center : {0u, 3u, 8u}) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", center " + std::to_string(center));
                const auto host = values<float>(n);
                // [doc:stencil-split]
                kiln::stencil<float> S(queues[0], nine, center);
                kiln::vector<float> x(queues, host), y(queues, n), z(queues, n), w(queues, n);
                y = x * S;            // each part reads its neighbours' edge elements
                z = 2 * x - (x * S);  // in an expression, too
                w = coupling(x);
                // [/doc]
                ASSERT_EQ(x.part_count(), 2u);
                kiln::vector<float> x1(queues[0], host), y1(queues[0], n), z1(queues[0], n),
                    w1(queues[0], n);
                y1 = x1 * S;
                z1 = 2 * x1 - (x1 * S);
                w1 = coupling(x1);
                if (same_kind) {
                    EXPECT_EQ(y.read(), y1.read());
                    EXPECT_EQ(z.read(), z1.read());
                    EXPECT_EQ(w.read(), w1.read());
                } else {
                    expect_near_all(z.read(), z1.read(), 1e-4);
                    expect_near_all(w.read(), w1.read(), 1e-5);
                }
                expect_near_all(y.read(), host_stencil(host, nine, center), 1e-4);
            }
        }
    });
}

TEST_F(stencil_split, targets_split_otherwise_are_rejected) {
    kiln::stencil<float> S(queues[0], {1, 2, 1}, 1);
    kiln::vector<float> x(queues, 100), single(queues[0], 100);
    x = 1;
    EXPECT_THROW(single = x * S, kiln::invalid_argument_error);
}

// --- 2-D stencils -------------------------------------------------------------------------------

/// sum over (a, b) of c[a][b] * x(clamp(r + a - cr), clamp(col + b - cc)).
template <class T>
std::vector<T> host_stencil_2d(const std::vector<T>& x, std::size_t rows, std::size_t columns,
                               const std::vector<T>& c, std::array<std::size_t, 2> extents,
                               std::array<std::size_t, 2> center) {
    std::vector<T> y(x.size());
    const auto clamp = [](std::ptrdiff_t v, std::size_t size) {
        return static_cast<std::size_t>(
            std::clamp<std::ptrdiff_t>(v, 0, static_cast<std::ptrdiff_t>(size) - 1));
    };
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t col = 0; col < columns; ++col) {
            T sum = 0;
            for (std::size_t a = 0; a < extents[0]; ++a)
                for (std::size_t b = 0; b < extents[1]; ++b) {
                    const std::size_t rr =
                        clamp(std::ptrdiff_t(r + a) - std::ptrdiff_t(center[0]), rows);
                    const std::size_t cc =
                        clamp(std::ptrdiff_t(col + b) - std::ptrdiff_t(center[1]), columns);
                    sum += c[a * extents[1] + b] * x[rr * columns + cc];
                }
            y[r * columns + col] = sum;
        }
    return y;
}

class stencils_2d : public kiln::test::device_queue_test {};

TEST_P(stencils_2d, laplacians_and_user_coefficients_match_the_host) {
    // Grids smaller than, not a multiple of, and several times the tile; single rows and
    // columns; one element; and empty grids.
    const std::vector<std::array<std::size_t, 2>> grids = {{37, 45}, {70, 33}, {1, 100}, {100, 1},
                                                           {1, 1},   {0, 7},   {0, 0}};
    const std::vector<float> five = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    const std::vector<float> nine = {1.f / 6, 4.f / 6, 1.f / 6, 4.f / 6, -20.f / 6,
                                     4.f / 6, 1.f / 6, 4.f / 6, 1.f / 6};
    // 2 x 4, centred on its last row's first column: reaches up and right only.
    const std::vector<float> user = {0.5f, -1, 2, 0.25f, 3, -0.75f, 1, -2};
    with_every_strategy(
        [&] {
            for (const auto& [rows, columns] : grids) {
                SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(columns));
                const auto host = values<float>(rows * columns);
                // [doc:stencil-2d]
                kiln::slicer<2> grid({rows, columns});
                const auto L5 = kiln::stencil_2d<float>::laplacian_5(q, grid);
                const auto L9 = kiln::stencil_2d<float>::laplacian_9(q, grid);
                // 2 x 4 coefficients, row-major; the centre is row 1, column 0.
                const kiln::stencil_2d<float> U(q, grid, user, {2, 4}, {1, 0});
                kiln::vector<float> x(q, host), y5(q, rows * columns), y9(q, rows * columns),
                    yu(q, rows * columns);
                y5 = x * L5;
                y9 = x * L9;
                yu = x * U;
                // [/doc]
                expect_near_all(y5.read(),
                                host_stencil_2d(host, rows, columns, five, {3, 3}, {1, 1}), 1e-5);
                expect_near_all(y9.read(),
                                host_stencil_2d(host, rows, columns, nine, {3, 3}, {1, 1}), 1e-5);
                expect_near_all(yu.read(),
                                host_stencil_2d(host, rows, columns, user, {2, 4}, {1, 0}), 1e-5);
            }
        },
        kiln::detail::algorithm::stencil_2d);
}

// 5 x 5 and 3 x 5 stencils (centred and reaching one way), on CPU devices in blocks of rows and
// vectors of 8 columns: grids of one row or column, widths not a multiple of 8 and narrower than
// the stencil, runs that start inside rows, and inf and NaN among the values.
TEST_P(stencils_2d, wide_stencils_match_the_host_next_to_inf_and_nan) {
    const std::vector<std::array<std::size_t, 2>> grids = {{75, 83}, {9, 19}, {6, 4}, {2, 40},
                                                           {1, 40},  {40, 1}, {13, 8}};
    std::vector<float> wide(25);
    for (std::size_t k = 0; k < wide.size(); ++k) wide[k] = 0.25f * float(k % 7) - 0.5f;
    const std::vector<float> reaching(wide.begin(), wide.begin() + 15);
    const auto same = [](const std::vector<float>& actual, const std::vector<float>& expected) {
        ASSERT_EQ(actual.size(), expected.size());
        for (std::size_t i = 0; i < actual.size(); ++i) {
            if (std::isnan(expected[i]))
                ASSERT_TRUE(std::isnan(actual[i])) << "element " << i << ": " << actual[i];
            else if (std::isinf(expected[i]))
                ASSERT_EQ(actual[i], expected[i]) << "element " << i;
            else
                ASSERT_NEAR(actual[i], expected[i], 1e-5 * (1 + std::abs(expected[i])))
                    << "element " << i;
        }
    };
    const auto check = [&] {
        for (const auto& [rows, columns] : grids) {
            SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(columns));
            auto host = values<float>(rows * columns);
            if (host.size() > 30) {
                host[3] = std::numeric_limits<float>::quiet_NaN();
                host[host.size() - 20] = std::numeric_limits<float>::infinity();
            }
            kiln::slicer<2> grid({rows, columns});
            const kiln::stencil_2d<float> W(q, grid, wide, {5, 5}, {2, 2});
            const kiln::stencil_2d<float> R(q, grid, reaching, {3, 5}, {0, 4});
            kiln::vector<float> x(q, host), yw(q, rows * columns), yr(q, rows * columns);
            yw = x * W;
            yr = x * R;
            same(yw.read(), host_stencil_2d(host, rows, columns, wide, {5, 5}, {2, 2}));
            same(yr.read(), host_stencil_2d(host, rows, columns, reaching, {3, 5}, {0, 4}));
        }
    };
    with_every_strategy(check, kiln::detail::algorithm::stencil_2d);
    // Runs of 4 KiB: the 75 x 83 grid's runs start and end inside rows, between blocks.
    const kiln::detail::scoped_algorithm_policy runs(
        kiln::detail::algorithm::stencil_2d,
        kiln::detail::stencil_tuning{
            .work_group_size = 1, .items_per_work_item = 1, .chunk_bytes = 4096});
    SCOPED_TRACE("runs of 4 KiB forced");
    check();
}

TEST_P(stencils_2d, double_precision) {
    if (!has_double()) GTEST_SKIP() << "no double precision on this device";
    const std::size_t rows = 50, columns = 61;
    const auto host = values<double>(rows * columns);
    kiln::slicer<2> grid({rows, columns});
    const kiln::stencil_2d<double> S(q, grid, {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
    kiln::vector<double> x(q, host), y(q, rows * columns);
    with_every_strategy(
        [&] {
            y = x * S;
            expect_near_all(y.read(),
                            host_stencil_2d<double>(host, rows, columns,
                                                    {1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, {1, 1}),
                            1e-12);
        },
        kiln::detail::algorithm::stencil_2d);
}

// Every coefficient shape against grids of one row, one column, fewer rows than a strip and
// columns that are no multiple of a group, under strips of several heights and widths: a halo
// wider than the group (1 x 40 over 32 columns), centres at corners, no halo at all (1 x 1).
TEST_P(stencils_2d, strips_cover_every_shape_and_edge) {
    struct shape {
        std::array<std::size_t, 2> extents, center;
    };
    const std::vector<shape> shapes = {{{1, 1}, {0, 0}}, {{3, 1}, {1, 0}}, {{1, 3}, {0, 2}},
                                       {{3, 3}, {1, 1}}, {{2, 4}, {1, 0}}, {{5, 5}, {0, 4}},
                                       {{4, 2}, {3, 1}}, {{1, 40}, {0, 7}}};
    const std::vector<std::array<std::size_t, 2>> grids = {{1, 1},  {1, 70},  {70, 1},
                                                           {3, 33}, {37, 45}, {130, 65}};
    for (const auto& [name, policy] : {std::pair<std::string, kiln::detail::stencil_tuning>{
                                           "32 x 5, 2 a step", strips(32, 5, 2)},
                                       {"32 x 1, 1 a step", strips(32, 1, 1)},
                                       {"64 x 16, 4 a step", strips(64, 16, 4)},
                                       {"32 x 7, 3 a step", strips(32, 7, 3)}}) {
        SCOPED_TRACE(name);
        const kiln::detail::scoped_algorithm_policy forcing(kiln::detail::algorithm::stencil_2d,
                                                            policy);
        for (const auto& [extents, center] : shapes) {
            std::vector<float> c(extents[0] * extents[1]);
            for (std::size_t k = 0; k < c.size(); ++k) c[k] = float(k % 7) - 2.5f;
            for (const auto& [rows, columns] : grids) {
                SCOPED_TRACE(std::to_string(extents[0]) + " x " + std::to_string(extents[1]) +
                             " over " + std::to_string(rows) + " x " + std::to_string(columns));
                const auto host = values<float>(rows * columns);
                kiln::slicer<2> grid({rows, columns});
                const kiln::stencil_2d<float> S(q, grid, c, extents, center);
                kiln::vector<float> x(q, host), y(q, rows * columns);
                y = x * S;
                expect_near_all(y.read(), host_stencil_2d(host, rows, columns, c, extents, center),
                                1e-4);
            }
        }
    }
}

// An inf or a NaN reaches exactly the outputs whose window holds it (inf - inf and 0 * inf
// giving NaN, as on the host), under every strategy.
TEST_P(stencils_2d, inf_and_nan_reach_the_outputs_whose_window_holds_them) {
    const std::size_t rows = 40, columns = 37;
    std::vector<float> host = values<float>(rows * columns);
    host[5 * columns + 9] = std::numeric_limits<float>::quiet_NaN();
    host[20 * columns + 0] = std::numeric_limits<float>::infinity();
    host[39 * columns + 36] = -std::numeric_limits<float>::infinity();
    kiln::slicer<2> grid({rows, columns});
    const std::vector<float> five = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    const auto L5 = kiln::stencil_2d<float>::laplacian_5(q, grid);
    kiln::vector<float> x(q, host), y(q, rows * columns);
    const auto expected = host_stencil_2d(host, rows, columns, five, {3, 3}, {1, 1});
    with_every_strategy(
        [&] {
            y = x * L5;
            const auto got = y.read();
            for (std::size_t i = 0; i < got.size(); ++i) {
                if (std::isnan(expected[i]))
                    ASSERT_TRUE(std::isnan(got[i])) << "at " << i;
                else if (std::isinf(expected[i]))
                    ASSERT_EQ(got[i], expected[i]) << "at " << i;
                else
                    ASSERT_NEAR(got[i], expected[i], 1e-4) << "at " << i;
            }
        },
        kiln::detail::algorithm::stencil_2d);
}

TEST_P(stencils_2d, strip_groups_above_the_devices_limit_halve) {
    // 8192 work-items is more than any kiln device allows: the group's columns halve until the
    // device takes them.
    const kiln::detail::scoped_algorithm_policy huge_groups(kiln::detail::algorithm::stencil_2d,
                                                            strips(8192, 8, 2));
    const std::size_t rows = 20, columns = 9000;
    const auto host = values<float>(rows * columns);
    kiln::slicer<2> grid({rows, columns});
    const auto L9 = kiln::stencil_2d<float>::laplacian_9(q, grid);
    const std::vector<float> nine = {1.f / 6, 4.f / 6, 1.f / 6, 4.f / 6, -20.f / 6,
                                     4.f / 6, 1.f / 6, 4.f / 6, 1.f / 6};
    kiln::vector<float> x(q, host), y(q, rows * columns);
    y = x * L9;
    expect_near_all(y.read(), host_stencil_2d(host, rows, columns, nine, {3, 3}, {1, 1}), 1e-4);
}

TEST_P(stencils_2d, bad_arguments_are_rejected) {
    kiln::slicer<2> grid({4, 5});
    using S2 = kiln::stencil_2d<float>;
    EXPECT_THROW(S2(q, grid, std::vector<float>(5), {2, 3}, {0, 0}), kiln::invalid_argument_error);
    EXPECT_THROW(S2(q, grid, std::vector<float>(6), {2, 3}, {2, 0}), kiln::invalid_argument_error);
    EXPECT_THROW(S2(q, grid, {{1, 2}, {3}}), kiln::invalid_argument_error);
    const auto L = S2::laplacian_5(q, grid);
    kiln::vector<float> x(q, 20), wrong(q, 21), y(q, 20);
    x = 1;
    EXPECT_THROW(wrong = x * L, kiln::invalid_argument_error);
    EXPECT_THROW(x = x * L, kiln::invalid_argument_error);
    EXPECT_NO_THROW(y = x * L);
}

// The grid's element count wrapped: 2^62 + 1 rows of 4 made 4 elements, and y = x * L read far
// outside x; 2^33 x 2^33 made 0 and was taken for an empty grid.
TEST_P(stencils_2d, grids_whose_element_count_overflows_are_rejected) {
    using S2 = kiln::stencil_2d<float>;
    const std::size_t tall = (std::size_t{1} << 62) + 1, side = std::size_t{1} << 33;
    try {
        S2::laplacian_5(q, kiln::slicer<2>({tall, 4}));
        FAIL() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(std::to_string(tall)), std::string::npos) << e.what();
    }
    EXPECT_THROW(S2::laplacian_5(q, kiln::slicer<2>({side, side})), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::slicer<3>({side, 2, side}), kiln::invalid_argument_error);
    // A zero extent makes an empty grid however large the others are.
    EXPECT_NO_THROW(kiln::slicer<3>({side, 0, side}));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(stencils_2d);

// Every field of a tiled stencil's shape, its tuning's among them, changes its generated kernel,
// so each must change the program cache's key.
TEST(stencil_shape, keys_change_with_every_field) {
    using kiln::detail::tiled_1d_shape;
    using kiln::detail::tiled_2d_shape;
    // A new field fails here first: add it to key() and to the changes below.
    static_assert(sizeof(kiln::detail::stencil_tuning) == 32);
    static_assert(sizeof(tiled_1d_shape) == 2 * sizeof(std::string) + 48);
    static_assert(sizeof(tiled_2d_shape) == sizeof(std::string) + 64);
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(tiled_1d_shape&)>>{
            [](tiled_1d_shape& s) { s.type = "double"; },
            [](tiled_1d_shape& s) { s.width = 3; },
            [](tiled_1d_shape& s) { s.center = 1; },
            [](tiled_1d_shape& s) { s.body = "x[-1] + x[1]"; },
            [](tiled_1d_shape& s) { s.tuning.work_group_size = 128; },
            [](tiled_1d_shape& s) { s.tuning.items_per_work_item = 8; },
            [](tiled_1d_shape& s) { s.tuning.chunk_bytes = 16384; },
            [](tiled_1d_shape& s) { s.tuning.strip_rows = 64; },
        });
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(tiled_2d_shape&)>>{
            [](tiled_2d_shape& s) { s.type = "double"; },
            [](tiled_2d_shape& s) { s.kernel_rows = 3; },
            [](tiled_2d_shape& s) { s.kernel_columns = 3; },
            [](tiled_2d_shape& s) { s.center_row = 1; },
            [](tiled_2d_shape& s) { s.center_column = 1; },
            [](tiled_2d_shape& s) { s.tuning.work_group_size = 128; },
            [](tiled_2d_shape& s) { s.tuning.items_per_work_item = 8; },
            [](tiled_2d_shape& s) { s.tuning.chunk_bytes = 16384; },
            [](tiled_2d_shape& s) { s.tuning.strip_rows = 64; },
        });
}

}  // namespace
