// SPDX-License-Identifier: Apache-2.0
// The CPU strategy: one work-item per chunk of the input counts into rows of its own in a
// temporary with plain increments (no atomics, no barriers in the hot loop), then a merge adds
// the rows bin by bin into counts. The plan keeps the chunks to a few per compute unit, so the
// rows and their merge stay small beside the input.
#include <cstdint>
#include <kiln/detail/temporary_pool.hpp>
#include <string>

#include "histogram_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* count_kernel = "kiln_histogram_chunk_count";
constexpr const char* merge_kernel = "kiln_histogram_chunk_merge";
/// The merge's groups: any size serves, this one keeps a row's reads consecutive.
constexpr std::size_t merge_group = 64;

struct chunk_kernels {
    kernel_description count{count_kernel}, merge{merge_kernel};
    explicit chunk_kernels(const histogram_shape& shape) {
        count.global("uint", "rows").scalar<std::uint64_t>("chunk");
        input_slots(count, shape);
        merge.global_const("uint", "rows")
            .global(shape.counts_type(), "counts")
            .scalar<std::uint32_t>("bins")
            .scalar<std::uint32_t>("chunks");
    }
};

std::string write_cpu_chunks_source(const histogram_shape& shape, const histogram_input& input) {
    const chunk_kernels kernels(shape);
    source_builder b;
    b.begin_kernel(count_kernel, 1);
    const element_input x = declare_histogram_kernel(b, kernels.count, shape, input).element;
    b.begin_body();
    const std::string R = std::to_string(shape.copies) + "u";
    b.line("const ulong c = get_global_id(0);");
    b.line("global uint* row = rows + c * " + R + " * bins;");
    b.line("for (uint i = 0; i < " + R + " * bins; ++i) row[i] = 0;");
    b.line("const ulong begin = c * chunk;");
    b.line("const ulong end = n - min(n, begin) > chunk ? begin + chunk : n;");
    const auto count = [&](const std::string& row) {
        for (const std::string& statement : x.statements) b.line(statement);
        b.line("const uint bin = " + histogram_bin(shape, x.value) + ";");
        b.line("if (bin < bins) ++" + row + "[bin];");
    };
    // Consecutive elements count into rows of their own, so that equal bins (skewed data) do
    // not wait on each other's increments.
    b.line("ulong first = begin;");
    b.open("for (; first + " + R + " <= end; first += " + R + ")");
    for (std::size_t u = 0; u < shape.copies; ++u) {
        b.open("");
        b.line("const ulong idx = first + " + std::to_string(u) + ";");
        count("(row + " + std::to_string(u) + "u * bins)");
        b.close();
    }
    b.close();
    b.open("for (ulong idx = first; idx < end; ++idx)");
    count("row");
    b.close();
    b.end_kernel();

    b.begin_kernel(merge_kernel, merge_group);
    kernels.merge.declare(b);
    b.begin_body();
    b.line("const uint i = (uint)get_global_id(0);");
    b.line("if (i >= bins) return;");
    b.line("uint total = 0;");
    b.line("for (uint c = 0; c < chunks; ++c) total += rows[(ulong)c * bins + i];");
    b.line("counts[i] += (" + shape.counts_type() + ")total;");
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_cpu_chunks_histogram(const queue& q, const histogram_input& input,
                               const histogram_plan& plan, std::size_t part, const event& after) {
    const histogram_shape shape = histogram_shape_of(input, plan);
    const algorithm_program& program = histogram_program(
        q.device(), shape,
        [&] {
            const chunk_kernels kernels(shape);
            return std::vector{kernels.count, kernels.merge};
        },
        [&] { return write_cpu_chunks_source(shape, input); });
    const std::size_t row_count = plan.chunks * shape.copies;
    temporary_lease rows =
        temporary_pool::acquire(q, row_count * input.bins * sizeof(std::uint32_t));
    kernel_binding count = bind_input(program, count_kernel, shape, input, part);
    count.argument("rows", make_argument(kiln::reinterpret(rows.bytes())));
    count.scalar<std::uint64_t>("chunk", plan.chunk_elements);
    const event counted = program.bind(std::move(count)).launch(q, plan.chunks, 1, {}, after);
    kernel_binding merge = program.binding(merge_kernel);
    merge.argument("rows", make_argument(kiln::reinterpret(rows.bytes())));
    merge.argument("counts", input.counts_memory);
    merge.scalar<std::uint32_t>("bins", static_cast<std::uint32_t>(input.bins));
    merge.scalar<std::uint32_t>("chunks", static_cast<std::uint32_t>(row_count));
    const std::size_t items = (input.bins + merge_group - 1) / merge_group * merge_group;
    const event merged = program.bind(std::move(merge)).launch(q, items, merge_group, {}, counted);
    rows.release_after(q, merged);
    return merged;
}

}  // namespace kiln::detail
