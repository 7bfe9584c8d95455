// SPDX-License-Identifier: Apache-2.0
// copy_if, unique and reduce_by_key on every device through both dispatch paths, against
// std::copy_if, std::unique and a host reduce_by_key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <kiln/algorithm.hpp>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "algo/key_changes.hpp"
#include "algo/scan/compaction_plan.hpp"
#include "algo/scan/compaction_run.hpp"
#include "algo/scan/copy_if.hpp"
#include "algo/scan/reduce_by_key.hpp"
#include "algo/scan/unique.hpp"
#include "expr/test_data.hpp"
#include "support/device_param.hpp"

namespace {

namespace algorithm = kiln::detail::algorithm;
using kiln::test::random_values;

// Affine maps x -> a * x + b modulo 2^32, packed as a << 32 | b, applied left to right.
KILN_FUNCTION(ulong, affine_then, (ulong f, ulong g), {
    const uint a = (uint)(f >> 32) * (uint)(g >> 32);
    const uint b = (uint)(g >> 32) * (uint)f + (uint)g;
    return ((ulong)a << 32) | b;
});
std::uint64_t host_affine_then(std::uint64_t f, std::uint64_t g) {
    const auto a = std::uint32_t(f >> 32) * std::uint32_t(g >> 32);
    const auto b = std::uint32_t(g >> 32) * std::uint32_t(f) + std::uint32_t(g);
    return std::uint64_t(a) << 32 | b;
}

template <class K, class V, class Op>
std::pair<std::vector<K>, std::vector<V>> host_reduce_by_key(const std::vector<K>& keys,
                                                             const std::vector<V>& values, Op op) {
    std::vector<K> out_keys;
    std::vector<V> out_values;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i == 0 || keys[i] != keys[i - 1]) {
            out_keys.push_back(keys[i]);
            out_values.push_back(values[i]);
        } else {
            out_values.back() = op(out_values.back(), values[i]);
        }
    }
    return {out_keys, out_values};
}

/// Expects reduce_by_key's `runs` results in out_keys and out_values to be `expected`'s (the
/// host's keys and values).
template <class K, class V>
void expect_runs(std::size_t runs, const kiln::vector<K>& out_keys,
                 const kiln::vector<V>& out_values,
                 const std::pair<std::vector<K>, std::vector<V>>& expected) {
    ASSERT_EQ(runs, expected.first.size());
    auto got_keys = out_keys.read();
    auto got_values = out_values.read();
    got_keys.resize(runs);
    got_values.resize(runs);
    EXPECT_EQ(got_keys, expected.first);
    EXPECT_EQ(got_values, expected.second);
}

class compaction_test : public kiln::test::device_queue_test {
  protected:
    /// Sizes around the tile of `value_bytes`-byte values (compaction: 4-byte counts where
    /// they fit) on this device, under the policies in force.
    template <kiln::detail::scan_family_member Family>
    std::vector<std::size_t> sizes(Family family, std::size_t value_bytes,
                                   bool large = true) const {
        constexpr bool select = std::is_same_v<Family, algorithm::select_rows>;
        auto policy = kiln::detail::policy_for(family, device());
        if (policy.chunk_bytes) {
            // Chunk kernels count in 32 bits where they can (tests stay below 2^31), and
            // reduce_by_key scans pairs of a run count and a value.
            const std::size_t chunk =
                kiln::detail::chunk_elements(policy, select ? 4 : 2 * value_bytes);
            std::vector<std::size_t> result = {0, 1, 2, chunk - 1, chunk + 1, 3 * chunk + 5};
            if (large) result.push_back(1000007);
            return result;
        }
        if (select && !policy.staged_writes) value_bytes = 8;  // 64-bit counts
        if (value_bytes > 4)
            policy.items_per_work_item = std::max<std::size_t>(1, policy.items_per_work_item / 2);
        const std::size_t tile = policy.tile_size();
        std::vector<std::size_t> result = {0, 1, 2, tile - 1, tile + 1, 3 * tile + 5};
        if (large) result.push_back(1000007);
        return result;
    }
    template <class Body>
    void on_both_paths(Body&& body) {
        kiln::test::on_every_compaction_path(device(), body);
    }
    /// For tests of what the kernels read rather than how the dispatch paths chain counts: each
    /// write form, run tile or run chunk form on one dispatch path (dispatch_paths.hpp).
    template <class Body>
    void on_each_write_form_once(Body&& body) {
        kiln::test::on_every_compaction_path(device(), body,
                                             kiln::test::dispatch_paths::one_per_form);
    }
    template <class Body>
    void on_each_run_form_once(Body&& body) {
        kiln::test::on_every_run_tile(device(), body, kiln::test::dispatch_paths::one_per_form);
    }
    template <class Body>
    void on_each_run_chunk_form_once(Body&& body) {
        kiln::test::on_every_run_chunk_form(device(), body,
                                            kiln::test::dispatch_paths::one_per_form);
    }
    template <class Body>
    void on_every_dispatch_path(Body&& body) {
        kiln::test::on_every_dispatch_path(device(), body);
    }
    template <class Body>
    void on_every_run_tile(Body&& body) {
        kiln::test::on_every_run_tile(device(), body);
    }
    /// Sums the runs of int32 `keys` over `values` on q and compares with the host.
    void expect_sums_by_key_like_the_host(const std::vector<std::int32_t>& keys,
                                          const std::vector<std::int32_t>& values) {
        const std::size_t n = keys.size();
        kiln::vector<std::int32_t> k(q, keys), v(q, values), ok(q, n), ov(q, n);
        const std::size_t runs = kiln::reduce_by_key(k, v, ok, ov);
        expect_runs(runs, ok, ov, host_reduce_by_key(keys, values, std::plus<>()));
    }
};

TEST_P(compaction_test, copy_if_keeps_the_flagged_elements_in_order) {
    on_both_paths([&] {
        for (const std::size_t n : sizes(algorithm::select, 4)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto host = random_values<float>(n, -1, 1, unsigned(n));
            kiln::vector<float> x(q, host), out(q, n);
            const std::size_t kept = kiln::copy_if(x, x > 0, out);
            std::vector<float> expected;
            std::copy_if(host.begin(), host.end(), std::back_inserter(expected),
                         [](float v) { return v > 0; });
            ASSERT_EQ(kept, expected.size());
            auto got = out.read();
            got.resize(kept);
            ASSERT_EQ(got, expected);
        }
    });
}

