// SPDX-License-Identifier: Apache-2.0
// kiln::segmented_reduce and kiln::segmented_inclusive_scan on every device, through every
// strategy forced, against host references that fold each segment in order; the plan on devices
// written by hand; the program and tuning keys; and every bad input, offsets the kernels check
// among them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/segmented/segmented_kernels.hpp"
#include "algo/segmented/segmented_plan.hpp"
#include "algo/written_devices.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::segmented_algorithm;
using kiln::detail::segmented_strategy;

constexpr segmented_strategy per_segment_strategies[] = {segmented_strategy::thread_per_segment,
                                                         segmented_strategy::team_per_segment,
                                                         segmented_strategy::cpu_chunks};

/// Which ways of chaining the flat tiles a test runs: the device's own, or both decoupled
/// look-back and reduce-then-scan (each a kernel of its own to compile, the bulk of a PoCL
/// run's time; tests of what both share, the operation or the offsets' type, take one).
enum class chaining { device_own, both };

/// Runs `body` once with each strategy of `algorithm` forced (flat tiles as `flat` says; tile
/// reductions for the reduction alone, a scan taking flat tiles for them), then once with each
/// GPU row of the tuning table forced, so that every device, PoCL included, runs the GPU rows'
/// kernels (their groups, team sizes and unroll) as well as its own.
template <class Body>
void on_every_strategy(Body&& body, chaining flat = chaining::both,
                       segmented_algorithm algorithm = segmented_algorithm::reduce) {
    for (const segmented_strategy s : per_segment_strategies) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_segmented_strategy forced(s);
        body();
    }
    if (algorithm == segmented_algorithm::reduce) {
        SCOPED_TRACE("tile reductions");
        const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::tile_reductions);
        body();
    }
    if (flat == chaining::device_own) {
        SCOPED_TRACE("flat tiles");
        const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::flat_tiles);
        body();
    }
    for (const bool look_back : {false, true}) {
        if (flat == chaining::device_own) break;
        SCOPED_TRACE(look_back ? "flat tiles, look-back" : "flat tiles, reduce-then-scan");
        const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::flat_tiles);
        const kiln::detail::scoped_forward_progress progress(look_back);
        body();
    }
    for (const auto& row : kiln::detail::algorithm::segmented_reduce_rows::rows()) {
        if (row.tuning.strategy == segmented_strategy::cpu_chunks) continue;
        SCOPED_TRACE(row.tuning.key());
        const kiln::detail::scoped_algorithm_policy forced(
            kiln::detail::algorithm::segmented_reduce, row.tuning);
        body();
    }
}

/// `acc` combined with `v` as Op does on the device: fmin and fmax for floats.
template <class Op, class T>
T combine(T acc, T v) {
    // Integer sums wrap as the device's do: in the unsigned type, where wrapping is defined.
    if constexpr (std::is_same_v<Op, kiln::reducers::sum> && std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(acc) + std::make_unsigned_t<T>(v));
    else if constexpr (std::is_same_v<Op, kiln::reducers::sum>)
        return T(acc + v);
    else if constexpr (!std::is_floating_point_v<T>)
        return std::is_same_v<Op, kiln::reducers::minimum> ? std::min(acc, v) : std::max(acc, v);
    else
        return std::is_same_v<Op, kiln::reducers::minimum> ? std::fmin(acc, v) : std::fmax(acc, v);
}

/// Each segment folded in order from the operation's identity, as the header promises.
template <class Op, class T, class O>
std::vector<T> reference(const std::vector<T>& x, const std::vector<O>& offsets) {
    std::vector<T> out;
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        T acc = kiln::detail::segmented_identity<Op, T>::value;
        for (auto k = std::size_t(offsets[i]); k < std::size_t(offsets[i + 1]); ++k)
            acc = combine<Op>(acc, x[k]);
        out.push_back(acc);
    }
    return out;
}

/// Each segment's running fold, in order; elements past the last offset keep `y`'s values.
template <class Op, class T, class O>
std::vector<T> scan_reference(const std::vector<T>& x, const std::vector<O>& offsets,
                              std::vector<T> y) {
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        T acc = kiln::detail::segmented_identity<Op, T>::value;
        for (auto k = std::size_t(offsets[i]); k < std::size_t(offsets[i + 1]); ++k)
            y[k] = acc = combine<Op>(acc, x[k]);
    }
    return y;
}

/// Offsets of segments of `lengths`, from 0.
template <class O>
std::vector<O> offsets_of(const std::vector<std::size_t>& lengths) {
    std::vector<O> offsets{O(0)};
    for (const std::size_t length : lengths) offsets.push_back(O(offsets.back() + length));
    return offsets;
}

/// Small integers, which floats sum exactly in any order while partial sums stay below 2^24
/// (a million of them at most 4e6): float results are then compared exactly.
template <class T>
std::vector<T> small_integers(std::size_t n, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_int_distribution<int> values(std::is_signed_v<T> ? -4 : 0, 4);
    std::vector<T> x(n);
    for (T& v : x) v = T(values(generator));
    return x;
}

/// NaN equals NaN here: a segment holding one must give NaN.
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(expected[i])) {
                EXPECT_TRUE(std::isnan(got[i])) << "segment " << i;
                continue;
            }
        EXPECT_EQ(got[i], expected[i]) << "segment " << i;
    }
}

class segmented_test : public kiln::test::device_queue_test {
  protected:
    /// How expect_reduced and expect_scanned chain the flat tiles.
    chaining flat_ = chaining::both;
    /// Whether they force every strategy, or run the device's own plan alone.
    bool every_strategy_ = true;

    template <class Body>
    void on_the_strategies(Body&& body,
                           segmented_algorithm algorithm = segmented_algorithm::reduce) {
        if (every_strategy_)
            on_every_strategy(body, flat_, algorithm);
        else
            body();
    }

    /// Reduces `host` in segments of `lengths` through every strategy, into out filled with a
    /// value the reduction must overwrite.
    template <class T, class O = std::uint32_t, class Op = kiln::reducers::sum>
    void expect_reduced(const std::vector<T>& host, const std::vector<std::size_t>& lengths) {
        const std::vector<O> host_offsets = offsets_of<O>(lengths);
        const kiln::vector<T> x(q, host);
        const kiln::vector<O> offsets(q, host_offsets);
        on_the_strategies([&] {
            // Filled afresh for each strategy, so that none passes on another's results.
            const kiln::vector<T> out(q, std::vector<T>(lengths.size(), T(7)));
            kiln::segmented_reduce(x, offsets, out, Op{});
            expect_same(out.read(), reference<Op>(host, host_offsets));
        });
        expect_scanned<T, O, Op>(host, host_offsets);
    }

    /// Scans `host` in the segments `host_offsets` bounds through every strategy, into y filled
    /// with values the scan must keep past the last offset, then in place.
    template <class T, class O, class Op>
    void expect_scanned(const std::vector<T>& host, const std::vector<O>& host_offsets) {
        SCOPED_TRACE("inclusive scan");
        const kiln::vector<O> offsets(q, host_offsets);
        const std::vector<T> stale(host.size(), T(7));
        const std::vector<T> expected = scan_reference<Op>(host, host_offsets, stale);
        on_the_strategies(
            [&] {
                const kiln::vector<T> y(q, stale);
                kiln::segmented_inclusive_scan(kiln::vector<T>(q, host), offsets, y, Op{});
                expect_same(y.read(), expected);
                // In place: y is x.
                const kiln::vector<T> x(q, host);
                kiln::segmented_inclusive_scan(x, offsets, x, Op{});
                expect_same(x.read(), scan_reference<Op>(host, host_offsets, host));
            },
            segmented_algorithm::inclusive_scan);
    }

