// SPDX-License-Identifier: Apache-2.0
// The GPU strategy for short segments: a work-item per segment reduces or scans it alone, so
// that a segment of a few elements costs no more than its loads (CUB's small-segment policy,
// one thread each).
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

std::string thread_per_segment_source(const segmented_shape& shape, const segmented_input& input,
                                      const std::string& name) {
    const kernel_description kernel = segmented_kernel(name, shape);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.line("const ulong s = get_global_id(0);");
    b.line("if (s >= segments) return;");
    b.line("ulong begin = 0, end = 0;");
    emit_segment_bounds(b, shape, "s");
    emit_serial_segment(b, shape, input, "s");
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_thread_per_segment(const segmented_run& run) {
    return run_in_groups(run, "threads",
                         [&](const segmented_shape& shape, const std::string& name) {
                             return thread_per_segment_source(shape, run.input, name);
                         });
}

}  // namespace kiln::detail
