// SPDX-License-Identifier: Apache-2.0
// kiln::sort and kiln::sort_by_key on every device, compared with std::stable_sort: edge sizes
// around the tile and chunk, key patterns, every key type, NaN and -0, stability, descending
// order, comparators, and vectors split over two devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/algo/sort.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "algo/key_changes.hpp"
#include "algo/random_keys.hpp"
#include "algo/sort/sort_kernels.hpp"
#include "algo/stable_order.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::random_keys;

KILN_FUNCTION(int, by_magnitude, (float a, float b), return fabs(a) < fabs(b););
KILN_FUNCTION(int, by_low_byte, (uint a, uint b), return (a & 255u) < (b & 255u););
// Comparators that are not strict weak orders: the sort's order is unspecified, but every key
// must stay.
KILN_FUNCTION(int, at_most, (float a, float b), return a <= b;);
KILN_FUNCTION(int, less_over_nans, (float a, float b), return a < b;);
KILN_FUNCTION(int, always_before, (float a, float b), return 1;);

/// The order docs/sorting.md promises, written independently of kiln's bit tricks: NaNs after
/// everything (in input order), -0 before +0, otherwise by value.
template <class T>
bool documented_before(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
        if (a == b) return std::signbit(a) && !std::signbit(b);
    }
    return a < b;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

using kiln::test::permuted;
using kiln::test::stable_order;

/// The orders check_radix sorts in, each its own program: both, or ascending alone. Descending
/// only inverts the bits every strategy reads its digits from (ordered_bits in sort_kernels.cpp):
/// a sweep of strategies or shapes sorts one key type both ways and the others ascending.
enum class orders { both, ascending };

class sort_test : public kiln::test::device_queue_test {
  protected:
    /// Sizes around one tile and around the chunks of several work-groups.
    std::vector<std::size_t> sizes(std::size_t key_bytes) const {
        const auto policy = kiln::detail::radix_sort_tuning_for(device());
        // sort.cpp scales the items per work-item (set for 4-byte keys alone) by the bytes of a
        // key and the value moving with it (the wider of the two where the multi-split moves
        // them in turns): check_radix sorts keys alone and with uint indices.
        const std::size_t g = policy.work_group_size, k = policy.items_per_work_item;
        const std::size_t tile = g * std::max<std::size_t>(1, k * 4 / key_bytes);
        const std::size_t pair_bytes =
            policy.multi_split ? std::max<std::size_t>(key_bytes, 4) : key_bytes + 4;
        const std::size_t pair_tile = g * std::max<std::size_t>(1, k * 4 / pair_bytes);
        return {0,
                1,
                2,
                3,
                tile - 1,
                tile,
                tile + 1,
                5 * tile + 17,
                1000007,
                pair_tile - 1,
                pair_tile + 1};
    }

    /// Sorts keys by value and by (key, index) pairs, ascending and descending, and checks both
    /// against std::stable_sort.
    template <class T>
    void check_radix(const std::vector<T>& host, const std::string& what,
                     orders sorted = orders::both) {
        SCOPED_TRACE(what + ", n = " + std::to_string(host.size()));
        for (bool descending : {false, true}) {
            if (descending && sorted == orders::ascending) break;
            SCOPED_TRACE(descending ? "descending" : "ascending");
            const auto before = [descending](T a, T b) {
                return descending ? documented_before(b, a) : documented_before(a, b);
            };
            const auto order = stable_order(host, before);
            kiln::vector<T> keys(q, host);
            std::vector<std::uint32_t> index(host.size());
            std::iota(index.begin(), index.end(), 0u);
            kiln::vector<std::uint32_t> values(q, index);
            if (descending)
                kiln::sort_by_key(keys, values, kiln::descending);
            else
                kiln::sort_by_key(keys, values);
            ASSERT_TRUE(same_bits(keys.read(), permuted(host, order)));
            ASSERT_EQ(values.read(), order);  // equal keys keep their input order

            kiln::vector<T> alone(q, host);
            if (descending)
                kiln::sort(alone, kiln::descending);
            else
                kiln::sort(alone);
            ASSERT_TRUE(same_bits(alone.read(), permuted(host, order)));
        }
    }

    template <class T>
    void check_key_type() {
        if (std::is_same_v<T, double> && !has_double()) GTEST_SKIP() << "no double precision";
        for (std::size_t n : sizes(sizeof(T))) check_radix(random_keys<T>(n, 7 + n), "random");
        const std::size_t n = sizes(sizeof(T))[7];
        auto keys = random_keys<T>(n, 11);
        std::sort(keys.begin(), keys.end(), documented_before<T>);
        check_radix(keys, "already sorted");
        std::reverse(keys.begin(), keys.end());
        check_radix(keys, "reverse sorted");
        check_radix(std::vector<T>(n, static_cast<T>(42)), "all equal");
        // Few distinct keys: long runs of equal keys test stability across tiles and chunks.
        std::vector<T> few(n);
        for (std::size_t i = 0; i < n; ++i) few[i] = static_cast<T>((i * 7919) % 5);
        check_radix(few, "five distinct keys");
    }
};

