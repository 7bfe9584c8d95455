// SPDX-License-Identifier: Apache-2.0
// The reduce_dimension module (src/algo/reduce_dimension/): its program keys, its rows, its plan
// on devices written by hand, its programs (one per shape that runs, the slice fold shared), and
// every shape forced on every device, in either loop and with the edges of its constants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/reduce_dimension_tuning.hpp>
#include <kiln/kiln.hpp>
#include <kiln/reduce_dimension.hpp>
#include <string>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/reduce_dimension/reduce_dimension_kernels.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::contiguous_lines;
using kiln::detail::dimension_lines;
using kiln::detail::line_shape;
using kiln::detail::loop_style;
using kiln::detail::plan_reduce_dimension;
using kiln::detail::reduce_dimension_tuning;
using kiln::detail::strided_lines;

TEST(reduce_dimension_module, shape_keys_change_with_every_field) {
    using kiln::detail::dimension_shape;
    using kiln::detail::slice_fold_shape;
    // A new field fails here first: add it to the shape's key() and to the changes below.
    static_assert(sizeof(dimension_shape) == 176);
    static_assert(sizeof(slice_fold_shape) == 112);
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(dimension_shape&)>>{
            [](dimension_shape& s) { s.shape = line_shape::group; },
            [](dimension_shape& s) { s.shape = line_shape::lanes; },
            [](dimension_shape& s) { s.shape = line_shape::slice; },
            [](dimension_shape& s) { s.shape = line_shape::strip; },
            [](dimension_shape& s) { s.loop = loop_style::chunked; },
            [](dimension_shape& s) { s.slice_length = 128; },
            [](dimension_shape& s) { s.lanes = 32; },
            [](dimension_shape& s) { s.strip_capacity = 8192; },
            [](dimension_shape& s) { s.state_type = "double"; },
            [](dimension_shape& s) { s.output_type = "int"; },
            [](dimension_shape& s) { s.outputs = 2; },
            [](dimension_shape& s) { s.reducer = "maximum"; },
            [](dimension_shape& s) { s.expression = "x * x"; },
            // state_bytes follows state_type: not a key field of its own.
        });
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(slice_fold_shape&)>>{
            [](slice_fold_shape& s) { s.loop = loop_style::chunked; },
            [](slice_fold_shape& s) { s.state_type = "double"; },
            [](slice_fold_shape& s) { s.output_type = "int"; },
            [](slice_fold_shape& s) { s.outputs = 2; },
            [](slice_fold_shape& s) { s.reducer = "maximum"; },
        });
}

kiln::device_properties gpu() {
    kiln::device_properties p;
    p.type = kiln::device_type::gpu;
    p.vendor = "NVIDIA Corporation";
    p.compute_units = 132;
    return p;
}

kiln::device_properties cpu(unsigned compute_units) {
    kiln::device_properties p;
    p.type = kiln::device_type::cpu;
    p.vendor = "pocl";
    p.compute_units = compute_units;
    return p;
}

reduce_dimension_tuning row_of(const kiln::device_properties& props) {
    return kiln::detail::tuning_table<kiln::detail::algorithm::reduce_dimension_rows>::tuning_for(
        props, std::nullopt);
}

TEST(reduce_dimension_module, devices_find_their_rows) {
    const reduce_dimension_tuning g = row_of(gpu()), c = row_of(cpu(2));
    EXPECT_EQ(g.loop, loop_style::strided);
    EXPECT_EQ(g.work_group_size, 256u);
    EXPECT_EQ(g.contiguous, contiguous_lines::group);
    EXPECT_EQ(g.strided, strided_lines::slices);
    EXPECT_EQ(c.loop, loop_style::chunked);
    EXPECT_EQ(c.work_group_size, 1u);
    EXPECT_EQ(c.contiguous, contiguous_lines::lanes);
    EXPECT_EQ(c.strided, strided_lines::strips);
}

