// SPDX-License-Identifier: Apache-2.0
// The reduce module's entry: each part of kiln::reduce's typed input reduced on its device, with
// the device's tuning, into one partial state per work-group.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>

#include "reduce_kernels.hpp"

namespace kiln::detail {
namespace {

/// The row's group size as far as the device and the kernel allow, a power of two for the
/// group's tree.
std::size_t group_size(const reduce_tuning& tuning, const device_properties& props,
                       const kiln::kernel& kernel) {
    const std::size_t limit = std::min({tuning.work_group_size, kernel.max_work_group_size(),
                                        props.max_work_group_size, props.max_work_item_sizes[0]});
    return std::bit_floor(std::max<std::size_t>(limit, 1));
}

}  // namespace

std::vector<reduction_launch> run_reduction(const reduce_input& input) {
    std::vector<reduction_launch> launches;
    for (std::size_t k = 0; k < input.parts.size(); ++k) {
        const part_extent& part = input.parts[k];
        if (part.size == 0) continue;
        const device& dev = part.queue.device();
        const device_properties& props = dev.properties();
        const reduce_tuning tuning = reduce_tuning_for(props);
        const reduce_shape shape = reduce_shape_of(input, tuning);
        const algorithm_program& program = algorithm_program_for(
            dev, shape.key(), [&] { return std::vector{reduce_kernel(shape)}; },
            [&] { return write_reduce_program(shape, input); });
        const kernel_description& kernel = program.description(reduce_kernel_name);
        const std::size_t group = group_size(tuning, props, program.kernel(kernel.name()));
        const std::size_t groups_per_compute_unit =
            input.accumulator && tuning.own_accumulator_groups_per_compute_unit > 0
                ? tuning.own_accumulator_groups_per_compute_unit
                : tuning.groups_per_compute_unit;
        const std::size_t groups = std::clamp<std::size_t>(
            (part.size + group - 1) / group, 1,
            std::max<std::size_t>(1, props.compute_units * groups_per_compute_unit));
        temporary_lease partials = temporary_pool::acquire(part.queue, groups * input.state_bytes);
        // The pool's block is bytes; the kernel writes states into it.
        kernel_argument partial_states = make_argument(partials.bytes());
        partial_states.element_type = {};
        kernel_binding args(kernel);
        args.scalar<std::uint64_t>("n", part.size);
        args.argument("kiln_partials", std::move(partial_states));
        args.local("kiln_scratch", group * input.state_bytes);
        args.argument("kiln_identity", input.identity);
        args.input(input.arguments(k, part.begin));
        const event launch =
            program.bind(std::move(args)).launch(part.queue, groups * group, group);
        launches.push_back({part.queue, std::move(partials), groups, launch});
    }
    return launches;
}

std::string reduce_program_source(const reduce_input& input, const reduce_tuning& tuning) {
    return write_reduce_program(reduce_shape_of(input, tuning), input);
}

}  // namespace kiln::detail
