// SPDX-License-Identifier: Apache-2.0
// kiln::segmented_sort and segmented_sort_by_key on every device, through every strategy
// forced, against std::stable_sort of each segment in kiln::sort's order; the plan on devices
// written by hand; the program key; and every bad input, rejected before any key moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <kiln/kiln.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/segmented_sort/segmented_sort_kernels.hpp"
#include "algo/segmented_sort/segmented_sort_plan.hpp"
#include "support/binary16_types.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::segmented_sort_strategy;
using kiln::detail::segmented_sort_tuning;

/// A group_tile row small enough that short segments cross its largest tile (64 keys) and
/// groups of 4 to 16 work-items each sort several keys.
constexpr segmented_sort_tuning small_tiles{.strategy = segmented_sort_strategy::group_tile,
                                            .max_work_group_size = 16,
                                            .min_work_group_size = 4,
                                            .items_per_work_item = 4,
                                            .max_tile = 64};

/// A cpu_chunks row that sorts every segment of 2 keys or more by digits.
constexpr segmented_sort_tuning digits_everywhere{.strategy = segmented_sort_strategy::cpu_chunks,
                                                  .digits_from = 2};

/// Runs `body` with each strategy forced, then with the small tiles' row and the digits' row, so
/// that every device, PoCL included, runs the GPU strategies and their fallback as well as its
/// own, and the CPU strategy both ways.
template <class Body>
void on_every_strategy(Body&& body) {
    for (const segmented_sort_strategy s :
         {segmented_sort_strategy::group_tile, segmented_sort_strategy::lane_tile,
          segmented_sort_strategy::radix_twice, segmented_sort_strategy::cpu_chunks}) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_segmented_sort_strategy forced(s);
        body();
    }
    for (const segmented_sort_tuning& row : {small_tiles, digits_everywhere}) {
        SCOPED_TRACE(row.key());
        const kiln::detail::scoped_algorithm_policy forced(row);
        body();
    }
}

/// Element bits, so that NaNs compare equal to themselves and -0 differs from +0.
template <class T>
std::vector<std::uint64_t> bits_of(const std::vector<T>& v) {
    std::vector<std::uint64_t> bits(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&bits[i], &v[i], sizeof(T));
    return bits;
}

/// The segments of `offsets` sorted stably in kiln::sort's order, the elements past the last
/// offset as they were; `values` moved with their keys.
template <class K, class V, class O>
void reference_sort(std::vector<K>& keys, std::vector<V>& values, const std::vector<O>& offsets) {
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
        const std::size_t begin = std::size_t(offsets[s]), end = std::size_t(offsets[s + 1]);
        std::vector<std::size_t> order(end - begin);
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = begin + i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return kiln::detail::radix_before(keys[a], keys[b], false);
        });
        std::vector<K> k;
        std::vector<V> v;
        for (const std::size_t i : order) {
            k.push_back(keys[i]);
            if (!values.empty()) v.push_back(values[i]);
        }
        std::copy(k.begin(), k.end(), keys.begin() + std::ptrdiff_t(begin));
        if (!values.empty()) std::copy(v.begin(), v.end(), values.begin() + std::ptrdiff_t(begin));
    }
}

/// Offsets of segments of the given lengths, from 0.
std::vector<std::uint32_t> offsets_of(const std::vector<std::size_t>& lengths) {
    std::vector<std::uint32_t> offsets{0};
    for (const std::size_t length : lengths)
        offsets.push_back(offsets.back() + std::uint32_t(length));
    return offsets;
}

/// `n` keys of K from a few distinct values where `few`, so that ties are common; floats
/// include NaN, infinities and both zeros.
template <class K>
std::vector<K> random_keys(std::size_t n, unsigned seed, bool few = false) {
    std::mt19937 generator(seed);
    std::vector<K> keys(n);
    for (K& k : keys) {
        const int draw = int(generator() % (few ? 5u : 2001u)) - (few ? 2 : 1000);
        if constexpr (std::is_floating_point_v<K> || kiln::detail::is_binary16_v<K>)
            k = K(float(draw) / 8.0f);
        else if constexpr (std::is_signed_v<K>)
            k = K(draw) * K(few ? 1 : 1000003);
        else
            k = K(std::uint64_t(draw + 1000) * (sizeof(K) == 8 ? 0x100000001ull : 2000003u));
    }
    if constexpr (std::is_floating_point_v<K> || kiln::detail::is_binary16_v<K>) {
        const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 -0.0f,
                                 0.0f,
                                 -std::numeric_limits<float>::quiet_NaN()};
        for (std::size_t i = 0; i < n && i < std::size(special); ++i)
            keys[i * 5 % n] = K(special[i]);
    }
    return keys;
}