    /// Reduces `host` in segments of `lengths` with tile reductions alone (for tests of their
    /// tiles' edges, which the other strategies do not have).
    template <class T, class Op = kiln::reducers::sum>
    void expect_tile_reduced(const std::vector<T>& host, const std::vector<std::size_t>& lengths) {
        const std::vector<std::uint32_t> host_offsets = offsets_of<std::uint32_t>(lengths);
        const kiln::vector<T> x(q, host);
        const kiln::vector<std::uint32_t> offsets(q, host_offsets);
        const kiln::vector<T> out(q, std::vector<T>(lengths.size(), T(7)));
        const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::tile_reductions);
        kiln::segmented_reduce(x, offsets, out, Op{});
        expect_same(out.read(), reference<Op>(host, host_offsets));
    }

    /// Reduces `host` in segments of `lengths` with teams under `tuning` alone (for tests of a
    /// team knob's own edges).
    template <class T, class Op = kiln::reducers::sum>
    void expect_team_reduced(const kiln::detail::segmented_tuning& tuning,
                             const std::vector<T>& host, const std::vector<std::size_t>& lengths) {
        const std::vector<std::uint32_t> host_offsets = offsets_of<std::uint32_t>(lengths);
        const kiln::vector<T> x(q, host);
        const kiln::vector<std::uint32_t> offsets(q, host_offsets);
        const kiln::vector<T> out(q, std::vector<T>(lengths.size(), T(7)));
        const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::team_per_segment);
        const kiln::detail::scoped_algorithm_policy policy(
            kiln::detail::algorithm::segmented_reduce, tuning);
        kiln::segmented_reduce(x, offsets, out, Op{});
        expect_same(out.read(), reference<Op>(host, host_offsets));
    }

    template <class T>
    void expect_every_shape_reduced() {
        // Lengths around every strategy's group and team: 1, a group, one past a group (of
        // 64 and 256), and ragged ones that are no multiple of anything.
        std::vector<std::size_t> ragged;
        std::mt19937 generator(11);
        for (int i = 0; i < 500; ++i) ragged.push_back(generator() % 300);
        const std::vector<std::vector<std::size_t>> shapes = {
            {1}, {65}, {257}, {1025}, std::vector<std::size_t>(1000, 1), ragged};
        for (const auto& lengths : shapes) {
            std::size_t n = 0;
            for (const std::size_t length : lengths) n += length;
            SCOPED_TRACE(std::to_string(lengths.size()) + " segments of " + std::to_string(n));
            expect_reduced<T>(small_integers<T>(n, 5), lengths);
        }
    }
};

// [doc:segmented-reduce]
TEST_P(segmented_test, each_segment_reduces_to_one_value) {
    const kiln::vector<float> x(q, {1, 2, 3, 4, 5, 6, 7});
    const kiln::vector<std::uint32_t> offsets(q, {0, 3, 3, 7});  // [1 2 3] [] [4 5 6 7]
    kiln::vector<float> sums(q, 3), peaks(q, 3);
    kiln::segmented_reduce(x, offsets, sums);
    kiln::segmented_reduce(x, offsets, peaks, kiln::reducers::maximum{});
    EXPECT_EQ(sums.read(), (std::vector<float>{6, 0, 22}));
    EXPECT_EQ(peaks.read(), (std::vector<float>{3, -INFINITY, 7}));
}
// [/doc]

// [doc:segmented-inclusive-scan]
TEST_P(segmented_test, each_segment_scans_from_its_start) {
    const kiln::vector<std::int32_t> x(q, {1, 2, 3, 4, 5, 6, 7, 8});
    const kiln::vector<std::int64_t> offsets(q, {0, 3, 3, 7});  // [1 2 3] [] [4 5 6 7], 8 in none
    kiln::segmented_inclusive_scan(x, offsets, x);              // in place
    EXPECT_EQ(x.read(), (std::vector<std::int32_t>{1, 3, 6, 4, 9, 15, 22, 8}));
}
// [/doc]

TEST_P(segmented_test, sums_of_every_value_type_match_the_host_reference) {
    // A strategy's kernels differ by the value's width (a 4-byte value packs with its head flag
    // into one look-back word, an 8-byte one keeps it apart), not by its type's name: every
    // strategy runs a 4-byte and an 8-byte type (int32 also in the wrapping tests below), the
    // others run the device's own plan. Each type forced through every strategy is some 28
    // programs to compile.
    expect_every_shape_reduced<float>();
    expect_every_shape_reduced<std::int64_t>();
    every_strategy_ = false;
    expect_every_shape_reduced<std::int32_t>();
    expect_every_shape_reduced<std::uint32_t>();
    expect_every_shape_reduced<std::uint64_t>();
    if (has_double()) expect_every_shape_reduced<double>();
}

TEST_P(segmented_test, integer_sums_wrap_as_the_type_does) {
    // Every strategy with int32; uint32's kernels differ from them only in the type's name.
    const std::vector<std::int32_t> signed_host(300, 2000000000);
    expect_reduced<std::int32_t>(signed_host, {100, 200});
    every_strategy_ = false;
    const std::vector<std::uint32_t> host(300, 4000000000u);
    expect_reduced<std::uint32_t>(host, {1, 2, 297});
}

TEST_P(segmented_test, every_offset_type) {
    // Each offset type is a program of its own for every strategy: every strategy reads 4-byte
    // offsets in the other tests and 8-byte ones here. Signed offsets differ from unsigned ones
    // only in the name the kernels read (and in the offsets' check, which every plan runs), as
    // uint64 would from int64: int32 runs the device's own plan.
    flat_ = chaining::device_own;
    const std::vector<std::size_t> lengths = {0, 3, 300, 0, 1, 70};
    const std::vector<float> host = small_integers<float>(374, 6);
    expect_reduced<float, std::int64_t>(host, lengths);
    every_strategy_ = false;
    expect_reduced<float, std::int32_t>(host, lengths);
}

TEST_P(segmented_test, minimum_and_maximum_give_their_identity_to_empty_segments) {
    // Every strategy with floats (fmin and fmax); the integers' min and max are the same text
    // in every strategy's fold, so they run the device's own plan.
    flat_ = chaining::device_own;
    const std::vector<std::size_t> lengths = {0, 5, 0, 300, 1, 0};
    expect_reduced<float, std::uint32_t, kiln::reducers::minimum>(small_integers<float>(306, 7),
                                                                  lengths);
    expect_reduced<float, std::uint32_t, kiln::reducers::maximum>(small_integers<float>(306, 8),
                                                                  lengths);
    every_strategy_ = false;
    expect_reduced<std::int32_t, std::uint32_t, kiln::reducers::minimum>(
        small_integers<std::int32_t>(306, 9), lengths);
    expect_reduced<std::uint64_t, std::uint32_t, kiln::reducers::maximum>(
        small_integers<std::uint64_t>(306, 10), lengths);
}

TEST_P(segmented_test, empty_inputs_and_empty_segments) {
    // No segments, with and without elements (those past the last offset belong to none).
    expect_reduced<float>({}, {});
    expect_reduced<float>({1, 2, 3}, {});
    // Only empty segments, of an empty x and of a full one.
    expect_reduced<float>({}, {0, 0, 0});
    expect_reduced<float>({1, 2, 3}, {0, 0, 0, 0});
    // Empty segments leading, trailing and between, and elements past the last offset.
    expect_reduced<std::int32_t>(small_integers<std::int32_t>(20, 12), {0, 0, 3, 0, 0, 9, 0, 0});
    // Empty segments at x's end, which no element begins.
    expect_reduced<float>({1, 2, 3}, {1, 2, 0, 0});
    // One segment of one element, and of everything.
    expect_reduced<float>({5}, {1});
    expect_reduced<float>(small_integers<float>(30011, 13), {30011});
}