// A stencil computed from the input itself, with the input tagged so that the kernel takes it
// as one argument, read once per element: what copy_if now does untagged too
// (copy_if_shared_vectors_test.cpp). The tag changes what the kernels read, not how the dispatch
// paths chain counts.
TEST_P(compaction_test, copy_if_of_a_tagged_input_and_its_own_stencil) {
    on_each_write_form_once([&] {
        for (const std::size_t n : sizes(algorithm::select, 4)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            std::vector<std::int32_t> host(n);
            for (std::size_t i = 0; i < n; ++i) host[i] = std::int32_t((i * 2654435761u) >> 7);
            kiln::vector<std::int32_t> x(q, host), out(q, n);
            const auto tx = kiln::tag<1>(x);  // one kernel argument for both uses of x
            const std::size_t kept = kiln::copy_if(tx, (tx & 1) == 0, out);
            std::vector<std::int32_t> expected;
            std::copy_if(host.begin(), host.end(), std::back_inserter(expected),
                         [](std::int32_t v) { return (v & 1) == 0; });
            ASSERT_EQ(kept, expected.size());
            auto got = out.read();
            got.resize(kept);
            ASSERT_EQ(got, expected);
        }
    });
}

TEST_P(compaction_test, copy_if_keeps_all_or_none) {
    on_both_paths([&] {
        for (const std::size_t n : sizes(algorithm::select, 4, false)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            std::vector<std::int32_t> host(n);
            for (std::size_t i = 0; i < n; ++i) host[i] = std::int32_t(i * 3 + 1);
            kiln::vector<std::int32_t> x(q, host), out(q, n);
            ASSERT_EQ(kiln::copy_if(x, x > 0, out), n);
            ASSERT_EQ(out.read(), host);
            out.write(std::vector<std::int32_t>(n, -1));
            ASSERT_EQ(kiln::copy_if(x, x < 0, out), 0u);
            ASSERT_EQ(out.read(), std::vector<std::int32_t>(n, -1));
        }
    });
}

// The output past the kept elements keeps what it held: where vectors of kept elements are
// stored whole, their lanes past the chunk's results must not be written. Small sizes too, where
// the last chunk's last vectors keep every count of elements.
TEST_P(compaction_test, copy_if_leaves_the_output_past_the_kept_elements) {
    on_both_paths([&] {
        auto all_sizes = sizes(algorithm::select, 4, false);
        for (std::size_t n = 8; n <= 40; ++n) all_sizes.push_back(n);
        for (const std::size_t n : all_sizes) {
            SCOPED_TRACE("n = " + std::to_string(n));
            // The flag of copy_if_keeps_all_or_none, whose programs it shares.
            const auto host = random_values<std::int32_t>(n, -100, 200, unsigned(n) + 7);
            std::vector<std::int32_t> expected(n + 24, -1);
            std::size_t kept = 0;
            for (const auto v : host)
                if (v > 0) expected[kept++] = v;
            kiln::vector<std::int32_t> x(q, host), out(q, expected.size());
            out.write(std::vector<std::int32_t>(expected.size(), -1));
            ASSERT_EQ(kiln::copy_if(x, x > 0, out), kept);
            ASSERT_EQ(out.read(), expected);
        }
    });
}

// Counts near and past 2^31 and 2^32 without as many elements: the compaction counts from a
// base (its output still starts at element 0). Below 2^31 it counts in 32 bits (staged tiles and
// chunks), past it in 64.
TEST_P(compaction_test, copy_if_counts_past_32_bits) {
    const std::size_t n = 3 * sizes(algorithm::select, 4)[3] + 7;
    std::vector<std::int64_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = std::int64_t(i) - 5;
    std::vector<std::int64_t> expected;
    std::copy_if(host.begin(), host.end(), std::back_inserter(expected),
                 [](std::int64_t v) { return v % 3 != 0; });
    kiln::vector<std::int64_t> x(q, host), out(q, n);
    const std::uint64_t two_31 = std::uint64_t{1} << 31, two_32 = std::uint64_t{1} << 32;
    for (const std::uint64_t base : {two_31 - n - 1, two_31 - n / 2, two_32 - n / 3}) {
        SCOPED_TRACE("counting from " + std::to_string(base));
        const kiln::detail::scoped_compaction_count_base from(base);
        on_both_paths([&] {
            const auto policy = kiln::detail::policy_for(algorithm::select, device());
            EXPECT_EQ(kiln::detail::plan_compaction(device(), sizeof(std::int64_t), n).narrow,
                      (policy.staged_writes || policy.chunk_bytes) && base + n < two_31);
            out.write(std::vector<std::int64_t>(n, 0));
            ASSERT_EQ(kiln::copy_if(x, x % 3 != 0, out), expected.size());
            auto got = out.read();
            got.resize(expected.size());
            ASSERT_EQ(got, expected);
        });
    }
}

// Values of 8 bytes: what the kernels read, not how the dispatch paths chain counts.
TEST_P(compaction_test, copy_if_of_an_expression_with_64_bit_values) {
    on_each_write_form_once([&] {
        const std::size_t n = sizes(algorithm::select, 8)[5];
        std::vector<std::uint64_t> host(n);
        for (std::size_t i = 0; i < n; ++i) host[i] = (std::uint64_t{0xabcd} << 48) | (i * 7919);
        kiln::vector<std::uint64_t> x(q, host), out(q, n);
        const std::size_t kept = kiln::copy_if(x + 1, (x & 3) == 1, out);
        std::vector<std::uint64_t> expected;
        for (auto v : host)
            if ((v & 3) == 1) expected.push_back(v + 1);
        ASSERT_EQ(kept, expected.size());
        auto got = out.read();
        got.resize(kept);
        EXPECT_EQ(got, expected);
    });
}

