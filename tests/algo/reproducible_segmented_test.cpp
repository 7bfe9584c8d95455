// SPDX-License-Identifier: Apache-2.0
// Reproducible mode's segmented algorithms and reduce_by_key (docs/reproducibility.md): every
// segment's or run's sum and every prefix is the exact one rounded once, whatever the teams, the
// strategy forced or the split, and the golden inputs' segments give the golden bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "algo/segmented/segmented_plan.hpp"
#include "support/device_param.hpp"
#include "support/exact_sums.hpp"
#include "support/reproducible_inputs.hpp"

namespace {

using kiln::detail::segmented_strategy;
using kiln::test::are_rounded_once;
using kiln::test::digest_bits;
using kiln::test::exact_integer;
using kiln::test::exact_prefixes;
using kiln::test::exact_sum;
using kiln::test::expect_golden;
using kiln::test::hex_bits;
using kiln::test::is_rounded_once;
using kiln::test::spread_values;

/// Offsets of segments of the given lengths.
std::vector<std::uint32_t> offsets_of(const std::vector<std::size_t>& lengths) {
    std::vector<std::uint32_t> offsets{0};
    for (std::size_t length : lengths)
        offsets.push_back(offsets.back() + static_cast<std::uint32_t>(length));
    return offsets;
}

/// Segments of every kind a plan meets: empty, single, shorter and longer than a team, one
/// past a whole group's elements.
const std::vector<std::size_t> mixed_lengths{0, 1, 7, 0, 300, 2, 5000, 33, 0, 1, 257, 70000, 9};

template <class T>
std::vector<T> segment_of(const std::vector<T>& values, const std::vector<std::uint32_t>& offsets,
                          std::size_t s) {
    return {values.begin() + offsets[s], values.begin() + offsets[s + 1]};
}

class reproducible_segmented_test : public kiln::test::reproducible_device_test {
  protected:
    /// Segment sums and scans of values exact on the grid 2^-shift, checked segment by segment.
    template <class T>
    void expect_rounded_once(const std::vector<T>& host, int shift) {
        const std::vector<std::uint32_t> offsets = offsets_of(mixed_lengths);
        const kiln::vector<T> x(q, host), sums(q, mixed_lengths.size());
        const kiln::vector<std::uint32_t> o(q, offsets);
        kiln::segmented_reduce(x, o, sums);
        const std::vector<T> got = sums.read();
        kiln::segmented_inclusive_scan(x, o, x);  // in place
        const std::vector<T> prefixes = x.read();
        for (std::size_t s = 0; s < mixed_lengths.size(); ++s) {
            SCOPED_TRACE("segment " + std::to_string(s));
            const std::vector<T> segment = segment_of(host, offsets, s);
            EXPECT_TRUE(is_rounded_once(got[s], exact_sum(segment, shift), shift));
            EXPECT_TRUE(are_rounded_once(segment_of(prefixes, offsets, s),
                                         exact_prefixes(segment, shift, false), shift));
        }
    }
};

TEST_P(reproducible_segmented_test, segment_sums_and_prefixes_are_exact_and_rounded_once) {
    std::size_t n = 0;
    for (std::size_t length : mixed_lengths) n += length;
    expect_rounded_once(spread_values<float>(n, -10, 20, 11), 33);
    if (has_double()) expect_rounded_once(spread_values<double>(n, 2, 12, 12), 50);
    // An empty segment sums to +0; a segment's sum has kiln::sum's bits, cancellation and all.
    const std::vector<float> cancelling = kiln::test::cancelling_values<float>(30000, 13);
    const kiln::vector<float> x(q, cancelling), out(q, 2);
    const kiln::vector<std::uint32_t> whole(q, std::vector<std::uint32_t>{0, 0, 90000});
    kiln::segmented_reduce(x, whole, out);
    EXPECT_EQ(hex_bits(out.read()[0]), hex_bits(0.0f));
    EXPECT_EQ(hex_bits(out.read()[1]), hex_bits(kiln::sum(x)));
}

TEST_P(reproducible_segmented_test, teams_and_forced_strategies_change_no_bit) {
    const std::vector<float> host = kiln::test::cancelling_values<float>(25800, 14);
    const std::vector<std::uint32_t> offsets = offsets_of(mixed_lengths);
    const kiln::vector<float> x(q, host), sums(q, mixed_lengths.size()), y(q, host.size());
    const kiln::vector<std::uint32_t> o(q, offsets);
    const auto results = [&] {
        kiln::segmented_reduce(x, o, sums);
        kiln::segmented_inclusive_scan(x, o, y);
        return digest_bits(sums.read()) + " " + digest_bits(y.read());
    };
    const std::string planned = results();
    // Teams of one lane to a whole group of 64 (a tuning forces teams on CPUs too), and the
    // default mode's strategies forced, which reproducible mode passes over.
    for (const std::size_t elements_per_lane : {1, 3, 1000000}) {
        SCOPED_TRACE("elements per lane " + std::to_string(elements_per_lane));
        const kiln::detail::scoped_algorithm_policy teams(
            kiln::detail::algorithm::segmented_reduce,
            kiln::detail::segmented_tuning{.work_group_size = 64,
                                           .exact_elements_per_lane = elements_per_lane,
                                           .exact_scan_elements_per_lane = elements_per_lane});
        EXPECT_EQ(results(), planned);
    }
    for (const segmented_strategy forced :
         {segmented_strategy::thread_per_segment, segmented_strategy::tile_reductions,
          segmented_strategy::flat_tiles, segmented_strategy::cpu_chunks}) {
        const kiln::detail::scoped_segmented_strategy strategy(forced);
        EXPECT_EQ(results(), planned) << to_string(forced);
    }
}

TEST_P(reproducible_segmented_test, teams_follow_the_mean_segment_and_cpus_take_one_lane) {
    kiln::device_properties gpu;
    gpu.type = kiln::device_type::gpu;
    gpu.local_memory_bytes = 48 << 10;
    gpu.compute_units = 132;
    gpu.max_work_group_size = 1024;
    kiln::device_properties cpu = gpu;
    cpu.type = kiln::device_type::cpu;
    // The row's teams (a reduction's lanes 128 elements each, a scan's 16, groups of 256),
    // unless CPUs take their table's row.
    using kiln::detail::segmented_algorithm;
    const auto plan = [](const kiln::device_properties& props, std::size_t elements,
                         segmented_algorithm algorithm = segmented_algorithm::reduce,
                         std::optional<kiln::detail::segmented_tuning> tuning =
                             kiln::detail::segmented_tuning{}) {
        return kiln::detail::plan_segmented(props, {.elements = elements,
                                                    .segments = 100,
                                                    .algorithm = algorithm,
                                                    .reproducible_sum = true,
                                                    .forced = segmented_strategy::flat_tiles,
                                                    .tuning = tuning});
    };
    const auto scan = segmented_algorithm::inclusive_scan;
    EXPECT_EQ(plan(gpu, 100).strategy, segmented_strategy::reproducible);
    EXPECT_EQ(plan(gpu, 100).team_lanes, 1u);
    EXPECT_EQ(plan(gpu, 100 * 128 * 8).team_lanes, 8u);
    EXPECT_EQ(plan(gpu, 100 * 16 * 8, scan).team_lanes, 8u);
    EXPECT_EQ(plan(gpu, 100 * 16 * 8, scan).strategy, segmented_strategy::reproducible);
    EXPECT_EQ(plan(gpu, 100 * 100000).team_lanes, 256u);
    EXPECT_EQ(plan(gpu, 100 * 128 * 8).groups, 4u);  // 32 teams of 8 lanes a group
    EXPECT_EQ(plan(cpu, 100 * 100000, segmented_algorithm::reduce, std::nullopt).team_lanes, 1u);
    EXPECT_EQ(plan(cpu, 100 * 128 * 8).team_lanes, 8u);  // a tuning forces teams
}

TEST_P(reproducible_segmented_test, special_values_follow_ieee_sums) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const kiln::vector<float> x(
        q, std::vector<float>{1, std::bit_cast<float>(0x7fc00042u), 2, inf, -1, -inf, inf, 3});
    const kiln::vector<std::uint32_t> o(q, std::vector<std::uint32_t>{0, 3, 5, 7, 8});
    const kiln::vector<float> sums(q, 4), y(q, 8);
    kiln::segmented_reduce(x, o, sums);
    kiln::segmented_inclusive_scan(x, o, y);
    std::vector<std::string> got;
    for (float v : sums.read()) got.push_back(hex_bits(v));
    EXPECT_EQ(got, (std::vector<std::string>{hex_bits(nan), hex_bits(inf), hex_bits(nan),
                                             hex_bits(3.0f)}));
    got.clear();
    for (float v : y.read()) got.push_back(hex_bits(v));
    EXPECT_EQ(got, (std::vector<std::string>{hex_bits(1.0f), hex_bits(nan), hex_bits(nan),
                                             hex_bits(inf), hex_bits(inf), hex_bits(-inf),
                                             hex_bits(nan), hex_bits(3.0f)}));
}

