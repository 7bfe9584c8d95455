// SPDX-License-Identifier: Apache-2.0
// The CPU strategy: one work-item per chunk of consecutive segments reduces or scans each in a
// plain loop (no barriers, no local memory), which CPU implementations run one work-item after
// another on a core. The plan keeps the chunks to a few per compute unit and each chunk to
// enough elements to amortise its start; a segment is never split, so one segment far longer
// than the rest takes its chunk's core alone. A scan of segments shorter than its blocks on
// average runs one loop over the chunk's elements that restarts at each head instead: a loop
// per segment of a few elements costs more to start and leave than its elements.
#include <cstdint>
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

kernel_description chunk_kernel(const segmented_shape& shape) {
    kernel_description kernel = segmented_kernel(segmented_kernel_name(shape, "chunks"), shape);
    kernel.scalar<std::uint64_t>("chunk");
    return kernel;
}

/// The chunk's segments scanned by one loop over their elements. Each segment's end is checked
/// as the loop reaches it, as emit_segment_bounds checks it; the chunk stops at its first bad
/// segment, the lowest it has, which is all that status keeps.
void emit_scan_across_segments(source_builder& b, const segmented_shape& shape,
                               const segmented_input& input) {
    b.open("if (first < last)");
    b.line("ulong s = first, end = (ulong)offsets[first];");
    b.open("if (first == 0 && end != 0)");
    b.line("atomic_min(status, 0u);");
    b.line("return;");
    b.close();
    b.line(shape.value_type + " acc = identity;");
    // i < end <= n where an element is read: each end is checked before the loop passes it.
    b.line("ulong i = end;");
    b.open("for (;; ++i)");
    b.open("while (i == end)");
    b.line("if (s == last) return;");
    b.line("const ulong next = (ulong)offsets[s + 1];");
    b.open("if (next < end || next > n)");
    b.line("atomic_min(status, (uint)s);");
    b.line("return;");
    b.close();
    b.line("end = next;");
    b.line("++s;");
    b.line("acc = identity;");
    b.close();
    b.line("acc = " + input.combine(b, "acc", "x[i]") + ";");
    b.line("out[i] = acc;");
    b.close();
    b.close();
}

std::string chunks_source(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = chunk_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name());
    kernel.declare(b);
    b.begin_body();
    b.line("const ulong first = get_global_id(0) * chunk;");
    b.line("const ulong last = min(first + chunk, segments);");
    if (shape.algorithm == segmented_algorithm::inclusive_scan && shape.scan_block == 1) {
        emit_scan_across_segments(b, shape, input);
    } else {
        b.open("for (ulong s = first; s < last; ++s)");
        b.line("ulong begin = 0, end = 0;");
        emit_segment_bounds(b, shape, "s");
        emit_serial_segment(b, shape, input, "s");
        b.close();
    }
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_cpu_chunks(const segmented_run& run) {
    const segmented_shape shape = segmented_shape_of(run.algorithm, run.input, run.plan);
    const algorithm_program& program = segmented_program(
        run.q.device(), shape, [&] { return std::vector{chunk_kernel(shape)}; },
        [&] { return chunks_source(shape, run.input); });
    kernel_binding args =
        bind_segments(program, segmented_kernel_name(shape, "chunks"), run.input, run.status);
    args.scalar<std::uint64_t>("chunk", run.plan.chunk_segments);
    return program.bind(std::move(args)).launch(run.q, run.plan.chunks, 1, {}, run.after);
}

}  // namespace kiln::detail