/// Segment lengths with every edge case: empty segments, one key, the small tiles' 64 and 65,
/// a big segment among tiny ones.
const std::vector<std::size_t> edge_lengths{0, 1, 2, 0, 0, 3, 64, 65, 16, 0, 1000, 7, 1, 0, 33, 5};

class segmented_sort_test : public kiln::test::device_queue_test {
  protected:
    /// Sorts `host` keys (and `host_values`, where given) in segments of `lengths` with `tail`
    /// keys after the last offset, on every strategy, and compares with the reference.
    template <class K, class V = std::uint32_t>
    void expect_sorted(const std::vector<std::size_t>& lengths, std::size_t tail, unsigned seed,
                       bool by_key = false, bool few = false) {
        const std::vector<std::uint32_t> host_offsets = offsets_of(lengths);
        const std::size_t n = host_offsets.back() + tail;
        const std::vector<K> host_keys = random_keys<K>(n, seed, few);
        std::vector<V> host_values(by_key ? n : 0);
        for (std::size_t i = 0; i < host_values.size(); ++i) host_values[i] = V(i * 3 + 1);
        std::vector<K> expected_keys = host_keys;
        std::vector<V> expected_values = host_values;
        reference_sort(expected_keys, expected_values, host_offsets);
        const kiln::vector<std::uint32_t> offsets(q, host_offsets);
        on_every_strategy([&] {
            kiln::vector<K> keys(q, host_keys);
            if (by_key) {
                kiln::vector<V> values(q, host_values);
                kiln::segmented_sort_by_key(keys, values, offsets);
                EXPECT_EQ(values.read(), expected_values);
            } else {
                kiln::segmented_sort(keys, offsets);
            }
            EXPECT_EQ(bits_of(keys.read()), bits_of(expected_keys));
        });
    }
};

TEST_P(segmented_sort_test, sorts_each_segment_stably_and_leaves_the_keys_past_the_last_offset) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // Segments [0, 3), [3, 3) (empty) and [3, 7); the keys at 7 and 8 lie past the last offset.
    const kiln::vector<std::uint32_t> offsets(q, {0, 3, 3, 7});
    on_every_strategy([&] {
        kiln::vector<float> keys(q, {3.0f, 1.0f, 2.0f, 0.0f, nan, -0.0f, -1.0f, 9.0f, 8.0f});
        kiln::vector<std::uint32_t> values(q, {0, 1, 2, 3, 4, 5, 6, 7, 8});
        kiln::segmented_sort_by_key(keys, values, offsets);
        // kiln::sort's order: -0 before +0, NaN last.
        EXPECT_EQ(bits_of(keys.read()), bits_of(std::vector<float>{1.0f, 2.0f, 3.0f, -1.0f, -0.0f,
                                                                   0.0f, nan, 9.0f, 8.0f}));
        EXPECT_EQ(values.read(), (std::vector<std::uint32_t>{1, 2, 0, 6, 5, 3, 4, 7, 8}));
    });
}

TEST_P(segmented_sort_test, edge_lengths_sort_every_segment_and_leave_the_tail) {
    expect_sorted<std::uint32_t>(edge_lengths, 9, 1);
    expect_sorted<float>(edge_lengths, 3, 2);
}

TEST_P(segmented_sort_test, empty_keys_and_zero_segments) {
    expect_sorted<std::uint32_t>({}, 0, 3);
    expect_sorted<std::uint32_t>({}, 17, 4);        // zero segments: every key is past them
    expect_sorted<std::uint32_t>({0, 0, 0}, 5, 5);  // empty segments only
    expect_sorted<std::uint32_t>({1}, 0, 6);        // size 1
}

TEST_P(segmented_sort_test, one_segment_of_everything) {
    expect_sorted<std::int32_t>({3001}, 0, 7);
    expect_sorted<float>({64}, 0, 8);
    expect_sorted<float>({65}, 0, 9);
}

