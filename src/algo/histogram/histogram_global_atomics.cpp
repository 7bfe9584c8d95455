// SPDX-License-Identifier: Apache-2.0
// The strategy for many bins: every element adds to counts by a global atomic, where the bins
// do not fit local memory (the plan's choice) and where tests force it. Contention is low when
// the bins are many, unless the data all fall in few of them.
#include <string>

#include "histogram_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* global_atomics_kernel_name = "kiln_histogram_global";

kernel_description global_atomics_kernel(const histogram_shape& shape) {
    kernel_description kernel(global_atomics_kernel_name);
    kernel.global(shape.counts_type(), "counts");
    queue_slot(kernel, shape);
    input_slots(kernel, shape);
    return kernel;
}

std::string write_global_atomics_source(const histogram_shape& shape,
                                        const histogram_input& input) {
    const kernel_description kernel = global_atomics_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    const histogram_element x = declare_histogram_kernel(b, kernel, shape, input);
    b.begin_body();
    emit_histogram_walk(
        b, shape, x, [](const std::string& bin) { return "&counts[" + bin + "]"; },
        shape.counts_type());
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_global_atomics_histogram(const queue& q, const histogram_input& input,
                                   const histogram_plan& plan, std::size_t part,
                                   const event& after) {
    const histogram_shape shape = histogram_shape_of(input, plan);
    const algorithm_program& program = histogram_program(
        q.device(), shape, [&] { return std::vector{global_atomics_kernel(shape)}; },
        [&] { return write_global_atomics_source(shape, input); });
    kernel_binding args = bind_input(program, global_atomics_kernel_name, shape, input, part);
    args.argument("counts", input.counts_memory);
    return launch_walk(q, program, std::move(args), shape, plan, after);
}

}  // namespace kiln::detail