TEST_P(sort_test, uint32_keys) {
    check_key_type<std::uint32_t>();
}
TEST_P(sort_test, int32_keys) {
    check_key_type<std::int32_t>();
}
TEST_P(sort_test, uint64_keys) {
    check_key_type<std::uint64_t>();
}
TEST_P(sort_test, int64_keys) {
    check_key_type<std::int64_t>();
}
TEST_P(sort_test, float_keys) {
    check_key_type<float>();
}
TEST_P(sort_test, double_keys) {
    check_key_type<double>();
}

template <class T>
std::vector<T> special_floats(std::size_t n) {
    using limits = std::numeric_limits<T>;
    const T negative_nan = -limits::quiet_NaN();
    const T specials[] = {limits::quiet_NaN(),
                          negative_nan,
                          T(-0.0),
                          T(0.0),
                          limits::infinity(),
                          -limits::infinity(),
                          limits::denorm_min(),
                          -limits::denorm_min(),
                          limits::max(),
                          limits::lowest(),
                          limits::min(),
                          T(1),
                          T(-1),
                          limits::signaling_NaN()};
    std::vector<T> keys = random_keys<T>(n, 5);
    for (std::size_t i = 0; i < n; i += 3) keys[i] = specials[(i / 3) % std::size(specials)];
    return keys;
}

TEST_P(sort_test, nan_and_signed_zero_keys) {
    check_radix(special_floats<float>(3001), "float specials");
    if (has_double()) check_radix(special_floats<double>(3001), "double specials");
}

TEST_P(sort_test, float_keys_sorted_on_the_host) {
    // Where the floating-point radix sort is not trusted (PoCL 5.0: device_quirks,
    // float_radix_sort_unreliable) float and double keys and their values are sorted on the
    // host; the path runs here on every device, against the documented order, with a 4- and an
    // 8-byte value.
    const auto check = [&]<class T>(const std::vector<T>& host) {
        SCOPED_TRACE(sizeof(T) == 4 ? "float keys" : "double keys");
        for (bool descending : {false, true}) {
            SCOPED_TRACE(descending ? "descending" : "ascending");
            const auto order = stable_order(host, [descending](T a, T b) {
                return descending ? documented_before(b, a) : documented_before(a, b);
            });
            std::vector<std::uint32_t> index(host.size());
            std::iota(index.begin(), index.end(), 0u);
            const std::vector<std::uint64_t> wide_index(index.begin(), index.end());
            kiln::vector<T> keys(q, host);
            kiln::vector<std::uint32_t> values(q, index);
            kiln::vector<std::uint64_t> wide(q, wide_index);
            using kiln::detail::sort_operand_of;
            kiln::detail::host_float_sort_part(
                q, kiln::detail::radix_key_of<T>(), descending, sort_operand_of(keys.part(0)),
                host.size(), {sort_operand_of(values.part(0)), sort_operand_of(wide.part(0))});
            EXPECT_TRUE(same_bits(keys.read(), permuted(host, order)));
            EXPECT_EQ(values.read(), order);
            EXPECT_EQ(wide.read(), permuted(wide_index, order));
        }
    };
    check(special_floats<float>(3001));
    if (has_double()) check(special_floats<double>(3001));
}

TEST_P(sort_test, several_value_vectors_move_with_their_keys) {
    const std::size_t n = 20011;
    std::vector<std::int32_t> host(n);
    for (std::size_t i = 0; i < n; ++i)
        host[i] = static_cast<std::int32_t>((i * 2654435761u) % 97) - 48;
    std::vector<float> a(n);
    std::vector<std::uint64_t> b(n);
    std::vector<std::int32_t> c(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i) * 0.5f;
        b[i] = (std::uint64_t{1} << 63) | i;
        c[i] = -static_cast<std::int32_t>(i);
    }
    kiln::vector<std::int32_t> keys(q, host);
    kiln::vector<float> va(q, a);
    kiln::vector<std::uint64_t> vb(q, b);
    kiln::vector<std::int32_t> vc(q, c);
    kiln::sort_by_key(keys, va, vb, vc);
    const auto order = stable_order(host, documented_before<std::int32_t>);
    EXPECT_EQ(keys.read(), permuted(host, order));
    EXPECT_EQ(va.read(), permuted(a, order));
    EXPECT_EQ(vb.read(), permuted(b, order));
    EXPECT_EQ(vc.read(), permuted(c, order));

    // One wide value beside narrow keys: it travels inside the radix passes.
    kiln::vector<std::int32_t> keys2(q, host);
    kiln::vector<std::uint64_t> wide(q, b);
    kiln::sort_by_key(keys2, wide);
    EXPECT_EQ(keys2.read(), permuted(host, order));
    EXPECT_EQ(wide.read(), permuted(b, order));
}

