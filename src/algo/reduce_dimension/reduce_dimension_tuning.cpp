// SPDX-License-Identifier: Apache-2.0
// The tuning rows of reductions along a dimension, from specific to generic, each saying where
// its numbers come from, and the tuning in force. Groups of one, 16 per compute unit on CPU
// devices and of 256 elsewhere are the element-wise launch's rows (src/expr/launch_plan.cpp);
// the 64-element threshold of a group per line is from the shape of the work (a shorter line
// leaves most of 256 work-items idle) and the 128-element slices from arithmetic (128 cache lines
// stay in a CPU core's L1; a 8192-long column gives 64 work-items per result), neither swept.
#include <array>
#include <kiln/detail/algo/reduce_dimension_tuning.hpp>

namespace kiln::detail {
namespace {

using reduce_dimension_row = tuning_row<reduce_dimension_tuning>;

// clang-format off
constexpr std::array reduce_dimension_table{
    reduce_dimension_row{any_cpu,
        {.loop = loop_style::chunked, .work_group_size = 1, .groups_per_compute_unit = 16,
         .contiguous = contiguous_lines::lanes, .contiguous_min_length = 4 * 32, .lanes = 32,
         .strided = strided_lines::strips, .slice_length = 128, .strip_state_bytes = 32 * 1024,
         .strips_per_compute_unit = 2},
        "PoCL 3.1, 2 cores, 2026-11-25: 32 lanes 4x one fold; whole-row strips 2-5x narrower "
        "ones; docs/benchmarks.md, ## Vector expressions"},
    reduce_dimension_row{any_device,
        {.loop = loop_style::strided, .work_group_size = 256, .groups_per_compute_unit = 16,
         .contiguous = contiguous_lines::group, .contiguous_min_length = 64, .lanes = 32,
         .strided = strided_lines::slices, .slice_length = 128, .strip_state_bytes = 32 * 1024,
         .strips_per_compute_unit = 2},
        "H100, 2026-11-22: a group per row at 45% of copy; slices not swept; "
        "docs/benchmarks.md, ## Vector expressions"},
};
// clang-format on

}  // namespace

std::span<const tuning_row<reduce_dimension_tuning>> algorithm::reduce_dimension_rows::rows() {
    return reduce_dimension_table;
}

reduce_dimension_tuning reduce_dimension_tuning_for(const device_properties& props) {
    using table = tuning_table<algorithm::reduce_dimension_rows>;
    return table::tuning_for(props, table::forced());
}

}  // namespace kiln::detail
