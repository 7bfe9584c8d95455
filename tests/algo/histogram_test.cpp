// SPDX-License-Identifier: Apache-2.0
// kiln::histogram on every device, through every strategy forced, against a host reference of
// the bins docs/algorithms.md promises; the plan on devices written by hand; the program key;
// and every bad input, rejected before any device work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "algo/histogram/histogram_kernels.hpp"
#include "algo/histogram/histogram_plan.hpp"
#include "algo/key_changes.hpp"
#include "algo/written_devices.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::histogram_strategy;

constexpr histogram_strategy every_strategy[] = {histogram_strategy::local_atomics,
                                                 histogram_strategy::global_atomics,
                                                 histogram_strategy::cpu_chunks};

/// Runs `body` once with each strategy forced, then once with each atomics row of the tuning
/// table forced, so that every device, PoCL included, runs the GPU rows' kernels (16-byte loads,
/// their unroll and copies) as well as its own.
template <class Body>
void on_every_strategy(Body&& body) {
    for (const histogram_strategy s : every_strategy) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_histogram_strategy forced(s);
        body();
    }
    for (const auto& row : kiln::detail::algorithm::histogram_rows::rows()) {
        if (row.tuning.strategy == histogram_strategy::cpu_chunks) continue;
        SCOPED_TRACE(row.tuning.key());
        const kiln::detail::scoped_algorithm_policy forced(row.tuning);
        body();
    }
}

/// The bin docs/algorithms.md gives x among `bins` even bins over [lo, hi), or bins where x is
/// not counted: floating-point values by (x - lo) * (bins / (hi - lo)) in their own type, or
/// where bins / (hi - lo) overflows it, by (x - lo) 2^p * (bins / ((hi - lo) 2^p)), 2^p bringing
/// hi - lo to [1, 2) or as near as the type's largest power of two does; integers exactly.
template <class T>
std::size_t even_bin(T x, std::size_t bins, T lo, T hi) {
    if constexpr (std::is_floating_point_v<T>) {
        if (!(x >= lo && x < hi)) return bins;
        const T span = hi - lo;
        T magnify = 1, scale = T(bins) / span;
        if (std::isinf(scale)) {
            const int p = std::min(std::numeric_limits<T>::max_exponent - 1, -std::ilogb(span));
            magnify = std::ldexp(T(1), p);
            scale = T(bins) / (span * magnify);
        }
        const T f = (x - lo) * magnify * scale;
        return f < T(bins) ? std::size_t(f) : bins - 1;
    } else {
        if (x < lo || x >= hi) return bins;
        return std::size_t(std::uint64_t(std::int64_t(x) - std::int64_t(lo)) * bins /
                           std::uint64_t(std::int64_t(hi) - std::int64_t(lo)));
    }
}

template <class C, class T>
std::vector<C> even_reference(const std::vector<T>& x, std::size_t bins, T lo, T hi) {
    std::vector<C> counts(bins);
    for (const T v : x)
        if (const std::size_t b = even_bin(v, bins, lo, hi); b < bins) ++counts[b];
    return counts;
}

template <class C, class T>
std::vector<C> index_reference(const std::vector<T>& x, std::size_t bins) {
    std::vector<C> counts(bins);
    for (const T v : x)
        if ((!std::is_signed_v<T> || v >= 0) && std::uint64_t(v) < bins) ++counts[std::size_t(v)];
    return counts;
}