TEST_P(segmented_sort_test, long_segments_ending_on_and_across_groups_of_positions) {
    // radix_twice finds each position's segment a group of 256 x 16 positions at a time (on
    // groups of 256): segments end on 4096 and 8192, empty ones lie there, and long ones span
    // several groups.
    const std::vector<std::size_t> lengths{4095, 1, 0, 0, 4096, 8192, 0, 1, 12000, 7};
    expect_sorted<std::uint32_t>(lengths, 5, 32);
    expect_sorted<float>(lengths, 0, 33);
    expect_sorted<std::uint64_t>(lengths, 1, 34);
}

TEST_P(segmented_sort_test, every_key_type_in_kiln_sorts_order) {
    const std::vector<std::size_t> lengths{5, 40, 0, 64, 65, 300, 2, 17};
    expect_sorted<std::int32_t>(lengths, 4, 10);
    expect_sorted<std::uint32_t>(lengths, 4, 11);
    expect_sorted<std::int64_t>(lengths, 4, 12);
    expect_sorted<std::uint64_t>(lengths, 4, 13);
    expect_sorted<float>(lengths, 4, 14);
    if (has_double()) expect_sorted<double>(lengths, 4, 15);
    kiln::test::for_each_binary16([&]<class T>() { expect_sorted<T>(lengths, 4, 16); });
}

TEST_P(segmented_sort_test, by_key_is_stable_among_duplicate_keys) {
    const std::vector<std::size_t> lengths{30, 64, 65, 1, 0, 700, 9};
    expect_sorted<std::uint32_t, std::uint32_t>(lengths, 6, 17, true, true);
    expect_sorted<float, std::uint64_t>(lengths, 6, 18, true, true);
    expect_sorted<kiln::half, float>(lengths, 6, 19, true, true);
    expect_sorted<std::int64_t, std::int32_t>(edge_lengths, 2, 20, true, true);
}

TEST_P(segmented_sort_test, many_small_segments) {
    std::vector<std::size_t> lengths;
    std::mt19937 generator(21);
    for (int s = 0; s < 3000; ++s) lengths.push_back(generator() % 40);
    expect_sorted<std::uint32_t, std::uint32_t>(lengths, 0, 22, true);
}

TEST_P(segmented_sort_test, segments_of_at_most_32_keys_sort_in_registers_too) {
    // Every length from 0 to 32 (lane_tile's largest tile), more segments than a group holds,
    // so that forced lane_tile runs them; the 8-byte keys take group_tile there.
    std::vector<std::size_t> lengths;
    std::mt19937 generator(24);
    for (int s = 0; s < 700; ++s) lengths.push_back(s % 9 == 0 ? 32 : generator() % 33);
    expect_sorted<std::uint32_t>(lengths, 5, 25);
    expect_sorted<std::int32_t>(lengths, 0, 26);
    expect_sorted<float>(lengths, 2, 31);  // NaNs of both signs keep their bits
    expect_sorted<float, std::uint32_t>(lengths, 3, 27, true, true);
    expect_sorted<std::uint32_t, std::uint64_t>(lengths, 0, 28, true, true);
    expect_sorted<std::uint64_t>(lengths, 1, 29);
    const std::vector<std::size_t> sixteens(300, 16);
    kiln::test::for_each_binary16([&]<class T>() {
        expect_sorted<T>(sixteens, 2, 30);
        expect_sorted<T, float>(sixteens, 2, 30, true);
    });
}

TEST_P(segmented_sort_test, offsets_of_every_integer_type) {
    const std::vector<std::uint32_t> narrow = offsets_of({4, 0, 70, 3});
    const std::vector<std::int64_t> wide(narrow.begin(), narrow.end());
    const std::vector<std::int32_t> signed_narrow(narrow.begin(), narrow.end());
    const std::vector<std::uint64_t> unsigned_wide(narrow.begin(), narrow.end());
    const std::vector<std::uint32_t> host_keys = random_keys<std::uint32_t>(80, 23);
    std::vector<std::uint32_t> expected = host_keys, none;
    reference_sort(expected, none, narrow);
    on_every_strategy([&] {
        for (int type = 0; type < 3; ++type) {
            kiln::vector<std::uint32_t> keys(q, host_keys);
            if (type == 0) kiln::segmented_sort(keys, kiln::vector<std::int64_t>(q, wide));
            if (type == 1) kiln::segmented_sort(keys, kiln::vector<std::int32_t>(q, signed_narrow));
            if (type == 2)
                kiln::segmented_sort(keys, kiln::vector<std::uint64_t>(q, unsigned_wide));
            EXPECT_EQ(keys.read(), expected) << "offset type " << type;
        }
    });
}