TEST_P(reproducible_segmented_test, runs_of_keys_sum_as_their_segments) {
    const std::vector<std::uint32_t> keys = kiln::test::golden_keys();
    const std::vector<float> host = kiln::test::cancelling_values<float>(keys.size() / 3, 15);
    const kiln::vector<std::uint32_t> k(
        q, std::vector<std::uint32_t>(keys.begin(), keys.begin() + host.size()));
    const kiln::vector<float> x(q, host);
    const std::size_t n = host.size();
    kiln::vector<std::uint32_t> unique(q, n);
    kiln::vector<float> sums(q, n), doubled(q, n);
    // [doc:reproducible_runs]
    kiln::scoped_determinism guard(kiln::determinism::reproducible);
    const std::size_t runs = kiln::reduce_by_key(k, x, unique, sums);  // each run's exact sum
    // [/doc]
    // The runs' offsets, found on the host, reduced as segments.
    const std::vector<std::uint32_t> first_keys = unique.read();
    std::vector<std::uint32_t> offsets{0};
    for (std::size_t i = 1; i < n; ++i)
        if (keys[i] != keys[i - 1]) offsets.push_back(static_cast<std::uint32_t>(i));
    offsets.push_back(static_cast<std::uint32_t>(n));
    ASSERT_EQ(runs, offsets.size() - 1);
    const kiln::vector<float> segment_sums(q, runs);
    kiln::segmented_reduce(x, kiln::vector<std::uint32_t>(q, offsets), segment_sums);
    std::vector<float> got = sums.read();
    got.resize(runs);
    EXPECT_EQ(digest_bits(got), digest_bits(segment_sums.read()));
    for (std::size_t r = 0; r < runs; ++r) ASSERT_EQ(first_keys[r], keys[offsets[r]]) << r;
    // Values as an expression, into 16-bit outputs (the float sum rounded once more), and into
    // outputs too small for every run, which take the first ones.
    kiln::reduce_by_key(k, 2 * x, unique, doubled);
    std::vector<float> twice = doubled.read();
    for (std::size_t r = 0; r < runs; ++r) ASSERT_EQ(twice[r], 2 * got[r]) << r;
    const kiln::vector<kiln::half> halves(q, n);
    kiln::reduce_by_key(k, x, unique, halves);
    EXPECT_EQ(static_cast<float>(halves.read()[3]), static_cast<float>(kiln::half(got[3])));
    const kiln::vector<std::uint32_t> few_keys(q, 5);
    const kiln::vector<float> few(q, std::vector<float>(5, 42.0f));
    EXPECT_THROW(kiln::reduce_by_key(k, x, few_keys, few), kiln::invalid_argument_error);
    EXPECT_EQ(few.read(), std::vector<float>(got.begin(), got.begin() + 5));
}