TEST_P(segmented_test, a_huge_segment_among_tiny_ones) {
    // 10^5 elements: a hundred tiles and more of every device's flat tiles, and a team's or a
    // chunk's far longer walk than its neighbours'.
    std::vector<std::size_t> lengths(2000, 1);
    lengths[977] = 100000;
    lengths[5] = 0;
    expect_reduced<float>(small_integers<float>(100000 + 1998, 14), lengths);
}

/// The flat tiles' elements per tile on the test's device (tiles of 4-byte values).
std::size_t flat_tile_size(const kiln::device& dev) {
    return kiln::detail::plan_segmented(dev.properties(),
                                        {.elements = 1, .forced = segmented_strategy::flat_tiles})
        .tiles.tile_size();
}

TEST_P(segmented_test, segments_against_tile_boundaries) {
    const std::size_t tile = flat_tile_size(device());
    ASSERT_GT(tile, 2u);
    // A boundary exactly at each of the first tile boundaries, empty segments there, one
    // segment over many tiles starting and ending within tiles, and a last tile that is not
    // full, with elements past the last offset.
    const std::vector<std::size_t> lengths = {tile, 0, tile, 1, 5 * tile + 3, tile - 4, 0, 0, 7};
    std::size_t n = 0;
    for (const std::size_t length : lengths) n += length;
    expect_reduced<float>(small_integers<float>(n + 5, 16), lengths);
    // 8-byte values (as double's, in tiles of their own), with the sums' programs.
    expect_reduced<std::int64_t>(small_integers<std::int64_t>(n + 5, 17), lengths);
    // Empty segments after the last element, at a tile's end.
    expect_reduced<float>(small_integers<float>(2 * tile, 19), {2 * tile, 0, 0});
    // Only the last offset at a tile's end, and segments ending exactly at n = k tiles.
    expect_reduced<std::int64_t>(small_integers<std::int64_t>(3 * tile, 18),
                                 {tile - 1, 2 * tile + 1});
}

/// Tile reductions' elements per tile on the test's device, for values of `value_bytes`.
std::size_t reduction_tile_size(const kiln::device& dev, std::size_t value_bytes) {
    const auto plan = kiln::detail::plan_segmented(
        dev.properties(),
        {.elements = 1, .value_bytes = value_bytes, .forced = segmented_strategy::tile_reductions});
    return plan.work_group_size * plan.tile_items;
}

TEST_P(segmented_test, tile_reductions_join_pieces_across_their_tiles) {
    const std::size_t tile = reduction_tile_size(device(), 4);
    const std::size_t items =
        tile /
        kiln::detail::plan_segmented(device().properties(),
                                     {.elements = 1, .forced = segmented_strategy::tile_reductions})
            .work_group_size;
    ASSERT_GT(items, 1u);
    // Boundaries exactly at tile boundaries, empty segments there, a segment over many tiles
    // starting and ending within tiles, a last tile not full, elements past the last offset.
    const std::vector<std::size_t> edges = {tile, 0, tile, 1, 5 * tile + 3, tile - 4, 0, 0, 7};
    std::size_t n = 0;
    for (const std::size_t length : edges) n += length;
    expect_tile_reduced<float>(small_integers<float>(n + 5, 21), edges);
    if (has_double()) {
        const std::size_t wide = reduction_tile_size(device(), 8);
        expect_tile_reduced<double>(small_integers<double>(3 * wide + 9, 22),
                                    {wide / 2, 2 * wide, 0, wide / 2 + 9});
    }
    // A tile of every kind of piece: whole segments longer than a work-item's items (the group
    // folds them) and not (a work-item each), empty ones, more short ones than the group has
    // work-items, and one crossing into the next tile.
    std::vector<std::size_t> mixed = {tile / 4, 2, items, items + 1, 0, 1, 0};
    mixed.insert(mixed.end(), 600, 1);
    mixed.push_back(tile);
    mixed.push_back(3);
    n = 0;
    for (const std::size_t length : mixed) n += length;
    expect_tile_reduced<std::int32_t>(small_integers<std::int32_t>(n, 23), mixed);
    // Empty segments at x's end, after a tile's last element, which no tile writes.
    expect_tile_reduced<float>(small_integers<float>(2 * tile, 24), {2 * tile, 0, 0});
    // Whole tiles, each its own segment, and segments ending exactly at n = k tiles.
    expect_tile_reduced<float>(small_integers<float>(3 * tile, 25), {tile, tile, tile});
    expect_tile_reduced<std::int64_t>(small_integers<std::int64_t>(3 * tile, 26),
                                      {tile - 1, 2 * tile + 1});
    // A segment of more tiles than its fix team has lanes (one lane folds several tiles), with
    // the team sized from short segments (a lane alone) and from long ones.
    std::vector<std::size_t> one_long(200, 1);
    one_long[50] = 40 * tile + 7;
    expect_tile_reduced<float>(small_integers<float>(40 * tile + 206, 27), one_long);
    expect_tile_reduced<float>(small_integers<float>(41 * tile + 7, 28),
                               {tile / 2, 40 * tile + 7, tile / 2});
}

TEST_P(segmented_test, tile_reductions_carry_nan_infinities_and_wrapping_across_tiles) {
    const std::size_t tile = reduction_tile_size(device(), 4);
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    // Segments over three tiles: one NaN in the second tile, +inf in one tile's first piece and
    // -inf in the next tile's, one +inf alone.
    std::vector<float> host = small_integers<float>(6 * tile, 29);
    host[tile + 5] = nan;
    host[3 * tile - 1] = inf;
    host[3 * tile + 1] = -inf;
    host[5 * tile + 2] = inf;
    const std::vector<std::size_t> lengths = {3 * tile - 7, 2 * tile + 100, tile - 93};
    expect_tile_reduced<float>(host, lengths);
    expect_tile_reduced<float, kiln::reducers::minimum>(host, lengths);
    expect_tile_reduced<float, kiln::reducers::maximum>(host, lengths);
    const std::vector<std::int32_t> large(3 * tile + 7, 2000000000);
    expect_tile_reduced<std::int32_t>(large, {tile + 1, 2 * tile + 6});
    const std::vector<std::uint64_t> wide(2 * tile + 3, std::uint64_t(1) << 62);
    expect_tile_reduced<std::uint64_t>(wide, {2 * tile + 3});
}