TEST_P(sort_test, comparator_sort_is_stable) {
    const auto policy = kiln::detail::plan_merge_sort(device());
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, policy.work_group_size - 1,
          policy.work_group_size + 1, std::size_t{100003}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        std::vector<float> host(n);
        for (std::size_t i = 0; i < n; ++i)
            host[i] = static_cast<float>(static_cast<int>((i * 40503u) % 201) - 100) * 0.25f;
        const auto order =
            stable_order(host, [](float x, float y) { return std::fabs(x) < std::fabs(y); });
        kiln::vector<float> keys(q, host);
        kiln::sort(keys, by_magnitude);
        ASSERT_EQ(keys.read(), permuted(host, order));  // -x and x keep their input order

        std::vector<std::uint32_t> index(n);
        std::iota(index.begin(), index.end(), 0u);
        std::vector<double> weights(n);
        for (std::size_t i = 0; i < n; ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
        kiln::vector<float> keys2(q, host);
        kiln::vector<std::uint32_t> values(q, index);
        std::vector<float> as_float(n);
        for (std::size_t i = 0; i < n; ++i) as_float[i] = static_cast<float>(weights[i]);
        kiln::vector<float> more(q, as_float);
        kiln::sort_by_key(keys2, values, more, by_magnitude);
        ASSERT_EQ(keys2.read(), permuted(host, order));
        ASSERT_EQ(values.read(), order);
        ASSERT_EQ(more.read(), permuted(as_float, order));
    }
}

// sort_by_key(k, v, v) moved v twice through the order, and the merge sort's
// sort_by_key(k, k) moved the sorted keys through it again (docs/sorting.md: a vector named
// twice moves once).
TEST_P(sort_test, a_vector_named_twice_moves_once) {
    const std::size_t n = 1000;
    const auto host = random_keys<float>(n, 21);
    std::vector<float> index(n);
    std::iota(index.begin(), index.end(), 0.0f);
    const auto ascending = stable_order(host, documented_before<float>);
    const auto descending =
        stable_order(host, [](float a, float b) { return documented_before(b, a); });
    const auto by_size =
        stable_order(host, [](float x, float y) { return std::fabs(x) < std::fabs(y); });
    const auto as_float = [](const std::vector<std::uint32_t>& order) {
        return std::vector<float>(order.begin(), order.end());
    };
    {
        SCOPED_TRACE("values twice, ascending");
        kiln::vector<float> keys(q, host), values(q, index);
        kiln::sort_by_key(keys, values, values);
        EXPECT_EQ(values.read(), as_float(ascending));
        EXPECT_EQ(keys.read(), permuted(host, ascending));
    }
    {
        SCOPED_TRACE("values twice beside another, descending");
        kiln::vector<float> keys(q, host), values(q, index), other(q, index);
        kiln::sort_by_key(keys, values, other, values, kiln::descending);
        EXPECT_EQ(values.read(), as_float(descending));
        EXPECT_EQ(other.read(), as_float(descending));
    }
    {
        SCOPED_TRACE("values twice, comparator");
        kiln::vector<float> keys(q, host), values(q, index);
        kiln::sort_by_key(keys, values, values, by_magnitude);
        EXPECT_EQ(values.read(), as_float(by_size));
    }
    {
        SCOPED_TRACE("keys as values");
        kiln::vector<float> keys(q, host);
        kiln::sort_by_key(keys, keys);
        EXPECT_EQ(keys.read(), permuted(host, ascending));
    }
    {
        SCOPED_TRACE("keys as values, comparator");
        kiln::vector<float> keys(q, host);
        kiln::sort_by_key(keys, keys, by_magnitude);
        EXPECT_EQ(keys.read(), permuted(host, by_size));
    }
}