TEST_P(compaction_test, copy_if_into_a_small_output_keeps_the_first_and_throws) {
    kiln::vector<std::int32_t> x(q, std::vector<std::int32_t>{1, 0, 2, 3, 0, 4}), out(q, 2);
    try {
        kiln::copy_if(x, x, out);
        FAIL() << "expected invalid_argument_error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("4 elements"), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.read(), (std::vector<std::int32_t>{1, 2}));
}

// Outputs that end inside a chunk, inside a group of the cursor loop's elements and at a group's
// end: the first kept elements land, and the call throws.
TEST_P(compaction_test, copy_if_into_small_outputs_on_every_path) {
    on_both_paths([&] {
        const std::size_t n = sizes(algorithm::select, 4, false)[5];
        std::vector<std::int32_t> host(n);
        std::iota(host.begin(), host.end(), 1);
        for (const std::size_t capacity : {std::size_t{3}, std::size_t{16}, n / 2 - 3}) {
            SCOPED_TRACE("capacity = " + std::to_string(capacity));
            kiln::vector<std::int32_t> x(q, host), out(q, capacity);
            EXPECT_THROW(kiln::copy_if(x, x % 2 == 0, out), kiln::invalid_argument_error);
            const auto got = out.read();
            for (std::size_t i = 0; i < capacity; ++i)
                ASSERT_EQ(got[i], 2 * std::int32_t(i) + 2) << i;
        }
    });
}

// Few kept elements, as copy_if keeping 1% and unique over long runs: where chunk kernels keep
// the kept elements they find while counting (compaction_vector_chunks.cpp), whole chunks, and
// outputs that end within those elements or past them.
TEST_P(compaction_test, copy_if_and_unique_keeping_few) {
    on_both_paths([&] {
        std::vector<std::size_t> all_sizes = sizes(algorithm::select, 4, false);
        all_sizes.push_back(41 * all_sizes[3] + 9);
        for (const std::size_t n : all_sizes) {
            SCOPED_TRACE("n = " + std::to_string(n));
            std::vector<std::int32_t> host(n), keys(n);
            for (std::size_t i = 0, key = 0; i < n; ++i) {
                const std::uint32_t hash = std::uint32_t(i) * 2654435761u;
                host[i] = std::int32_t(hash % 97);
                if (hash % 19 == 0) ++key;  // runs of 19 on average, from 1 long
                keys[i] = std::int32_t(key);
            }
            std::vector<std::int32_t> expected;
            std::copy_if(host.begin(), host.end(), std::back_inserter(expected),
                         [](std::int32_t v) { return v < 3; });
            kiln::vector<std::int32_t> x(q, host), out(q, n);
            ASSERT_EQ(kiln::copy_if(x, x < 3, out), expected.size());
            auto got = out.read();
            got.resize(expected.size());
            ASSERT_EQ(got, expected);
            for (const std::size_t capacity : {std::size_t{1}, expected.size() / 2}) {
                if (capacity == 0 || capacity >= expected.size()) continue;
                SCOPED_TRACE("capacity = " + std::to_string(capacity));
                kiln::vector<std::int32_t> small(q, capacity);
                EXPECT_THROW(kiln::copy_if(x, x < 3, small), kiln::invalid_argument_error);
                const auto first = small.read();
                ASSERT_TRUE(std::equal(first.begin(), first.end(), expected.begin()));
            }
            kiln::vector<std::int32_t> k(q, keys);
            const std::size_t runs = kiln::unique(k);
            keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
            ASSERT_EQ(runs, keys.size());
            auto heads = k.read();
            heads.resize(runs);
            ASSERT_EQ(heads, keys);
        }
    });
}

TEST_P(compaction_test, unique_keeps_the_first_of_each_run) {
    on_both_paths([&] {
        for (const std::size_t n : sizes(algorithm::select, 4)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            auto host = random_values<std::int32_t>(n, 0, 4, unsigned(n) + 1);  // runs of ~1-4
            kiln::vector<std::int32_t> keys(q, host);
            const std::size_t size = kiln::unique(keys);
            const auto end = std::unique(host.begin(), host.end());
            host.erase(end, host.end());
            ASSERT_EQ(size, host.size());
            auto got = keys.read();
            got.resize(size);
            ASSERT_EQ(got, host);
        }
        // All keys equal; and NaN keys, each a run of its own as with std::unique.
        kiln::vector<double> same(q, std::vector<double>(5000, 2.5));
        EXPECT_EQ(kiln::unique(same), 1u);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        if (has_double()) {
            kiln::vector<double> nans(q, std::vector<double>{nan, nan, 1, 1, nan});
            EXPECT_EQ(kiln::unique(nans), 4u);
        }
    });
}

// Runs that end at, begin at and cross the boundaries of work-items and tiles: staged tiles
// compare a work-item's first key with the last of the work-item before it in local memory, and
// a tile's first key with the key before the tile in global memory.
TEST_P(compaction_test, unique_of_runs_around_work_item_and_tile_boundaries) {
    on_both_paths([&] {
        const auto policy = kiln::detail::policy_for(algorithm::select, device());
        const std::size_t items = policy.items_per_work_item, tile = policy.tile_size();
        const std::size_t n = 3 * tile + 5;
        for (const std::size_t length : {std::size_t{1}, items, items + 1, tile, tile + 1}) {
            for (const std::size_t shift : {std::size_t{0}, std::size_t{1}, length - 1}) {
                SCOPED_TRACE("runs of " + std::to_string(length) + ", shifted by " +
                             std::to_string(shift));
                std::vector<std::int32_t> host(n);
                for (std::size_t i = 0; i < n; ++i) host[i] = std::int32_t((i + shift) / length);
                kiln::vector<std::int32_t> keys(q, host);
                const std::size_t size = kiln::unique(keys);
                host.erase(std::unique(host.begin(), host.end()), host.end());
                ASSERT_EQ(size, host.size());
                auto got = keys.read();
                got.resize(size);
                ASSERT_EQ(got, host);
            }
        }
    });
}

// Staged tiles of shapes the NVIDIA rows may take (CUB's sm_90 select tiles are 384 x 17): odd
// items per work-item, and sizes around the tile, for copy_if and unique.
TEST_P(compaction_test, copy_if_and_unique_on_tiles_of_odd_shapes) {
    for (const auto& [group, items] : {std::pair<std::size_t, std::size_t>{96, 17}, {384, 17}}) {
        SCOPED_TRACE(std::to_string(group) + " x " + std::to_string(items));
        // NVIDIA's OpenCL gives the look-back kernel the registers of 256 work-items at most (a
        // launch of 384 is a clear error there); CUDA builds it for the group's size.
        if (group > 256 && device().backend() == kiln::backend_kind::opencl &&
            device().properties().type == kiln::device_type::gpu)
            continue;
        auto policy = kiln::test::strategy_policy(algorithm::select, device(), false);
        policy.work_group_size = group;
        policy.items_per_work_item = items;
        policy.staged_writes = true;
        policy.full_tiles = kiln::detail::tile_access::unrolled;
        const kiln::detail::scoped_algorithm_policy select(algorithm::select, policy);
        on_every_dispatch_path([&] {
            const std::size_t tile = group * items;
            for (const std::size_t n : {std::size_t{1}, tile - 1, tile + 1, 3 * tile + 5}) {
                SCOPED_TRACE("n = " + std::to_string(n));
                auto host = random_values<std::int32_t>(n, 0, 4, unsigned(n) + 3);
                std::vector<std::int32_t> kept;
                std::copy_if(host.begin(), host.end(), std::back_inserter(kept),
                             [](std::int32_t v) { return v > 1; });
                kiln::vector<std::int32_t> x(q, host), out(q, n);
                ASSERT_EQ(kiln::copy_if(x, x > 1, out), kept.size());
                auto got = out.read();
                got.resize(kept.size());
                ASSERT_EQ(got, kept);
                const std::size_t size = kiln::unique(x);
                host.erase(std::unique(host.begin(), host.end()), host.end());
                ASSERT_EQ(size, host.size());
                got = x.read();
                got.resize(size);
                ASSERT_EQ(got, host);
            }
        });
    }
}

TEST_P(compaction_test, reduce_by_key_sums_runs_like_the_host) {
    on_every_run_tile([&] {
        for (const std::size_t n : sizes(algorithm::reduce_by_key, 4)) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto keys = random_values<std::int32_t>(n, 0, 3, unsigned(n) + 2);
            const auto values = random_values<std::int32_t>(n, -100, 100, unsigned(n) + 3);
            ASSERT_NO_FATAL_FAILURE(expect_sums_by_key_like_the_host(keys, values));
        }
    });
}