/// `n` values uniform over [low, high), with every special value among the first ones: NaN,
/// infinities, -0, lo, hi and the value just below hi.
template <class T>
std::vector<T> samples(std::size_t n, double low, double high, T lo, T hi, unsigned seed) {
    std::mt19937 generator(seed);
    std::vector<T> x(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<T> uniform{T(low), T(high)};
        for (T& v : x) v = uniform(generator);
        const T special[] = {std::numeric_limits<T>::quiet_NaN(),
                             std::numeric_limits<T>::infinity(),
                             -std::numeric_limits<T>::infinity(),
                             T(-0.0),
                             lo,
                             hi,
                             std::nextafter(hi, lo),
                             std::nextafter(lo, hi)};
        for (std::size_t i = 0; i < n && i < std::size(special); ++i) x[i * 7 % n] = special[i];
    } else {
        std::uniform_int_distribution<std::int64_t> uniform{std::int64_t(low),
                                                            std::int64_t(high) - 1};
        for (T& v : x) v = T(uniform(generator));
        const T special[] = {lo,
                             hi,
                             T(hi - 1),
                             T(lo - 1),
                             std::numeric_limits<T>::min(),
                             std::numeric_limits<T>::max()};
        for (std::size_t i = 0; i < n && i < std::size(special); ++i) x[i * 7 % n] = special[i];
    }
    return x;
}

/// Sizes: empty, one, around a group and a tile of every strategy, and many groups' worth.
const std::size_t sizes[] = {0, 1, 255, 1025, 100003};

class histogram_test : public kiln::test::device_queue_test {
  protected:
    /// Counts filled with a value the histogram must overwrite.
    template <class C>
    kiln::vector<C> stale_counts(std::size_t bins) {
        return kiln::vector<C>(q, std::vector<C>(bins, C(7)));
    }

    template <class T, class C = std::uint32_t>
    void expect_even(std::size_t bins, T lo, T hi, double low, double high, unsigned seed) {
        for (const std::size_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const std::vector<T> host = samples<T>(n, low, high, lo, hi, seed);
            const kiln::vector<T> x(q, host);
            auto counts = stale_counts<C>(bins);
            on_every_strategy([&] {
                kiln::histogram(x, counts, lo, hi);
                EXPECT_EQ(counts.read(), (even_reference<C>(host, bins, lo, hi)));
            });
        }
    }
};

TEST_P(histogram_test, even_bins_of_floats_match_the_host_reference) {
    expect_even<float>(256, 0.0f, 1.0f, -0.5, 1.5, 1);
    // Bounds that do not divide evenly, and bins that are not a power of two.
    expect_even<float>(7, -0.3f, 2.9f, -1.0, 3.0, 2);
}

TEST_P(histogram_test, even_bins_of_doubles_match_the_host_reference) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    expect_even<double>(100, -1.0, 1.0, -1.5, 1.5, 3);
}

// Spans so small that bins / (hi - lo) overflows the values' type counted every value in the
// last bin: the issue's [0, 1e-36) in 1000 bins, a span across 0, and spans of subnormals.
TEST_P(histogram_test, spans_whose_bins_per_unit_overflow_the_type) {
    expect_even<float>(1000, 0.0f, 1e-36f, -0.5e-36, 1.5e-36, 10);
    expect_even<float>(1000, -1e-37f, 3e-37f, -2e-37, 4e-37, 11);
    expect_even<float>(5, -1e-44f, 2e-44f, -2e-44, 3e-44, 12);
    // The middle of every bin of [0, 1e-36), each counted once in its own bin.
    std::vector<float> middles(1000);
    for (std::size_t b = 0; b < middles.size(); ++b) middles[b] = (float(b) + 0.5f) * 1e-39f;
    const kiln::vector<float> x(q, middles);
    auto counts = stale_counts<std::uint32_t>(1000);
    on_every_strategy([&] {
        kiln::histogram(x, counts, 0.0f, 1e-36f);
        EXPECT_EQ(counts.read(), std::vector<std::uint32_t>(1000, 1));
    });
    if (!has_double()) return;
    expect_even<double>(1000, 0.0, 1e-306, -0.5e-306, 1.5e-306, 13);
    expect_even<double>(3, 0.0, 5e-321, -1e-321, 6e-321, 14);
}

TEST_P(histogram_test, even_bins_of_integers_are_exact) {
    expect_even<std::int32_t>(7, -300, 700, -1000, 1000, 4);
    expect_even<std::uint32_t, std::int32_t>(3, 5, 4000000000u, 0, 4294967295.0, 5);
}

