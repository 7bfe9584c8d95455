// SPDX-License-Identifier: Apache-2.0
// kiln::mpi on 2 and 3 ranks (ctest runs this binary through mpirun): distributed vectors,
// reductions, stencil halos and sparse products against the same computation on one host or
// one device.
//
// Every rank runs every test, so each test's collectives line up across ranks; tests use
// EXPECT, never ASSERT, because a rank that left a test early would leave the others waiting
// (ctest's TIMEOUT turns such a hang into a failure).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/mpi.hpp>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "support/reproducible_inputs.hpp"

namespace {

kiln::mpi::communicator& world() {
    static kiln::mpi::communicator comm;
    return comm;
}

kiln::queue& rank_queue() {
    static kiln::queue q(kiln::mpi::local_device(world()));
    return q;
}

/// Block sizes that differ from rank to rank, with an empty block on every third rank.
std::size_t uneven_count(int rank) {
    const std::size_t counts[] = {37, 0, 1000, 5};
    return counts[static_cast<std::size_t>(rank) % 4];
}

/// The same "random" whole-valued floats on every rank, so that sums are exact in any order.
std::vector<float> host_values(std::size_t n, int seed) {
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i)
        values[i] = static_cast<float>(static_cast<int>((i * 7919 + seed * 104729) % 201) - 100);
    return values;
}

/// This rank's block of a host vector laid out by `d`.
template <class T>
std::vector<T> block_of(const std::vector<T>& all, const kiln::mpi::distribution& d) {
    const int rank = world().rank();
    return {all.begin() + static_cast<std::ptrdiff_t>(d.begin(rank)),
            all.begin() + static_cast<std::ptrdiff_t>(d.end(rank))};
}

TEST(mpi_distribution, collective_and_even_splits) {
    const kiln::mpi::distribution d(world(), uneven_count(world().rank()));
    EXPECT_EQ(d.ranks(), world().size());
    std::size_t expected_begin = 0;
    for (int r = 0; r < d.ranks(); ++r) {
        EXPECT_EQ(d.begin(r), expected_begin);
        EXPECT_EQ(d.count(r), uneven_count(r));
        expected_begin += uneven_count(r);
    }
    EXPECT_EQ(d.size(), expected_begin);
    const auto even = kiln::mpi::distribution::even(7, 3);
    EXPECT_EQ(even.count(0), 3u);
    EXPECT_EQ(even.count(1), 2u);
    EXPECT_EQ(even.count(2), 2u);
}

TEST(mpi_vector, expressions_and_reductions_match_the_host) {
    const kiln::mpi::distribution d(world(), uneven_count(world().rank()));
    const std::vector<float> host_x = host_values(d.size(), 1), host_z = host_values(d.size(), 2);
    // [doc:mpi_vectors]
    kiln::mpi::vector<float> x(world(), rank_queue(), d), y(world(), rank_queue(), d),
        z(world(), rank_queue(), d);
    x.scatter(host_x);                     // rank 0's host_x, a block to every rank
    z.local().write(block_of(host_z, d));  // or each rank writes its own block
    // [/doc]

    // [doc:mpi_expressions]
    y.local() = 2 * x.local() + 3 * z.local();
    const float total = kiln::mpi::sum(world(), y.local());
    const auto [low, high] = kiln::mpi::minmax(world(), y.local());
    const auto positive = kiln::mpi::count(world(), y.local() > 0);
    // [/doc]

    std::vector<float> host_y(x.size());
    for (std::size_t i = 0; i < host_y.size(); ++i) host_y[i] = 2 * host_x[i] + 3 * host_z[i];
    const std::vector<float> gathered = y.gather();
    if (world().rank() == 0) {
        EXPECT_EQ(gathered, host_y);
    } else {
        EXPECT_TRUE(gathered.empty());
    }

    EXPECT_EQ(total, std::accumulate(host_y.begin(), host_y.end(), 0.0f));
    EXPECT_EQ(kiln::mpi::kahan_sum(world(), y.local()), total);
    EXPECT_EQ(low, *std::min_element(host_y.begin(), host_y.end()));
    EXPECT_EQ(high, *std::max_element(host_y.begin(), host_y.end()));
    EXPECT_EQ(kiln::mpi::minimum(world(), y.local()), low);
    EXPECT_EQ(kiln::mpi::maximum(world(), y.local()), high);
    EXPECT_EQ(positive, static_cast<std::uint64_t>(std::count_if(host_y.begin(), host_y.end(),
                                                                 [](float v) { return v > 0; })));
    EXPECT_TRUE(kiln::mpi::any(world(), y.local() == host_y.back()));
    EXPECT_FALSE(kiln::mpi::any(world(), y.local() > high));
    EXPECT_TRUE(kiln::mpi::all(world(), y.local() >= low));
    EXPECT_FALSE(kiln::mpi::all(world(), y.local() > low));
}