TEST_P(compaction_test, reduce_by_key_of_distinct_keys_and_runs_of_eight) {
    // Every element a run, then runs of 8 (the benchmark's), which begin at the first item of
    // work-items and of tiles: heads found from the key before a work-item's or a tile's. Then
    // runs of 37, across vectors and chunks, and all elements one run. Last, single elements
    // then runs of 8 in one input: tiles that stage their runs beside tiles that write them
    // directly (a quarter of a tile's items as runs or fewer), and the tile between.
    on_every_run_tile([&] {
        for (const std::size_t n : sizes(algorithm::reduce_by_key, 4, false)) {
            for (const std::size_t run :
                 {std::size_t{1}, std::size_t{8}, std::size_t{37}, n + 1, std::size_t{0}}) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", runs of " +
                             (run ? std::to_string(run) : "1 then 8"));
                std::vector<std::int32_t> keys(n);
                for (std::size_t i = 0; i < n; ++i)
                    keys[i] = std::int32_t(run ? i / run : i < n / 2 ? i : n / 2 + i / 8) - 7;
                const auto values = random_values<std::int32_t>(n, -100, 100, unsigned(n) + 5);
                ASSERT_NO_FATAL_FAILURE(expect_sums_by_key_like_the_host(keys, values));
            }
        }
    });
}

TEST_P(compaction_test, reduce_by_key_with_long_runs_and_other_operations) {
    on_every_run_tile([&] {
        const std::size_t n = sizes(algorithm::reduce_by_key, 8)[5] * 3;
        // All keys equal, then runs longer than a tile: the run's value crosses tiles.
        std::vector<std::uint64_t> keys(n, std::uint64_t{1} << 60);
        std::vector<std::uint64_t> values(n);
        std::mt19937_64 engine(11);
        for (auto& v : values) v = engine() | (std::uint64_t{1} << 32);
        kiln::vector<std::uint64_t> k(q, keys), v(q, values), ok(q, n), ov(q, n);
        ASSERT_EQ(kiln::reduce_by_key(k, v, ok, ov, affine_then), 1u);
        const auto [ek, ev] = host_reduce_by_key(keys, values, host_affine_then);
        EXPECT_EQ(ok.read()[0], ek[0]);
        EXPECT_EQ(ov.read()[0], ev[0]);

        for (std::size_t i = 0; i < n; ++i) keys[i] = (i / 1500) | (std::uint64_t{1} << 63);
        k.write(keys);
        const std::size_t runs = kiln::reduce_by_key(k, v, ok, ov, affine_then);
        expect_runs(runs, ok, ov, host_reduce_by_key(keys, values, host_affine_then));

        // Float values from an expression, maximum per run.
        const auto fv = random_values<float>(n, -10, 10, 12);
        kiln::vector<float> f(q, fv), of(q, n);
        const std::size_t fruns = kiln::reduce_by_key(k, 2 * f, ok, of, kiln::reducers::maximum{});
        std::vector<float> doubled(n);
        for (std::size_t i = 0; i < n; ++i) doubled[i] = 2 * fv[i];
        const auto [fk, fe] =
            host_reduce_by_key(keys, doubled, [](float a, float b) { return std::fmax(a, b); });
        ASSERT_EQ(fruns, fe.size());
        auto gf = of.read();
        gf.resize(fruns);
        EXPECT_EQ(gf, fe);
    });
}

// 8-byte keys and values under a sum, and values from an expression: the chunks' vector loops
// read the keys' and values' lanes as they are (one load, or lane by lane), whichever dispatch
// path chains them. (The tiles meet 8-byte keys and expressions in the tests above.)
TEST_P(compaction_test, reduce_by_key_sums_wide_values_and_expressions) {
    on_each_run_chunk_form_once([&] {
        const std::size_t n = sizes(algorithm::reduce_by_key, 8)[5];
        std::vector<std::uint64_t> keys(n);
        for (std::size_t i = 0; i < n; ++i)
            keys[i] = (i / (1 + i % 5 / 2)) | (std::uint64_t{1} << 40);
        const auto values = random_values<std::int64_t>(n, -1000000, 1000000, 21);
        kiln::vector<std::uint64_t> k(q, keys), ok(q, n);
        kiln::vector<std::int64_t> v(q, values), ov(q, n);
        const std::size_t runs = kiln::reduce_by_key(k, v, ok, ov);
        expect_runs(runs, ok, ov, host_reduce_by_key(keys, values, std::plus<>()));

        const auto small_keys = random_values<std::int32_t>(n, 0, 2, 22);
        const auto small_values = random_values<std::int32_t>(n, -100, 100, 23);
        kiln::vector<std::int32_t> sk(q, small_keys), sv(q, small_values), sok(q, n), sov(q, n);
        const std::size_t small_runs = kiln::reduce_by_key(sk, 3 * sv - 1, sok, sov);
        std::vector<std::int32_t> mapped(n);
        for (std::size_t i = 0; i < n; ++i) mapped[i] = 3 * small_values[i] - 1;
        const auto [sek, sev] = host_reduce_by_key(small_keys, mapped, std::plus<>());
        ASSERT_EQ(small_runs, sek.size());
        auto sgk = sok.read(), sgv = sov.read();
        sgk.resize(small_runs);
        sgv.resize(small_runs);
        EXPECT_EQ(sgk, sek);
        EXPECT_EQ(sgv, sev);
    });
}

