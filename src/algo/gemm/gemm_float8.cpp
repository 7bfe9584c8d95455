// SPDX-License-Identifier: Apache-2.0
// The widening of FP8 operands into scratch (gemm_float8.hpp).
#include "gemm_float8.hpp"

#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/matrix.hpp>
#include <string>

#include "gemm_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* widen_kernel = "kiln_gemm_widen_float8";
constexpr const char* narrow_kernel = "kiln_gemm_narrow_float8";
constexpr std::size_t widen_group = 256;
/// 8 elements: 16 bytes of 16-bit elements, what the tensor cores' copies move.
constexpr std::size_t widened_row_elements = 8;

kernel_description widen_description(gemm_element from, gemm_element to) {
    kernel_description kernel(widen_kernel);
    kernel.global_const(opencl_name(from), "from").restricted();
    kernel.scalar<std::uint64_t>("from_offset")
        .scalar<std::uint64_t>("from_leading")
        .scalar<std::uint64_t>("from_stride");
    kernel.global(opencl_name(to), "to").restricted();
    kernel.scalar<std::uint64_t>("to_leading")
        .scalar<std::uint64_t>("rows")
        .scalar<std::uint64_t>("columns")
        .scalar<std::uint64_t>("chunks");
    return kernel;
}

kernel_description narrow_description(gemm_element to) {
    kernel_description kernel(narrow_kernel);
    kernel.global_const(opencl_name(gemm_element::f32), "from").restricted();
    kernel.scalar<std::uint64_t>("from_leading");
    kernel.global(opencl_name(to), "to").restricted();
    kernel.scalar<std::uint64_t>("to_offset")
        .scalar<std::uint64_t>("to_leading")
        .scalar<std::uint64_t>("to_stride")
        .scalar<std::uint64_t>("rows")
        .scalar<std::uint64_t>("columns")
        .scalar<std::uint64_t>("chunks");
    return kernel;
}

/// The work-item's chunk of `widened_row_elements` in the scratch's layout (rows of
/// `scratch_leading` elements, batch entries of `rows` rows one after another): its element
/// index i, its column0, and `matrix`'s first element of its row.
void emit_scratch_chunk(source_builder& b, const std::string& scratch_leading,
                        const std::string& matrix) {
    b.line("const ulong chunk = " + source_builder::global_id() + ";");
    b.line("if (chunk >= chunks) return;");
    b.line("const ulong i = chunk * " + std::to_string(widened_row_elements) + ";");
    b.line("const ulong all_rows = i / " + scratch_leading + ", column0 = i - all_rows * " +
           scratch_leading + ";");
    b.line("const ulong entry = all_rows / rows, row = all_rows - entry * rows;");
    b.line("const ulong source = " + matrix + "_offset + entry * " + matrix + "_stride + row * " +
           matrix + "_leading;");
}

/// Launches `program`'s kernel over the chunks of `elements` scratch elements.
void launch_chunks(const queue& q, const algorithm_program& program, kernel_binding args,
                   std::size_t elements) {
    const std::size_t chunks = elements / widened_row_elements;
    args.scalar("chunks", std::uint64_t(chunks));
    const std::size_t groups = (chunks + widen_group - 1) / widen_group;
    program.bind(std::move(args)).launch(q, groups * widen_group, widen_group);
}

}  // namespace

std::string gemm_widening_kernel::key() const {
    return std::string(widen_kernel) + ":" + std::string(to_string(from)) + ":" +
           std::string(to_string(to));
}

std::string gemm_widening_kernel::source() const {
    source_builder b;
    b.begin_kernel(widen_kernel, widen_group);
    widen_description(from, to).declare(b);
    b.begin_body();
    // A work-item widens one chunk of a row (the rows are whole chunks): one pair of 64-bit
    // divisions, dozens of instructions on GPUs, per chunk rather than per element.
    const std::string chunk = std::to_string(widened_row_elements);
    emit_scratch_chunk(b, "to_leading", "from");
    b.line("for (uint e = 0; e < " + chunk + "; ++e) {");
    // The padding past each row's columns is never read; zeros keep the scratch defined.
    b.line("    const float value = column0 + e < columns ? " +
           gemm_convert(from, gemm_element::f32, "from[source + column0 + e]") + " : 0.0f;");
    // Exact: every FP8 value is a bfloat16, a half and a float.
    const std::string wide = to == gemm_element::bf16  ? "kiln_float_to_bf16(value)"
                             : to == gemm_element::f16 ? "kiln_float_to_half(value)"
                                                       : "value";
    b.line("    to[i + e] = " + wide + ";");
    b.line("}");
    b.end_kernel();
    return b.str();
}

