// SPDX-License-Identifier: Apache-2.0
// inclusive_scan and exclusive_scan on every device, through both strategies (tiles, chunks) and
// each through both dispatch paths, against std::inclusive_scan / std::exclusive_scan. CTest also
// runs it with PoCL limited to one thread and with PoCL shown as two devices (split vectors).
#include <gtest/gtest.h>

#include <cmath>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "expr/test_data.hpp"
#include "support/device_param.hpp"

namespace {

namespace algorithm = kiln::detail::algorithm;
using kiln::test::random_values;

// [doc:affine-operation]
// Affine maps x -> a * x + b modulo 2^32, packed as a << 32 | b, applied left to right:
// associative and not commutative, so any reordering of operands shows in the result.
KILN_FUNCTION(ulong, affine_then, (ulong f, ulong g), {
    const uint a = (uint)(f >> 32) * (uint)(g >> 32);
    const uint b = (uint)(g >> 32) * (uint)f + (uint)g;
    return ((ulong)a << 32) | b;
});
// [/doc]
std::uint64_t host_affine_then(std::uint64_t f, std::uint64_t g) {
    const auto a = std::uint32_t(f >> 32) * std::uint32_t(g >> 32);
    const auto b = std::uint32_t(g >> 32) * std::uint32_t(f) + std::uint32_t(g);
    return std::uint64_t(a) << 32 | b;
}

/// The tiles' inclusive prefixes from their aggregates, combined in the order of the single
/// pass's look-back (single_pass_lookback.cpp): windows of readers * lookback_depth tiles. Within
/// a window, tile t's earlier tiles combine as T(t): each reader folds its lookback_depth tiles
/// oldest first, the readers' values combined by a shuffle tree (sub-groups) or in order (local
/// memory). A window's aggregate is T(last) + A(last), its prefix P the prefix of the window
/// before plus its aggregate; tile t's prefix is P(window before) + T(t).
template <class T>
std::vector<T> ordered_tile_inclusives(const std::vector<T>& aggregates,
                                       const kiln::detail::scan_policy& policy) {
    const bool sub_group = policy.sub_group_size > 0 && policy.sub_group_size <= 32;
    const std::size_t readers =
        sub_group ? policy.sub_group_size : std::min<std::size_t>(32, policy.work_group_size);
    const std::size_t depth = std::max<std::size_t>(1, policy.lookback_depth);
    const std::size_t window = readers * depth;
    const auto before_in_window = [&](std::size_t t) {
        const std::size_t start = t - t % window;
        std::vector<std::optional<T>> lane(readers);
        for (std::size_t r = 0; r < readers; ++r)
            for (std::size_t m = 0; m < depth; ++m)
                if (const std::size_t k = start + r * depth + m; k < t)
                    lane[r] = lane[r] ? *lane[r] + aggregates[k] : aggregates[k];
        if (sub_group)
            for (std::size_t d = 1; d < readers; d *= 2)
                for (std::size_t r = 0; r + d < readers; r += 2 * d)
                    if (lane[r + d]) lane[r] = *lane[r] + *lane[r + d];
        std::optional<T> combined;
        for (std::size_t r = 0; r < (sub_group ? 1 : readers); ++r)
            if (lane[r]) combined = combined ? *combined + *lane[r] : *lane[r];
        return combined;
    };
    std::vector<T> window_prefixes;
    for (std::size_t last = window - 1; last < aggregates.size(); last += window) {
        const auto within = before_in_window(last);
        const T window_aggregate = within ? *within + aggregates[last] : aggregates[last];
        window_prefixes.push_back(
            window_prefixes.empty() ? window_aggregate : window_prefixes.back() + window_aggregate);
    }
    std::vector<T> inclusive(aggregates.size());
    for (std::size_t t = 0; t < aggregates.size(); ++t) {
        std::optional<T> prefix;
        if (t >= window) prefix = window_prefixes[t / window - 1];
        if (const auto within = before_in_window(t)) prefix = prefix ? *prefix + *within : *within;
        inclusive[t] = prefix ? *prefix + aggregates[t] : aggregates[t];
    }
    return inclusive;
}

/// One value of varied sign and magnitude at the start of each block of `block` elements, zeros
/// elsewhere: a block's own sum is exact whatever its order, the sums across blocks are not.
template <class T>
std::vector<T> one_value_per_block(std::size_t blocks, std::size_t block, unsigned seed) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<T> mantissa(1, 2);
    std::uniform_int_distribution<int> exponent(-12, 12);
    std::vector<T> host(blocks * block, T(0));
    for (std::size_t i = 0; i < blocks; ++i)
        host[i * block] = std::ldexp(mantissa(engine), exponent(engine)) * (i % 3 == 1 ? -1 : 1);
    return host;
}