// Where a chunk's last head lies, for the chunk loops by vectors, which take it from each lane's
// last head (no walk back) and sum the values in the first loop only where the chunk's first
// vector is not mostly heads: a chunk that begins with single elements (its first vector all
// heads) and ends in one long run; a chunk whose only head is in its tail (after its last whole
// vector); one whose only head is its first vector's last lane; chunks without a head, inside a
// run that spans several. The heads are placed by the chunk size in force.
TEST_P(compaction_test, reduce_by_key_finds_each_chunks_last_head) {
    kiln::test::on_every_run_chunk_form(device(), [&] {
        const std::size_t chunk = kiln::detail::chunk_elements(
            kiln::detail::policy_for(algorithm::reduce_by_key, device()), 8);
        const std::size_t n = 7 * chunk + 5;
        std::vector<bool> head(n, false);
        head[0] = true;
        for (std::size_t i = chunk; i < chunk + 20; ++i) head[i] = true;
        head[3 * chunk - 2] = true;
        head[4 * chunk + 16] = true;
        std::vector<std::int32_t> keys(n);
        std::int32_t key = 5;
        for (std::size_t i = 0; i < n; ++i) keys[i] = key += head[i] ? 1 : 0;
        const auto values = random_values<std::int32_t>(n, -1000, 1000, 31);
        ASSERT_NO_FATAL_FAILURE(expect_sums_by_key_like_the_host(keys, values));
    });
}

// Outputs that end inside a chunk, inside a vector and at a vector's end, where the runs are
// single elements (whole vectors of heads) and of 3: the first runs land, nothing past the
// capacity (the smaller output's size) is written, and the call throws.
TEST_P(compaction_test, reduce_by_key_into_small_outputs_on_every_path) {
    constexpr std::int32_t untouched = -12345;
    constexpr std::size_t spare = 40;
    on_every_run_tile([&] {
        const std::size_t n = sizes(algorithm::reduce_by_key, 4, false)[5];
        for (const std::size_t run : {1, 3}) {
            std::vector<std::int32_t> keys(n), values(n);
            for (std::size_t i = 0; i < n; ++i) {
                keys[i] = std::int32_t(i / run);
                values[i] = std::int32_t(i % 7);
            }
            const auto [ek, ev] = host_reduce_by_key(keys, values, std::plus<>());
            for (const std::size_t capacity :
                 {std::size_t{3}, std::size_t{16}, ek.size() / 2 - 3}) {
                for (const bool wide_keys : {true, false}) {
                    SCOPED_TRACE("runs of " + std::to_string(run) + ", capacity " +
                                 std::to_string(capacity) +
                                 (wide_keys ? ", keys' output larger" : ", values' larger"));
                    const std::size_t key_slots = capacity + (wide_keys ? spare : 0);
                    const std::size_t value_slots = capacity + (wide_keys ? 0 : spare);
                    kiln::vector<std::int32_t> k(q, keys), v(q, values),
                        ok(q, std::vector<std::int32_t>(key_slots, untouched)),
                        ov(q, std::vector<std::int32_t>(value_slots, untouched));
                    EXPECT_THROW(kiln::reduce_by_key(k, v, ok, ov), kiln::invalid_argument_error);
                    const auto gk = ok.read(), gv = ov.read();
                    for (std::size_t r = 0; r < capacity; ++r) {
                        ASSERT_EQ(gk[r], ek[r]) << r;
                        ASSERT_EQ(gv[r], ev[r]) << r;
                    }
                    for (std::size_t r = capacity; r < key_slots; ++r)
                        ASSERT_EQ(gk[r], untouched) << r;
                    for (std::size_t r = capacity; r < value_slots; ++r)
                        ASSERT_EQ(gv[r], untouched) << r;
                }
            }
        }
    });
}

// NaN keys change how keys compare, not how the dispatch paths chain runs.
TEST_P(compaction_test, reduce_by_key_gives_each_nan_key_a_run) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::size_t n = sizes(algorithm::reduce_by_key, 4)[4];
    std::vector<float> keys(n);
    // NaN keys, and runs of -0 then +0 (equal keys: the run keeps the first, -0).
    for (std::size_t i = 0; i < n; ++i)
        keys[i] = i % 7 == 3 ? nan : i % 50 < 5 ? (i % 2 == 0 ? -0.0f : 0.0f) : float(i / 5);
    std::vector<std::int32_t> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = std::int32_t(i % 11);
    on_each_run_form_once([&] {
        kiln::vector<float> k(q, keys), ok(q, n);
        kiln::vector<std::int32_t> v(q, values), ov(q, n);
        const std::size_t runs = kiln::reduce_by_key(k, v, ok, ov);
        const auto [ek, ev] = host_reduce_by_key(keys, values, std::plus<>());
        ASSERT_EQ(runs, ek.size());
        auto gk = ok.read();
        auto gv = ov.read();
        for (std::size_t r = 0; r < runs; ++r) {
            ASSERT_TRUE(gk[r] == ek[r] || (std::isnan(gk[r]) && std::isnan(ek[r]))) << r;
            ASSERT_EQ(std::signbit(gk[r]), std::signbit(ek[r])) << r;
            ASSERT_EQ(gv[r], ev[r]) << r;
        }
    });
}