/// `bad` throws invalid_argument_error whose message holds `named`, and the keys stay as they
/// were.
template <class Bad>
void expect_rejected(kiln::vector<std::uint32_t>& keys, const std::string& named, Bad&& bad) {
    const std::vector<std::uint32_t> before = keys.read();
    try {
        bad();
        ADD_FAILURE() << "no error; expected one naming '" << named << "'";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
    EXPECT_EQ(keys.read(), before);
}

TEST_P(segmented_sort_test, bad_inputs_throw_before_any_key_moves) {
    const std::vector<std::uint32_t> host_keys{9, 8, 7, 6, 5, 4, 3, 2};
    kiln::vector<std::uint32_t> keys(q, host_keys);
    const auto offsets = [&](std::vector<std::int64_t> o) {
        return kiln::vector<std::int64_t>(q, o);
    };
    on_every_strategy([&] {
        expect_rejected(keys, "decrease", [&] {
            kiln::segmented_sort(keys, offsets({0, 5, 3, 8}));
        });
        expect_rejected(keys, "offsets[0]", [&] { kiln::segmented_sort(keys, offsets({1, 5})); });
        expect_rejected(keys, "past", [&] { kiln::segmented_sort(keys, offsets({0, 4, 9})); });
        expect_rejected(keys, "past", [&] { kiln::segmented_sort(keys, offsets({0, -1})); });
        expect_rejected(keys, "empty", [&] { kiln::segmented_sort(keys, offsets({})); });
        kiln::vector<std::uint32_t> short_values(q, std::vector<std::uint32_t>(7));
        expect_rejected(keys, "one size", [&] {
            kiln::segmented_sort_by_key(keys, short_values, offsets({0, 8}));
        });
    });
}

TEST_P(segmented_sort_test, keys_or_values_that_are_the_offsets_are_rejected) {
    // The strategies read the offsets while they move keys and values: an LSD pass leaves even
    // sorted keys in another order until the last.
    kiln::vector<std::uint32_t> offsets(q, std::vector<std::uint32_t>{0, 1, 2, 4});
    on_every_strategy([&] {
        expect_rejected(offsets, "keys is offsets",
                        [&] { kiln::segmented_sort(offsets, offsets); });
        kiln::vector<std::uint32_t> keys(q, std::vector<std::uint32_t>{9, 8, 7, 6});
        expect_rejected(offsets, "values is offsets",
                        [&] { kiln::segmented_sort_by_key(keys, offsets, offsets); });
        EXPECT_EQ(keys.read(), (std::vector<std::uint32_t>{9, 8, 7, 6}));
    });
}

TEST(segmented_sort_two_devices, keys_and_offsets_on_different_devices_are_rejected) {
    if (kiln::devices().size() < 2)
        GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\")";
    kiln::queue first(kiln::devices()[0]), second(kiln::devices()[1]);
    kiln::vector<std::uint32_t> keys(first, std::vector<std::uint32_t>{3, 2, 1});
    const kiln::vector<std::uint32_t> offsets(second, std::vector<std::uint32_t>{0, 3});
    expect_rejected(keys, "one device", [&] { kiln::segmented_sort(keys, offsets); });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(segmented_sort_test);

kiln::device_properties gpu_properties() {
    kiln::device_properties props;
    props.type = kiln::device_type::gpu;
    props.name = "a GPU written by hand";
    props.compute_units = 100;
    props.max_work_group_size = 1024;
    props.local_memory_bytes = 48 * 1024;
    return props;
}

TEST(segmented_sort_plan, gpus_sort_in_a_group_while_the_longest_segment_fits_a_tile) {
    using kiln::detail::plan_segmented_sort;
    const auto plan = plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 100});
    EXPECT_EQ(plan.strategy, segmented_sort_strategy::group_tile);
    EXPECT_EQ(plan.tile, 128u);
    EXPECT_EQ(plan.work_group_size, 128u);   // 16 keys a work-item, but the row's 128 at least
    EXPECT_EQ(plan.segments_per_group, 8u);  // whose 8 items each fill 8 tiles
    // Segments of 16 keys or fewer: one a work-item, in registers.
    const auto tiny = plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 16});
    EXPECT_EQ(tiny.strategy, segmented_sort_strategy::lane_tile);
    EXPECT_EQ(tiny.segments_per_group, 128u);
    const auto full = plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 2048});
    EXPECT_EQ(full.tile, 2048u);
    EXPECT_EQ(full.work_group_size, 128u);
    EXPECT_EQ(full.segments_per_group, 1u);
    const auto longer =
        plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 2049});
    EXPECT_EQ(longer.strategy, segmented_sort_strategy::radix_twice);
    // Forced, group_tile still falls back where the longest segment does not fit.
    const auto forced = plan_segmented_sort(
        gpu_properties(),
        {.elements = 1 << 20, .longest = 5000, .forced = segmented_sort_strategy::group_tile});
    EXPECT_EQ(forced.strategy, segmented_sort_strategy::radix_twice);
    // Less local memory, a smaller largest tile: 8 KiB hold 512 pairs of 8-byte keys.
    kiln::device_properties small = gpu_properties();
    small.local_memory_bytes = 8 * 1024;
    EXPECT_EQ(
        plan_segmented_sort(small, {.elements = 4096, .longest = 600, .key_bytes = 8}).strategy,
        segmented_sort_strategy::radix_twice);
    EXPECT_EQ(plan_segmented_sort(small, {.elements = 4096, .longest = 500, .key_bytes = 8}).tile,
              512u);
}