// [doc:histogram-edges]
TEST_P(histogram_test, a_value_on_an_edge_falls_in_the_bin_it_opens) {
    const float below_hi = std::nextafter(8.0f, 0.0f), nan = std::nanf("");
    const float inf = std::numeric_limits<float>::infinity();
    const kiln::vector<float> x(q, {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, below_hi, -0.0f,
                                    8.0f, -1e-30f, nan, inf, -inf});
    kiln::vector<std::uint32_t> counts(q, 8);
    on_every_strategy([&] {
        kiln::histogram(x, counts, 0.0f, 8.0f);  // bins of width 1 over [0, 8)
        // -0 counts as 0; 8, below 0, NaN and the infinities are not counted.
        EXPECT_EQ(counts.read(), (std::vector<std::uint32_t>{2, 1, 1, 1, 1, 1, 1, 2}));
    });
}
// [/doc]

TEST_P(histogram_test, skewed_data_all_in_one_bin) {
    const std::size_t n = 300007;
    const kiln::vector<float> x(q, std::vector<float>(n, 0.5f));
    auto counts = stale_counts<std::int32_t>(256);
    on_every_strategy([&] {
        kiln::histogram(x, counts, 0.0f, 1.0f);
        std::vector<std::int32_t> expected(256);
        expected[128] = std::int32_t(n);
        EXPECT_EQ(counts.read(), expected);
    });
}

TEST_P(histogram_test, one_bin_counts_the_range) {
    const std::vector<float> host = samples<float>(100003, -1.0, 2.0, 0.0f, 1.0f, 7);
    const kiln::vector<float> x(q, host);
    auto counts = stale_counts<std::uint32_t>(1);
    on_every_strategy([&] {
        kiln::histogram(x, counts, 0.0f, 1.0f);
        EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(host, 1, 0.0f, 1.0f)));
    });
}

TEST_P(histogram_test, many_bins) {
    const std::size_t bins = 65536;
    const std::vector<float> host = samples<float>(300007, -0.1, 1.1, 0.0f, 1.0f, 8);
    const kiln::vector<float> x(q, host);
    std::vector<std::uint32_t> host_labels(300007);
    std::mt19937 generator(9);
    for (auto& v : host_labels) v = generator() % 70000;  // some past the last bin
    const kiln::vector<std::uint32_t> labels(q, host_labels);
    auto counts = stale_counts<std::uint32_t>(bins);
    on_every_strategy([&] {
        kiln::histogram(x, counts, 0.0f, 1.0f);
        EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(host, bins, 0.0f, 1.0f)));
        kiln::histogram(labels, counts);
        EXPECT_EQ(counts.read(), (index_reference<std::uint32_t>(host_labels, bins)));
    });
}

TEST_P(histogram_test, bin_index_expressions_skip_indices_outside_the_counts) {
    for (const std::size_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        std::vector<std::int32_t> host(n);
        std::mt19937 generator(10);
        for (auto& v : host) v = std::int32_t(generator() % 80);
        const kiln::vector<std::int32_t> labels(q, host);
        std::vector<std::int32_t> shifted(host);
        for (auto& v : shifted) v -= 5;  // some negative, some past the 64 bins
        auto counts = stale_counts<std::uint32_t>(64);
        const kiln::vector<std::int64_t> wide(
            q, std::vector<std::int64_t>(shifted.begin(), shifted.end()));
        on_every_strategy([&] {
            kiln::histogram(labels - 5, counts);
            EXPECT_EQ(counts.read(), (index_reference<std::uint32_t>(shifted, 64)));
            kiln::histogram(wide, counts);
            EXPECT_EQ(counts.read(), (index_reference<std::uint32_t>(shifted, 64)));
        });
    }
}

TEST_P(histogram_test, expressions_of_values_are_binned_as_their_values) {
    const std::vector<float> host = samples<float>(100003, -1.0, 1.0, -1.0f, 1.0f, 11);
    std::vector<float> doubled(host);
    for (float& v : doubled) v *= 2.0f;
    const kiln::vector<float> x(q, host);
    auto counts = stale_counts<std::uint32_t>(50);
    on_every_strategy([&] {
        kiln::histogram(x * 2.0f, counts, -1.5f, 1.5f);
        EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(doubled, 50, -1.5f, 1.5f)));
    });
}