// A comparator that is not a strict weak order gave two keys one place in the merges, losing
// the others (334 NaNs in, about 110 out): the keys must stay a permutation of the input, and
// values must stay with their keys.
TEST_P(sort_test, a_comparator_that_is_no_strict_weak_order_keeps_every_key) {
    const auto policy = kiln::detail::plan_merge_sort(device());
    const std::size_t n = 4 * policy.work_group_size + 1003;
    std::vector<float> host = special_floats<float>(n);
    for (std::size_t i = 1; i < n; i += 3) host[i] = static_cast<float>(i % 7);  // ties
    const auto bits_sorted = [](std::vector<float> v) {
        std::vector<std::uint32_t> bits(v.size());
        std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
        std::sort(bits.begin(), bits.end());
        return bits;
    };
    std::vector<std::uint32_t> index(n);
    std::iota(index.begin(), index.end(), 0u);
    const auto check = [&](const auto& comparator, const char* name) {
        SCOPED_TRACE(name);
        kiln::vector<float> keys(q, host);
        kiln::vector<std::uint32_t> values(q, index);
        kiln::sort_by_key(keys, values, comparator);
        const auto got = keys.read();
        auto moved = values.read();
        ASSERT_EQ(bits_sorted(got), bits_sorted(host)) << "the keys are not the input's";
        EXPECT_TRUE(same_bits(got, permuted(host, moved))) << "values left their keys";
        std::sort(moved.begin(), moved.end());
        EXPECT_EQ(moved, index) << "the values are not a permutation";
    };
    check(at_most, "a <= b");
    check(less_over_nans, "a < b over NaNs");
    check(always_before, "always 1");
}

TEST_P(sort_test, comparator_on_unsigned_keys) {
    const std::size_t n = 70001;
    const auto host = random_keys<std::uint32_t>(n, 3);
    const auto order = stable_order(
        host, [](std::uint32_t a, std::uint32_t b) { return (a & 255u) < (b & 255u); });
    kiln::vector<std::uint32_t> keys(q, host);
    kiln::sort(keys, by_low_byte);
    EXPECT_EQ(keys.read(), permuted(host, order));
}

TEST_P(sort_test, gpu_shapes_on_every_device) {
    // The GPU policy's tile and group shapes, whatever the device: on PoCL this runs the code
    // paths the GPUs take.
    kiln::detail::radix_sort_tuning gpu{.work_group_size = 256, .items_per_work_item = 16};
    kiln::detail::scoped_algorithm_policy scoped(gpu);
    check_radix(random_keys<std::uint32_t>(100003, 9), "uint32, GPU shape");
    // A digit width that does not divide the key width, ranked in rounds of 4 and 1 bits (PoCL
    // keeps to 4-bit digits: docs/sorting.md, Known limits).
    gpu.radix_bits = 5;
    kiln::detail::scoped_algorithm_policy wider(gpu);
    check_radix(random_keys<std::int64_t>(30011, 10), "int64, 5-bit digits", orders::ascending);
}

TEST_P(sort_test, multi_split_ranking) {
    // Tiles ranked by the sub-group multi-split (src/algo/sort/radix_multi_split.cpp) on every
    // device: peers found by ballots where the device has them (CUDA, NVIDIA's OpenCL), through
    // local memory elsewhere and, under scoped_local_memory_group_scans, on CUDA too. Shapes:
    // a tile of the device's kind (CPU devices: a smaller one, since PoCL keeps what work-items
    // hold across barriers on its threads' stacks), and more digits than work-items. Sizes
    // leave whole sub-groups past the end.
    using kiln::detail::radix_sort_tuning;
    const auto multi_split = [](std::size_t group, std::size_t items) {
        return radix_sort_tuning{.work_group_size = group,
                                 .items_per_work_item = items,
                                 .radix_bits = 8,
                                 .multi_split = true};
    };
    const radix_sort_tuning tile = device().is_cpu() ? multi_split(64, 8) : multi_split(256, 16);
    // Values in a local array of their own (NVIDIA's OpenCL row at 256 x 20 until 2026-11-27)
    // instead of after the keys.
    radix_sort_tuning beside = tile;
    beside.values_beside_keys = true;
    for (const radix_sort_tuning& shape : {tile, beside, multi_split(128, 4)}) {
        SCOPED_TRACE(std::to_string(shape.work_group_size) + "x" +
                     std::to_string(shape.items_per_work_item) +
                     (shape.values_beside_keys ? " beside" : ""));
        kiln::detail::scoped_algorithm_policy scoped(shape);
        // What the sort reads (positional policies once set another field and tested rounds).
        ASSERT_TRUE(kiln::detail::plan_radix_sort(device(), 4, false, 0, 1000).multi_split);
        const auto body = [&] {
            check_radix(random_keys<std::uint32_t>(shape.tile_size() * 3 + 5, 31), "uint32");
            if (shape.work_group_size == 128) return;
            // A value wider than its key: keys and values take turns in one local array, which
            // then has the value's type (and alignment).
            const auto narrow = random_keys<std::uint32_t>(shape.tile_size() + 77, 33);
            const auto wide = random_keys<std::uint64_t>(narrow.size(), 34);
            kiln::vector<std::uint32_t> keys(q, narrow);
            kiln::vector<std::uint64_t> values(q, wide);
            kiln::sort_by_key(keys, values);
            const auto order = stable_order(narrow, documented_before<std::uint32_t>);
            ASSERT_EQ(keys.read(), permuted(narrow, order));
            ASSERT_EQ(values.read(), permuted(wide, order));
            if (shape.values_beside_keys) return;  // keys alone move as in `tile`
            check_radix(random_keys<std::int64_t>(shape.tile_size() + 33, 32), "int64",
                        orders::ascending);
            check_radix(special_floats<float>(3001), "float specials", orders::ascending);
        };
        body();
        if (kiln::detail::group_scan_sub_group_size(device(), shape.work_group_size) == 0) continue;
        SCOPED_TRACE("peers through local memory");
        kiln::detail::scoped_local_memory_group_scans local_memory;
        body();
    }
}

