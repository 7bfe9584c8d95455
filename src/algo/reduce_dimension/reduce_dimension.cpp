// SPDX-License-Identifier: Apache-2.0
// The entry of reductions along a dimension: the lines of the extents, then the plan's line
// program on the device's tuning, and for sliced lines the slice fold.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <limits>

#include "reduce_dimension_kernels.hpp"

namespace kiln::detail {
namespace {

/// The row's group size as far as the device and the kernel allow, a power of two for the group
/// shape's tree.
std::size_t group_size(const reduce_dimension_tuning& tuning, const device_properties& props,
                       const kiln::kernel& kernel) {
    const std::size_t limit = std::min({tuning.work_group_size, kernel.max_work_group_size(),
                                        props.max_work_group_size, props.max_work_item_sizes[0]});
    return std::bit_floor(std::max<std::size_t>(limit, 1));
}

/// Launches `args`'s kernel of `program` over `items` work-items in groups of the tuning's size,
/// at most groups_per_compute_unit per compute unit: more items are covered by looping.
event launch(const algorithm_program& program, kernel_binding&& args, const queue& q,
             std::size_t items, const reduce_dimension_tuning& tuning) {
    const device_properties& props = q.device().properties();
    const std::size_t group = group_size(tuning, props, program.kernel(args.description().name()));
    const std::size_t groups = std::clamp<std::size_t>(
        (items + group - 1) / group, 1,
        std::max<std::size_t>(1, props.compute_units * tuning.groups_per_compute_unit));
    return program.bind(std::move(args)).launch(q, groups * group, group);
}

/// The pool's block as an argument for a slot of states: the block is bytes, the kernels read
/// and write states in it.
kernel_argument states_in(const temporary_lease& lease) {
    kernel_argument states = make_argument(lease.bytes());
    states.element_type = {};
    return states;
}

}  // namespace

dimension_lines dimension_lines_of(const std::string& call, std::span<const std::size_t> extents,
                                   std::size_t dimension) {
    if (dimension >= extents.size())
        throw invalid_argument_error(call, "dimension " + std::to_string(dimension) +
                                               " of an array of " + std::to_string(extents.size()) +
                                               " dimensions");
    std::size_t product = 1;
    for (const std::size_t extent : extents) {
        if (extent == 0) continue;
        if (product > std::numeric_limits<std::size_t>::max() / extent) {
            std::string named = "{";
            for (std::size_t d = 0; d < extents.size(); ++d)
                named += (d ? ", " : "") + std::to_string(extents[d]);
            throw invalid_argument_error(call, "extents " + named +
                                                   "} hold more than 2^64 - 1 elements or "
                                                   "results (their product overflows)");
        }
        product *= extent;
    }
    dimension_lines lines{.outer = 1, .length = extents[dimension], .inner = 1};
    for (std::size_t d = 0; d < dimension; ++d) lines.outer *= extents[d];
    for (std::size_t d = dimension + 1; d < extents.size(); ++d) lines.inner *= extents[d];
    return lines;
}

void run_dimension_reduction(const dimension_reduce_input& input) {
    const queue& q = input.queue;
    const device& dev = q.device();
    const dimension_lines& lines = input.lines;
    const reduce_dimension_tuning tuning = reduce_dimension_tuning_for(dev.properties());
    const reduce_dimension_plan plan = plan_reduce_dimension(
        lines, input.values.state_bytes, tuning, dev.properties().compute_units);
    const dimension_shape shape = dimension_shape_of(plan, tuning, input);
    const algorithm_program& program = algorithm_program_for(
        dev, shape.key(), [&] { return std::vector{dimension_kernel(shape)}; },
        [&] { return write_dimension_program(shape, input); });
    const kernel_description& kernel = program.description(dimension_kernel_name);
    const std::size_t n = lines.results();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", n);
    args.scalar<std::uint64_t>("kiln_length", lines.length);
    args.scalar<std::uint64_t>("kiln_inner", lines.inner);
    const bool sliced = plan.shape == line_shape::slice || plan.shape == line_shape::strip;
    temporary_lease partials;
    if (sliced) {
        partials = temporary_pool::acquire(q, plan.slices * n * input.values.state_bytes);
        args.scalar<std::uint64_t>("kiln_slices", plan.slices);
        args.argument("kiln_partials", states_in(partials));
        if (plan.shape == line_shape::strip)
            args.scalar<std::uint64_t>("kiln_strip_width", plan.strip_width);
    } else {
        for (std::size_t k = 0; k < input.outputs; ++k)
            args.argument("kiln_out" + std::to_string(k), input.results[k]);
    }
    std::size_t items = n * plan.slices;
    if (plan.shape == line_shape::group) {
        // A group per line: the launch's groups come from its items.
        const std::size_t group =
            group_size(tuning, dev.properties(), program.kernel(kernel.name()));
        args.local("kiln_scratch", group * input.values.state_bytes);
        items = n * group;
    } else if (plan.shape == line_shape::strip) {
        items =
            lines.outer * ((lines.inner + plan.strip_width - 1) / plan.strip_width) * plan.slices;
    }
    args.argument("kiln_identity", input.values.identity);
    args.input(input.values.arguments(0, 0));
    launch(program, std::move(args), q, items, tuning);
    if (!sliced) return;

    const slice_fold_shape fold = slice_fold_shape_of(shape);
    const algorithm_program& folding = algorithm_program_for(
        dev, fold.key(), [&] { return std::vector{slice_fold_kernel(fold)}; },
        [&] { return write_slice_fold_program(fold, input); });
    kernel_binding fold_args(folding.description(slice_fold_kernel_name));
    fold_args.scalar<std::uint64_t>("n", n);
    fold_args.scalar<std::uint64_t>("kiln_slices", plan.slices);
    fold_args.argument("kiln_partials", states_in(partials));
    for (std::size_t k = 0; k < input.outputs; ++k)
        fold_args.argument("kiln_out" + std::to_string(k), input.results[k]);
    partials.release_after(q, launch(folding, std::move(fold_args), q, n, tuning));
}

}  // namespace kiln::detail