// [doc:histogram-wide-loads]
TEST_P(histogram_test, the_input_type_decides_16_byte_loads) {
    using kiln::detail::as_node;
    using kiln::detail::histogram_input_of;
    const kiln::vector<float> x(q, std::vector<float>(12, 0.5f));
    const kiln::vector<std::int64_t> wide(q, std::vector<std::int64_t>(12, 1));
    const kiln::vector<std::uint32_t> counts(q, 4);
    const auto lanes = [&](const auto& input) {
        return histogram_input_of(as_node(input), counts, "test").wide_load_lanes;
    };
    EXPECT_EQ(lanes(x), 4u);         // float4
    EXPECT_EQ(lanes(x * 2.0f), 4u);  // elementwise: each lane from the same float4
    EXPECT_EQ(lanes(wide), 2u);      // long2
    EXPECT_EQ(lanes(wide - 5), 2u);  // the scalar broadcast to every lane
    const kiln::slicer<1> from({12});
    EXPECT_EQ(lanes(from(x, kiln::index_range{1, 12})), 1u);  // an offset view: one by one
    EXPECT_EQ(lanes(kiln::reverse(x)), 1u);
    EXPECT_EQ(lanes(kiln::permutation(kiln::element_index(0, 12) / 2)(x)), 1u);  // a gather
}
// [/doc]

TEST_P(histogram_test, wide_loads_count_sizes_past_whole_loads_and_views_that_cannot_take_them) {
    for (const std::size_t n : {1, 2, 3, 4, 5, 6, 7, 9, 17, 63, 1027, 4099}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const std::vector<float> host = samples<float>(n, -0.5, 1.5, 0.0f, 1.0f, unsigned(n));
        const kiln::vector<float> x(q, host);
        std::vector<std::int64_t> host_labels(n);
        for (std::size_t i = 0; i < n; ++i) host_labels[i] = std::int64_t(i * 7 % 40) - 3;
        const kiln::vector<std::int64_t> labels(q, host_labels);
        auto counts = stale_counts<std::uint32_t>(32);
        // Views starting 1 to 3 elements in: no 16-byte load can read them.
        const kiln::slicer<1> from({n});
        on_every_strategy([&] {
            kiln::histogram(x, counts, 0.0f, 1.0f);
            EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(host, 32, 0.0f, 1.0f)));
            kiln::histogram(labels, counts);
            EXPECT_EQ(counts.read(), (index_reference<std::uint32_t>(host_labels, 32)));
            for (std::size_t offset = 1; offset <= 3 && offset < n; ++offset) {
                kiln::histogram(from(x, kiln::index_range{offset, n}), counts, 0.0f, 1.0f);
                const std::vector<float> tail(host.begin() + std::ptrdiff_t(offset), host.end());
                EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(tail, 32, 0.0f, 1.0f)));
            }
        });
    }
}

TEST_P(histogram_test, wide_loads_of_doubles) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    for (const std::size_t n : {1, 2, 3, 5, 1027}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const std::vector<double> host = samples<double>(n, -1.5, 1.5, -1.0, 1.0, unsigned(n));
        const kiln::vector<double> x(q, host);
        auto counts = stale_counts<std::uint32_t>(10);
        on_every_strategy([&] {
            kiln::histogram(x, counts, -1.0, 1.0);
            EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(host, 10, -1.0, 1.0)));
        });
    }
}

