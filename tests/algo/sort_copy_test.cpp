// SPDX-License-Identifier: Apache-2.0
// kiln::sort(input, output) on every device, against std::stable_sort: the input left as it was,
// sizes around the tile, passes the in-place sort would skip (the first one here reads the
// input), both strategies and both radix paths, read-only input, aliasing, and split vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <kiln/algo/sort_copy.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/interop/native_handles.hpp>
#include <string>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "algo/random_keys.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::random_keys;

class sort_copy_test : public kiln::test::device_queue_test {
  protected:
    /// Sorts a copy of `host` into new memory both ways and checks the result against
    /// std::stable_sort (keys without NaNs: ordered by value) and the input against `host`.
    template <class T>
    void check(const std::vector<T>& host, const std::string& what) {
        SCOPED_TRACE(what + ", n = " + std::to_string(host.size()));
        for (bool descending : {false, true}) {
            SCOPED_TRACE(descending ? "descending" : "ascending");
            std::vector<T> want = host;
            if (descending)
                std::stable_sort(want.begin(), want.end(), std::greater<T>());
            else
                std::stable_sort(want.begin(), want.end());
            const kiln::vector<T> input(q, host);
            kiln::vector<T> output(q, host.size());
            if (descending)
                kiln::sort(input, output, kiln::descending);
            else
                kiln::sort(input, output);
            ASSERT_EQ(output.read(), want);
            ASSERT_EQ(input.read(), host);
        }
    }

    /// Sizes around one tile of the device's row, and a few passes that the data skips.
    void check_all() {
        const auto policy = kiln::detail::radix_sort_tuning_for(device());
        const std::size_t tile = policy.work_group_size * policy.items_per_work_item;
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                              tile - 1, tile, tile + 1, 5 * tile + 17, std::size_t{100003}})
            check(random_keys<std::uint32_t>(n, 7 + static_cast<unsigned>(n)), "uint32");
        check(random_keys<std::int32_t>(30011, 3), "int32");
        check(random_keys<std::int64_t>(30011, 4), "int64");
        check(random_keys<float>(30011, 5), "float");
        // Every key alike: the in-place sort skips every pass, this one moves the first.
        check(std::vector<std::uint32_t>(20011, 42u), "all equal");
        // The first digit shared, the others not: the first pass is the one that would be
        // skipped.
        std::vector<std::uint32_t> low_byte_shared = random_keys<std::uint32_t>(20011, 6);
        for (auto& k : low_byte_shared) k = (k & ~0xffu) | 0x5au;
        check(low_byte_shared, "low byte shared");
        std::vector<float> few(20011);
        for (std::size_t i = 0; i < few.size(); ++i) few[i] = static_cast<float>(i % 3);
        check(few, "three distinct floats");
    }
};

TEST_P(sort_copy_test, every_strategy_and_path) {
    for (const bool chunks : {false, true}) {
        SCOPED_TRACE(chunks ? "chunks" : "tiles");
        auto strategy_policy = kiln::detail::radix_sort_tuning_for(device());
        strategy_policy.chunk_bytes = chunks ? kiln::test::test_chunk_bytes : 0;
        const kiln::detail::scoped_algorithm_policy strategy(strategy_policy);
        // The single pass where the device promises progress (GPUs; see sort_test.cpp).
        for (bool progress : {false, true}) {
            if (progress && !kiln::detail::groups_make_progress(device())) continue;
            SCOPED_TRACE(progress ? "single pass" : "reduce-then-scan");
            const kiln::detail::scoped_forward_progress path(progress);
            check_all();
        }
    }
}

TEST_P(sort_copy_test, read_only_input_is_copied_first) {
    const std::vector<std::uint32_t> host = random_keys<std::uint32_t>(5003, 9);
    const kiln::vector<std::uint32_t> input(q, host);
    kiln::detail::interop::make_read_only(input.part(0).storage());
    kiln::vector<std::uint32_t> output(q, host.size());
    kiln::sort(input, output);
    std::vector<std::uint32_t> want = host;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(output.read(), want);
    EXPECT_EQ(input.read(), host);
}

TEST_P(sort_copy_test, the_same_memory_sorts_in_place_and_other_shapes_are_refused) {
    const std::vector<std::uint32_t> host = random_keys<std::uint32_t>(4001, 10);
    std::vector<std::uint32_t> want = host;
    std::sort(want.begin(), want.end());
    kiln::vector<std::uint32_t> keys(q, host);
    kiln::sort(keys, keys);
    EXPECT_EQ(keys.read(), want);
    kiln::vector<std::uint32_t> again(q, host);
    kiln::vector<std::uint32_t> shared(q, again.part(0));  // a buffer's copies share its memory
    kiln::sort(again, shared);
    EXPECT_EQ(again.read(), want);
    kiln::vector<std::uint32_t> shorter(q, host.size() - 1);
    EXPECT_THROW(kiln::sort(keys, shorter), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(sort_copy_test);

class split_sort_copy_test : public kiln::test::two_parts_test {};

TEST_F(split_sort_copy_test, split_vectors_are_sorted_and_merged) {
    const std::vector<std::int64_t> host = random_keys<std::int64_t>(10007, 11);
    const kiln::vector<std::int64_t> input(queues, host);
    kiln::vector<std::int64_t> output(queues, host.size());
    ASSERT_EQ(input.part_count(), 2u);
    kiln::sort(input, output, kiln::descending);
    std::vector<std::int64_t> want = host;
    std::sort(want.begin(), want.end(), std::greater<>());
    EXPECT_EQ(output.read(), want);
    EXPECT_EQ(input.read(), host);
}

}  // namespace