/// How many elements of `got` differ from `expected` (both of one size).
template <class T>
std::size_t differences(const std::vector<T>& got, const std::vector<T>& expected) {
    EXPECT_EQ(got.size(), expected.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
        wrong += got[i] != expected[i];
    return wrong;
}

// In place: the output is the input (and the stencil reads it). Tiles writing kept elements
// straight into it overwrote elements that later tiles had not read yet (1,707 of 33,334 kept
// elements wrong on a GPU).
TEST_P(compaction_test, copy_if_into_its_own_input) {
    const std::size_t n = 100000;
    std::vector<std::int32_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = std::int32_t(i);
    std::vector<std::int32_t> expected;
    std::copy_if(host.begin(), host.end(), std::back_inserter(expected),
                 [](std::int32_t v) { return v % 3 == 0; });
    // Past the kept elements the output is left as it was: the input's own elements.
    expected.insert(expected.end(), host.begin() + std::ptrdiff_t(expected.size()), host.end());
    on_both_paths([&] {
        kiln::vector<std::int32_t> x(q, host);
        ASSERT_EQ(kiln::copy_if(x, x % 3 == 0, x), 33334u);
        EXPECT_EQ(differences(x.read(), expected), 0u);
        kiln::vector<std::int32_t> y(q, host), flags(q, n);
        flags = y % 3 == 0;
        ASSERT_EQ(kiln::copy_if(2 * y / 2, flags, y), 33334u);  // the input an expression of it
        EXPECT_EQ(differences(y.read(), expected), 0u);
    });
}

// In place: the outputs are the keys and the values (2,730 of 33,334 runs wrong on a GPU).
TEST_P(compaction_test, reduce_by_key_into_its_own_keys_and_values) {
    const std::size_t n = 100000;
    std::vector<std::int32_t> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = std::int32_t(i / 3);
        values[i] = std::int32_t(i % 7);
    }
    auto [ek, ev] = host_reduce_by_key(keys, values, std::plus<>());
    ASSERT_EQ(ek.size(), 33334u);
    on_every_run_tile([&] {
        kiln::vector<std::int32_t> k(q, keys), v(q, values);
        ASSERT_EQ(kiln::reduce_by_key(k, v, k, v), ek.size());
        auto gk = k.read(), gv = v.read();
        gk.resize(ek.size());
        gv.resize(ev.size());
        EXPECT_EQ(differences(gk, ek), 0u) << "keys";
        EXPECT_EQ(differences(gv, ev), 0u) << "values";
    });
}

// reduce_by_key(k, v, o, o): the runs' values overwrote their keys.
TEST_P(compaction_test, reduce_by_key_into_one_vector_for_both_outputs_is_refused) {
    kiln::vector<std::int32_t> k(q, {1, 1, 2, 3, 3, 3}), v(q, {1, 2, 3, 4, 5, 6}), o(q, 6);
    EXPECT_THROW(kiln::reduce_by_key(k, v, o, o), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::reduce_by_key(k, v, k, k), kiln::invalid_argument_error);
}

