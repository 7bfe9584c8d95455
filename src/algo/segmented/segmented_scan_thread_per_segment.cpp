// The scan's GPU strategy for short segments: a work-item per segment scans it alone.
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* kernel_name = "kiln_segmented_scan_threads";

kernel_description thread_kernel(const segmented_shape& shape) {
    kernel_description kernel(kernel_name);
    segment_slots(kernel, shape);
    return kernel;
}

std::string write(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = thread_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.line("const ulong s = get_global_id(0);");
    b.line("if (s >= segments) return;");
    b.line("ulong begin = 0, end = 0;");
    emit_segment_bounds(b, shape, "s");
    emit_sequential_scan(b, shape, input);
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_thread_per_segment_scan(const queue& q, const segmented_input& input,
                                  const segmented_plan& plan, const buffer<std::byte>& status,
                                  const event& after) {
    const segmented_shape shape =
        segmented_shape_of(segmented_algorithm::inclusive_scan, input, plan);
    const algorithm_program& program = segmented_program(
        q.device(), shape, [&] { return std::vector{thread_kernel(shape)}; },
        [&] { return write(shape, input); });
    return program.bind(bind_segments(program, kernel_name, input, status))
        .launch(q, plan.groups * shape.work_group_size, shape.work_group_size, {}, after);
}

}  // namespace kiln::detail
