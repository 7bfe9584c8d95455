// SPDX-License-Identifier: Apache-2.0
// The reproducible scan's tile kernels in forced shapes on every device
// (src/algo/reproducible_scan/): a GPU's tiles of 256 work-items of 8 elements, which PoCL
// otherwise never runs (its CPU takes one work-item of 4096), and tiles of 4 x 8, whose many
// tiles give the tile prefixes' work-items several each; the group scans through sub-groups
// where the device has them and through local memory. Every shape gives the golden bits and
// each prefix rounded once, ties, in place and special values included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "algo/reproducible_scan/reproducible_scan_kernels.hpp"
#include "support/device_param.hpp"
#include "support/exact_sums.hpp"
#include "support/reproducible_inputs.hpp"

namespace {

using kiln::test::are_rounded_once;
using kiln::test::digest_bits;
using kiln::test::exact_prefixes;

class reproducible_scan_tiles_test : public kiln::test::reproducible_device_test {};

/// Tiles of a GPU, and small tiles: (work-items, items).
const std::vector<std::pair<std::size_t, std::size_t>> forced_shapes{{256, 8}, {4, 8}};

std::string shape_name(const std::pair<std::size_t, std::size_t>& shape) {
    return std::to_string(shape.first) + " x " + std::to_string(shape.second);
}

/// reproducible_test.cpp's golden scans, by the names tests/support/reproducible_inputs.hpp
/// gives their bits.
std::map<std::string, std::string> golden_scans(const kiln::queue& q, bool with_double) {
    const kiln::test::golden_inputs in;
    std::map<std::string, std::string> got;
    const kiln::vector<float> wide(q, in.wide), cancelling(q, in.cancelling),
        uniform(q, in.uniform), factors(q, in.factors), scanned(q, in.wide.size()),
        scanned_cancelling(q, in.cancelling.size());
    kiln::inclusive_scan(wide, scanned);
    got["inclusive_scan(wide)"] = digest_bits(scanned.read());
    kiln::exclusive_scan(cancelling, scanned_cancelling, 0.5f);
    got["exclusive_scan(cancelling, 0.5)"] = digest_bits(scanned_cancelling.read());
    kiln::inclusive_scan(uniform * factors, scanned);
    got["inclusive_scan(uniform * factors)"] = digest_bits(scanned.read());
    if (!with_double) return got;
    const kiln::vector<double> wide_double(q, in.wide_double),
        cancelling_double(q, in.cancelling_double), scanned_double(q, in.wide_double.size()),
        scanned_cancelling_double(q, in.cancelling_double.size());
    kiln::inclusive_scan(wide_double, scanned_double);
    got["inclusive_scan(wide_double)"] = digest_bits(scanned_double.read());
    kiln::exclusive_scan(cancelling_double, scanned_cancelling_double, -0.25);
    got["exclusive_scan(cancelling_double, -0.25)"] = digest_bits(scanned_cancelling_double.read());
    return got;
}

TEST_P(reproducible_scan_tiles_test, forced_tiles_give_the_golden_bits) {
    for (const auto& shape : forced_shapes) {
        SCOPED_TRACE(shape_name(shape));
        const kiln::detail::scoped_reproducible_scan_tiles tiles(shape.first, shape.second);
        kiln::test::expect_golden(golden_scans(q, has_double()));
    }
    // The group scans through local memory where the device would shuffle within sub-groups.
    const kiln::detail::scoped_reproducible_scan_tiles tiles(256, 8);
    const kiln::detail::scoped_local_memory_group_scans local;
    kiln::test::expect_golden(golden_scans(q, has_double()));
}

TEST_P(reproducible_scan_tiles_test, forced_tiles_round_each_prefix_once) {
    // Sizes below a tile, about one, and not a multiple of the group; elements that fit the three
    // bins (as reproducible_test.cpp's scans), then a walk of steps whose prefixes land on float
    // midpoints, beside them and on zero (its ties test).
    std::vector<float> ties(5011);
    const float steps[] = {1.0f,
                           -1.0f,
                           std::ldexp(1.0f, -24),
                           -std::ldexp(1.0f, -24),
                           std::ldexp(1.0f, -60),
                           std::ldexp(3.0f, -25)};
    std::uint64_t state = 7;
    for (float& v : ties) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        v = steps[(state >> 33) % std::size(steps)];
    }
    for (const auto& shape : forced_shapes) {
        SCOPED_TRACE(shape_name(shape));
        const kiln::detail::scoped_reproducible_scan_tiles tiles(shape.first, shape.second);
        for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{33},
                                    std::size_t{2047}, std::size_t{2049}, std::size_t{20001}}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto host = kiln::test::spread_values<float>(n, -10, 20, n + 3);
            const kiln::vector<float> x(q, host), y(q, n);
            kiln::inclusive_scan(x, y);
            EXPECT_TRUE(are_rounded_once(y.read(), exact_prefixes(host, 33, false), 33));
            kiln::exclusive_scan(x, y, 0.75f);
            EXPECT_TRUE(are_rounded_once(y.read(), exact_prefixes(host, 33, true, 0.75f), 33));
            if (!has_double()) continue;
            const auto doubles = kiln::test::spread_values<double>(n, 2, 12, n + 4);
            const kiln::vector<double> xd(q, doubles), yd(q, n);
            kiln::inclusive_scan(xd, yd);
            EXPECT_TRUE(are_rounded_once(yd.read(), exact_prefixes(doubles, 50, false), 50));
        }
        kiln::vector<float> x(q, ties);
        kiln::inclusive_scan(x, x);  // in place
        EXPECT_TRUE(are_rounded_once(x.read(), exact_prefixes(ties, 60, false), 60));
    }
}

TEST_P(reproducible_scan_tiles_test, forced_tiles_carry_special_values_forward) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> host(3000, 1.0f);
    host[100] = inf;
    host[2500] = -inf;
    for (const auto& shape : forced_shapes) {
        SCOPED_TRACE(shape_name(shape));
        const kiln::detail::scoped_reproducible_scan_tiles tiles(shape.first, shape.second);
        const kiln::vector<float> x(q, host), y(q, host.size());
        kiln::inclusive_scan(x, y);
        const std::vector<float> got = y.read();
        EXPECT_EQ(got[99], 100.0f);
        EXPECT_EQ(got[100], inf);
        EXPECT_EQ(got[2499], inf);
        EXPECT_TRUE(std::isnan(got[2500]));
        EXPECT_TRUE(std::isnan(got.back()));
    }
}

TEST(reproducible_scan_tiles, shapes_outside_the_kernels_are_refused) {
    EXPECT_THROW(kiln::detail::scoped_reproducible_scan_tiles(3, 8), std::invalid_argument);
    EXPECT_THROW(kiln::detail::scoped_reproducible_scan_tiles(4, 12), std::invalid_argument);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reproducible_scan_tiles_test);

}  // namespace