gemm_element widened_element(gemm_element c, const device_properties& props) {
    if (is_16_bit(c)) return c;
    return props.type == device_type::cpu ? gemm_element::f32 : gemm_element::bf16;
}

gemm_operand widened_shape(const gemm_operand& x, gemm_element to) {
    constexpr const char* call = "kiln::gemm";
    gemm_operand shape = x;
    shape.storage = nullptr;
    shape.element = to;
    shape.offset = 0;
    shape.leading_dimension =
        (x.columns + widened_row_elements - 1) / widened_row_elements * widened_row_elements;
    shape.batch_stride =
        checked_product(x.rows, shape.leading_dimension, call, "rows x widened leading dimension");
    checked_product(checked_product(shape.batch_stride, x.batch, call, "widened elements x batch"),
                    element_bytes(to), call, "widened bytes");
    return shape;
}

operand_copy widen_float8(const queue& q, const gemm_operand& x, gemm_element to) {
    operand_copy widened;
    const gemm_operand& shape = widened.shape = widened_shape(x, to);
    const std::size_t elements = shape.batch_stride * x.batch;
    widened.scratch = temporary_pool::acquire(q, elements * element_bytes(to));
    if (elements == 0) return widened;  // k = 0: no element to widen, none to read
    const gemm_widening_kernel kernel{x.element, to};
    const auto describe = [&] {
        return std::vector<kernel_description>{widen_description(x.element, to)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), kernel.key(), describe, [&] { return kernel.source(); });
    kernel_binding args = program.binding(widen_kernel);
    args.argument("from", gemm_storage_argument(*x.storage, x.element))
        .scalar("from_offset", std::uint64_t(x.offset))
        .scalar("from_leading", std::uint64_t(x.leading_dimension))
        .scalar("from_stride", std::uint64_t(x.batch_stride))
        .argument("to", gemm_storage_argument(widened.scratch.bytes().storage(), to))
        .scalar("to_leading", std::uint64_t(shape.leading_dimension))
        .scalar("rows", std::uint64_t(x.rows))
        .scalar("columns", std::uint64_t(x.columns));
    launch_chunks(q, program, std::move(args), elements);
    return widened;
}

std::string gemm_narrowing_kernel::key() const {
    return std::string(narrow_kernel) + ":" + std::string(to_string(to));
}

std::string gemm_narrowing_kernel::source() const {
    source_builder b;
    b.begin_kernel(narrow_kernel, widen_group);
    narrow_description(to).declare(b);
    b.begin_body();
    emit_scratch_chunk(b, "from_leading", "to");
    const std::string round =
        to == gemm_element::e4m3 ? "kiln_float_to_e4m3" : "kiln_float_to_e5m2";
    b.line("for (uint e = 0; e < " + std::to_string(widened_row_elements) +
           " && column0 + e < columns; ++e)");
    b.line("    to[source + column0 + e] = " + round + "(from[i + e]);");
    b.end_kernel();
    return b.str();
}

event run_with_float8_output(const queue& q, const gemm_problem& problem,
                             const std::function<event(const gemm_problem&)>& run) {
    const gemm_operand& c = problem.c;
    operand_copy wide;
    if (problem.beta != 0) {
        wide = widen_float8(q, c, gemm_element::f32);
    } else {  // C is not read: the scratch needs no values
        wide.shape = widened_shape(c, gemm_element::f32);
        wide.scratch =
            temporary_pool::acquire(q, wide.shape.batch_stride * c.batch * sizeof(float));
    }
    gemm_problem into = problem;
    into.c = wide.operand();
    run(into);  // the queue is in order: the narrowing below reads the product
    const gemm_narrowing_kernel kernel{c.element};
    const auto describe = [&] {
        return std::vector<kernel_description>{narrow_description(c.element)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), kernel.key(), describe, [&] { return kernel.source(); });
    kernel_binding args = program.binding(narrow_kernel);
    args.argument("from", gemm_storage_argument(wide.scratch.bytes().storage(), gemm_element::f32))
        .scalar("from_leading", std::uint64_t(wide.shape.leading_dimension))
        .argument("to", gemm_storage_argument(*c.storage, c.element))
        .scalar("to_offset", std::uint64_t(c.offset))
        .scalar("to_leading", std::uint64_t(c.leading_dimension))
        .scalar("to_stride", std::uint64_t(c.batch_stride))
        .scalar("rows", std::uint64_t(c.rows))
        .scalar("columns", std::uint64_t(c.columns));
    launch_chunks(q, program, std::move(args), wide.shape.batch_stride * c.batch);
    const event done = q.marker();
    wide.scratch.release_after(q, done);
    return done;
}

}  // namespace kiln::detail