TEST_P(sort_test, both_radix_paths) {
    // Single pass with decoupled look-back where the device promises progress, reduce-then-scan
    // elsewhere: run both where the single pass can run. PoCL does not promise progress, and
    // PoCL 3.1 builds the single-pass kernel wrongly under both of its work-group compilers
    // ("loops" and "repl"), although the same source sorts correctly when run as C++ with one
    // thread per work-item and on the H100 (CUDA, NVIDIA OpenCL): so the single pass is tested
    // on GPUs only (scripts/gpu-check.sh), and PoCL runs reduce-then-scan.
    for (bool progress : {false, true}) {
        if (progress && !kiln::detail::groups_make_progress(device())) continue;
        SCOPED_TRACE(progress ? "single pass" : "reduce-then-scan");
        kiln::detail::scoped_forward_progress scoped(progress);
        check_radix(random_keys<std::uint32_t>(100003, 21), "uint32");
        check_radix(random_keys<std::int64_t>(30011, 22), "int64", orders::ascending);
        std::vector<float> few(50001);
        for (std::size_t i = 0; i < few.size(); ++i) few[i] = static_cast<float>(i % 3);
        // Passes with one digit are skipped.
        check_radix(few, "three distinct floats", orders::ascending);
        // The last pass skipped: every key's top digit is 1.0f's. The single pass keeps float
        // keys in their stored form between passes, which the last moving one must undo.
        std::vector<float> one_to_two = random_keys<float>(40009, 23);
        for (float& x : one_to_two) x = 1.0f + (x + 1e6f) * 0.4e-6f;  // in [1, 1.8]
        check_radix(one_to_two, "floats in [1, 1.8]");
        check_radix(special_floats<float>(3001), "float specials", orders::ascending);
    }
}

/// Float keys' bits in the radix order (docs/sorting.md), written apart from the kernels': -inf
/// at 0, negatives reversed below the positives, and every NaN on the one value above +inf.
std::uint32_t ordered_float_bits(std::uint32_t k) {
    if ((k & 0x7fffffffu) > 0x7f800000u) return 0xff000002u;
    const std::uint32_t flipped = (k & 0x80000000u) != 0 ? ~k : k | 0x80000000u;
    return flipped - 0x007fffffu;
}

