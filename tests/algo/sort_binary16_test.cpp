// SPDX-License-Identifier: Apache-2.0
// kiln::sort and kiln::sort_by_key with kiln::half and kiln::bfloat16 keys on every device: every
// radix strategy (tiles ranked in rounds, the multi-split, chunks; single pass and
// reduce-then-scan), the host sort and split vectors, against std::stable_sort in the order
// docs/sorting.md gives float keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/algo/sort.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/half.hpp>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "algo/sort/sort_kernels.hpp"
#include "algo/stable_order.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::bfloat16;
using kiln::half;

// The comparator sees 16-bit keys as float.
KILN_FUNCTION(int, by_magnitude, (float a, float b), return fabs(a) < fabs(b););

/// The documented order, written through float (exact for both types) rather than kiln's bit
/// maps: NaNs of either sign after everything (in input order), -0 before +0, otherwise by value.
template <class T>
bool documented_before(T a, T b) {
    const float x = static_cast<float>(a), y = static_cast<float>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    if (x == y) return std::signbit(x) && !std::signbit(y);
    return x < y;
}

template <class T>
std::vector<std::uint16_t> bits_of(const std::vector<T>& keys) {
    std::vector<std::uint16_t> bits(keys.size());
    std::transform(keys.begin(), keys.end(), bits.begin(), [](T k) { return k.bits(); });
    return bits;
}

template <class T>
T negated(T x) {
    return T::from_bits(static_cast<std::uint16_t>(x.bits() ^ 0x8000u));
}

/// Random bit patterns: NaNs of both signs and many payloads, infinities, zeros and subnormals
/// among them, and (65,536 patterns) many equal keys in larger vectors.
template <class T>
std::vector<T> random_keys(std::size_t n, unsigned seed) {
    std::mt19937 engine(seed);
    std::vector<T> keys(n);
    for (auto& k : keys) k = T::from_bits(static_cast<std::uint16_t>(engine()));
    return keys;
}

/// Every third key a named edge value: quiet and signalling NaNs of both signs, +-0, +-inf, the
/// subnormal and normal extremes.
template <class T>
std::vector<T> special_keys(std::size_t n) {
    using limits = std::numeric_limits<T>;
    const T specials[] = {limits::quiet_NaN(),
                          negated(limits::quiet_NaN()),
                          limits::signaling_NaN(),
                          negated(limits::signaling_NaN()),
                          T(-0.0f),
                          T(0.0f),
                          limits::infinity(),
                          negated(limits::infinity()),
                          limits::denorm_min(),
                          negated(limits::denorm_min()),
                          T::from_bits(static_cast<std::uint16_t>(limits::min().bits() - 1)),
                          limits::min(),
                          limits::max(),
                          limits::lowest(),
                          T(1.0f),
                          T(-1.0f)};
    std::vector<T> keys = random_keys<T>(n, 5);
    for (std::size_t i = 0; i < n; i += 3) keys[i] = specials[(i / 3) % std::size(specials)];
    return keys;
}

using kiln::test::permuted;
using kiln::test::stable_order;

template <class T>
std::vector<std::uint32_t> documented_order(const std::vector<T>& host, bool descending) {
    return stable_order(host, [descending](T a, T b) {
        return descending ? documented_before(b, a) : documented_before(a, b);
    });
}

class binary16_sort_test : public kiln::test::device_queue_test {
  protected:
    /// Whether check sorts descending as well as ascending (each order its own program).
    bool descending_too_ = true;