TEST_P(segmented_test, team_wide_loads_read_misaligned_heads_and_tails_one_by_one) {
    using kiln::detail::segmented_tuning;
    // Teams of 2 lanes (fewer than a head's 3 elements) and of 32 and 64 (a group), each lane
    // with 4 loads in flight, or 2 past which 3 whole loads remain.
    const segmented_tuning pairs{.strategy = segmented_strategy::team_per_segment,
                                 .work_group_size = 64,
                                 .elements_per_lane = 64,
                                 .wide_loads = true};
    segmented_tuning wide_teams = pairs;
    wide_teams.elements_per_lane = 1;
    wide_teams.unroll = 2;
    // Segments of 0 to 40 elements one after another, so that they start at every element of a
    // load and end at every other, some within one load, some across one edge; then one that
    // crosses many loads, with an unroll's remainder, and elements past the last offset.
    std::vector<std::size_t> lengths;
    for (std::size_t length = 0; length <= 40; ++length) lengths.push_back(length);
    lengths.push_back(1);
    lengths.push_back(64 * 4 * 3 + 4 * 3 + 1);
    lengths.push_back(0);
    std::size_t n = 0;
    for (const std::size_t length : lengths) n += length;
    for (const segmented_tuning& tuning : {pairs, wide_teams}) {
        SCOPED_TRACE(tuning.key());
        expect_team_reduced<float>(tuning, small_integers<float>(n + 3, 41), lengths);
        expect_team_reduced<std::int64_t>(tuning, small_integers<std::int64_t>(n + 3, 42), lengths);
    }
    // Two lanes per load, and sums that wrap.
    if (has_double())
        expect_team_reduced<double>(pairs, small_integers<double>(n + 3, 43), lengths);
    const std::vector<std::uint32_t> large(n, 4000000000u);
    expect_team_reduced<std::uint32_t>(wide_teams, large, lengths);
    // Empty inputs, one element, one segment holding everything.
    expect_team_reduced<float>(pairs, {}, {0, 0});
    expect_team_reduced<float>(pairs, {5}, {1});
    expect_team_reduced<float>(wide_teams, small_integers<float>(1001, 44), {1001});
    // NaN and infinities in heads, whole loads and tails (| marks the loads' edges inside a
    // segment): [0 0 0], [1 | nan 2 3 4 | inf], [-inf 5 6 | 7 8 9 inf], [nan nan nan].
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    const std::vector<float> special = {0, 0, 0, 1, nan, 2,   3,   4,   inf, -inf,
                                        5, 6, 7, 8, 9,   inf, nan, nan, nan};
    const std::vector<std::size_t> special_lengths = {3, 6, 7, 3};
    for (const segmented_tuning& tuning : {pairs, wide_teams}) {
        SCOPED_TRACE(tuning.key());
        expect_team_reduced<float>(tuning, special, special_lengths);
        expect_team_reduced<float, kiln::reducers::minimum>(tuning, special, special_lengths);
        expect_team_reduced<float, kiln::reducers::maximum>(tuning, special, special_lengths);
    }
}

TEST_P(segmented_test, team_shuffle_folds_join_sub_groups_and_teams) {
    using kiln::detail::segmented_tuning;
    // Teams of a whole group of 256 (8 sub-groups of 32), two of 128 in a group, and of 4
    // (within one sub-group), from the segments' mean length of about 130.
    const segmented_tuning group_teams{.strategy = segmented_strategy::team_per_segment,
                                       .work_group_size = 256,
                                       .elements_per_lane = 1,
                                       .unroll = 2,
                                       .shuffle_fold = true};
    segmented_tuning half_teams = group_teams;
    half_teams.elements_per_lane = 2;
    half_teams.wide_loads = true;
    segmented_tuning small_teams = group_teams;
    small_teams.work_group_size = 64;
    small_teams.elements_per_lane = 64;
    // Lengths around a sub-group, a team and a group, empty ones among them, elements past the
    // last offset.
    const std::vector<std::size_t> lengths = {0,   1,   2,   31,  32,  33, 63, 64,  65, 127,
                                              128, 129, 255, 256, 257, 0,  1,  511, 0,  1000};
    std::size_t n = 0;
    for (const std::size_t length : lengths) n += length;
    for (const segmented_tuning& tuning : {group_teams, half_teams, small_teams}) {
        SCOPED_TRACE(tuning.key());
        expect_team_reduced<float>(tuning, small_integers<float>(n + 5, 51), lengths);
    }
    expect_team_reduced<std::int64_t>(group_teams, small_integers<std::int64_t>(n, 52), lengths);
    const std::vector<std::uint32_t> large(n, 4000000000u);
    expect_team_reduced<std::uint32_t>(half_teams, large, lengths);
    // NaN and infinities in every sub-group of a team of 64: [nan at 40 of 100], [inf at 5,
    // -inf at 70 of 100], [inf at 33 of 40], then short ones, [nan nan nan] and [7].
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    std::vector<float> special = small_integers<float>(243, 53);
    special[40] = nan;
    special[100 + 5] = inf;
    special[100 + 70] = -inf;
    special[200 + 33] = inf;
    special.insert(special.end(), {nan, nan, nan, 7});
    const std::vector<std::size_t> special_lengths = {100, 100, 40, 0, 3, 3, 1};
    expect_team_reduced<float>(group_teams, special, special_lengths);
    expect_team_reduced<float, kiln::reducers::minimum>(group_teams, special, special_lengths);
    expect_team_reduced<float, kiln::reducers::maximum>(group_teams, special, special_lengths);
}

TEST_P(segmented_test, integer_sums_over_many_tiles_wrap) {
    const std::size_t tile = flat_tile_size(device());
    const std::vector<std::int32_t> host(3 * tile + 7, 2000000000);
    expect_reduced<std::int32_t>(host, {tile + 1, 2 * tile + 6});
    // 8-byte carries through the look-back, as int64 (the sums' programs; uint64's differ in
    // the type's name alone).
    const std::vector<std::int64_t> wide(2 * tile + 3, std::int64_t(1) << 62);
    expect_reduced<std::int64_t>(wide, {2 * tile + 3});
}

TEST_P(segmented_test, nan_and_infinities) {
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    const std::vector<float> host = {1, nan, 2, inf, 3, inf, -inf, -inf, 4, nan, nan, 5};
    // [1 nan] [2 inf] [3 inf -inf] [-inf 4] [nan nan] [5]: sums NaN, inf, NaN, -inf, NaN, 5;
    // minimum and maximum ignore NaN but where every element is NaN.
    const std::vector<std::size_t> lengths = {2, 2, 3, 2, 2, 1};
    expect_reduced<float>(host, lengths);
    // The flat tiles' two chainings carry values alike whatever the operation: the sum took
    // both, minimum and maximum take the device's own.
    flat_ = chaining::device_own;
    expect_reduced<float, std::uint32_t, kiln::reducers::minimum>(host, lengths);
    expect_reduced<float, std::uint32_t, kiln::reducers::maximum>(host, lengths);
    // Segments long enough on average for the CPU scan's blocks, NaN and infinities inside a
    // block, at its first and last element, and in the element-by-element tail.
    std::vector<float> blocks(51, 1.0f);
    blocks[0] = nan;
    blocks[12] = inf;
    blocks[15] = -inf;
    blocks[23] = nan;
    blocks[24] = -inf;
    blocks[49] = inf;
    flat_ = chaining::both;
    expect_reduced<float>(blocks, {17, 8, 9, 17});
    flat_ = chaining::device_own;
    expect_reduced<float, std::uint32_t, kiln::reducers::minimum>(blocks, {17, 8, 9, 17});
    expect_reduced<float, std::uint32_t, kiln::reducers::maximum>(blocks, {17, 8, 9, 17});
}