class scan_test : public kiln::test::device_queue_test {
  protected:
    /// Sizes around one tile (or chunk) of T on this device, and one large size.
    template <class T>
    std::vector<std::size_t> sizes(bool large = true) const {
        const auto policy = kiln::detail::plan_scan(device(), sizeof(T));
        const std::size_t tile = policy.chunk_bytes
                                     ? kiln::detail::chunk_elements(policy, sizeof(T))
                                     : policy.tile_size();
        std::vector<std::size_t> result = {0, 1, 2, tile - 1, tile, tile + 1, 3 * tile + 5};
        if (large) result.push_back(1000007);
        return result;
    }
    /// Runs `body` through both strategies on this device (tiles, chunks), each through every
    /// dispatch path.
    template <class Body>
    void on_both_paths(Body&& body) {
        kiln::test::on_every_scan_strategy(device(), body);
    }
};

TEST_P(scan_test, inclusive_sum_of_int32_matches_std) {
    on_both_paths([&] {
        for (const std::size_t n : sizes<std::int32_t>()) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto host = random_values<std::int32_t>(n, -1000, 1000, unsigned(n));
            kiln::vector<std::int32_t> x(q, host), y(q, n);
            kiln::inclusive_scan(x, y);
            std::vector<std::int32_t> expected(n);
            std::inclusive_scan(host.begin(), host.end(), expected.begin());
            ASSERT_EQ(y.read(), expected);
        }
    });
}

TEST_P(scan_test, exclusive_sum_of_uint64_with_high_bits_wraps_like_std) {
    on_both_paths([&] {
        for (const std::size_t n : sizes<std::uint64_t>(false)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            std::vector<std::uint64_t> host(n);
            for (std::size_t i = 0; i < n; ++i) host[i] = (std::uint64_t{0xfedc} << 48) + i * 977;
            kiln::vector<std::uint64_t> x(q, host), y(q, n);
            const std::uint64_t init = std::uint64_t{1} << 63;
            kiln::exclusive_scan(x, y, init);
            std::vector<std::uint64_t> expected(n);
            std::exclusive_scan(host.begin(), host.end(), expected.begin(), init);
            ASSERT_EQ(y.read(), expected);
        }
    });
}

// The other two integer types on the device's own path: each strategy's kernels differ by the
// element's width, which int32 and uint64 take through every strategy and dispatch path above.
TEST_P(scan_test, int64_and_uint32_scans) {
    const std::size_t n = sizes<std::int64_t>(false)[5] + 3;
    const auto host = random_values<std::int64_t>(n, -1e12, 1e12, 3);
    kiln::vector<std::int64_t> x(q, host), y(q, n);
    kiln::inclusive_scan(x, y);
    std::vector<std::int64_t> expected(n);
    std::inclusive_scan(host.begin(), host.end(), expected.begin());
    EXPECT_EQ(y.read(), expected);

    const auto hu = random_values<std::uint32_t>(n, 0, 4e9, 4);
    kiln::vector<std::uint32_t> u(q, hu), v(q, n);
    kiln::exclusive_scan(u, v, 7u);
    std::vector<std::uint32_t> expected_u(n);
    std::exclusive_scan(hu.begin(), hu.end(), expected_u.begin(), 7u);
    EXPECT_EQ(v.read(), expected_u);
}

TEST_P(scan_test, float_sums_carry_infinities_and_nan_like_std) {
    on_both_paths([&] {
        const std::size_t n = sizes<float>(false)[6];
        // Small integers: every partial sum is exact, so the order of additions does not matter.
        auto host = random_values<float>(n, -50, 50);
        for (auto& v : host) v = std::round(v);
        host[n / 4] = std::numeric_limits<float>::infinity();
        const std::size_t minus_inf = n / 2, nan = 3 * n / 4;
        kiln::vector<float> x(q, host), y(q, n);
        kiln::inclusive_scan(x, y);
        auto got = y.read();
        std::vector<float> expected(n);
        std::inclusive_scan(host.begin(), host.end(), expected.begin());
        EXPECT_EQ(got, expected);

        host[minus_inf] = -std::numeric_limits<float>::infinity();
        host[nan] = std::numeric_limits<float>::quiet_NaN();
        x.write(host);
        kiln::inclusive_scan(x, y);
        got = y.read();
        std::inclusive_scan(host.begin(), host.end(), expected.begin());
        for (std::size_t i = 0; i < n; ++i) {
            if (std::isnan(expected[i]))
                ASSERT_TRUE(std::isnan(got[i])) << i;
            else
                ASSERT_EQ(got[i], expected[i]) << i;
        }
        EXPECT_TRUE(std::isnan(got[minus_inf])) << "+inf + -inf";
    });
}

