// SPDX-License-Identifier: Apache-2.0
// Tests of the world type: the coursework's test world, size checks, invariants, packed flags.
#include "world.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace kiln::heat {
namespace {

// The construction rules, written as one predicate per cell with the later rules
// winning, rather than as the sequence of loops make_test_world runs.
struct expected_cell {
    std::uint32_t flag;
    float temperature;
};

expected_cell expected_test_world_cell(std::uint32_t n, std::uint32_t x, std::uint32_t y) {
    const std::uint32_t low = static_cast<std::uint32_t>(std::floor(n / 3.0));
    const std::uint32_t mid = static_cast<std::uint32_t>(std::floor(n / 2.0));
    const std::uint32_t high = static_cast<std::uint32_t>(std::floor(2.0 * n / 3.0));
    if (x == mid && y == n - 3) return {cell_fixed, 0.0f};         // the sink
    if (y == 1 && x >= 1 && x < n - 1) return {cell_fixed, 1.0f};  // the source
    const bool border = x == 0 || y == 0 || x == n - 1 || y == n - 1;
    const bool wall = (y == low && x < high) || (y == high && x >= low) ||
                      (x == high && y >= low && y < mid) || (x == low && y >= mid && y < high);
    if (border || wall) return {cell_insulator, 0.0f};
    return {cell_normal, 0.0f};
}

class test_world : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(test_world, follows_the_construction_rules) {
    const std::uint32_t n = GetParam();
    const world w = make_test_world(n, 0.25f);
    ASSERT_EQ(w.width, n);
    ASSERT_EQ(w.height, n);
    EXPECT_EQ(w.alpha, 0.25f);
    EXPECT_EQ(w.t, 0.0f);
    ASSERT_EQ(w.flags.size(), std::size_t{n} * n);
    ASSERT_EQ(w.temperatures.size(), std::size_t{n} * n);
    for (std::uint32_t y = 0; y < n; ++y) {
        for (std::uint32_t x = 0; x < n; ++x) {
            const expected_cell expected = expected_test_world_cell(n, x, y);
            EXPECT_EQ(w.flags[w.index(x, y)], expected.flag)
                << "n=" << n << " x=" << x << " y=" << y;
            EXPECT_EQ(w.temperatures[w.index(x, y)], expected.temperature)
                << "n=" << n << " x=" << x << " y=" << y;
        }
    }
    EXPECT_NO_THROW(check_world(w));
}

INSTANTIATE_TEST_SUITE_P(sizes, test_world,
                         ::testing::Values(3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 128u));

TEST(test_world, matches_the_coursework_picture_for_n_10) {
    // The flags `make_world 10` of the original program printed.
    const char* rows[] = {
        "2222222222", "2111111112", "2000000002", "2222222002", "2000002002",
        "2002000002", "2002222222", "2000010002", "2000000002", "2222222222",
    };
    const world w = make_test_world(10, 0.1f);
    for (std::uint32_t y = 0; y < 10; ++y) {
        for (std::uint32_t x = 0; x < 10; ++x) {
            EXPECT_EQ(w.flags[w.index(x, y)], static_cast<std::uint32_t>(rows[y][x] - '0'))
                << "x=" << x << " y=" << y;
        }
    }
}

TEST(test_world, needs_n_of_at_least_3) {
    EXPECT_THROW(make_test_world(0, 0.1f), std::invalid_argument);
    EXPECT_THROW(make_test_world(2, 0.1f), std::invalid_argument);
}

TEST(checked_cell_count, multiplies_sides) {
    EXPECT_EQ(checked_cell_count(1, 1), 1u);
    EXPECT_EQ(checked_cell_count(10, 37), 370u);
}

TEST(checked_cell_count, rejects_empty_huge_and_overflowing_sizes) {
    EXPECT_THROW(checked_cell_count(0, 5), std::length_error);
    EXPECT_THROW(checked_cell_count(5, 0), std::length_error);
    EXPECT_THROW(checked_cell_count(std::uint64_t{1} << 32, 1), std::length_error);
    constexpr std::uint64_t max_side = std::numeric_limits<std::uint32_t>::max();
    try {
        checked_cell_count(max_side, max_side);
        FAIL() << "a 2^64-byte world was accepted";
    } catch (const std::length_error& e) {
        EXPECT_NE(std::string(e.what()).find("more than this machine's"), std::string::npos)
            << e.what();
    }
}

TEST(check_world, rejects_broken_invariants) {
    world w = make_test_world(5, 0.1f);
    EXPECT_NO_THROW(check_world(w));

    world short_flags = w;
    short_flags.flags.pop_back();
    EXPECT_THROW(check_world(short_flags), std::invalid_argument);

    world bad_flag = w;
    bad_flag.flags[3] = 4;
    EXPECT_THROW(check_world(bad_flag), std::invalid_argument);

    world hot = w;
    hot.temperatures[7] = 1.5f;
    EXPECT_THROW(check_world(hot), std::invalid_argument);

    world nan = w;
    nan.temperatures[7] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_THROW(check_world(nan), std::invalid_argument);

    world nan_alpha = w;
    nan_alpha.alpha = std::numeric_limits<float>::quiet_NaN();
    EXPECT_THROW(check_world(nan_alpha), std::invalid_argument);

    world negative_alpha = w;
    negative_alpha.alpha = -0.5f;
    EXPECT_THROW(check_world(negative_alpha), std::invalid_argument);
}

TEST(pack_neighbour_flags, marks_insulators_and_the_outside_as_blocked) {
    // 3 x 2:   normal    insulator normal
    //          fixed     normal    normal
    world w;
    w.width = 3;
    w.height = 2;
    w.flags = {cell_normal, cell_insulator, cell_normal, cell_fixed, cell_normal, cell_normal};
    w.temperatures.assign(6, 0.0f);
    const std::vector<std::uint32_t> packed = pack_neighbour_flags(w);
    const std::uint32_t up = packed_up_blocked, down = packed_down_blocked;
    const std::uint32_t left = packed_left_blocked, right = packed_right_blocked;
    EXPECT_EQ(packed[0], up | left | right);    // right is the insulator
    EXPECT_EQ(packed[1], cell_insulator | up);  // its neighbours all conduct
    EXPECT_EQ(packed[2], up | left | right);    // left is the insulator
    EXPECT_EQ(packed[3], cell_fixed | down | left);
    EXPECT_EQ(packed[4], up | down);  // up is the insulator
    EXPECT_EQ(packed[5], down | right);
}

TEST(pack_neighbour_flags, a_single_cell_is_blocked_all_round) {
    world w;
    w.width = 1;
    w.height = 1;
    w.flags = {cell_normal};
    w.temperatures = {0.5f};
    EXPECT_EQ(pack_neighbour_flags(w)[0],
              packed_up_blocked | packed_down_blocked | packed_left_blocked | packed_right_blocked);
}

// Large enough for bands on several threads (a band per 2^20 cells), with random flags; rows of
// it (a block with halo, as --devices and MPI ranks pack) treat the cells beyond them as outside.
TEST(pack_neighbour_flags, bands_on_several_threads_match_the_rule_cell_by_cell) {
    world w;
    w.width = 1031;
    w.height = 2100;
    w.flags.resize(w.cell_count());
    std::uint32_t state = 12345;
    for (std::uint32_t& flag : w.flags) {
        state = state * 1664525u + 1013904223u;
        flag = (state >> 28) % 3;
    }
    w.temperatures.assign(w.cell_count(), 0.0f);
    for (const world_rows rows : {world_rows{w, 0, w.height}, world_rows{w, 17, 2050}}) {
        const std::vector<std::uint32_t> words = pack_neighbour_flags(rows);
        std::vector<std::uint8_t> bytes(rows.cell_count());
        pack_neighbour_flags_into(rows, std::span<std::uint8_t>(bytes));
        const auto blocks = [&](std::int64_t x, std::int64_t y) {
            return x < 0 || y < 0 || x >= std::int64_t{w.width} || y >= std::int64_t{rows.rows} ||
                   (rows.flags()[static_cast<std::size_t>(y * w.width + x)] & cell_insulator) != 0;
        };
        std::size_t wrong = 0;
        for (std::int64_t y = 0; y < rows.rows; ++y) {
            for (std::int64_t x = 0; x < w.width; ++x) {
                const std::size_t i = static_cast<std::size_t>(y * w.width + x);
                const std::uint32_t expected = rows.flags()[i] |
                                               (blocks(x, y - 1) ? packed_up_blocked : 0u) |
                                               (blocks(x, y + 1) ? packed_down_blocked : 0u) |
                                               (blocks(x - 1, y) ? packed_left_blocked : 0u) |
                                               (blocks(x + 1, y) ? packed_right_blocked : 0u);
                wrong += words[i] != expected || bytes[i] != expected;
            }
        }
        EXPECT_EQ(wrong, 0u) << "rows from " << rows.first_row;
    }
}

TEST(advance_time, adds_dt_once_per_step_in_float) {
    world w = make_test_world(3, 0.1f);
    advance_time(w, 0.1f, 10);
    float expected = 0.0f;
    for (int i = 0; i < 10; ++i) expected += 0.1f;
    EXPECT_EQ(w.t, expected);
}

}  // namespace
}  // namespace kiln::heat