// copy_if of element_index with a size and a stencil of it said "pass a queue", which copy_if
// cannot take: it runs on the output's device.
TEST_P(compaction_test, copy_if_of_element_index_runs_on_the_outputs_device) {
    const std::size_t n = 1000;
    kiln::vector<std::uint64_t> out(q, n);
    const std::size_t kept =
        kiln::copy_if(kiln::element_index(0, n), kiln::element_index(0, n) % 3 == 0, out);
    ASSERT_EQ(kept, 334u);
    auto got = out.read();
    got.resize(kept);
    std::vector<std::uint64_t> expected(kept);
    for (std::size_t i = 0; i < kept; ++i) expected[i] = 3 * i;
    EXPECT_EQ(got, expected);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(compaction_test);

class compaction_split : public kiln::test::two_parts_test {};

/// Split vectors: each part compacts on its device, after the elements of the parts before it.
TEST_F(compaction_split, copy_if_and_unique_follow_the_parts_in_order) {
    const std::size_t n = 200003;
    const auto host = random_values<std::int32_t>(n, 0, 3, 31);  // runs across the boundary
    kiln::vector<std::int32_t> x(queues, host), out(queues, n);
    kiln::vector<std::uint64_t> where(queues[1], n);
    ASSERT_EQ(x.part_count(), 2u);

    const std::size_t kept = kiln::copy_if(x * 10, x > 0, out);
    std::vector<std::int32_t> expected;
    for (auto v : host)
        if (v > 0) expected.push_back(v * 10);
    ASSERT_EQ(kept, expected.size());
    auto got = out.read();
    got.resize(kept);
    EXPECT_EQ(got, expected);

    // Indices continue across the parts (element_index), into an output on one device.
    const std::size_t zeros = kiln::copy_if(kiln::element_index(), x == 0, where);
    std::vector<std::uint64_t> expected_where;
    for (std::size_t i = 0; i < n; ++i)
        if (host[i] == 0) expected_where.push_back(i);
    ASSERT_EQ(zeros, expected_where.size());
    auto got_where = where.read();
    got_where.resize(zeros);
    EXPECT_EQ(got_where, expected_where);

    // The boundary key is equal to the one before it about a third of the time: force it.
    auto keys = host;
    const std::size_t boundary = x.layout()[1].begin;
    keys[boundary] = keys[boundary - 1];
    x.write(keys);
    const std::size_t size = kiln::unique(x);
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    ASSERT_EQ(size, keys.size());
    auto got_keys = x.read();
    got_keys.resize(size);
    EXPECT_EQ(got_keys, keys);
}

/// Split vectors of four parts (one element each, or none, at the smallest sizes): every part's
/// first key equal to the key before the part, then different, then (double) both NaN, each a
/// run of its own; on tiles, which compare the part's first key in the kernel, and on chunks,
/// where the host compares it and places it after the kept keys before it.
TEST_F(compaction_split, unique_compares_each_part_with_the_one_before_on_every_path) {
    const std::vector<kiln::queue> four = {queues[0], queues[1], queues[0], queues[1]};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Keys as doubles, with each NaN a run of its own (std::unique compares them with ==).
    const auto expect_unique = [&](std::vector<double> keys) {
        kiln::vector<double> x(four, keys);
        ASSERT_EQ(x.part_count(), 4u);
        const std::size_t size = kiln::unique(x);
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        ASSERT_EQ(size, keys.size());
        auto got = x.read();
        got.resize(size);
        for (std::size_t i = 0; i < size; ++i)
            ASSERT_TRUE(got[i] == keys[i] || (std::isnan(got[i]) && std::isnan(keys[i]))) << i;
    };
    if (!queues[0].device().properties().double_precision ||
        !queues[1].device().properties().double_precision)
        GTEST_SKIP() << "no double precision";
    kiln::test::on_every_compaction_path(queues[0].device(), [&] {
        for (const std::size_t n : {std::size_t{2}, std::size_t{5}, std::size_t{2003}}) {
            const auto drawn = random_values<std::int32_t>(n, 0, 3, unsigned(n));
            const kiln::detail::layout parts = kiln::detail::split(four, n);
            for (const char* boundary : {"equal", "different", "NaN"}) {
                SCOPED_TRACE("n = " + std::to_string(n) + ", each part's first key " + boundary);
                std::vector<double> keys(drawn.begin(), drawn.end());
                for (std::size_t k = 1; k < parts.size(); ++k) {
                    const std::size_t b = parts[k].begin;
                    if (b == 0 || b == n) continue;
                    if (boundary == std::string("equal")) keys[b] = keys[b - 1];
                    if (boundary == std::string("different")) keys[b] = keys[b - 1] + 0.5;
                    if (boundary == std::string("NaN")) keys[b] = keys[b - 1] = nan;
                }
                expect_unique(keys);
            }
        }
    });
}

/// Split vectors: runs crossing the boundary take their key from the part where they begin and
/// their value from the part where they end; a non-commutative operation keeps its order.
TEST_F(compaction_split, reduce_by_key_joins_runs_across_the_parts) {
    const std::size_t n = 100003;
    auto keys = random_values<std::int32_t>(n, 0, 3, 7);
    std::sort(keys.begin(), keys.begin() + n / 3);  // a few long runs, then short ones
    const auto values = random_values<std::uint64_t>(n, 0, 1e18, 8);
    kiln::vector<std::int32_t> k(queues, keys), out_keys(queues, n);
    kiln::vector<std::uint64_t> v(queues, values), out_values(queues[1], n);
    ASSERT_EQ(k.part_count(), 2u);
    for (const bool joined : {false, true}) {
        SCOPED_TRACE(joined ? "a run across the boundary" : "keys as drawn");
        if (joined) {
            const std::size_t boundary = k.layout()[1].begin;
            keys[boundary] = keys[boundary + 1] = keys[boundary - 1];
            k.write(keys);
        }
        const std::size_t runs = kiln::reduce_by_key(k, v, out_keys, out_values, affine_then);
        expect_runs(runs, out_keys, out_values, host_reduce_by_key(keys, values, host_affine_then));

        // A sum, which CPU rows walk by vectors.
        expect_runs(kiln::reduce_by_key(k, v, out_keys, out_values), out_keys, out_values,
                    host_reduce_by_key(keys, values, std::plus<>()));
    }
}

// unique's staged tiles read each key from global memory once, coalesced, and compare it with the
// key before it in local memory (CUB's BlockDiscontinuity): only a tile's first key reads the one
// before the tile from global memory. Here the text of the tile kernels, as any device gets them.
TEST(unique_tiles, read_each_key_from_global_memory_once) {
    kiln::detail::scan_policy policy{128, 32};
    policy.full_tiles = kiln::detail::tile_access::unrolled;
    const kiln::detail::scan_operation count{
        "uint", 4,
        [](kiln::detail::source_builder&, const std::string& a, const std::string& b) {
            return "(" + a + " + " + b + ")";
        },
        1, kiln::detail::state_packing::low_32_bits};
    const std::string source = kiln::detail::compaction_tile_program_source(
        count,
        [](kiln::detail::source_builder& b) {
            kiln::detail::unique_shape shape;
            shape.plan.counting.narrow = true;
            return kiln::detail::declare_unique_input(b, shape);
        },
        policy);
    EXPECT_EQ(source.find("kiln_keys[idx - 1]"), std::string::npos) << source;
    EXPECT_NE(source.find("kiln_kept[KILN_PAD(first + j - 1)]"), std::string::npos) << source;
    // Neither flags nor counts staged beside the keys.
    EXPECT_EQ(source.find("kiln_tile["), std::string::npos) << source;
    EXPECT_EQ(source.find("kiln_flag"), std::string::npos) << source;
}

// reduce_by_key's runs in registers stage the tile's run keys, then its run values, through one
// local array: half the local memory of staging both at once (39 KB a group of 256 x 16 int32
// before, 5 groups to an H100 SM). Here the text of the tile kernels, as any device gets them.
TEST(reduce_by_key_tiles, stage_keys_then_values_through_one_local_array) {
    namespace detail = kiln::detail;
    detail::scan_policy policy{256, 16};
    policy.register_runs = true;
    policy.full_tiles = detail::tile_access::wide;
    const detail::declare_input<detail::reduce_by_key_input> by_key =
        [](detail::source_builder& b) {
            b.parameter(std::string("global int* ") + detail::run_outputs::keys);
            b.parameter(std::string("global int* ") + detail::run_outputs::values);
            b.parameter(std::string("ulong ") + detail::run_outputs::capacity);
            b.parameter(std::string("ulong ") + detail::run_outputs::run_base);
            b.parameter("global const int* kiln_keys");
            b.parameter("global const int* values");
            detail::reduce_by_key_input runs{
                .value = {.value = "values[idx]"},
                .value_type = "int",
                .head = "(idx == 0 || kiln_keys[idx] != kiln_keys[idx - 1])",
                .key_type = "int",
                .key = "kiln_keys[idx]",
                .pair =
                    [](const std::string& head, const std::string& value) {
                        return "kiln_segment(" + head + ", " + value + ")";
                    },
                .runs_begun = [](const std::string& pair) { return "(ulong)(" + pair + ").x"; },
                .open_value = [](const std::string& pair) { return "as_int((" + pair + ").y)"; }};
            runs.wide.loads = {{"values", "int4"}};
            for (const char lane : std::string("xyzw"))
                runs.wide.lanes.push_back({{}, std::string("values_in.") + lane});
            return runs;
        };
    const std::string source = detail::reduce_by_key_tile_program_source(
        detail::segment_operation<std::int32_t, kiln::reducers::sum>(true), by_key, policy);
    EXPECT_NE(source.find("local int kiln_run_values[KILN_PADDED_TILE];"), std::string::npos)
        << source;
    EXPECT_EQ(source.find("kiln_run_keys[KILN_PADDED_TILE]"), std::string::npos) << source;
}

// The fields of a compaction's plan that its kernels are written from change the program cache's
// key (the policy's own fields are each checked by
// algo_tuning.policy_key_changes_with_every_field).
TEST(compaction_plan, key_changes_with_every_field_the_kernels_read) {
    using kiln::detail::compaction_plan;
    // A new field fails here first: add it to key() (or say there why the kernels do not read
    // it) and to the changes below.
    static_assert(sizeof(compaction_plan) == sizeof(kiln::detail::scan_policy) + 16);
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(compaction_plan&)>>{
            [](compaction_plan& p) { p.policy.work_group_size = 64; },
            [](compaction_plan& p) { p.narrow = true; },
        });
}

