// SPDX-License-Identifier: Apache-2.0
// The plan of reductions along a dimension (reduce_dimension_plan.hpp).
#include "reduce_dimension_plan.hpp"

#include <algorithm>

namespace kiln::detail {
namespace {

/// Strips are never narrower: a vector of 16 floats a row.
constexpr std::size_t narrowest_strip = 16;

/// The strip width for lines `inner` apart, `blocks` outer positions times slices: whole rows
/// where they fit and give every compute unit work, else halved towards narrowest_strip.
std::size_t strip_width_for(const reduce_dimension_tuning& tuning, std::size_t inner,
                            std::size_t blocks, std::size_t state_bytes,
                            std::size_t compute_units) {
    std::size_t width = std::min(inner, strip_capacity(tuning, state_bytes));
    const std::size_t wanted =
        std::max<std::size_t>(compute_units, 1) * tuning.strips_per_compute_unit;
    while (width > narrowest_strip && blocks * ((inner + width - 1) / width) < wanted)
        width = std::max(narrowest_strip,
                         (width / 2 + narrowest_strip - 1) / narrowest_strip * narrowest_strip);
    return width;
}

}  // namespace

std::size_t strip_capacity(const reduce_dimension_tuning& tuning, std::size_t state_bytes) {
    return std::max(narrowest_strip,
                    tuning.strip_state_bytes / state_bytes / narrowest_strip * narrowest_strip);
}

reduce_dimension_plan plan_reduce_dimension(const dimension_lines& lines, std::size_t state_bytes,
                                            const reduce_dimension_tuning& tuning,
                                            std::size_t compute_units) {
    reduce_dimension_plan plan;
    if (lines.inner > 1 && lines.length > tuning.slice_length &&
        tuning.strided != strided_lines::item) {
        plan.slices = (lines.length + tuning.slice_length - 1) / tuning.slice_length;
        if (tuning.strided == strided_lines::strips) {
            plan.shape = line_shape::strip;
            plan.strip_width = strip_width_for(tuning, lines.inner, lines.outer * plan.slices,
                                               state_bytes, compute_units);
        } else {
            plan.shape = line_shape::slice;
        }
    } else if (lines.inner == 1 && lines.length >= tuning.contiguous_min_length) {
        plan.shape = tuning.contiguous == contiguous_lines::group   ? line_shape::group
                     : tuning.contiguous == contiguous_lines::lanes ? line_shape::lanes
                                                                    : line_shape::item;
    }
    return plan;
}

}  // namespace kiln::detail