TEST_P(histogram_test, single_adds_loads_ahead_and_claimed_steps_count_every_element) {
    using kiln::detail::histogram_tuning;
    // Single adds with loads ahead; loads ahead with runs merged; claimed steps of 16-byte loads
    // (with more groups than steps, and loads ahead, which claims leave out); single adds of
    // one element per load, claimed a step at a time, into counts. Each on small groups, so
    // that a work-item takes several steps.
    const histogram_tuning all{.strategy = histogram_strategy::local_atomics,
                               .work_group_size = 64,
                               .unroll = 3,
                               .wide_loads = true,
                               .single_adds = true,
                               .load_ahead = true,
                               .copies = 2};
    histogram_tuning ahead_runs = all;
    ahead_runs.unroll = 2;
    ahead_runs.single_adds = false;
    histogram_tuning claimed = ahead_runs;
    claimed.groups_per_compute_unit = 16;
    claimed.claimed_steps = 3;
    histogram_tuning single_global = all;
    single_global.strategy = histogram_strategy::global_atomics;
    single_global.wide_loads = false;
    single_global.claimed_steps = 1;
    for (const std::size_t n : {0, 1, 3, 5, 255, 1027, 100003}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        // NaN, infinities, the bounds and values out of range among them.
        const std::vector<float> host = samples<float>(n, -0.5, 1.5, 0.0f, 1.0f, unsigned(n) + 20);
        const kiln::vector<float> x(q, host);
        std::vector<std::int64_t> host_labels(n);
        for (std::size_t i = 0; i < n; ++i) host_labels[i] = std::int64_t(i * 7 % 40) - 3;
        const kiln::vector<std::int64_t> labels(q, host_labels);
        const kiln::vector<float> skewed(q, std::vector<float>(n, 0.25f));
        std::vector<std::uint32_t> one_bin(32);
        one_bin[8] = std::uint32_t(n);
        auto counts = stale_counts<std::uint32_t>(32);
        for (const histogram_tuning& tuning : {all, ahead_runs, claimed, single_global}) {
            SCOPED_TRACE(tuning.key());
            const kiln::detail::scoped_algorithm_policy forced(tuning);
            kiln::histogram(x, counts, 0.0f, 1.0f);
            EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(host, 32, 0.0f, 1.0f)));
            kiln::histogram(skewed, counts, 0.0f, 1.0f);
            EXPECT_EQ(counts.read(), one_bin);
        }
        // Two lanes a load, and an expression's loads ahead.
        const kiln::detail::scoped_algorithm_policy forced(all);
        kiln::histogram(labels, counts);
        EXPECT_EQ(counts.read(), (index_reference<std::uint32_t>(host_labels, 32)));
        std::vector<float> doubled(host);
        for (float& v : doubled) v *= 2.0f;
        kiln::histogram(x * 2.0f, counts, 0.0f, 1.0f);
        EXPECT_EQ(counts.read(), (even_reference<std::uint32_t>(doubled, 32, 0.0f, 1.0f)));
    }
}

/// `bad` throws invalid_argument_error naming `named`, and counts keep their values.
template <class Bad>
void expect_rejected(const kiln::vector<std::uint32_t>& counts, Bad&& bad,
                     const std::string& named) {
    const std::vector<std::uint32_t> before = counts.read();
    try {
        bad();
        ADD_FAILURE() << "no error; expected one naming " << named;
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
    EXPECT_EQ(counts.read(), before);
}

TEST_P(histogram_test, bad_input_is_rejected_before_any_device_work) {
    const kiln::vector<float> x(q, std::vector<float>(100, 0.5f));
    const kiln::vector<std::uint32_t> counts(q, std::vector<std::uint32_t>(4, 3));
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, 1.0f, 0.0f); }, "lo 1, hi 0");
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, 1.0f, 1.0f); }, "lo 1, hi 1");
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, nan, 1.0f); }, "lo nan, hi 1");
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, 0.0f, inf); }, "must be finite");
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, -3e38f, 3e38f); }, "must be finite");
    const kiln::vector<std::uint32_t> no_bins(q, 0);
    expect_rejected(
        counts, [&] { kiln::histogram(x, no_bins, 0.0f, 1.0f); }, "counts is empty");
    const kiln::vector<std::int32_t> labels(q, std::vector<std::int32_t>(10, 1));
    expect_rejected(
        counts, [&] { kiln::histogram(labels, no_bins); }, "counts is empty");
    // The counts are cleared and counted into while x is read: x must not read them.
    expect_rejected(
        counts, [&] { kiln::histogram(counts, counts); }, "x reads counts");
    expect_rejected(
        counts, [&] { kiln::histogram(counts * 2u, counts); }, "x reads counts");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(histogram_test);