TEST_P(segmented_test, fractional_floats_within_the_documented_bound) {
    // Each strategy sums a segment in its own order: |error| <= length x epsilon x sum |x_k|.
    std::mt19937 generator(15);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<std::size_t> lengths;
    for (int i = 0; i < 300; ++i) lengths.push_back(generator() % 2000);
    std::vector<float> host;
    for (const std::size_t length : lengths)
        for (std::size_t k = 0; k < length; ++k) host.push_back(uniform(generator));
    const auto host_offsets = offsets_of<std::uint32_t>(lengths);
    const kiln::vector<float> x(q, host);
    const kiln::vector<std::uint32_t> offsets(q, host_offsets);
    kiln::vector<float> out(q, lengths.size()), scanned(q, host.size());
    const auto within_the_bound = [&] {
        kiln::segmented_reduce(x, offsets, out);
        kiln::segmented_inclusive_scan(x, offsets, scanned);
        const std::vector<float> got = out.read(), prefixes = scanned.read();
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            double exact = 0, magnitude = 0;
            for (std::size_t k = host_offsets[i]; k < host_offsets[i + 1]; ++k) {
                exact += host[k];
                magnitude += std::fabs(host[k]);
                // The scan's element k holds a sum of k - begin + 1 elements.
                const double terms = double(k - host_offsets[i] + 1);
                EXPECT_LE(std::fabs(prefixes[k] - exact),
                          terms * std::numeric_limits<float>::epsilon() * magnitude)
                    << "segment " << i << ", element " << k;
            }
            const double bound =
                double(lengths[i]) * std::numeric_limits<float>::epsilon() * magnitude;
            EXPECT_LE(std::fabs(got[i] - exact), bound) << "segment " << i;
        }
    };
    on_every_strategy(within_the_bound);
    // The teams' shuffle fold, in its own order.
    const kiln::detail::scoped_segmented_strategy teams(segmented_strategy::team_per_segment);
    const kiln::detail::scoped_algorithm_policy shuffled(
        kiln::detail::algorithm::segmented_reduce,
        kiln::detail::segmented_tuning{.strategy = segmented_strategy::team_per_segment,
                                       .elements_per_lane = 1,
                                       .shuffle_fold = true});
    within_the_bound();
}