TEST_P(reproducible_segmented_test, minima_and_maxima_order_minus_zero_below_plus_zero) {
    const kiln::vector<float> x(q, std::vector<float>{0.0f, -0.0f, -0.0f, 0.0f, NAN, 1.0f});
    const kiln::vector<std::uint32_t> o(q, std::vector<std::uint32_t>{0, 2, 4, 6});
    const kiln::vector<std::uint32_t> keys(q, std::vector<std::uint32_t>{0, 0, 1, 1, 2, 2});
    const kiln::vector<float> low(q, 3), high(q, 3), by_key(q, 3);
    kiln::vector<std::uint32_t> unique(q, 3);
    kiln::segmented_reduce(x, o, low, kiln::reducers::minimum{});
    kiln::segmented_reduce(x, o, high, kiln::reducers::maximum{});
    EXPECT_EQ(hex_bits(low.read()[0]), hex_bits(-0.0f));
    EXPECT_EQ(hex_bits(low.read()[1]), hex_bits(-0.0f));
    EXPECT_EQ(hex_bits(high.read()[0]), hex_bits(0.0f));
    EXPECT_EQ(hex_bits(high.read()[1]), hex_bits(0.0f));
    EXPECT_EQ(low.read()[2], 1.0f);
    kiln::reduce_by_key(keys, x, unique, by_key, kiln::reducers::minimum{});
    EXPECT_EQ(hex_bits(by_key.read()[0]), hex_bits(-0.0f));
    EXPECT_EQ(hex_bits(by_key.read()[1]), hex_bits(-0.0f));
}

