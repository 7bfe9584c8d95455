// SPDX-License-Identifier: Apache-2.0
// The plan of reductions along a dimension: from a tuning row, the lines' geometry and the
// device's compute units, the kernel shape and its launch. Pure: it reads nothing but its
// arguments, so a test writes them by hand.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/reduce_dimension_tuning.hpp>
#include <kiln/reduce_dimension.hpp>

namespace kiln::detail {

/// The line kernel's shapes (reduce_dimension_kernels.cpp writes each).
enum class line_shape { item, group, lanes, slice, strip };

/// What the plan chooses for one reduction along a dimension.
struct reduce_dimension_plan {
    line_shape shape = line_shape::item;
    /// Slices per line (slice and strip shapes, which a second kernel folds), else 1.
    std::size_t slices = 1;
    /// Adjacent lines per strip (strip shape), else 1.
    std::size_t strip_width = 1;
};

/// The most lines of a strip under `tuning`, for states of `state_bytes`: the size of a
/// work-item's array of states.
std::size_t strip_capacity(const reduce_dimension_tuning& tuning, std::size_t state_bytes);

/// The plan for `lines` of states of `state_bytes` under `tuning` on a device of
/// `compute_units`: strided lines longer than a slice take the tuning's strided shape, contiguous
/// ones at least contiguous_min_length long its contiguous shape, the others one work-item per
/// result. A strip is a whole row where its states fit in strip_state_bytes, narrower (down to 16
/// lines) where whole rows leave compute units idle.
reduce_dimension_plan plan_reduce_dimension(const dimension_lines& lines, std::size_t state_bytes,
                                            const reduce_dimension_tuning& tuning,
                                            std::size_t compute_units);

}  // namespace kiln::detail