TEST_P(sort_test, every_histogram_variant_counts_every_digit) {
    // The single pass's histogram kernel alone, on every device (PoCL sorts by reduce-then-scan,
    // which does not run it): float keys in [-1, 1), whose top digits crowd into a few values
    // (issue 44), counted under every way of spreading the counters, against the host's count.
    using kiln::detail::radix_histogram_tuning;
    // The device's target, and whether its plan keeps match.any when asked for it.
    auto asking = kiln::detail::radix_sort_tuning_for(device());
    asking.match_any = true;
    const kiln::detail::scoped_algorithm_policy scoped(asking);
    const kiln::detail::radix_sort_policy plan =
        kiln::detail::plan_radix_sort(device(), 4, true, 0, 1000);
    std::vector<radix_histogram_tuning> variants = {
        {.copies = 8},
        {.copies = 8, .digit_major = true},
        {.copies = 8, .per_sub_group = true},
        {.copies = 3, .per_sub_group = true, .digit_major = true},
        {.copies = 1},
        {.copies = 8, .aggregated = true},
        {.copies = 2, .per_sub_group = true, .digit_major = true, .aggregated = true},
    };
    std::mt19937 engine(41);
    std::vector<std::uint32_t> keys(100003);
    for (auto& k : keys)
        k = std::bit_cast<std::uint32_t>(std::uniform_real_distribution<float>(-1, 1)(engine));
    keys[17] = 0x7fc00001u;  // a NaN
    for (const std::size_t n : {std::size_t{0}, std::size_t{5}, keys.size()}) {
        std::vector<std::uint32_t> expected(4 * 256);
        for (std::size_t i = 0; i < n; ++i)
            for (unsigned pass = 0; pass < 4; ++pass)
                ++expected[pass * 256 + (ordered_float_bits(keys[i]) >> (8 * pass) & 255u)];
        for (const bool match_any : {false, true}) {
            if (match_any && !plan.match_any) continue;
            for (const radix_histogram_tuning& variant : variants) {
                if (match_any && !variant.aggregated) continue;
                SCOPED_TRACE("n = " + std::to_string(n) + ", " + std::to_string(variant.copies) +
                             " copies" + (variant.per_sub_group ? ", per sub-group" : "") +
                             (variant.digit_major ? ", digit-major" : "") +
                             (variant.aggregated ? ", aggregated" : "") +
                             (match_any ? " by match.any" : ""));
                kiln::detail::radix_sort_shape shape;
                shape.keys = {kiln::detail::sort_key_kind::floating, 23, 4};
                shape.single_pass = true;
                shape.target = plan.target;
                shape.match_any = match_any;
                shape.histogram = variant;
                const kiln::detail::radix_sort_kernels kernels(shape);
                // The histogram kernel's program alone: with the whole sort's kernels, never run
                // here, the 7 variants took 169 CPU-seconds to compile on PoCL (2026-11-26), 6
                // alone.
                const auto& built = kiln::detail::algorithm_program_for(
                    device(), shape.key() + " histogram alone",
                    [&] { return std::vector{kernels.single_pass->histogram}; },
                    [&] { return kiln::detail::radix_onesweep_histogram_source(shape); });
                const std::vector<std::uint32_t> input(keys.begin(), keys.begin() + n);
                kiln::vector<std::uint32_t> device_keys(
                    q, input.empty() ? std::vector<std::uint32_t>(1) : input);
                kiln::vector<std::uint32_t> histogram(q, std::vector<std::uint32_t>(4 * 256));
                kiln::detail::kernel_binding counting(kernels.single_pass->histogram);
                counting.buffer("keys", device_keys.part(0))
                    .scalar<std::uint64_t>("n", n)
                    .buffer("histogram", histogram.part(0));
                // Three groups: each strides over the keys many times.
                const std::size_t group = shape.histogram_group();
                built.bind(std::move(counting)).launch(q, 3 * group, group).wait();
                ASSERT_EQ(histogram.read(), expected);
            }
        }
    }
}

TEST_P(sort_test, every_histogram_and_ranking_variant_sorts) {
    // The bench's variants (sort_bench --sweep) through the whole sort: on devices that take the
    // single pass they run its histogram; match.any where the device has NVIDIA's warps.
    using kiln::detail::radix_sort_tuning;
    radix_sort_tuning tile = device().is_cpu() ? radix_sort_tuning{.work_group_size = 64,
                                                                   .items_per_work_item = 8,
                                                                   .multi_split = true}
                                               : radix_sort_tuning{.work_group_size = 256,
                                                                   .items_per_work_item = 16,
                                                                   .multi_split = true};
    std::vector<radix_sort_tuning> variants;
    for (const bool match_any : {false, true})
        for (const kiln::detail::radix_histogram_tuning& histogram :
             {kiln::detail::radix_histogram_tuning{},
              {.copies = 4, .per_sub_group = true, .digit_major = true},
              {.digit_major = true, .aggregated = true}}) {
            tile.match_any = match_any;
            tile.histogram = histogram;
            variants.push_back(tile);
        }
    // Registers held to what 3 groups of 384 work-items leave each on an H100 (sort_bench's
    // "g56"), and a limit of their own for pairs ("v80"): NVIDIA's compilers take the limits,
    // other devices' plans drop them.
    variants.push_back(variants.front());
    variants.back().register_limit = 56;
    variants.back().register_limit_with_values = 80;
    for (const radix_sort_tuning& variant : variants) {
        SCOPED_TRACE(std::string(variant.match_any ? "match.any, " : "") +
                     (variant.register_limit != 0 ? "56 registers, " : "") + "histogram " +
                     std::to_string(variant.histogram.copies) +
                     (variant.histogram.per_sub_group ? " per sub-group" : "") +
                     (variant.histogram.digit_major ? " digit-major" : "") +
                     (variant.histogram.aggregated ? " aggregated" : ""));
        const kiln::detail::scoped_algorithm_policy scoped(variant);
        const auto plan = kiln::detail::plan_radix_sort(device(), 4, true, 0, 1000);
        EXPECT_EQ(plan.histogram.aggregated, variant.histogram.aggregated);
        const bool nvidia_compiler =
            plan.target.vocabulary == kiln::detail::vocabulary_target::inline_ptx ||
            plan.target.vocabulary == kiln::detail::vocabulary_target::cuda_prelude;
        EXPECT_EQ(plan.register_limit, nvidia_compiler ? variant.register_limit : 0u);
        EXPECT_EQ(kiln::detail::plan_radix_sort(device(), 4, false, 4, 1000).register_limit,
                  nvidia_compiler ? variant.register_limit_with_values : 0u)
            << "values hold registers of their own";
        if (!plan.ballots) {
            EXPECT_FALSE(plan.match_any) << "match.any needs NVIDIA's warps";
        }
        check_radix(random_keys<float>(30011, 43), "float");
        check_radix(special_floats<float>(3001), "float specials");
        check_radix(random_keys<std::uint32_t>(20011, 44), "uint32", orders::ascending);
    }
}

