// SPDX-License-Identifier: Apache-2.0
// The tuning of reductions along a dimension (kiln::reduce with kiln::extents): its numbers' type
// and its key in the tuning table (rows in src/algo/reduce_dimension/reduce_dimension_tuning.cpp;
// the plan that reads them beside it).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/device.hpp>
#include <span>
#include <string_view>

namespace kiln::detail {

/// How contiguous lines (the last dimension reduced) are folded when long enough.
enum class contiguous_lines {
    /// One work-item per result walking its line.
    item,
    /// One work-group per result, its work-items reading neighbouring elements of the line, then
    /// a tree in local memory: GPUs coalesce the group's reads.
    group,
    /// One work-item per result, element k folded into accumulator k % lanes and the
    /// accumulators folded at the end: independent additions that a CPU compiler turns into
    /// vector operations, where one running fold is a chain of dependent ones.
    lanes,
};

/// How strided lines (another dimension reduced) longer than a slice are folded.
enum class strided_lines {
    /// One work-item per result walking its whole line.
    item,
    /// Each line cut into slices: one work-item per (slice, result), neighbouring work-items on
    /// neighbouring results of one slice (GPUs coalesce those reads), then a second kernel folds
    /// each result's slices in order.
    slices,
    /// As slices, but one work-item per (slice, strip of adjacent lines), folding the strip's
    /// lines side by side row after row: a CPU work-item reads one contiguous block.
    strips,
};

/// A reduction along a dimension's numbers.
struct reduce_dimension_tuning {
    /// The element loops' form (strided: GPUs; chunked: CPU devices), work-items per group at
    /// most (rounded down to a power of two, for the group shape's tree) and groups per compute
    /// unit at most: more lines are covered by looping.
    loop_style loop = loop_style::strided;
    std::size_t work_group_size = 256, groups_per_compute_unit = 16;
    /// Contiguous lines at least contiguous_min_length long take `contiguous`.
    contiguous_lines contiguous = contiguous_lines::group;
    std::size_t contiguous_min_length = 64;
    /// Accumulators per work-item of contiguous_lines::lanes.
    std::size_t lanes = 32;
    /// Strided lines longer than slice_length elements take `strided`, in slices of that length.
    strided_lines strided = strided_lines::slices;
    std::size_t slice_length = 128;
    /// strided_lines::strips: the most bytes of states a work-item keeps for its strip, and the
    /// work-items per compute unit the strips aim for at least (halving their width, down to 16
    /// lines, where whole rows leave cores idle).
    std::size_t strip_state_bytes = 32 * 1024, strips_per_compute_unit = 2;
};

namespace algorithm {

struct reduce_dimension_rows {
    using tuning = reduce_dimension_tuning;
    static constexpr std::string_view name = "reduce along a dimension";
    static std::span<const tuning_row<reduce_dimension_tuning>> rows();
};
inline constexpr reduce_dimension_rows reduce_dimension{};

}  // namespace algorithm

scoped_algorithm_policy(reduce_dimension_tuning)
    ->scoped_algorithm_policy<algorithm::reduce_dimension_rows>;

/// The tuning a reduction along a dimension on a device of `props` runs with: a
/// scoped_algorithm_policy's, else the device's first matching row.
reduce_dimension_tuning reduce_dimension_tuning_for(const device_properties& props);

}  // namespace kiln::detail
#pragma GCC visibility pop