class histogram_two_devices : public kiln::test::two_devices_test {};

TEST_F(histogram_two_devices, counts_on_another_device_are_rejected) {
    const kiln::vector<float> x(queues[0], std::vector<float>(100, 0.5f));
    const kiln::vector<std::uint32_t> counts(queues[1], std::vector<std::uint32_t>(4, 3));
    expect_rejected(
        counts, [&] { kiln::histogram(x, counts, 0.0f, 1.0f); }, "counts on device 1 (");
}

TEST(histogram_plan, gpus_count_in_local_memory_while_the_bins_fit) {
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    const auto few =
        kiln::detail::plan_histogram(gpu, {.elements = 1 << 28, .bins = 256, .load_lanes = 4});
    EXPECT_EQ(few.strategy, histogram_strategy::local_atomics);
    EXPECT_EQ(few.copies, few.tuning.copies);
    EXPECT_EQ(few.groups, 100 * few.tuning.groups_per_compute_unit);
    EXPECT_EQ(few.lanes, 4u);
    // Half of 48 KiB holds 6144 bins once, not 8192: global atomics, even where forced.
    for (const auto forced : {histogram_strategy::automatic, histogram_strategy::local_atomics}) {
        EXPECT_EQ(
            kiln::detail::plan_histogram(gpu, {.elements = 1000, .bins = 6144, .forced = forced})
                .copies,
            1u);
        EXPECT_EQ(
            kiln::detail::plan_histogram(gpu, {.elements = 1000, .bins = 8192, .forced = forced})
                .strategy,
            histogram_strategy::global_atomics);
    }
    // Small inputs launch the groups they fill.
    EXPECT_EQ(kiln::detail::plan_histogram(gpu, {.elements = 1, .bins = 256}).groups, 1u);
}

TEST(histogram_plan, sixteen_byte_loads_where_the_row_and_the_input_allow) {
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    const auto wide = kiln::detail::plan_histogram(gpu, {.elements = 1 << 28, .load_lanes = 4});
    ASSERT_TRUE(wide.tuning.wide_loads);
    EXPECT_EQ(wide.lanes, 4u);
    EXPECT_EQ(kiln::detail::plan_histogram(gpu, {.elements = 1 << 28, .load_lanes = 1}).lanes, 1u);
    // A group's step reads work_group_size x unroll x lanes elements: that many fill one group.
    const std::size_t step = wide.work_group_size * wide.unroll * 4;
    EXPECT_EQ(kiln::detail::plan_histogram(gpu, {.elements = 3 * step, .load_lanes = 4}).groups,
              3u);
    // A forced tuning replaces the row: without wide loads, one element per load.
    kiln::detail::histogram_tuning narrow = wide.tuning;
    narrow.wide_loads = false;
    const auto forced = kiln::detail::plan_histogram(
        gpu, {.elements = 3 * step, .load_lanes = 4, .tuning = narrow});
    EXPECT_EQ(forced.lanes, 1u);
    EXPECT_EQ(forced.groups, 12u);
    // Loads ahead only where the loads are 16 bytes wide; single adds either way.
    kiln::detail::histogram_tuning knobs = wide.tuning;
    knobs.single_adds = knobs.load_ahead = true;
    knobs.claimed_steps = 0;
    const auto ahead =
        kiln::detail::plan_histogram(gpu, {.elements = 3 * step, .load_lanes = 4, .tuning = knobs});
    EXPECT_TRUE(ahead.single_adds);
    EXPECT_TRUE(ahead.load_ahead);
    knobs.wide_loads = false;
    const auto narrow_ahead =
        kiln::detail::plan_histogram(gpu, {.elements = 3 * step, .load_lanes = 4, .tuning = knobs});
    EXPECT_TRUE(narrow_ahead.single_adds);
    EXPECT_FALSE(narrow_ahead.load_ahead);
    EXPECT_FALSE(wide.single_adds);
    EXPECT_FALSE(wide.load_ahead);
    // Claimed steps take the row's count, and leave loads ahead out; a count of steps past a
    // uint's half walks the grid's stride instead.
    knobs.wide_loads = true;
    knobs.claimed_steps = 4;
    const auto claimed =
        kiln::detail::plan_histogram(gpu, {.elements = 3 * step, .load_lanes = 4, .tuning = knobs});
    EXPECT_EQ(claimed.claimed_steps, 4u);
    EXPECT_FALSE(claimed.load_ahead);
    EXPECT_EQ(
        kiln::detail::plan_histogram(
            gpu, {.elements = (std::size_t{1} << 31) * step, .load_lanes = 4, .tuning = knobs})
            .claimed_steps,
        0u);
    EXPECT_EQ(wide.claimed_steps, wide.tuning.claimed_steps);
}