TEST_P(scan_test, running_min_and_max_of_doubles_ignore_nan) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    on_both_paths([&] {
        const std::size_t n = sizes<double>(false)[6];
        auto host = random_values<double>(n, -1e6, 1e6, 9);
        host[0] = std::numeric_limits<double>::quiet_NaN();
        host[n / 3] = -std::numeric_limits<double>::infinity();
        kiln::vector<double> x(q, host), low(q, n), high(q, n);
        kiln::inclusive_scan(x, low, kiln::reducers::minimum{});
        kiln::inclusive_scan(x, high, kiln::reducers::maximum{});
        std::vector<double> expected_low(n), expected_high(n);
        std::inclusive_scan(host.begin(), host.end(), expected_low.begin(),
                            [](double a, double b) { return std::fmin(a, b); });
        std::inclusive_scan(host.begin(), host.end(), expected_high.begin(),
                            [](double a, double b) { return std::fmax(a, b); });
        const auto got_low = low.read(), got_high = high.read();
        EXPECT_TRUE(std::isnan(got_low[0]));
        for (std::size_t i = 1; i < n; ++i) {
            ASSERT_EQ(got_low[i], expected_low[i]) << i;
            ASSERT_EQ(got_high[i], expected_high[i]) << i;
        }
    });
}

TEST_P(scan_test, non_commutative_operation_keeps_the_order) {
    on_both_paths([&] {
        for (const std::size_t n : sizes<std::uint64_t>()) {
            SCOPED_TRACE("n = " + std::to_string(n));
            std::vector<std::uint64_t> host(n);
            std::mt19937_64 engine(n);
            for (auto& v : host) v = engine() | (std::uint64_t{1} << 32);
            kiln::vector<std::uint64_t> x(q, host), y(q, n);
            kiln::inclusive_scan(x, y, affine_then);
            std::vector<std::uint64_t> expected(n);
            std::inclusive_scan(host.begin(), host.end(), expected.begin(), host_affine_then);
            ASSERT_EQ(y.read(), expected);

            const std::uint64_t identity = std::uint64_t{1} << 32;  // x -> 1 * x + 0
            kiln::exclusive_scan(x, y, identity, affine_then);
            std::exclusive_scan(host.begin(), host.end(), expected.begin(), identity,
                                host_affine_then);
            ASSERT_EQ(y.read(), expected);
        }
    });
}

TEST_P(scan_test, in_place_and_expression_input) {
    on_both_paths([&] {
        const std::size_t n = sizes<std::int32_t>(false)[5] * 2 + 1;
        const auto host = random_values<std::int32_t>(n, -100, 100, 21);
        kiln::vector<std::int32_t> x(q, host), y(q, n);
        std::vector<std::int32_t> expected(n);

        kiln::inclusive_scan(2 * x + 1, y);
        std::transform_inclusive_scan(host.begin(), host.end(), expected.begin(), std::plus<>(),
                                      [](std::int32_t v) { return 2 * v + 1; });
        EXPECT_EQ(y.read(), expected);

        kiln::exclusive_scan(x, x, 5);
        std::exclusive_scan(host.begin(), host.end(), expected.begin(), 5);
        EXPECT_EQ(x.read(), expected);
        kiln::inclusive_scan(x, x, kiln::reducers::maximum{});
        std::inclusive_scan(expected.begin(), expected.end(), expected.begin(),
                            [](std::int32_t a, std::int32_t b) { return std::max(a, b); });
        EXPECT_EQ(x.read(), expected);
    });
}