TEST(reduce_dimension_module, the_gpu_plan_takes_groups_for_rows_and_slices_for_columns) {
    const reduce_dimension_tuning t = row_of(gpu());
    const auto plan = [&](dimension_lines lines) {
        return plan_reduce_dimension(lines, 4, t, 132);
    };
    // Row sums and column sums of an 8192 x 8192 matrix.
    EXPECT_EQ(plan({8192, 8192, 1}).shape, line_shape::group);
    EXPECT_EQ(plan({8192, 8192, 1}).slices, 1u);
    EXPECT_EQ(plan({1, 8192, 8192}).shape, line_shape::slice);
    EXPECT_EQ(plan({1, 8192, 8192}).slices, 64u);
    // Contiguous lines shorter than 64 and strided lines of one slice: a work-item each.
    EXPECT_EQ(plan({8192, 63, 1}).shape, line_shape::item);
    EXPECT_EQ(plan({8192, 64, 1}).shape, line_shape::group);
    EXPECT_EQ(plan({1, 128, 100}).shape, line_shape::item);
    EXPECT_EQ(plan({1, 129, 100}).shape, line_shape::slice);
    EXPECT_EQ(plan({1, 129, 100}).slices, 2u);
}

TEST(reduce_dimension_module, the_cpu_plan_takes_lanes_for_rows_and_strips_for_columns) {
    const reduce_dimension_tuning t = row_of(cpu(2));
    EXPECT_EQ(plan_reduce_dimension({100, 128, 1}, 4, t, 2).shape, line_shape::lanes);
    EXPECT_EQ(plan_reduce_dimension({100, 127, 1}, 4, t, 2).shape, line_shape::item);
    // 1000 rows of 4096 floats, along the rows: 8 slices of whole rows on 2 cores; on 16 cores
    // strips of 1024, 32 work-items.
    const auto columns = plan_reduce_dimension({1, 1000, 4096}, 4, t, 2);
    EXPECT_EQ(columns.shape, line_shape::strip);
    EXPECT_EQ(columns.slices, 8u);
    EXPECT_EQ(columns.strip_width, 4096u);
    EXPECT_EQ(plan_reduce_dimension({1, 1000, 4096}, 4, t, 16).strip_width, 1024u);
    // Rows wider than the states a work-item keeps: its capacity, 8192 floats or 4096 doubles.
    EXPECT_EQ(plan_reduce_dimension({1, 1000, 20000}, 4, t, 2).strip_width, 8192u);
    EXPECT_EQ(plan_reduce_dimension({1, 1000, 20000}, 8, t, 2).strip_width, 4096u);
    // Never narrower than 16 lines, however many cores wait.
    EXPECT_EQ(plan_reduce_dimension({1, 1000, 20}, 4, t, 64).strip_width, 16u);
    EXPECT_EQ(kiln::detail::strip_capacity(t, 4), 8192u);
    EXPECT_EQ(kiln::detail::strip_capacity(t, 3000), 16u);
}

TEST(reduce_dimension_module, a_tuning_may_keep_every_line_to_one_work_item) {
    reduce_dimension_tuning t = row_of(gpu());
    t.contiguous = contiguous_lines::item;
    t.strided = strided_lines::item;
    EXPECT_EQ(plan_reduce_dimension({8192, 8192, 1}, 4, t, 132).shape, line_shape::item);
    const auto columns = plan_reduce_dimension({1, 8192, 8192}, 4, t, 132);
    EXPECT_EQ(columns.shape, line_shape::item);
    EXPECT_EQ(columns.slices, 1u);
}

class reduce_dimension_module_test : public kiln::test::device_queue_test {};

TEST_P(reduce_dimension_module_test, programs_hold_the_kernels_that_run_and_share_the_fold) {
    const kiln::detail::scoped_algorithm_policy gpu_row(row_of(gpu()));
    kiln::detail::clear_algorithm_programs();
    const std::size_t before = kiln::detail::algorithm_programs_generated();
    kiln::vector<float> x(q, std::vector<float>(300 * 200, 1.0f));
    const kiln::extents shape{300, 200};
    EXPECT_EQ(kiln::reduce<kiln::reducers::sum>(shape, x, 1).read()[0], 200.0f);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated() - before, 1u) << "a group per row";
    EXPECT_EQ(kiln::reduce<kiln::reducers::sum>(shape, x, 0).read()[0], 300.0f);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated() - before, 3u) << "slices, the fold";
    EXPECT_EQ(kiln::reduce<kiln::reducers::sum>(shape, x * 2, 0).read()[0], 600.0f);
    EXPECT_EQ(kiln::detail::algorithm_programs_generated() - before, 4u) << "the fold shared";
}