// Every field of the shape changes the generated program, so each must change the program
// cache's key: a field missing from key() would reuse a stale program.
TEST(algo_sort_shape, key_changes_with_every_field) {
    using kiln::detail::radix_sort_shape;
    // A new field fails here first: add it to radix_sort_shape::key() and to the changes below.
    static_assert(sizeof(radix_sort_shape) == 88);
    const std::vector<std::function<void(radix_sort_shape&)>> changes = {
        [](radix_sort_shape& s) { s.keys.kind = kiln::detail::sort_key_kind::floating; },
        [](radix_sort_shape& s) { s.keys.bytes = 8; },
        [](radix_sort_shape& s) { s.keys.mantissa_bits = 10; },
        [](radix_sort_shape& s) { s.descending = true; },
        [](radix_sort_shape& s) { s.value_bytes = 4; },
        [](radix_sort_shape& s) { s.radix_bits = 4; },
        [](radix_sort_shape& s) { s.work_group_size = 128; },
        [](radix_sort_shape& s) { s.items_per_work_item = 8; },
        [](radix_sort_shape& s) { s.sub_group_size = 32; },
        [](radix_sort_shape& s) { s.multi_split = true; },
        [](radix_sort_shape& s) { s.ballots = true; },
        [](radix_sort_shape& s) {
            s.target.vocabulary = kiln::detail::vocabulary_target::cuda_prelude;
        },
        [](radix_sort_shape& s) { s.target.sub_group_size = 32; },
        [](radix_sort_shape& s) { s.target.ballot = true; },
        [](radix_sort_shape& s) { s.target.shuffles = true; },
        [](radix_sort_shape& s) { s.target.device_fence = true; },
        [](radix_sort_shape& s) { s.values_beside_keys = true; },
        [](radix_sort_shape& s) { s.single_pass = true; },
        [](radix_sort_shape& s) { s.chunks = true; },
        [](radix_sort_shape& s) { s.match_any = true; },
        [](radix_sort_shape& s) { s.histogram.copies = 8; },
        [](radix_sort_shape& s) { s.histogram.per_sub_group = true; },
        [](radix_sort_shape& s) { s.histogram.digit_major = true; },
        [](radix_sort_shape& s) { s.histogram.aggregated = true; },
        [](radix_sort_shape& s) { s.register_limit = 56; },
    };
    kiln::test::expect_every_change_changes_the_key(changes);
}

TEST(algo_sort_shape, merge_sort_key_changes_with_every_field) {
    using kiln::detail::merge_sort_shape;
    // A new field fails here first: add it to merge_sort_shape::key() and to the changes below.
    static_assert(sizeof(merge_sort_shape) == 3 * sizeof(std::string) + 8);
    const std::vector<std::function<void(merge_sort_shape&)>> changes = {
        [](merge_sort_shape& s) { s.key_type = "float"; },
        [](merge_sort_shape& s) { s.comparator_source = "int less(float a, float b);"; },
        [](merge_sort_shape& s) { s.comparator_call = "greater(a, b)"; },
        [](merge_sort_shape& s) { s.work_group_size = 128; },
    };
    kiln::test::expect_every_change_changes_the_key(changes);
}