/// The golden segmented operations and reduce_by_key on vectors made by `make` (segmented: on
/// one device only).
template <class Make>
std::map<std::string, std::string> golden_segmented(Make&& make, bool with_double, bool segmented) {
    const kiln::test::golden_inputs in;
    std::map<std::string, std::string> got;
    const auto wide = make(in.wide);
    const auto keys = make(kiln::test::golden_keys());
    const auto unique = make(std::vector<std::uint32_t>(in.wide.size()));
    const auto sums = make(std::vector<float>(in.wide.size()));
    const std::size_t runs = kiln::reduce_by_key(keys, wide, unique, sums);
    std::vector<float> run_sums = sums.read();
    run_sums.resize(runs);
    got["reduce_by_key(golden keys, wide)"] = digest_bits(run_sums);
    if (with_double) {
        const auto wide_double = make(in.wide_double);
        const auto double_sums = make(std::vector<double>(in.wide.size()));
        kiln::reduce_by_key(keys, wide_double, unique, double_sums);
        std::vector<double> double_run_sums = double_sums.read();
        double_run_sums.resize(runs);
        got["reduce_by_key(golden keys, wide_double)"] = digest_bits(double_run_sums);
    }
    if (!segmented) return got;
    const std::vector<std::uint32_t> host_offsets = kiln::test::golden_offsets();
    const auto offsets = make(host_offsets);
    const auto segment_sums = make(std::vector<float>(host_offsets.size() - 1));
    kiln::segmented_reduce(wide, offsets, segment_sums);
    got["segmented_reduce(wide)"] = digest_bits(segment_sums.read());
    const auto prefixes = make(std::vector<float>(in.wide.size()));
    kiln::segmented_inclusive_scan(wide, offsets, prefixes);
    got["segmented_inclusive_scan(wide)"] = digest_bits(prefixes.read());
    if (!with_double) return got;
    const auto wide_double = make(in.wide_double);
    const auto double_prefixes = make(std::vector<double>(in.wide.size()));
    kiln::segmented_inclusive_scan(wide_double, offsets, double_prefixes);
    got["segmented_inclusive_scan(wide_double)"] = digest_bits(double_prefixes.read());
    return got;
}

TEST_P(reproducible_segmented_test, golden_segments_give_the_golden_bits) {
    expect_golden(golden_segmented(kiln::test::on_queue(q), has_double(), true));
}

class reproducible_split_runs : public kiln::test::two_devices_test {};

TEST_F(reproducible_split_runs, runs_split_over_two_devices_give_the_golden_bits) {
    kiln::scoped_determinism reproducible(kiln::determinism::reproducible);
    const bool with_double = queues[0].device().properties().double_precision &&
                             queues[1].device().properties().double_precision;
    expect_golden(golden_segmented(
        [&](const auto& host) {
            return kiln::vector<typename std::decay_t<decltype(host)>::value_type>(queues, host);
        },
        with_double, false));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reproducible_segmented_test);

}  // namespace