/// Every shape in either loop and at the edges of its constants: a group per line in chunked
/// loops and groups of one, one lane, slices of one element, strips of the narrowest width.
std::vector<reduce_dimension_tuning> forced_tunings() {
    using enum loop_style;
    return {
        {.loop = strided, .work_group_size = 64, .groups_per_compute_unit = 4},
        {.loop = chunked,
         .work_group_size = 1,
         .contiguous = contiguous_lines::lanes,
         .contiguous_min_length = 128,
         .strided = strided_lines::strips},
        {.loop = chunked,
         .work_group_size = 1,
         .groups_per_compute_unit = 2,
         .contiguous_min_length = 5,
         .slice_length = 7},
        {.loop = strided,
         .work_group_size = 32,
         .groups_per_compute_unit = 1,
         .contiguous = contiguous_lines::lanes,
         .contiguous_min_length = 4,
         .lanes = 3,
         .strided = strided_lines::strips,
         .slice_length = 5,
         .strip_state_bytes = 64},
        {.loop = chunked,
         .groups_per_compute_unit = 1,
         .contiguous = contiguous_lines::lanes,
         .contiguous_min_length = 1,
         .lanes = 1,
         .strided = strided_lines::slices,
         .slice_length = 1},
        {.loop = strided,
         .work_group_size = 16,
         .contiguous = contiguous_lines::item,
         .strided = strided_lines::item},
    };
}

/// Sums, minima and maxima and counts of small integers (exact in float in any order) of `x`
/// viewed as `sizes`, along `dimension`, against host loops.
void check_lines(kiln::queue& q, const std::vector<std::size_t>& sizes, std::size_t dimension) {
    std::size_t outer = 1, inner = 1, total = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        total *= sizes[d];
        if (d < dimension) outer *= sizes[d];
        if (d > dimension) inner *= sizes[d];
    }
    const std::size_t length = sizes[dimension];
    std::vector<float> host(total);
    for (std::size_t i = 0; i < total; ++i) host[i] = static_cast<float>(int(i * 7 % 13) - 6);
    kiln::vector<float> x(q, host);
    const auto run = [&](auto reducer, const auto& e) {
        using R = decltype(reducer);
        if (sizes.size() == 2)
            return kiln::reduce<R>(kiln::extents{sizes[0], sizes[1]}, e, dimension);
        return kiln::reduce<R>(kiln::extents{sizes[0], sizes[1], sizes[2]}, e, dimension);
    };
    const std::vector<float> sums = run(kiln::reducers::sum{}, x).read();
    const auto [low_vector, high_vector] = run(kiln::reducers::minmax{}, x);
    const std::vector<float> lows = low_vector.read(), highs = high_vector.read();
    const std::vector<std::uint64_t> counts = run(kiln::reducers::count{}, x > 0).read();
    ASSERT_EQ(sums.size(), outer * inner);
    ASSERT_EQ(lows.size(), outer * inner);
    ASSERT_EQ(counts.size(), outer * inner);
    for (std::size_t r = 0; r < outer * inner; ++r) {
        float sum = 0, low = 100, high = -100;
        std::uint64_t count = 0;
        for (std::size_t k = 0; k < length; ++k) {
            const float v = host[(r / inner) * length * inner + r % inner + k * inner];
            sum += v;
            low = std::min(low, v);
            high = std::max(high, v);
            count += v > 0;
        }
        SCOPED_TRACE("result " + std::to_string(r));
        EXPECT_EQ(sums[r], sum);
        if (length > 0) {
            EXPECT_EQ(lows[r], low);
            EXPECT_EQ(highs[r], high);
        }
        EXPECT_EQ(counts[r], count);
    }
}

TEST_P(reduce_dimension_module_test, every_forced_shape_matches_host_loops) {
    const std::vector<std::vector<std::size_t>> arrays = {{1, 1}, {3, 130}, {37, 100}, {150, 530},
                                                          {0, 5}, {5, 0},   {200, 17}, {4, 50, 20}};
    const std::vector<reduce_dimension_tuning> tunings = forced_tunings();
    for (std::size_t t = 0; t < tunings.size(); ++t) {
        const kiln::detail::scoped_algorithm_policy forcing(tunings[t]);
        for (const auto& sizes : arrays)
            for (std::size_t dimension = 0; dimension < sizes.size(); ++dimension) {
                SCOPED_TRACE("tuning " + std::to_string(t) + ", extents " +
                             std::to_string(sizes[0]) + " x " + std::to_string(sizes[1]) +
                             ", dimension " + std::to_string(dimension));
                check_lines(q, sizes, dimension);
            }
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reduce_dimension_module_test);

}  // namespace