TEST(segmented_sort_plan, segments_up_to_the_rows_lane_tile_sort_a_segment_per_work_item) {
    using kiln::detail::plan_segmented_sort;
    const segmented_sort_tuning lanes{.strategy = segmented_sort_strategy::group_tile,
                                      .max_work_group_size = 256,
                                      .lane_tile_up_to = 16};
    const auto plan =
        plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 9, .tuning = lanes});
    EXPECT_EQ(plan.strategy, segmented_sort_strategy::lane_tile);
    EXPECT_EQ(plan.tile, 16u);
    EXPECT_EQ(plan.work_group_size, 256u);
    EXPECT_EQ(plan.segments_per_group, 256u);
    // Past the row's lane tile, or keys of 8 bytes: group_tile.
    EXPECT_EQ(
        plan_segmented_sort(gpu_properties(), {.elements = 1 << 20, .longest = 17, .tuning = lanes})
            .strategy,
        segmented_sort_strategy::group_tile);
    EXPECT_EQ(
        plan_segmented_sort(gpu_properties(),
                            {.elements = 1 << 20, .longest = 9, .key_bytes = 8, .tuning = lanes})
            .strategy,
        segmented_sort_strategy::group_tile);
    // Forced, lane_tile holds up to 32 keys whatever the row says, then takes group_tile's way.
    const auto forced = [&](std::size_t longest) {
        return plan_segmented_sort(gpu_properties(), {.elements = 1 << 20,
                                                      .longest = longest,
                                                      .forced = segmented_sort_strategy::lane_tile})
            .strategy;
    };
    EXPECT_EQ(forced(32), segmented_sort_strategy::lane_tile);
    EXPECT_EQ(forced(33), segmented_sort_strategy::group_tile);
    EXPECT_EQ(forced(5000), segmented_sort_strategy::radix_twice);
    // A group stages its tiles' keys in 4-byte words: 8 KiB hold 32 work-items of 32 keys.
    kiln::device_properties small = gpu_properties();
    small.local_memory_bytes = 8 * 1024;
    EXPECT_EQ(
        plan_segmented_sort(
            small, {.elements = 4096, .longest = 32, .forced = segmented_sort_strategy::lane_tile})
            .work_group_size,
        32u);
}

TEST(segmented_sort_plan, cpus_sort_in_chunks_a_few_per_compute_unit) {
    kiln::device_properties props;
    props.type = kiln::device_type::cpu;
    props.name = "a CPU written by hand";
    props.compute_units = 2;
    const auto plan =
        kiln::detail::plan_segmented_sort(props, {.elements = 1 << 24, .longest = 1000});
    EXPECT_EQ(plan.strategy, segmented_sort_strategy::cpu_chunks);
    EXPECT_EQ(plan.chunks, 8u);
    EXPECT_EQ(plan.chunk_elements, std::size_t{1} << 21);
    const auto tiny = kiln::detail::plan_segmented_sort(props, {.elements = 100, .longest = 10});
    EXPECT_EQ(tiny.chunks, 1u);
    EXPECT_EQ(tiny.chunk_elements, 100u);
}