// An input that reads the output, scanned in place: a CPU chunk stages such an input's values in
// the output before scanning whole vectors of them, and must read the elements after the last
// whole vector from there too, not evaluate the input again over values it has overwritten.
TEST_P(scan_test, in_place_from_an_expression_of_the_output) {
    on_both_paths([&] {
        for (const std::size_t n :
             {std::size_t{100}, std::size_t{9470}, sizes<std::int64_t>(false)[5] + 6}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto host = random_values<std::int64_t>(n, -1000000, 1000000, 8);
            kiln::vector<std::int64_t> x(q, host);
            std::vector<std::int64_t> expected(n);
            kiln::exclusive_scan(x + 1, x, std::int64_t{-3});
            std::transform_exclusive_scan(host.begin(), host.end(), expected.begin(),
                                          std::int64_t{-3}, std::plus<>(),
                                          [](std::int64_t v) { return v + 1; });
            EXPECT_EQ(x.read(), expected);
            kiln::inclusive_scan(2 * x, x);
            std::transform_inclusive_scan(expected.begin(), expected.end(), expected.begin(),
                                          std::plus<>(), [](std::int64_t v) { return 2 * v; });
            EXPECT_EQ(x.read(), expected);
        }
    });
}

TEST_P(scan_test, unrolled_and_wide_full_tiles_match_std) {
    // Full tiles move through unrolled loops or 16-byte accesses where a device's row says so
    // (guarded loops elsewhere, as every tile of the other tests on CPUs); a part's last tile
    // always through guarded loops. Int32 loads of four elements evaluate the expression per
    // lane; int64 ones read and store two; an expression of int32 and int64 vectors cannot be
    // read in 16-byte loads of either width, so wide tiles load it through guarded loops.
    using kiln::detail::tile_access;
    for (const tile_access access : {tile_access::unrolled, tile_access::wide}) {
        SCOPED_TRACE(access == tile_access::wide ? "16-byte accesses" : "unrolled loops");
        auto policy = kiln::detail::policy_for(algorithm::scan, device());
        policy.chunk_bytes = 0;
        policy.full_tiles = access;
        // PoCL takes seconds to compile loops of 64 items unrolled; the text is the same at 8.
        if (device().is_cpu()) policy.items_per_work_item = 8;
        const kiln::detail::scoped_algorithm_policy scan_policy(algorithm::scan, policy);
        // Tiles alone: chunks have no full tiles, and the other tests take them.
        kiln::test::on_every_dispatch_path(device(), [&] {
            std::vector<std::size_t> counts = sizes<std::int32_t>(false);
            counts.push_back(4 * counts[4]);
            for (const std::size_t n : counts) {
                SCOPED_TRACE("n = " + std::to_string(n));
                const auto host = random_values<std::int32_t>(n, -1000, 1000, unsigned(n) + 3);
                kiln::vector<std::int32_t> x(q, host), y(q, n);
                std::vector<std::int32_t> expected(n);
                kiln::inclusive_scan(2 * x + 1, y);
                std::transform_inclusive_scan(host.begin(), host.end(), expected.begin(),
                                              std::plus<>(),
                                              [](std::int32_t v) { return 2 * v + 1; });
                ASSERT_EQ(y.read(), expected);

                const std::vector<std::int64_t> host64(host.begin(), host.end());
                kiln::vector<std::int64_t> z(q, host64), w(q, n);
                kiln::exclusive_scan(z, w, std::int64_t{1} << 40);
                std::vector<std::int64_t> expected64(n);
                std::exclusive_scan(host64.begin(), host64.end(), expected64.begin(),
                                    std::int64_t{1} << 40);
                ASSERT_EQ(w.read(), expected64);
                kiln::inclusive_scan(z + x, w);
                std::transform_inclusive_scan(host64.begin(), host64.end(), expected64.begin(),
                                              std::plus<>(), [](std::int64_t v) { return 2 * v; });
                ASSERT_EQ(w.read(), expected64);
            }
        });
    }
}