TEST(histogram_plan, cpus_count_in_chunks_a_few_per_compute_unit) {
    auto cpu = kiln::test::written_by_hand(kiln::device_type::cpu, "pocl");
    cpu.compute_units = 2;
    const auto small = kiln::detail::plan_histogram(cpu, {.elements = 10, .bins = 256});
    EXPECT_EQ(small.strategy, histogram_strategy::cpu_chunks);
    EXPECT_EQ(small.chunks, 1u);
    EXPECT_EQ(small.chunk_elements, 10u);
    const auto large = kiln::detail::plan_histogram(cpu, {.elements = 1 << 24, .bins = 256});
    EXPECT_EQ(large.chunks, 2 * large.tuning.chunks_per_compute_unit);
    EXPECT_GE(large.chunks * large.chunk_elements, std::size_t{1} << 24);
    // Rows of their own for consecutive elements, where a chunk's elements outnumber the bins.
    EXPECT_EQ(large.copies, large.tuning.copies);
    EXPECT_GT(large.copies, 1u);
    EXPECT_EQ(small.copies, 1u);
    EXPECT_EQ(kiln::detail::plan_histogram(cpu, {.elements = 1 << 24, .bins = 1 << 20}).copies, 1u);
}

TEST(histogram_tuning, keys_name_every_field_and_read_back) {
    using kiln::detail::histogram_tuning;
    using kiln::detail::parse_histogram_tuning;
    kiln::test::expect_every_change_changes_the_key<histogram_tuning>({
        [](histogram_tuning& t) { t.strategy = histogram_strategy::cpu_chunks; },
        [](histogram_tuning& t) { t.work_group_size = 128; },
        [](histogram_tuning& t) { t.unroll = 2; },
        [](histogram_tuning& t) { t.wide_loads = true; },
        [](histogram_tuning& t) { t.single_adds = true; },
        [](histogram_tuning& t) { t.load_ahead = true; },
        [](histogram_tuning& t) { t.copies = 16; },
        [](histogram_tuning& t) { t.local_memory_share = 1; },
        [](histogram_tuning& t) { t.groups_per_compute_unit = 3; },
        [](histogram_tuning& t) { t.claimed_steps = 2; },
        [](histogram_tuning& t) { t.chunk_bytes = 4096; },
        [](histogram_tuning& t) { t.chunks_per_compute_unit = 8; },
    });
    for (const auto& row : kiln::detail::algorithm::histogram_rows::rows()) {
        const auto read = parse_histogram_tuning(row.tuning.key());
        ASSERT_TRUE(read.has_value()) << row.tuning.key();
        EXPECT_EQ(read->key(), row.tuning.key());
    }
    // Fields left out keep their defaults.
    const auto few = parse_histogram_tuning("global_atomics wide u8");
    ASSERT_TRUE(few.has_value());
    histogram_tuning expected{.strategy = histogram_strategy::global_atomics, .unroll = 8};
    expected.wide_loads = true;
    EXPECT_EQ(few->key(), expected.key());
    const auto knobs = parse_histogram_tuning("local_atomics ahead u2 single");
    ASSERT_TRUE(knobs.has_value());
    EXPECT_TRUE(knobs->single_adds);
    EXPECT_TRUE(knobs->load_ahead);
    EXPECT_FALSE(knobs->wide_loads);
    EXPECT_EQ(knobs->key(), "local_atomics g256 u2 c8 m2 p4 q0 b65536 k4 single ahead");
    const auto claims = parse_histogram_tuning("local_atomics q4");
    ASSERT_TRUE(claims.has_value());
    EXPECT_EQ(claims->claimed_steps, 4u);
    for (const char* bad : {"", "automatic", "local_atomics g", "local_atomics g0",
                            "local_atomics x4", "local_atomics g256x", "local_atomics narrow"})
        EXPECT_FALSE(parse_histogram_tuning(bad).has_value()) << bad;
}

