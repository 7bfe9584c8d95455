// SPDX-License-Identifier: Apache-2.0
// The sparse product's kernel (run_sparse_product's): its parameters, its program cache key, the
// bodies of each storage format and its launch.
#pragma once

#include <cstddef>
#include <kiln/algo/sparse_product.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/sparse_format.hpp>
#include <string>

namespace kiln::detail {

inline constexpr const char* sparse_product_kernel = "kiln_spmv";
/// The product kernel's parameters for values of OpenCL C type `value_type`: the rows `n`, the
/// matrix's arrays and its work list (sparse_storage; kiln_width: layout.ell_width), then the
/// statement's expressions (the operand x, the target, the element-wise part).
kernel_description sparse_product_description(const std::string& value_type);

/// What a product kernel is written from: its program cache key.
struct sparse_product_key {
    /// The statement's type with its target (typeid name): the value type, the operand's and
    /// the target's expressions.
    std::string statement;
    sparse_layout layout;
    loop_style loop = loop_style::strided;
    /// The element-wise part's type (typeid name).
    std::string result;
    std::string key() const;
};

/// The kernel body for `layout`: loops over rows and entries around `text`.
void emit_sparse_body(source_builder& b, const sparse_layout& layout, loop_style style,
                      const sparse_kernel_text& text);
/// csr_chunked's body (spmv_on_cpu.cpp): a work-item per chunk of kiln_work.
void emit_csr_chunked(source_builder& b, const sparse_kernel_text& text);
/// sliced_ell's body (spmv_sliced_ell.cpp): a work-item per chunk of kiln_work's slices, a
/// slice's layout.lanes rows side by side.
void emit_sliced_ell(source_builder& b, const sparse_layout& layout,
                     const sparse_kernel_text& text);

/// Launches a bound sparse product kernel of `program` over `rows` rows (csr_adaptive: over
/// `work_count` blocks).
event launch_sparse(const algorithm_program& program, kernel_binding args, const queue& q,
                    const sparse_layout& layout, std::size_t rows, std::size_t work_count);

}  // namespace kiln::detail
