// SPDX-License-Identifier: Apache-2.0
// The sparse product's entry (sparse_product.hpp's run_sparse_product): its program, written
// around the statement's typed text, bound by slot and launched.
#include <cstdint>
#include <kiln/expr/launch.hpp>

#include "sparse_product_kernel.hpp"

namespace kiln::detail {
namespace {

/// The product kernel: its frame and format's loops around the statement's lines.
std::string product_source(const sparse_product_input& input, loop_style style) {
    const sparse_layout& layout = input.layout;
    source_builder b;
    // Formats whose rows a team of work-items shares are written for their group size.
    if (layout.format == sparse_format::csr_vector ||
        layout.format == sparse_format::csr_adaptive ||
        layout.format == sparse_format::csr_chunked || layout.format == sparse_format::sliced_ell)
        b.begin_kernel(sparse_product_kernel, layout.work_group_size);
    else
        b.begin_kernel(sparse_product_kernel);
    sparse_product_description(input.value_type).declare(b);
    const sparse_kernel_text text = input.declare_statement(b);
    b.begin_body();
    emit_sparse_body(b, layout, style, text);
    b.end_kernel();
    return b.str();
}

}  // namespace

void run_sparse_product(const queue& q, const sparse_product_input& input) {
    const launch_policy policy = launch_policy_for(q.device());
    const sparse_product_key key{input.statement, input.layout, policy.loop, input.result};
    const algorithm_program& program = algorithm_program_for(
        q.device(), key.key(),
        [&] { return std::vector{sparse_product_description(input.value_type)}; },
        [&] { return product_source(input, policy.loop); });

    kernel_binding bound = program.binding(sparse_product_kernel);
    bound.scalar("n", static_cast<std::uint64_t>(input.rows))
        .scalar("kiln_width", static_cast<std::uint64_t>(input.layout.ell_width))
        .scalar("kiln_work_count", static_cast<std::uint64_t>(input.work_count));
    bound.argument("kiln_row_pointers", input.row_pointers)
        .argument("kiln_columns", input.columns)
        .argument("kiln_values", input.values)
        .argument("kiln_work", input.work);
    bound.input(input.statement_arguments);
    launch_sparse(program, std::move(bound), q, input.layout, input.rows, input.work_count);
}

}  // namespace kiln::detail