TEST(mpi_reproducible, reductions_give_the_golden_bits_on_any_rank_count) {
    // The bits of one device, of two, of PoCL on one thread (tests/algo/reproducible_test.cpp)
    // and of every GPU: docs/reproducibility.md.
    kiln::scoped_determinism reproducible(kiln::determinism::reproducible);
    const kiln::test::golden_inputs in;
    // Each input split evenly by its own size (the cancelling ones are a multiple of 3 long).
    const auto local = [&](const auto& all) {
        using T = typename std::decay_t<decltype(all)>::value_type;
        const auto d = kiln::mpi::distribution::even(all.size(), world().size());
        return kiln::vector<T>(rank_queue(), block_of(all, d));
    };
    using kiln::test::golden_bits;
    using kiln::test::hex_bits;
    const auto wide = local(in.wide), uniform = local(in.uniform), factors = local(in.factors);
    EXPECT_EQ(hex_bits(kiln::mpi::sum(world(), wide)), golden_bits("sum(wide)"));
    EXPECT_EQ(hex_bits(kiln::mpi::sum(world(), local(in.cancelling))),
              golden_bits("sum(cancelling)"));
    EXPECT_EQ(hex_bits(kiln::mpi::sum(world(), uniform * factors)),
              golden_bits("sum(uniform * factors)"));
    EXPECT_EQ(hex_bits(kiln::mpi::minimum(world(), wide)), golden_bits("minimum(wide)"));
    EXPECT_EQ(hex_bits(kiln::mpi::maximum(world(), wide)), golden_bits("maximum(wide)"));
    if (!rank_queue().device().properties().double_precision) return;
    EXPECT_EQ(hex_bits(kiln::mpi::sum(world(), local(in.wide_double))),
              golden_bits("sum(wide_double)"));
    EXPECT_EQ(hex_bits(kiln::mpi::sum(world(), local(in.cancelling_double))),
              golden_bits("sum(cancelling_double)"));
}

TEST(mpi_vector, kahan_sum_keeps_each_ranks_compensation) {
    // 1 on rank 0 and tiny values after it: a plain float sum loses every 1e-8, the rank-order
    // combination of Kahan states keeps them.
    const std::size_t mine = 1000;
    kiln::mpi::vector<float> x(world(), rank_queue(), mine);
    x.local() = 1e-8f;
    if (world().rank() == 0) x.local()[0] = 1.0f;
    const double expected = 1.0 + 1e-8 * static_cast<double>(x.size() - 1);
    EXPECT_NEAR(kiln::mpi::kahan_sum(world(), x.local()), expected, 1e-7);
    EXPECT_EQ(kiln::mpi::sum(world(), x.local() * 0 + 2), 2.0f * static_cast<float>(x.size()));
}

TEST(mpi_vector, a_world_smaller_than_the_ranks_leaves_some_empty) {
    // One element on rank 0, nothing on the others.
    kiln::mpi::vector<int> x(world(), rank_queue(), world().rank() == 0 ? 1 : 0);
    EXPECT_EQ(x.size(), 1u);
    const std::vector<int> host{-42};
    x.scatter(host);
    x.local() = x.local() * 2;
    EXPECT_EQ(kiln::mpi::sum(world(), x.local()), -84);
    EXPECT_EQ(kiln::mpi::minimum(world(), x.local()), -84);
    EXPECT_EQ(kiln::mpi::maximum(world(), x.local()), -84);
    EXPECT_EQ(kiln::mpi::count(world(), x.local()), 1u);
    const std::vector<int> gathered = x.gather();
    if (world().rank() == 0) {
        EXPECT_EQ(gathered, std::vector<int>{-84});
    }

    // Nothing anywhere: the reducers' identities.
    kiln::mpi::vector<float> none(world(), rank_queue(), 0);
    EXPECT_EQ(kiln::mpi::sum(world(), none.local()), 0.0f);
    EXPECT_TRUE(std::isnan(kiln::mpi::maximum(world(), none.local())));
    EXPECT_TRUE(kiln::mpi::all(world(), none.local() > 0));
}