    /// Sorts keys alone and with their indices, ascending and descending, against
    /// std::stable_sort: the indices show that equal keys keep their input order.
    template <class T>
    void check(const std::vector<T>& host, const std::string& what) {
        SCOPED_TRACE(what + ", n = " + std::to_string(host.size()));
        for (bool descending : {false, true}) {
            if (descending && !descending_too_) break;
            SCOPED_TRACE(descending ? "descending" : "ascending");
            const auto order = documented_order(host, descending);
            std::vector<std::uint32_t> index(host.size());
            std::iota(index.begin(), index.end(), 0u);
            kiln::vector<T> keys(q, host);
            kiln::vector<std::uint32_t> values(q, index);
            if (descending)
                kiln::sort_by_key(keys, values, kiln::descending);
            else
                kiln::sort_by_key(keys, values);
            ASSERT_EQ(bits_of(keys.read()), bits_of(permuted(host, order)));
            ASSERT_EQ(values.read(), order);

            kiln::vector<T> alone(q, host);
            if (descending)
                kiln::sort(alone, kiln::descending);
            else
                kiln::sort(alone);
            ASSERT_EQ(bits_of(alone.read()), bits_of(permuted(host, order)));
        }
    }

    /// Sizes around the strategy's tiles (keys alone, and with uint values, whose tiles are
    /// smaller where keys and values are ranked together) and its chunks, then edge values,
    /// long runs of equal keys and presorted input.
    template <class T>
    void check_every_case() {
        const auto policy = kiln::detail::radix_sort_tuning_for(device());
        const std::size_t g = policy.work_group_size, k = policy.items_per_work_item;
        const std::size_t tile = g * k, pair_tile = g * std::max<std::size_t>(1, k * 4 / 6);
        const std::size_t chunk_keys = kiln::test::test_chunk_bytes / 2;
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                              tile - 1, tile + 1, 5 * tile + 17, pair_tile - 1, pair_tile + 1,
                              chunk_keys - 1, 3 * chunk_keys + 7, std::size_t{100003}})
            check(random_keys<T>(n, 7 + static_cast<unsigned>(n)), "random bits");
        check(special_keys<T>(3001), "edge values");
        // Few distinct keys: long runs of equal keys test stability across tiles and chunks,
        // and passes whose digit every key shares are skipped.
        std::vector<T> few(50001);
        for (std::size_t i = 0; i < few.size(); ++i) few[i] = T(static_cast<float>(i % 3));
        check(few, "three distinct keys");
        auto sorted = random_keys<T>(20011, 11);
        std::stable_sort(sorted.begin(), sorted.end(), documented_before<T>);
        check(sorted, "already sorted");
    }

    /// Runs `body` with every radix strategy forced: the device's own choice, tiles ranked in
    /// rounds of counting, tiles ranked by the multi-split (through local memory too where it
    /// uses ballots), and chunks of test_chunk_bytes; the tile strategies by reduce-then-scan
    /// and, where the device promises forward progress, by the single pass.
    template <class Body>
    void on_every_radix_strategy(Body&& body) {
        using kiln::detail::radix_sort_tuning;
        {
            SCOPED_TRACE("the device's own strategy");
            body();
        }
        // Rounds on GPUs with sort_test's 256 x 16 tiles: the NVIDIA row's 384-item groups are the
        // multi-split's, and ranked in rounds with values they pass CUDA's 48 KB of local memory.
        radix_sort_tuning rounds = device().is_cpu() ? kiln::detail::radix_sort_tuning_for(device())
                                                     : radix_sort_tuning{.work_group_size = 256,
                                                                         .items_per_work_item = 16};
        rounds.chunk_bytes = 0;
        rounds.multi_split = false;
        radix_sort_tuning multi_split = device().is_cpu()
                                            ? radix_sort_tuning{.work_group_size = 64,
                                                                .items_per_work_item = 8,
                                                                .radix_bits = 8,
                                                                .multi_split = true}
                                            : radix_sort_tuning{.work_group_size = 256,
                                                                .items_per_work_item = 16,
                                                                .radix_bits = 8,
                                                                .multi_split = true};
        for (const auto& [name, tiles] :
             {std::pair{"tiles ranked in rounds", rounds},
              std::pair{"tiles ranked by the multi-split", multi_split}}) {
            SCOPED_TRACE(name);
            const kiln::detail::scoped_algorithm_policy strategy(tiles);
            for (bool progress : {false, true}) {
                if (progress && !kiln::detail::groups_make_progress(device())) continue;
                SCOPED_TRACE(progress ? "single pass" : "reduce-then-scan");
                const kiln::detail::scoped_forward_progress path(progress);
                body();
                if (!tiles.multi_split ||
                    kiln::detail::group_scan_sub_group_size(device(), tiles.work_group_size) == 0)
                    continue;
                SCOPED_TRACE("peers through local memory");
                const kiln::detail::scoped_local_memory_group_scans local_memory;
                body();
            }
        }
        SCOPED_TRACE("chunks");
        radix_sort_tuning chunks = kiln::detail::radix_sort_tuning_for(device());
        chunks.chunk_bytes = kiln::test::test_chunk_bytes;
        const kiln::detail::scoped_algorithm_policy strategy(chunks);
        body();
    }

    /// The host sort (device_quirks::float_radix_sort_unreliable's path), on every device, with
    /// a 4- and an 8-byte value.
    template <class T>
    void check_host_sort() {
        const auto host = special_keys<T>(3001);
        for (bool descending : {false, true}) {
            SCOPED_TRACE(descending ? "descending" : "ascending");
            const auto order = documented_order(host, descending);
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
            EXPECT_EQ(bits_of(keys.read()), bits_of(permuted(host, order)));
            EXPECT_EQ(values.read(), order);
            EXPECT_EQ(wide.read(), permuted(wide_index, order));
        }
    }
};