TEST(reduce_by_key_shape, key_changes_with_every_field) {
    using kiln::detail::reduce_by_key_shape;
    // A new field fails here first: add it to key() (or say there why the kernels do not read
    // it) and to the changes below.
    static_assert(sizeof(reduce_by_key_shape) == 4 * sizeof(std::string) + 2 * sizeof(std::size_t) +
                                                     sizeof(kiln::detail::scan_policy));
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(reduce_by_key_shape&)>>{
            [](reduce_by_key_shape& s) { s.key_type = "long"; },
            [](reduce_by_key_shape& s) { s.value_type = "float"; },
            [](reduce_by_key_shape& s) { s.operation = "max"; },
            [](reduce_by_key_shape& s) { s.policy.work_group_size = 64; },
            [](reduce_by_key_shape& s) { s.packed = true; },
            [](reduce_by_key_shape& s) { s.expression = "x * 2"; },
            // key_bytes follows key_type: not a key field of its own.
        });
}

TEST(copy_if_shape, key_changes_with_every_field) {
    using kiln::detail::copy_if_shape;
    // A new field fails here first: add it to key() and to the changes below.
    static_assert(sizeof(copy_if_shape) ==
                  3 * sizeof(std::string) + sizeof(kiln::detail::compaction_plan));
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(copy_if_shape&)>>{
            [](copy_if_shape& s) { s.kept_type = "float"; },
            [](copy_if_shape& s) { s.plan.narrow = true; },
            [](copy_if_shape& s) { s.expression = "x y"; },
            // copy_if(x, x > 0, y) beside copy_if(x, z > 0, y).
            [](copy_if_shape& s) { s.shared_vectors = "1,0,2"; },
        });
}

// Where compactions and reduce_by_key put their results, planned from the layouts alone.
TEST(output_route, direct_only_for_one_part_into_an_unread_output_on_its_device) {
    using kiln::detail::output_route;
    using kiln::detail::plan_output_route;
    EXPECT_EQ(plan_output_route({}), output_route::direct);
    // In place: tiles would overwrite elements later tiles still read.
    EXPECT_EQ(plan_output_route({.input_reads_output = true}), output_route::through_scratch);
    EXPECT_EQ(plan_output_route({.parts = 2}), output_route::through_host);
    EXPECT_EQ(plan_output_route({.parts = 2, .input_reads_output = true}),
              output_route::through_host);
    EXPECT_EQ(plan_output_route({.output_parts = 2}), output_route::through_host);
    EXPECT_EQ(plan_output_route({.output_on_part_device = false}), output_route::through_host);
    EXPECT_EQ(kiln::detail::to_string(output_route::through_scratch), "through scratch");
}

// unique compacts in place only in the chained pass of the chunks by vectors and in the staged
// tiles of decoupled look-back, on an unsplit vector; the host compares a part's first key
// wherever chunks run.
TEST(unique_plan, in_place_only_where_chunks_or_tiles_read_before_they_publish) {
    using kiln::detail::output_route;
    using kiln::detail::plan_unique;
    kiln::detail::compaction_plan tiles{};
    tiles.policy.schedule = kiln::detail::scan_schedule::single_pass;
    const auto on_tiles = plan_unique(tiles, 1, true);
    EXPECT_FALSE(on_tiles.heads_on_host);
    EXPECT_EQ(on_tiles.route, output_route::direct);
    EXPECT_EQ(plan_unique(tiles, 2, true).route, output_route::through_host);
    tiles.policy.staged_writes = false;  // the scatter reads keys again after the count
    EXPECT_EQ(plan_unique(tiles, 1, true).route, output_route::through_scratch);
    tiles.policy.staged_writes = true;
    tiles.policy.schedule = kiln::detail::scan_schedule::multi_pass;  // tiles never wait
    EXPECT_EQ(plan_unique(tiles, 1, true).route, output_route::through_scratch);

    kiln::detail::compaction_plan chunks{};
    chunks.policy.chunk_bytes = 16384;
    chunks.policy.chunk_vector_writes = true;
    const auto chained = plan_unique(chunks, 1, true);
    EXPECT_TRUE(chained.heads_on_host);
    EXPECT_EQ(chained.route, output_route::direct);
    EXPECT_EQ(plan_unique(chunks, 1, false).route, output_route::through_scratch);
    EXPECT_EQ(plan_unique(chunks, 2, true).route, output_route::through_host);
    EXPECT_TRUE(plan_unique(chunks, 2, true).heads_on_host);
    chunks.policy.chunk_vector_writes = false;
    EXPECT_EQ(plan_unique(chunks, 1, true).route, output_route::through_scratch);
}

// The fields of unique's plan that its kernels are written from change the program cache's key;
// scratch and the host are the same kernels, and heads_on_host follows the policy's chunks.
TEST(unique_plan, key_changes_with_every_field_the_kernels_read) {
    using kiln::detail::unique_plan;
    static_assert(sizeof(unique_plan) == sizeof(kiln::detail::compaction_plan) + 8);
    kiln::test::expect_every_change_changes_the_key(std::vector<std::function<void(unique_plan&)>>{
        [](unique_plan& p) { p.counting.policy.work_group_size = 64; },
        [](unique_plan& p) { p.counting.narrow = true; },
        [](unique_plan& p) { p.route = kiln::detail::output_route::direct; },
    });
    unique_plan through_host{};
    through_host.route = kiln::detail::output_route::through_host;
    EXPECT_EQ(through_host.key(), unique_plan{}.key());
}

// The chunk loops by vectors load an input whole where its type says it is a plain array: a
// vector of the values' type, not an expression of one or a vector converted to them.
TEST(scan_element, names_its_array_only_for_a_vector_of_the_values_type) {
    const kiln::vector<std::int32_t> v;
    const kiln::detail::vector_terminal<std::int32_t> x(v);
    kiln::detail::source_builder b;
    const kiln::detail::element_input plain = kiln::detail::scan_element<std::int32_t>(b, x);
    EXPECT_FALSE(plain.plain_array.empty());
    EXPECT_EQ(plain.value, plain.plain_array + "[idx]");
    EXPECT_TRUE(kiln::detail::scan_element<std::int64_t>(b, x).plain_array.empty());
    EXPECT_TRUE(kiln::detail::scan_element<std::int32_t>(b, kiln::detail::as_node(v + 1))
                    .plain_array.empty());
}

}  // namespace