/// `bad` throws invalid_argument_error naming `named`.
template <class Bad>
void expect_rejected(Bad&& bad, const std::string& named) {
    try {
        bad();
        ADD_FAILURE() << "no error; expected one naming " << named;
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
}

TEST_P(segmented_test, bad_offsets_are_named) {
    const kiln::vector<float> x(q, std::vector<float>(100, 1.0f));
    const kiln::vector<float> out(q, 3);
    const auto with = [&](std::vector<std::int64_t> host) {
        return kiln::vector<std::int64_t>(q, host);
    };
    on_every_strategy([&] {
        const auto rejected = [&](std::vector<std::int64_t> host, const std::string& named) {
            const auto offsets = with(host);
            expect_rejected([&] { kiln::segmented_reduce(x, offsets, out); }, named);
        };
        rejected({1, 2, 3, 4}, "offsets[0] = 1: the first offset must be 0");
        rejected({0, 50, 40, 60}, "offsets[2] = 40 is below offsets[1] = 50");
        rejected({0, 50, 60, 101}, "offsets[3] = 101 is past x's 100 elements");
        rejected({0, -1, 60, 70}, "offsets[1] = -1 is below offsets[0] = 0");
        // The first bad segment is named, whichever work-item found its own first.
        rejected({0, 10, 5, 200}, "offsets[2] = 5 is below offsets[1] = 10");
    });
    const kiln::vector<float> none(q, 0);
    expect_rejected([&] { kiln::segmented_reduce(x, with({3}), none); },
                    "offsets[0] = 3: the first offset must be 0");
    // The offsets of a valid call still work after the errors.
    const auto good = with({0, 50, 60, 100});
    kiln::segmented_reduce(x, good, out);
    EXPECT_EQ(out.read(), (std::vector<float>{50, 10, 40}));
}

TEST_P(segmented_test, the_scan_names_bad_offsets_and_sizes) {
    const kiln::vector<float> x(q, std::vector<float>(100, 1.0f));
    const kiln::vector<float> y(q, 100);
    on_every_strategy(
        [&] {
            const kiln::vector<std::int32_t> decreasing(q, {0, 50, 40, 60});
            expect_rejected([&] { kiln::segmented_inclusive_scan(x, decreasing, y); },
                            "offsets[2] = 40 is below offsets[1] = 50");
            const kiln::vector<std::int32_t> past(q, {0, 50, 101});
            expect_rejected([&] { kiln::segmented_inclusive_scan(x, past, y); },
                            "offsets[2] = 101 is past x's 100 elements");
        },
        chaining::both, segmented_algorithm::inclusive_scan);
    const kiln::vector<std::int32_t> offsets(q, {0, 100});
    const kiln::vector<float> short_y(q, 99);
    expect_rejected([&] { kiln::segmented_inclusive_scan(x, offsets, short_y); },
                    "y has 99 elements and x 100: they must have as many");
    const kiln::vector<std::int32_t> no_offsets(q, 0);
    expect_rejected([&] { kiln::segmented_inclusive_scan(x, no_offsets, y); }, "offsets is empty");
}

TEST_P(segmented_test, the_cpu_scan_of_short_segments_checks_each_end_as_it_reaches_it) {
    // Segments shorter than the CPU scan's blocks on average: one loop across each chunk's
    // segments, here in chunks of a few segments each, so that several chunks meet bad entries.
    const kiln::detail::scoped_segmented_strategy forced(segmented_strategy::cpu_chunks);
    const kiln::detail::scoped_algorithm_policy many_chunks(
        kiln::detail::algorithm::segmented_reduce,
        kiln::detail::segmented_tuning{.strategy = segmented_strategy::cpu_chunks,
                                       .chunk_elements = 4,
                                       .chunks_per_compute_unit = 64});
    std::vector<std::size_t> lengths;
    for (std::size_t k = 0; k < 40; ++k) lengths.push_back(k % 5);  // empty ones among them
    const std::vector<std::int32_t> good = offsets_of<std::int32_t>(lengths);
    const std::vector<std::int32_t> host = small_integers<std::int32_t>(good.back() + 3, 9);
    const kiln::vector<std::int32_t> x(q, host);
    expect_scanned<std::int32_t, std::int32_t, kiln::reducers::sum>(host, good);
    const kiln::vector<std::int32_t> y(q, host.size());
    const auto rejected = [&](std::vector<std::int32_t> offsets, const std::string& named) {
        const kiln::vector<std::int32_t> bad(q, offsets);
        expect_rejected([&] { kiln::segmented_inclusive_scan(x, bad, y); }, named);
    };
    std::vector<std::int32_t> first = good, decreasing = good, past = good;
    first[0] = 1;
    rejected(first, "offsets[0] = 1: the first offset must be 0");
    decreasing[21] = decreasing[20] - 1;
    decreasing[35] = 1000;  // a later chunk's bad entry, which its own work-item may find first
    rejected(decreasing,
             "offsets[21] = " + std::to_string(decreasing[21]) + " is below offsets[20]");
    past[40] = std::int32_t(host.size()) + 1;
    rejected(past, "offsets[40] = " + std::to_string(past[40]) + " is past x's");
}

TEST_P(segmented_test, outputs_that_are_inputs_they_overwrite_are_rejected) {
    // The scan writes y while its kernels still read the offsets: y must be another vector.
    const kiln::vector<std::int32_t> x(q, {1, 2, 3, 4});
    const kiln::vector<std::int32_t> offsets(q, {0, 2, 3, 4});
    expect_rejected([&] { kiln::segmented_inclusive_scan(x, offsets, offsets); }, "y is offsets");
    EXPECT_EQ(offsets.read(), (std::vector<std::int32_t>{0, 2, 3, 4}));
    // The reduction writes a value per segment where other segments' elements may lie.
    const kiln::vector<std::int32_t> values(q, {5, 6, 7});
    const kiln::vector<std::int32_t> around(q, {0, 0, 1, 3});
    expect_rejected([&] { kiln::segmented_reduce(values, around, values); }, "out is x");
    EXPECT_EQ(values.read(), (std::vector<std::int32_t>{5, 6, 7}));
    // x may be the offsets: both are only read.
    const kiln::vector<std::int32_t> y(q, 4);
    kiln::segmented_inclusive_scan(offsets, offsets, y);
    EXPECT_EQ(y.read(), (std::vector<std::int32_t>{0, 2, 3, 4}));
}

TEST_P(segmented_test, sizes_that_do_not_agree_are_rejected) {
    const kiln::vector<float> x(q, std::vector<float>(100, 1.0f));
    const kiln::vector<std::uint32_t> offsets(q, {0, 10, 20});
    const kiln::vector<float> out(q, 3);
    expect_rejected([&] { kiln::segmented_reduce(x, offsets, out); },
                    "offsets has 3 entries and out 3: offsets needs out.size() + 1 = 4");
    const kiln::vector<std::uint32_t> no_offsets(q, 0);
    const kiln::vector<float> no_out(q, 0);
    expect_rejected([&] { kiln::segmented_reduce(x, no_offsets, no_out); },
                    "offsets has 0 entries and out 0");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(segmented_test);

class segmented_two_devices : public kiln::test::two_devices_test {};

TEST_F(segmented_two_devices, vectors_on_two_devices_are_rejected) {
    const kiln::vector<float> x(queues[0], std::vector<float>(100, 0.5f));
    const kiln::vector<std::uint32_t> offsets(queues[1], {0, 100});
    const kiln::vector<float> out(queues[1], 1);
    expect_rejected([&] { kiln::segmented_reduce(x, offsets, out); }, "(device 0), offsets on");
}

TEST(segmented_plan, gpus_size_teams_from_the_mean_segment) {
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    const auto plan = [&](std::size_t elements, std::size_t segments) {
        return kiln::detail::plan_segmented(gpu, {.elements = elements, .segments = segments});
    };
    // Segments of 1 to 8 elements: a work-item each, groups of 256 segments.
    EXPECT_EQ(plan(1 << 20, 1 << 20).strategy, segmented_strategy::thread_per_segment);
    EXPECT_EQ(plan(8 << 20, 1 << 20).strategy, segmented_strategy::thread_per_segment);
    EXPECT_EQ(plan(1 << 20, 1 << 20).groups, (1u << 20) / 256);
    // Longer ones: teams of about a lane per 8 elements, in powers of two, at most the group.
    const auto tens = plan(10 << 20, 1 << 20);
    EXPECT_EQ(tens.strategy, segmented_strategy::team_per_segment);
    EXPECT_EQ(tens.team_lanes, 2u);
    EXPECT_EQ(tens.groups, (1u << 20) / 128);
    EXPECT_EQ(plan(1000 << 10, 1 << 10).team_lanes, 128u);
    EXPECT_EQ(plan(4000 << 10, 1 << 10).team_lanes, 256u);
    EXPECT_EQ(plan(4000 << 10, 1 << 10).groups, 1u << 10);
    // Forced: a work-item per segment, or teams of two lanes at least.
    EXPECT_EQ(kiln::detail::plan_segmented(gpu, {.elements = 1 << 26,
                                                 .segments = 64,
                                                 .forced = segmented_strategy::thread_per_segment})
                  .team_lanes,
              1u);
    const auto teams = kiln::detail::plan_segmented(
        gpu, {.elements = 10, .segments = 10, .forced = segmented_strategy::team_per_segment});
    EXPECT_EQ(teams.strategy, segmented_strategy::team_per_segment);
    EXPECT_EQ(teams.team_lanes, 2u);
    // A device whose groups are smaller than the row's: a power of two below its limit.
    auto small = gpu;
    small.max_work_group_size = 100;
    EXPECT_EQ(kiln::detail::plan_segmented(small, {.elements = 1 << 26,
                                                   .segments = 1,
                                                   .forced = segmented_strategy::team_per_segment})
                  .work_group_size,
              64u);
}

TEST(segmented_plan, team_reductions_read_16_byte_loads_where_the_row_asks) {
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    kiln::detail::segmented_tuning wide;
    wide.wide_loads = true;
    const auto plan = [&](std::size_t elements, std::size_t segments, std::size_t value_bytes,
                          segmented_algorithm algorithm,
                          std::optional<kiln::detail::segmented_tuning> tuning) {
        return kiln::detail::plan_segmented(gpu, {.elements = elements,
                                                  .segments = segments,
                                                  .algorithm = algorithm,
                                                  .value_bytes = value_bytes,
                                                  .tuning = tuning});
    };
    const auto reduce = segmented_algorithm::reduce;
    // Segments of 10^4: teams, four floats or two doubles a load.
    EXPECT_EQ(plan(10000 << 10, 1 << 10, 4, reduce, wide).strategy,
              segmented_strategy::team_per_segment);
    EXPECT_EQ(plan(10000 << 10, 1 << 10, 4, reduce, wide).lanes, 4u);
    EXPECT_EQ(plan(10000 << 10, 1 << 10, 8, reduce, wide).lanes, 2u);
    // NVIDIA's row asks; not asked, a work-item per segment, or a scan: element by element.
    EXPECT_EQ(plan(10000 << 10, 1 << 10, 4, reduce, std::nullopt).lanes, 4u);
    EXPECT_EQ(plan(10000 << 10, 1 << 10, 4, reduce, kiln::detail::segmented_tuning{}).lanes, 1u);
    EXPECT_EQ(plan(1 << 20, 1 << 20, 4, reduce, wide).strategy,
              segmented_strategy::thread_per_segment);
    EXPECT_EQ(plan(1 << 20, 1 << 20, 4, reduce, wide).lanes, 1u);
    EXPECT_EQ(plan(100 << 10, 1 << 10, 4, segmented_algorithm::inclusive_scan, wide).lanes, 1u);
}

TEST(segmented_plan, team_reductions_fold_by_shuffles_where_the_row_asks) {
    kiln::detail::segmented_tuning shuffled;
    shuffled.shuffle_fold = true;
    const auto plan = [&](const kiln::device_properties& props, std::size_t value_bytes,
                          segmented_algorithm algorithm,
                          std::optional<kiln::detail::segmented_tuning> tuning) {
        return kiln::detail::plan_segmented(props, {.elements = 10000 << 10,
                                                    .segments = 1 << 10,
                                                    .algorithm = algorithm,
                                                    .value_bytes = value_bytes,
                                                    .tuning = tuning});
    };
    const auto reduce = segmented_algorithm::reduce;
    // CUDA's warps of 32 shuffle; an OpenCL device without sub-groups of a fixed size shuffles
    // through local memory.
    auto cuda = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    cuda.backend = kiln::backend_kind::cuda;
    cuda.sub_group_size = 32;
    cuda.extensions = {"cl_khr_subgroups", "cl_khr_subgroup_shuffle_relative"};
    const auto by_warps = plan(cuda, 8, reduce, shuffled);
    EXPECT_EQ(by_warps.fold_sub_group, 32u);
    EXPECT_FALSE(by_warps.emulated_shuffles);
    const auto opencl =
        kiln::test::written_by_hand(kiln::device_type::gpu, "Advanced Micro Devices, Inc.");
    const auto emulated = plan(opencl, 4, reduce, shuffled);
    EXPECT_EQ(emulated.fold_sub_group, 32u);
    EXPECT_TRUE(emulated.emulated_shuffles);
    // NVIDIA's row asks; not asked, a scan, or values of 2 bytes: a tree in local memory.
    EXPECT_EQ(plan(cuda, 4, reduce, std::nullopt).fold_sub_group, 32u);
    EXPECT_EQ(plan(cuda, 4, reduce, kiln::detail::segmented_tuning{}).fold_sub_group, 0u);
    EXPECT_EQ(plan(cuda, 4, segmented_algorithm::inclusive_scan, shuffled).fold_sub_group, 0u);
    EXPECT_EQ(plan(opencl, 2, reduce, shuffled).fold_sub_group, 0u);
    EXPECT_FALSE(plan(opencl, 2, reduce, shuffled).emulated_shuffles);
}

TEST(segmented_plan, gpus_take_flat_tiles_for_long_segments) {
    const auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    const auto plan = [&](std::size_t elements, std::size_t segments,
                          segmented_algorithm algorithm) {
        return kiln::detail::plan_segmented(
            gpu, {.elements = elements, .segments = segments, .algorithm = algorithm});
    };
    const auto reduce = segmented_algorithm::reduce, scan = segmented_algorithm::inclusive_scan;
    const kiln::detail::segmented_tuning row =
        kiln::detail::plan_segmented(gpu, {.elements = 1}).tuning;
    // From the row's mean length on: a few long segments spread over every group, the
    // reduction's in tile reductions, the scan's in flat tiles.
    EXPECT_EQ(plan(row.tile_reduce_from << 10, 1 << 10, reduce).strategy,
              segmented_strategy::tile_reductions);
    EXPECT_EQ(plan((row.tile_reduce_from - 1) << 10, 1 << 10, reduce).strategy,
              segmented_strategy::team_per_segment);
    EXPECT_EQ(plan(std::size_t(1) << 26, 64, reduce).strategy, segmented_strategy::tile_reductions);
    EXPECT_EQ(plan(row.flat_scan_from << 10, 1 << 10, scan).strategy,
              segmented_strategy::flat_tiles);
    EXPECT_EQ(plan((row.flat_scan_from - 1) << 10, 1 << 10, scan).strategy,
              segmented_strategy::team_per_segment);
    // The tiles are a scan's (of the values' bytes), as tile kernels, with a uint of heads.
    const auto tiles = plan(std::size_t(1) << 26, 64, scan).tiles;
    EXPECT_EQ(tiles.chunk_bytes, 0u);
    EXPECT_LE(tiles.items_per_work_item, 32u);
    EXPECT_NE(tiles.full_tiles, kiln::detail::tile_access::wide);
    // Forced on a CPU device too, but never without elements: threads write the identities.
    const auto cpu = kiln::test::written_by_hand(kiln::device_type::cpu, "pocl");
    const auto forced = [&](std::size_t elements) {
        return kiln::detail::plan_segmented(
                   cpu,
                   {.elements = elements, .segments = 3, .forced = segmented_strategy::flat_tiles})
            .strategy;
    };
    EXPECT_EQ(forced(10), segmented_strategy::flat_tiles);
    EXPECT_EQ(forced(0), segmented_strategy::thread_per_segment);
}

TEST(segmented_plan, tile_reductions_fit_local_memory_and_size_the_fix_teams) {
    auto gpu = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    const auto plan = [&](std::size_t elements, std::size_t segments, std::size_t value_bytes,
                          segmented_algorithm algorithm = segmented_algorithm::reduce) {
        return kiln::detail::plan_segmented(gpu, {.elements = elements,
                                                  .segments = segments,
                                                  .algorithm = algorithm,
                                                  .value_bytes = value_bytes,
                                                  .forced = segmented_strategy::tile_reductions});
    };
    const auto tiles = plan(std::size_t(1) << 26, 64, 4);
    const std::size_t items = tiles.tuning.tile_items;
    EXPECT_EQ(tiles.strategy, segmented_strategy::tile_reductions);
    EXPECT_EQ(tiles.tile_items, items);
    const std::size_t tile = tiles.work_group_size * items;
    EXPECT_EQ(tiles.groups, (std::size_t(1) << 26) / tile);
    EXPECT_EQ(plan((std::size_t(1) << 26) + 1, 64, 4).groups, (std::size_t(1) << 26) / tile + 1);
    // Segments of 2^20 cross 256 tiles of 4096: teams of the whole group, a segment each.
    EXPECT_EQ(tiles.team_lanes, tiles.work_group_size);
    EXPECT_EQ(tiles.fix_groups, 64u);
    // Short segments leave a piece or two each: teams of two lanes.
    const auto short_segments = plan(1 << 20, 1 << 16, 4);
    EXPECT_EQ(short_segments.team_lanes, 2u);
    EXPECT_EQ(short_segments.fix_groups, (1u << 16) / (short_segments.work_group_size / 2));
    // The tile and the group's partials fit the device's local memory: fewer items where not.
    gpu.local_memory_bytes = (items / 2 + 1) * tiles.work_group_size * 8;
    EXPECT_EQ(plan(1 << 20, 1, 4).tile_items, items);
    EXPECT_EQ(plan(1 << 20, 1, 8).tile_items, items / 2);
    // A scan forced to them takes flat tiles; without elements, threads write identities.
    EXPECT_EQ(plan(1 << 20, 1, 4, segmented_algorithm::inclusive_scan).strategy,
              segmented_strategy::flat_tiles);
    EXPECT_EQ(plan(0, 3, 4).strategy, segmented_strategy::thread_per_segment);
}

TEST(segmented_plan, cpus_fold_chunks_of_whole_segments) {
    auto cpu = kiln::test::written_by_hand(kiln::device_type::cpu, "pocl");
    cpu.compute_units = 2;
    const auto small = kiln::detail::plan_segmented(cpu, {.elements = 10, .segments = 3});
    EXPECT_EQ(small.strategy, segmented_strategy::cpu_chunks);
    EXPECT_EQ(small.chunks, 1u);
    EXPECT_EQ(small.chunk_segments, 3u);
    const auto large = kiln::detail::plan_segmented(cpu, {.elements = 1 << 26, .segments = 1000});
    EXPECT_EQ(large.chunks, 2 * large.tuning.chunks_per_compute_unit);
    EXPECT_GE(large.chunks * large.chunk_segments, 1000u);
    // A reduction folds each segment into the row's independent accumulators, where segments
    // are long enough on average (8 elements per accumulator), else into one.
    EXPECT_EQ(large.unroll, large.tuning.unroll);
    EXPECT_GT(large.unroll, 1u);
    const std::size_t enough = 8 * large.tuning.unroll;
    EXPECT_EQ(
        kiln::detail::plan_segmented(cpu, {.elements = enough * 1000, .segments = 1000}).unroll,
        large.tuning.unroll);
    EXPECT_EQ(
        kiln::detail::plan_segmented(cpu, {.elements = enough * 1000 - 1, .segments = 1000}).unroll,
        1u);
    // The scan takes the row's blocks where segments are that long on average; the reduction
    // has accumulators instead.
    const auto scan = [&](std::size_t elements) {
        return kiln::detail::plan_segmented(cpu,
                                            {.elements = elements,
                                             .segments = 1000,
                                             .algorithm = segmented_algorithm::inclusive_scan});
    };
    EXPECT_GT(large.tuning.scan_block, 1u);
    EXPECT_EQ(scan(large.tuning.scan_block * 1000).scan_block, large.tuning.scan_block);
    EXPECT_EQ(scan(large.tuning.scan_block * 1000 - 1).scan_block, 1u);
    EXPECT_EQ(large.scan_block, 1u);
    // Never more chunks than segments, and none empty.
    const auto few = kiln::detail::plan_segmented(cpu, {.elements = 1 << 26, .segments = 3});
    EXPECT_EQ(few.chunks, 3u);
    const auto uneven = kiln::detail::plan_segmented(cpu, {.elements = 1 << 26, .segments = 9});
    EXPECT_LT((uneven.chunks - 1) * uneven.chunk_segments, 9u);
}

TEST(segmented_tuning, keys_name_every_field_and_read_back) {
    using kiln::detail::parse_segmented_tuning;
    using kiln::detail::segmented_tuning;
    kiln::test::expect_every_change_changes_the_key<segmented_tuning>({
        [](segmented_tuning& t) { t.strategy = segmented_strategy::cpu_chunks; },
        [](segmented_tuning& t) { t.work_group_size = 128; },
        [](segmented_tuning& t) { t.elements_per_lane = 4; },
        [](segmented_tuning& t) { t.unroll = 2; },
        [](segmented_tuning& t) { t.chunk_elements = 4096; },
        [](segmented_tuning& t) { t.chunks_per_compute_unit = 8; },
        [](segmented_tuning& t) { t.scan_block = 4; },
        [](segmented_tuning& t) { t.tile_items = 8; },
        [](segmented_tuning& t) { t.tile_reduce_from = 100; },
        [](segmented_tuning& t) { t.flat_scan_from = 100; },
        [](segmented_tuning& t) { t.wide_loads = true; },
        [](segmented_tuning& t) { t.shuffle_fold = true; },
    });
    for (const auto& row : kiln::detail::algorithm::segmented_reduce_rows::rows()) {
        const auto read = parse_segmented_tuning(row.tuning.key());
        ASSERT_TRUE(read.has_value()) << row.tuning.key();
        EXPECT_EQ(read->key(), row.tuning.key());
        // As tests/algo/plan_test.cpp asks of every family's rows: short, citing the section of
        // docs/benchmarks.md that holds their figures, or saying they are not measured.
        EXPECT_LE(row.provenance.size(), 160u) << row.provenance;
        EXPECT_TRUE(row.provenance.starts_with("not measured") ||
                    row.provenance.starts_with("not tuned") ||
                    row.provenance.find("docs/benchmarks.md, ## ") != std::string_view::npos)
            << row.provenance;
    }
    const auto flat = parse_segmented_tuning("flat_tiles r9 s3");
    ASSERT_TRUE(flat.has_value());
    EXPECT_EQ(flat->strategy, segmented_strategy::flat_tiles);
    EXPECT_EQ(flat->tile_reduce_from, 9u);
    EXPECT_EQ(flat->flat_scan_from, 3u);
    const auto tiles = parse_segmented_tuning("tile_reductions i8");
    ASSERT_TRUE(tiles.has_value());
    EXPECT_EQ(tiles->strategy, segmented_strategy::tile_reductions);
    EXPECT_EQ(tiles->tile_items, 8u);
    const auto wide = parse_segmented_tuning("team_per_segment wide u8");
    ASSERT_TRUE(wide.has_value());
    EXPECT_TRUE(wide->wide_loads);
    EXPECT_EQ(wide->unroll, 8u);
    EXPECT_EQ(wide->key(),
              "team_per_segment g256 e8 u8 b16384 k4 c8 i16 r65536 s256 x128 y16 wide");
    EXPECT_EQ(parse_segmented_tuning("team_per_segment x16")->exact_elements_per_lane, 16u);
    EXPECT_EQ(parse_segmented_tuning("team_per_segment y4")->exact_scan_elements_per_lane, 4u);
    const auto shuffled = parse_segmented_tuning("team_per_segment shuffle wide");
    ASSERT_TRUE(shuffled.has_value());
    EXPECT_TRUE(shuffled->shuffle_fold);
    EXPECT_EQ(shuffled->key(),
              "team_per_segment g256 e8 u4 b16384 k4 c8 i16 r65536 s256 x128 y16 wide shuffle");
    const auto few = parse_segmented_tuning("thread_per_segment u8");
    ASSERT_TRUE(few.has_value());
    EXPECT_EQ(
        few->key(),
        (segmented_tuning{.strategy = segmented_strategy::thread_per_segment, .unroll = 8}).key());
    for (const char* bad : {"", "automatic", "team_per_segment g", "team_per_segment g0",
                            "team_per_segment q4", "team_per_segment g256x"})
        EXPECT_FALSE(parse_segmented_tuning(bad).has_value()) << bad;
}

TEST(segmented_tuning, the_environment_forces_a_strategy_and_a_tuning) {
    ASSERT_FALSE(kiln::detail::segmented_tuning_in_force().has_value());
    ::setenv("KILN_SEGMENTED_TUNING", "team_per_segment g64 e2", 1);
    const auto forced = kiln::detail::segmented_tuning_in_force();
    ::setenv("KILN_SEGMENTED_TUNING", "team_per_segment g-1", 1);
    EXPECT_THROW(kiln::detail::segmented_tuning_in_force(), kiln::invalid_argument_error);
    ::unsetenv("KILN_SEGMENTED_TUNING");
    ASSERT_TRUE(forced.has_value());
    EXPECT_EQ(forced->work_group_size, 64u);
    EXPECT_EQ(forced->elements_per_lane, 2u);
    ::setenv("KILN_SEGMENTED_STRATEGY", "cpu_chunks", 1);
    EXPECT_EQ(kiln::detail::segmented_strategy_in_force(), segmented_strategy::cpu_chunks);
    ::setenv("KILN_SEGMENTED_STRATEGY", "flat_tiles", 1);
    EXPECT_EQ(kiln::detail::segmented_strategy_in_force(), segmented_strategy::flat_tiles);
    ::setenv("KILN_SEGMENTED_STRATEGY", "tile_reductions", 1);
    EXPECT_EQ(kiln::detail::segmented_strategy_in_force(), segmented_strategy::tile_reductions);
    ::setenv("KILN_SEGMENTED_STRATEGY", "warps", 1);
    EXPECT_THROW(kiln::detail::segmented_strategy_in_force(), kiln::invalid_argument_error);
    ::unsetenv("KILN_SEGMENTED_STRATEGY");
    EXPECT_EQ(kiln::detail::segmented_strategy_in_force(), segmented_strategy::automatic);
    // A test's tuning comes before the environment's.
    ::setenv("KILN_SEGMENTED_TUNING", "team_per_segment g64", 1);
    {
        const kiln::detail::scoped_algorithm_policy scoped(
            kiln::detail::algorithm::segmented_reduce, kiln::detail::segmented_tuning{});
        EXPECT_EQ(kiln::detail::segmented_tuning_in_force()->key(),
                  kiln::detail::segmented_tuning{}.key());
    }
    ::unsetenv("KILN_SEGMENTED_TUNING");
}

TEST(segmented_plan, key_changes_with_every_field_the_kernels_read) {
    using kiln::detail::segmented_shape;
    kiln::test::expect_every_change_changes_the_key<segmented_shape>({
        [](segmented_shape& s) { s.algorithm = kiln::detail::segmented_algorithm::inclusive_scan; },
        [](segmented_shape& s) { s.strategy = segmented_strategy::cpu_chunks; },
        [](segmented_shape& s) { s.value_type = "double"; },
        [](segmented_shape& s) { s.offset_type = "long"; },
        [](segmented_shape& s) { s.operation = "max"; },
        [](segmented_shape& s) { s.work_group_size = 128; },
        [](segmented_shape& s) { s.team_lanes = 4; },
        [](segmented_shape& s) { s.unroll = 2; },
        [](segmented_shape& s) { s.tiles = "256x8"; },
        [](segmented_shape& s) { s.tile_items = 16; },
        [](segmented_shape& s) { s.lanes = 4; },
        [](segmented_shape& s) { s.fold_sub_group = 32; },
        [](segmented_shape& s) { s.emulated_shuffles = true; },
        [](segmented_shape& s) { s.scan_block = 8; },
    });
}

}  // namespace