TEST(mpi_stencil, halos_give_the_single_device_result_bit_for_bit) {
    // Blocks of 2, 0 (with 3 ranks) and 20 elements: the halos of 3 before and 2 after reach
    // past the empty block and past the short one's far end, to the range's clamped start.
    const std::size_t counts[] = {2, 0};
    const bool last = world().rank() + 1 == world().size();
    const std::size_t mine = last ? 20 : counts[static_cast<std::size_t>(world().rank()) % 2];
    kiln::mpi::vector<float> x(world(), rank_queue(), mine), y(world(), rank_queue(), mine);
    std::vector<float> host_x(x.size());
    for (std::size_t i = 0; i < host_x.size(); ++i) host_x[i] = std::sin(0.7f * i) + 0.001f * i;
    x.scatter(host_x);

    // [doc:mpi_stencil]
    const kiln::stencil<float> s(rank_queue(), {0.125f, -0.5f, 0.75f, 0.25f, 1.0f, 0.375f}, 3);
    kiln::mpi::apply(s, x, y);  // y = x * s, halos from the neighbouring ranks
    // [/doc]

    kiln::vector<float> whole(rank_queue(), host_x), expected(rank_queue(), host_x.size());
    expected = whole * s;
    const std::vector<float> gathered = y.gather();
    // In place too (no overlap then: the interior kernel would read what it writes).
    kiln::mpi::apply(s, x, x);
    const std::vector<float> in_place = x.gather();
    if (world().rank() == 0) {
        EXPECT_EQ(gathered, expected.read());
        EXPECT_EQ(in_place, expected.read());
    }
}

/// A host CSR matrix of n x n whose rows read their neighbours and two far columns, with small
/// whole values so that products are exact in any order.
struct host_csr {
    std::vector<std::uint64_t> row_pointers{0}, columns;
    std::vector<float> values;
    explicit host_csr(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            std::set<std::size_t> row{(i * 7 + 3) % n, n - 1 - i, i};
            if (i > 0) row.insert(i - 1);
            if (i + 1 < n) row.insert(i + 1);
            for (const std::size_t column : row) {
                columns.push_back(column);
                values.push_back(static_cast<float>((i + 2 * column) % 5) - 2);
            }
            row_pointers.push_back(columns.size());
        }
    }
};

TEST(mpi_sparse, products_read_only_the_columns_they_need_from_other_ranks) {
    const std::size_t counts[] = {2, 0};
    const bool last = world().rank() + 1 == world().size();
    const kiln::mpi::distribution d(
        world(), last ? 20 : counts[static_cast<std::size_t>(world().rank()) % 2]);
    const host_csr whole(d.size());
    const std::size_t first_row = d.begin(world().rank()), end_row = d.end(world().rank());
    // This rank's rows, with row pointers from 0 and global columns.
    std::vector<std::uint64_t> pointers;
    for (std::size_t i = first_row; i <= end_row; ++i)
        pointers.push_back(whole.row_pointers[i] - whole.row_pointers[first_row]);
    const auto nonzeros = static_cast<std::ptrdiff_t>(whole.row_pointers[first_row]);
    const auto nonzeros_end = static_cast<std::ptrdiff_t>(whole.row_pointers[end_row]);
    const std::vector<std::uint64_t> columns(whole.columns.begin() + nonzeros,
                                             whole.columns.begin() + nonzeros_end);
    const std::vector<float> values(whole.values.begin() + nonzeros,
                                    whole.values.begin() + nonzeros_end);
    std::set<std::uint64_t> outside;
    for (const std::uint64_t column : columns)
        if (column < first_row || column >= end_row) outside.insert(column);

    kiln::mpi::vector<float> x(world(), rank_queue(), d), y(world(), rank_queue(), d);
    x.scatter(host_values(d.size(), 3));
    // [doc:mpi_sparse]
    const kiln::mpi::sparse_matrix<float> A(
        world(), rank_queue(), d, std::span<const std::uint64_t>(pointers),
        std::span<const std::uint64_t>(columns), std::span<const float>(values));
    A.multiply(x, y);  // y = A * x: x's elements that A's rows read on other ranks come first
    // [/doc]
    EXPECT_EQ(A.ghost_count(), outside.size());

    const std::vector<float> host_x = host_values(d.size(), 3);
    std::vector<float> expected(d.size());
    for (std::size_t i = 0; i < d.size(); ++i)
        for (std::uint64_t k = whole.row_pointers[i]; k < whole.row_pointers[i + 1]; ++k)
            expected[i] += whole.values[k] * host_x[whole.columns[k]];
    const std::vector<float> gathered = y.gather();
    if (world().rank() == 0) {
        EXPECT_EQ(gathered, expected);
    }
}