TEST(histogram_tuning, the_environment_forces_a_tuning_for_the_process) {
    ASSERT_FALSE(kiln::detail::histogram_tuning_in_force().has_value());
    ::setenv("KILN_HISTOGRAM_TUNING", "local_atomics g64 u2 c2 wide", 1);
    const auto forced = kiln::detail::histogram_tuning_in_force();
    ::setenv("KILN_HISTOGRAM_TUNING", "local_atomics g-1", 1);
    EXPECT_THROW(kiln::detail::histogram_tuning_in_force(), kiln::invalid_argument_error);
    ::unsetenv("KILN_HISTOGRAM_TUNING");
    ASSERT_TRUE(forced.has_value());
    EXPECT_EQ(forced->work_group_size, 64u);
    EXPECT_EQ(forced->unroll, 2u);
    EXPECT_EQ(forced->copies, 2u);
    EXPECT_TRUE(forced->wide_loads);
    // A test's tuning comes first.
    const kiln::detail::scoped_algorithm_policy scoped(kiln::detail::histogram_tuning{});
    EXPECT_EQ(kiln::detail::histogram_tuning_in_force()->key(),
              kiln::detail::histogram_tuning{}.key());
}

TEST(histogram_plan, only_spans_whose_bins_per_unit_overflow_take_the_magnified_kernel) {
    const auto magnified = [](auto lo, auto hi, std::size_t bins) {
        kiln::detail::histogram_input input;
        input.binning = kiln::detail::histogram_binning::even;
        input.value_type = std::is_same_v<decltype(lo), double> ? "double" : "float";
        input.floating = true;
        input.bins = bins;
        input.lo = double(lo);
        input.hi = double(hi);
        return kiln::detail::histogram_shape_of(input, {}).magnified;
    };
    EXPECT_FALSE(magnified(0.0f, 1.0f, 256));
    EXPECT_FALSE(magnified(0.0f, 1e-36f, 300));  // 3e38: below the largest float
    EXPECT_TRUE(magnified(0.0f, 1e-36f, 1000));
    EXPECT_FALSE(magnified(0.0, 1e-36, 1000));
    EXPECT_TRUE(magnified(0.0, 1e-306, 1000));
}

TEST(histogram_plan, key_changes_with_every_field_the_kernels_read) {
    using kiln::detail::histogram_shape;
    kiln::test::expect_every_change_changes_the_key<histogram_shape>({
        [](histogram_shape& s) { s.strategy = histogram_strategy::global_atomics; },
        [](histogram_shape& s) { s.binning = kiln::detail::histogram_binning::indexed; },
        [](histogram_shape& s) { s.value_type = "double"; },
        [](histogram_shape& s) { s.floating = false; },
        [](histogram_shape& s) { s.is_signed = false; },
        [](histogram_shape& s) { s.counts_signed = true; },
        [](histogram_shape& s) { s.work_group_size = 128; },
        [](histogram_shape& s) { s.unroll = 2; },
        [](histogram_shape& s) { s.lanes = 4; },
        [](histogram_shape& s) { s.copies = 4; },
        [](histogram_shape& s) { s.single_adds = true; },
        [](histogram_shape& s) { s.load_ahead = true; },
        [](histogram_shape& s) { s.claimed_steps = 2; },
        [](histogram_shape& s) { s.magnified = true; },
        [](histogram_shape& s) { s.expression = "another"; },
    });
}

}  // namespace