TEST(segmented_sort_plan, key_changes_with_every_field_the_kernels_read) {
    using shape = kiln::detail::segmented_sort_shape;
    kiln::test::expect_every_change_changes_the_key<shape>({
        [](shape& s) { s.strategy = segmented_sort_strategy::cpu_chunks; },
        [](shape& s) { s.keys.kind = kiln::detail::sort_key_kind::signed_integer; },
        [](shape& s) { s.keys.bytes = 8; },
        [](shape& s) { s.keys.mantissa_bits = 23; },
        [](shape& s) { s.offset_type = "long"; },
        [](shape& s) { s.value_bytes = 4; },
        [](shape& s) { s.tile = 64; },
        [](shape& s) { s.work_group_size = 32; },
        [](shape& s) { s.segments_per_group = 4; },
        [](shape& s) { s.digits_from = 512; },
    });
}

TEST(segmented_sort_plan, the_environment_forces_a_strategy_for_the_process) {
    ::setenv("KILN_SEGMENTED_SORT_STRATEGY", "radix_twice", 1);
    EXPECT_EQ(kiln::detail::segmented_sort_strategy_in_force(),
              segmented_sort_strategy::radix_twice);
    ::setenv("KILN_SEGMENTED_SORT_STRATEGY", "bogus", 1);
    EXPECT_THROW(kiln::detail::segmented_sort_strategy_in_force(), kiln::invalid_argument_error);
    ::unsetenv("KILN_SEGMENTED_SORT_STRATEGY");
}

}  // namespace

TEST(segmented_sort_tuning, keys_name_every_field_and_read_back) {
    using kiln::detail::parse_segmented_sort_tuning;
    kiln::test::expect_every_change_changes_the_key<segmented_sort_tuning>({
        [](segmented_sort_tuning& t) { t.strategy = segmented_sort_strategy::cpu_chunks; },
        [](segmented_sort_tuning& t) { t.max_work_group_size = 128; },
        [](segmented_sort_tuning& t) { t.min_work_group_size = 64; },
        [](segmented_sort_tuning& t) { t.items_per_work_item = 4; },
        [](segmented_sort_tuning& t) { t.max_tile = 1024; },
        [](segmented_sort_tuning& t) { t.lane_tile_up_to = 16; },
        [](segmented_sort_tuning& t) { t.chunk_bytes = 4096; },
        [](segmented_sort_tuning& t) { t.chunks_per_compute_unit = 8; },
        [](segmented_sort_tuning& t) { t.digits_from = 1024; },
    });
    for (const auto& row : kiln::detail::algorithm::segmented_sort_rows::rows()) {
        const auto read = parse_segmented_sort_tuning(row.tuning.key());
        ASSERT_TRUE(read.has_value()) << row.tuning.key();
        EXPECT_EQ(read->key(), row.tuning.key());
    }
    // Fields left out keep their defaults.
    const auto few = parse_segmented_sort_tuning("group_tile w256 i4");
    ASSERT_TRUE(few.has_value());
    EXPECT_EQ(few->key(), "group_tile g256 w256 i4 t2048 l0 b65536 k4 d0");
    for (const char* bad : {"", "automatic", "group_tile w", "group_tile w0", "group_tile x4",
                            "group_tile g256x", "group_tile wide"})
        EXPECT_FALSE(parse_segmented_sort_tuning(bad).has_value()) << bad;
}

TEST(segmented_sort_tuning, the_environment_forces_a_tuning_for_the_process) {
    ASSERT_FALSE(kiln::detail::segmented_sort_tuning_in_force().has_value());
    ::setenv("KILN_SEGMENTED_SORT_TUNING", "group_tile w64 i4", 1);
    const auto forced = kiln::detail::segmented_sort_tuning_in_force();
    ::setenv("KILN_SEGMENTED_SORT_TUNING", "group_tile w-1", 1);
    EXPECT_THROW(kiln::detail::segmented_sort_tuning_in_force(), kiln::invalid_argument_error);
    ::unsetenv("KILN_SEGMENTED_SORT_TUNING");
    ASSERT_TRUE(forced.has_value());
    EXPECT_EQ(forced->min_work_group_size, 64u);
    EXPECT_EQ(forced->items_per_work_item, 4u);
    // A test's row comes first.
    const kiln::detail::scoped_algorithm_policy policy(small_tiles);
    ::setenv("KILN_SEGMENTED_SORT_TUNING", "group_tile w64 i4", 1);
    const auto scoped = kiln::detail::segmented_sort_tuning_in_force();
    ::unsetenv("KILN_SEGMENTED_SORT_TUNING");
    ASSERT_TRUE(scoped.has_value());
    EXPECT_EQ(scoped->key(), small_tiles.key());
}
