// SPDX-License-Identifier: Apache-2.0
// The copy of an operand into rows that start at multiples of 4 elements (gemm_aligned_rows.hpp).
#include "gemm_aligned_rows.hpp"

#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>

#include "algo/ceil_div.hpp"
#include "gemm_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* align_kernel = "kiln_gemm_align_rows";
constexpr std::size_t align_group = 256;

kernel_description align_description(gemm_element element) {
    kernel_description kernel(align_kernel);
    kernel.global_const(opencl_name(element), "from").restricted();
    kernel.scalar<std::uint64_t>("from_offset").scalar<std::uint64_t>("from_leading");
    kernel.global(opencl_name(element), "to").restricted();
    kernel.scalar<std::uint64_t>("to_leading")
        .scalar<std::uint64_t>("rows")
        .scalar<std::uint64_t>("columns");
    return kernel;
}

std::string align_source(gemm_element element) {
    source_builder b;
    b.begin_kernel(align_kernel, align_group);
    align_description(element).declare(b);
    b.begin_body();
    b.line("const ulong i = " + source_builder::global_id() + ";");
    b.line("if (i >= rows * to_leading) return;");
    b.line("const ulong row = i / to_leading, column = i % to_leading;");
    // The padding past each row's columns is never read; zeros keep the scratch defined.
    b.line("to[i] = column < columns ? from[from_offset + row * from_leading + column] : 0;");
    b.end_kernel();
    return b.str();
}

}  // namespace

bool copy_aligns_rows(const gemm_operand& x) {
    return x.batch == 1 && (x.element == gemm_element::f32 || x.element == gemm_element::f64) &&
           (x.leading_dimension % aligned_row_elements != 0 ||
            x.offset % aligned_row_elements != 0);
}

operand_copy copy_with_aligned_rows(const queue& q, const gemm_operand& x) {
    operand_copy aligned;
    aligned.shape = x;
    aligned.shape.offset = 0;
    aligned.shape.leading_dimension = round_up(x.columns, aligned_row_elements);
    const std::size_t elements = x.rows * aligned.shape.leading_dimension;
    aligned.scratch = temporary_pool::acquire(q, elements * element_bytes(x.element));
    const std::string key = std::string(align_kernel) + ":" + std::string(to_string(x.element));
    const auto describe = [&] {
        return std::vector<kernel_description>{align_description(x.element)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), key, describe, [&] { return align_source(x.element); });
    kernel_binding args = program.binding(align_kernel);
    args.argument("from", gemm_storage_argument(*x.storage, x.element))
        .scalar("from_offset", std::uint64_t(x.offset))
        .scalar("from_leading", std::uint64_t(x.leading_dimension))
        .argument("to", gemm_storage_argument(aligned.scratch.bytes().storage(), x.element))
        .scalar("to_leading", std::uint64_t(aligned.shape.leading_dimension))
        .scalar("rows", std::uint64_t(x.rows))
        .scalar("columns", std::uint64_t(x.columns));
    program.bind(std::move(args)).launch(q, round_up(elements, align_group), align_group);
    return aligned;
}

}  // namespace kiln::detail