TEST(mpi_sparse, a_bad_column_on_one_rank_fails_on_every_rank) {
    const kiln::mpi::distribution d(world(), 3);
    const bool last = world().rank() + 1 == world().size();
    const std::vector<std::uint64_t> pointers{0, 1, 1, 1};
    const std::vector<std::uint64_t> columns{last ? d.size() : 0};
    const std::vector<float> values{1};
    try {
        const kiln::mpi::sparse_matrix<float> A(
            world(), rank_queue(), d, std::span<const std::uint64_t>(pointers),
            std::span<const std::uint64_t>(columns), std::span<const float>(values));
        ADD_FAILURE() << "a column past the end was accepted";
    } catch (const kiln::mpi::rank_failure& e) {
        EXPECT_EQ(e.failed_rank(), world().size() - 1);
        EXPECT_NE(e.rank_message().find("is outside the"), std::string::npos) << e.rank_message();
    }
}

TEST(mpi_exchange, ranges_come_from_every_rank_that_owns_them) {
    // Every rank wants the whole range: an all-gather through range_exchange.
    const kiln::mpi::distribution d(world(), uneven_count(world().rank()));
    std::vector<kiln::mpi::element_range> wanted(static_cast<std::size_t>(world().size()),
                                                 {0, d.size()});
    const kiln::mpi::range_exchange exchange(world(), d, wanted);
    std::vector<std::int64_t> all(d.size());
    std::iota(all.begin(), all.end(), std::int64_t{-5});
    // This rank's own block is not sent to itself: what the caller had there stays.
    std::vector<std::int64_t> received(d.size(), 99);
    exchange.run<std::int64_t>(block_of(all, d), received);
    for (std::size_t i = 0; i < d.size(); ++i) {
        const bool own = i >= d.begin(world().rank()) && i < d.end(world().rank());
        EXPECT_EQ(received[i], own ? 99 : all[i]) << "element " << i;
    }
}

TEST(mpi_errors, a_failed_mpi_call_names_the_call_and_mpis_error) {
    int value = 0;
    try {
        // No rank has this number: MPI returns an error instead of aborting (MPI_ERRORS_RETURN).
        kiln::mpi::detail::check(MPI_Bcast(&value, 1, MPI_INT, world().size() + 7, world().get()),
                                 "MPI_Bcast");
        ADD_FAILURE() << "MPI_Bcast to a rank that does not exist succeeded";
    } catch (const kiln::error& e) {
        EXPECT_EQ(e.call(), "MPI_Bcast");
        EXPECT_EQ(e.code_name(), "MPI_ERR_ROOT");
        EXPECT_NE(std::string(e.what()).find("MPI_Bcast failed: MPI_ERR_ROOT"), std::string::npos)
            << e.what();
    }
}

TEST(mpi_errors, a_failure_on_one_rank_reaches_every_rank) {
    const int failing = world().size() - 1;
    try {
        // [doc:mpi_agree]
        world().agree([&] {
            if (world().rank() == failing) throw std::runtime_error("device lost");
        });
        // [/doc]
        ADD_FAILURE() << "rank " << world().rank() << " did not learn of the failure";
    } catch (const kiln::mpi::rank_failure& e) {
        EXPECT_EQ(e.failed_rank(), failing);
        EXPECT_EQ(e.rank_message(), "device lost");
    }
    EXPECT_NO_THROW(world().agree([] {}));
}

TEST(mpi_devices, ranks_of_one_node_take_devices_by_node_rank) {
    EXPECT_EQ(world().node_size(), world().size());  // CI runs every rank on one host
    const char* spec = std::getenv("KILN_DEVICE");
    const auto candidates =
        spec ? kiln::devices(kiln::filters::from_spec(spec)) : std::vector<kiln::device>{};
    if (!candidates.empty()) {
        EXPECT_EQ(kiln::mpi::local_device(world()),
                  candidates[static_cast<std::size_t>(world().node_rank()) % candidates.size()]);
    }
}

}  // namespace

int main(int argc, char** argv) {
    kiln::mpi::environment mpi(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    const int status = RUN_ALL_TESTS();
    return status;
}
