// The CPU strategy: one work-item per chunk of consecutive segments folds each in a plain loop
// (no barriers, no local memory), which CPU implementations run one work-item after another on
// a core. The plan keeps the chunks to a few per compute unit and each chunk to enough elements
// to amortise its start; a segment is never split, so one segment far longer than the rest
// takes its chunk's core alone.
#include <cstdint>
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* kernel_name = "kiln_segmented_reduce_chunks";

kernel_description chunk_kernel(const segmented_shape& shape) {
    kernel_description kernel(kernel_name);
    segment_slots(kernel, shape);
    kernel.scalar<std::uint64_t>("chunk");
    return kernel;
}

std::string write(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = chunk_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name());
    kernel.declare(b);
    b.begin_body();
    b.line("const ulong first = get_global_id(0) * chunk;");
    b.line("const ulong last = min(first + chunk, segments);");
    b.open("for (ulong s = first; s < last; ++s)");
    b.line("ulong begin = 0, end = 0;");
    emit_segment_bounds(b, shape, "s");
    emit_fold(b, shape, input, "begin", "1");
    b.line("out[s] = acc;");
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_cpu_chunks_segmented(const queue& q, const segmented_input& input,
                               const segmented_plan& plan, const buffer<std::byte>& status,
                               const event& after) {
    const segmented_shape shape = segmented_shape_of(segmented_algorithm::reduce, input, plan);
    const algorithm_program& program = segmented_program(
        q.device(), shape, [&] { return std::vector{chunk_kernel(shape)}; },
        [&] { return write(shape, input); });
    kernel_binding args = bind_segments(program, kernel_name, input, status);
    args.scalar<std::uint64_t>("chunk", plan.chunk_segments);
    return program.bind(std::move(args)).launch(q, plan.chunks, 1, {}, after);
}

}  // namespace kiln::detail