TEST_P(scan_test, float_sums_combine_tiles_and_chunks_in_a_fixed_order) {
    // The bits of a float scan must not depend on which earlier tiles had published their states
    // when a tile looked back (a fold from the nearest inclusive prefix gave different bits on
    // every call on GPUs). With one value per tile, each tile's element gets exactly the
    // combination of the tiles before it in the look-back's order. Chunks wait for the prefix of
    // the chunk before: left to right.
    namespace detail = kiln::detail;
    const auto check = [&]<class T>(T) {
        for (const bool local_memory : {false, true}) {
            SCOPED_TRACE(local_memory ? "local-memory look-back" : "row's look-back");
            auto policy = kiln::test::strategy_policy(algorithm::scan, device(), false);
            policy.lookback_depth = 2;
            const detail::scoped_algorithm_policy tiles(algorithm::scan, policy);
            const detail::scoped_forward_progress single_pass(true);
            std::optional<detail::scoped_local_memory_group_scans> local;
            if (local_memory) local.emplace();
            const auto planned = detail::plan_scan(device(), sizeof(T));
            // NVIDIA's OpenCL takes reduce-then-scan for states kept apart from their flags
            // (8-byte values): its order is fixed by the tiles alone.
            if (sizeof(T) > 4 && planned.schedule != detail::scan_schedule::single_pass) continue;
            ASSERT_EQ(planned.schedule, detail::scan_schedule::single_pass);
            const std::size_t tile = planned.tile_size();
            const std::size_t readers = planned.sub_group_size > 0 && planned.sub_group_size <= 32
                                            ? planned.sub_group_size
                                            : std::min<std::size_t>(32, planned.work_group_size);
            const std::size_t count = 3 * readers * planned.lookback_depth + 5;
            const auto host = one_value_per_block<T>(count, tile, unsigned(tile + count));
            std::vector<T> aggregates(count);
            for (std::size_t i = 0; i < count; ++i) aggregates[i] = host[i * tile];
            const auto inclusive = ordered_tile_inclusives(aggregates, planned);
            kiln::vector<T> x(q, host), y(q, host.size());
            kiln::inclusive_scan(x, y);
            const auto got = y.read();
            for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_EQ(got[i], inclusive[i / tile]) << "element " << i;
        }
        const auto policy = kiln::test::strategy_policy(algorithm::scan, device(), true);
        const detail::scoped_algorithm_policy chunks(algorithm::scan, policy);
        const detail::scoped_forward_progress single_pass(true);
        const std::size_t chunk = detail::chunk_elements(policy, sizeof(T));
        const auto host = one_value_per_block<T>(67, chunk, 11);
        kiln::vector<T> x(q, host), y(q, host.size());
        kiln::inclusive_scan(x, y);
        std::vector<T> expected(host.size());
        std::inclusive_scan(host.begin(), host.end(), expected.begin());
        EXPECT_EQ(y.read(), expected) << "chunks";
    };
    check(float{});
    check(double{});
}

TEST_P(scan_test, size_mismatch_is_rejected) {
    kiln::vector<float> x(q, 10), y(q, 11);
    EXPECT_THROW(kiln::inclusive_scan(x, y), kiln::invalid_argument_error);
}

TEST_P(scan_test, the_default_dispatch_is_correct) {
    // Whatever strategy this device's row gives and whatever its forward-progress flags say
    // (PoCL: chained chunks, also with POCL_MAX_PTHREAD_COUNT=1, as CTest runs this binary once).
    const std::size_t n = 1000007;
    const auto host = random_values<std::int32_t>(n, -1000, 1000, 5);
    kiln::vector<std::int32_t> x(q, host), y(q, n);
    kiln::inclusive_scan(x, y);
    std::vector<std::int32_t> expected(n);
    std::inclusive_scan(host.begin(), host.end(), expected.begin());
    EXPECT_EQ(y.read(), expected);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(scan_test);

/// A vector split over two devices: each part starts from the total of the parts before it.
TEST(scan_split, parts_carry_their_totals) {
    if (kiln::devices().size() < 2) GTEST_SKIP() << "needs two devices";
    const std::vector<kiln::queue> queues = {kiln::queue(kiln::devices()[0]),
                                             kiln::queue(kiln::devices()[1])};
    const std::size_t n = 300001;
    const auto host = random_values<std::int64_t>(n, -1e6, 1e6, 8);
    kiln::vector<std::int64_t> x(queues, host), y(queues, n);
    ASSERT_EQ(x.part_count(), 2u);
    kiln::inclusive_scan(x, y);
    std::vector<std::int64_t> expected(n);
    std::inclusive_scan(host.begin(), host.end(), expected.begin());
    const auto got = y.read();
    const auto first_difference = std::mismatch(got.begin(), got.end(), expected.begin());
    EXPECT_EQ(first_difference.first, got.end())
        << "first difference at " << first_difference.first - got.begin() << " of " << n
        << "; part 0 has " << x.layout()[0].size << " elements on "
        << x.layout()[0].queue.device().name();
    kiln::exclusive_scan(x + 1, x, -3);  // in place, from an expression
    std::transform_exclusive_scan(host.begin(), host.end(), expected.begin(), std::int64_t{-3},
                                  std::plus<>(), [](std::int64_t v) { return v + 1; });
    EXPECT_EQ(x.read(), expected);
}

}  // namespace