TEST_P(binary16_sort_test, half_keys_through_every_radix_strategy) {
    on_every_radix_strategy([&] { check_every_case<half>(); });
}

TEST_P(binary16_sort_test, bfloat16_keys_through_every_radix_strategy) {
    // Descending only inverts the bits every strategy reads its digits from (ordered_bits in
    // src/algo/sort/sort_kernels.cpp), and half sorts both ways through every strategy:
    // bfloat16 (its own mantissa width) sorts both ways through the device's own strategy and
    // ascending through the others.
    bool device_own = true;
    on_every_radix_strategy([&] {
        descending_too_ = device_own;
        device_own = false;
        check_every_case<bfloat16>();
    });
}

TEST_P(binary16_sort_test, host_sort_of_16_bit_keys) {
    {
        SCOPED_TRACE("half");
        check_host_sort<half>();
    }
    SCOPED_TRACE("bfloat16");
    check_host_sort<bfloat16>();
}

TEST_P(binary16_sort_test, several_value_vectors_move_with_16_bit_keys) {
    // More than one value vector: the keys carry their positions, and the values are gathered.
    const auto host = special_keys<bfloat16>(20011);
    std::vector<std::uint32_t> index(host.size());
    std::iota(index.begin(), index.end(), 0u);
    std::vector<float> weights(host.size());
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i) * 0.5f;
    kiln::vector<bfloat16> keys(q, host);
    kiln::vector<std::uint32_t> positions(q, index);
    kiln::vector<float> moved(q, weights);
    kiln::sort_by_key(keys, positions, moved, kiln::descending);
    const auto order = documented_order(host, true);
    EXPECT_EQ(bits_of(keys.read()), bits_of(permuted(host, order)));
    EXPECT_EQ(positions.read(), order);
    EXPECT_EQ(moved.read(), permuted(weights, order));
}

TEST_P(binary16_sort_test, comparator_sort_of_16_bit_keys) {
    // The merge sort: keys move as 16-bit words and reach the comparator as float. Sizes around
    // the merge sort's runs (its work-group size) and several merge passes; few magnitudes, so
    // that stability shows.
    const auto check = [&]<class T>(std::size_t n) {
        SCOPED_TRACE(std::string(std::is_same_v<T, half> ? "half" : "bfloat16") +
                     ", n = " + std::to_string(n));
        std::vector<T> host(n);
        for (std::size_t i = 0; i < n; ++i)
            host[i] = T(static_cast<float>(static_cast<int>((i * 7919) % 41) - 20) * 0.25f);
        const auto order =
            stable_order(host, [](T a, T b) { return std::fabs(float(a)) < std::fabs(float(b)); });
        std::vector<std::uint32_t> index(n);
        std::iota(index.begin(), index.end(), 0u);
        kiln::vector<T> keys(q, host);
        kiln::vector<std::uint32_t> values(q, index);
        kiln::sort_by_key(keys, values, by_magnitude);
        EXPECT_EQ(bits_of(keys.read()), bits_of(permuted(host, order)));
        EXPECT_EQ(values.read(), order);
        kiln::vector<T> alone(q, host);
        kiln::sort(alone, by_magnitude);
        EXPECT_EQ(bits_of(alone.read()), bits_of(permuted(host, order)));
    };
    const std::size_t run = kiln::detail::plan_merge_sort(device()).work_group_size;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, run - 1, run + 1,
                          5 * run + 3, std::size_t{30001}}) {
        check.operator()<half>(n);
        check.operator()<bfloat16>(n);
    }
}