TEST_P(sort_test, every_radix_strategy) {
    // Tiles (the GPU strategy) and chunks of one work-item each (the CPU one), whichever the
    // device's row chooses; chunks of test_chunk_bytes, so that the sizes span many chunks, and
    // at most 4 chunks per compute unit, so that the largest chunks hold thousands of keys.
    for (const bool chunks : {false, true}) {
        SCOPED_TRACE(chunks ? "chunks" : "tiles");
        auto strategy_policy = kiln::detail::radix_sort_tuning_for(device());
        strategy_policy.chunk_bytes = chunks ? kiln::test::test_chunk_bytes : 0;
        const kiln::detail::scoped_algorithm_policy strategy(strategy_policy);
        const std::size_t chunk_keys = kiln::test::test_chunk_bytes / 4;
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, chunk_keys - 1,
                              chunk_keys, chunk_keys + 1, 3 * chunk_keys + 7, std::size_t{100003}})
            check_radix(random_keys<std::uint32_t>(n, 31 + n), "uint32");
        // int32 and uint64 share the digit code of int64 and uint32: the key-type tests run
        // them through the device's own strategy.
        check_radix(random_keys<std::int64_t>(30011, 34), "int64", orders::ascending);
        std::vector<float> few(50001);
        for (std::size_t i = 0; i < few.size(); ++i) few[i] = static_cast<float>(i % 3);
        // Passes with one digit are skipped.
        check_radix(few, "three distinct floats", orders::ascending);
        check_radix(special_floats<float>(3001), "float specials", orders::ascending);
        if (has_double())
            check_radix(special_floats<double>(3001), "double specials", orders::ascending);
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(sort_test);

/// A vector split over two devices: each part is sorted on its device, then the parts are merged.
class split_sort_test : public kiln::test::two_devices_test {};

TEST_F(split_sort_test, radix_sort_by_key_merges_the_parts_stably) {
    const std::size_t n = 100003;
    std::vector<std::int64_t> host(n);
    for (std::size_t i = 0; i < n; ++i)
        host[i] = static_cast<std::int64_t>((i * 7919) % 1013) - 500;
    std::vector<std::uint32_t> index(n);
    std::iota(index.begin(), index.end(), 0u);
    kiln::vector<std::int64_t> keys(queues, host);
    kiln::vector<std::uint32_t> values(queues, index);
    ASSERT_EQ(keys.part_count(), 2u);
    kiln::sort_by_key(keys, values, kiln::descending);
    const auto order = stable_order(host, [](std::int64_t a, std::int64_t b) { return b < a; });
    EXPECT_EQ(keys.read(), permuted(host, order));
    EXPECT_EQ(values.read(), order);
}

TEST_F(split_sort_test, float_keys_with_nans) {
    const auto host = special_floats<float>(50001);
    kiln::vector<float> keys(queues, host);
    kiln::sort(keys);
    const auto order = stable_order(host, documented_before<float>);
    EXPECT_TRUE(same_bits(keys.read(), permuted(host, order)));
}

TEST_F(split_sort_test, comparator_sort) {
    const std::size_t n = 30001;
    std::vector<float> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(static_cast<int>(i % 41) - 20);
    kiln::vector<float> keys(queues, host);
    kiln::sort(keys, by_magnitude);
    const auto order =
        stable_order(host, [](float x, float y) { return std::fabs(x) < std::fabs(y); });
    EXPECT_EQ(keys.read(), permuted(host, order));
}

// The host merge of the parts permuted k twice in sort_by_key(k, k), and v in (k, v, v).
TEST_F(split_sort_test, a_vector_named_twice_moves_once) {
    const std::size_t n = 1000;
    std::vector<std::int32_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::int32_t>((i * 7919) % 1013);
    std::vector<std::int32_t> index(n);
    std::iota(index.begin(), index.end(), 0);
    const auto order = stable_order(host, [](std::int32_t a, std::int32_t b) { return a < b; });
    kiln::vector<std::int32_t> keys(queues, host);
    ASSERT_EQ(keys.part_count(), 2u);
    kiln::sort_by_key(keys, keys);
    EXPECT_EQ(keys.read(), permuted(host, order));

    kiln::vector<std::int32_t> keys2(queues, host), values(queues, index);
    kiln::sort_by_key(keys2, values, values);
    EXPECT_EQ(keys2.read(), permuted(host, order));
    EXPECT_EQ(values.read(), permuted(index, order));

    std::vector<float> as_float(host.begin(), host.end());
    const auto by_size =
        stable_order(as_float, [](float x, float y) { return std::fabs(x) < std::fabs(y); });
    kiln::vector<float> float_keys(queues, as_float);
    kiln::sort_by_key(float_keys, float_keys, by_magnitude);
    EXPECT_EQ(float_keys.read(), permuted(as_float, by_size));
}

TEST_F(split_sort_test, values_split_differently_are_rejected) {
    kiln::vector<float> keys(queues, 1000);
    kiln::vector<float> values(queues[0], 1000);
    EXPECT_THROW(kiln::sort_by_key(keys, values), kiln::invalid_argument_error);
}

}  // namespace