TEST_P(binary16_sort_test, sixteen_bit_keys_take_the_four_byte_tile) {
    // Twice the items per work-item would take twice the registers and, in the multi-split,
    // more local memory than CUDA grants without opting in.
    const auto wide = kiln::detail::plan_radix_sort(device(), 4, true, 0, 100000);
    const auto narrow = kiln::detail::plan_radix_sort(device(), 2, true, 0, 100000);
    EXPECT_EQ(narrow.items_per_work_item, wide.items_per_work_item);
    EXPECT_EQ(narrow.work_group_size, wide.work_group_size);
    // With values, the 4-byte keys' tile.
    EXPECT_EQ(kiln::detail::plan_radix_sort(device(), 2, true, 4, 100000).items_per_work_item,
              kiln::detail::plan_radix_sort(device(), 4, true, 4, 100000).items_per_work_item);
}

TEST_P(binary16_sort_test, the_example_of_docs_sorting) {
    std::vector<kiln::half> host_keys = {kiln::half(2.0f), kiln::half(-0.0f), kiln::half(0.0f),
                                         std::numeric_limits<kiln::half>::quiet_NaN(),
                                         kiln::half(-1.0f)};
    kiln::vector<kiln::half> keys(q, host_keys);
    kiln::sort(keys);  // -1, -0, +0, 2, NaN; a bfloat16 vector sorts the same way
    EXPECT_EQ(bits_of(keys.read()),
              (std::vector<std::uint16_t>{0xbc00, 0x8000, 0x0000, 0x4000, 0x7e00}));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(binary16_sort_test);

TEST(algo_sort_shape, sixteen_bit_keys_take_two_passes_of_8_bits) {
    kiln::detail::radix_sort_shape shape;
    shape.keys = {kiln::detail::sort_key_kind::floating, 10, 2};
    shape.radix_bits = 8;
    EXPECT_EQ(shape.passes(), 2u);
    shape.radix_bits = 4;
    EXPECT_EQ(shape.passes(), 4u);
    // The kernels move the keys as 16-bit words, not widened.
    shape.radix_bits = 8;
    EXPECT_NE(kiln::detail::radix_sort_source(shape).find("kiln_sort_digit(ushort k"),
              std::string::npos);
}

/// A vector split over two devices: each part sorted on its device, the parts merged on the
/// host in the same order.
class split_binary16_sort_test : public kiln::test::two_devices_test {};

TEST_F(split_binary16_sort_test, half_keys_merge_in_the_documented_order) {
    const auto host = special_keys<half>(50001);
    std::vector<std::uint32_t> index(host.size());
    std::iota(index.begin(), index.end(), 0u);
    kiln::vector<half> keys(queues, host);
    kiln::vector<std::uint32_t> values(queues, index);
    ASSERT_EQ(keys.part_count(), 2u);
    kiln::sort_by_key(keys, values);
    const auto order = documented_order(host, false);
    EXPECT_EQ(bits_of(keys.read()), bits_of(permuted(host, order)));
    EXPECT_EQ(values.read(), order);
}

TEST_F(split_binary16_sort_test, bfloat16_keys_descending) {
    const auto host = special_keys<bfloat16>(50001);
    kiln::vector<bfloat16> keys(queues, host);
    kiln::sort(keys, kiln::descending);
    EXPECT_EQ(bits_of(keys.read()), bits_of(permuted(host, documented_order(host, true))));
}

}  // namespace
