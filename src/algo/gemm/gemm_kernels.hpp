// SPDX-License-Identifier: Apache-2.0
// What the GEMM module's kernels share: the typed description of a kernel's operands and
// scalars, the element types' OpenCL C names, and the launch of a described GEMM kernel over a
// problem.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/gemm_epilogue.hpp>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {

/// The element types of one product: the operands' as stored, and the accumulator's (alpha and
/// beta are of it too).
struct gemm_types {
    gemm_element a = gemm_element::f32, b = gemm_element::f32, c = gemm_element::f32;
    gemm_element accumulator = gemm_element::f32;
    /// The user's epilogue, which every store calls (gemm_store), or null.
    const gemm_epilogue* epilogue = nullptr;
    /// "f32 f32 f32 acc f32", and the epilogue's source where there is one, for program keys.
    std::string key() const;
};
/// Double for double outputs, float otherwise (16-bit inputs accumulate in float); the
/// problem's epilogue.
gemm_types gemm_types_of(const gemm_problem& problem);
/// Adds the epilogue's definitions (its function and the KILN_STRUCTs it takes) to a program
/// whose kernels store through gemm_store; nothing where there is no epilogue.
void define_gemm_epilogue(source_builder& b, const gemm_types& types);
/// The OpenCL C type kernels hold `e` in: float, double, or ushort for the 16-bit formats (their
/// bits: kernels convert them, so that no device needs cl_khr_fp16).
std::string opencl_name(gemm_element e);
/// `value`, an element of type `e` as opencl_name holds it, as a float or double of type
/// `accumulator` (exactly: every 16-bit value is a float).
std::string gemm_convert(gemm_element e, gemm_element accumulator, const std::string& value);

/// Every GEMM kernel's parameters, in one place so that generators and the binding agree:
/// a, b and c with their offsets, leading dimensions and batch strides (in elements), m, n, k,
/// the batch entries and alpha, beta, then the epilogue's captures.
kernel_description gemm_kernel_description(const std::string& name, const gemm_types& types);
/// An operand's memory as a kernel argument of its element type.
kernel_argument gemm_storage_argument(const buffer_storage& storage, gemm_element element);
/// `name` bound to the problem's operands (batch entries move by the strides).
kernel_binding bind_gemm(const algorithm_program& program, const std::string& name,
                         const gemm_problem& problem, const gemm_types& types);

/// Where one operand's block tile lies in its matrix, as the SIMT and tensor-core kernels copy
/// it: A (m x k) lies with k inner, its transpose (k x m) with m inner; B (k x n) the other way.
/// Starts and limits are kernel expressions (row0, column0, k0; m, n, k).
struct operand_tile {
    std::string name;  // "a" or "b"
    bool k_is_inner = false;
    std::size_t outer = 0, inner = 0;
    std::string outer_start, outer_limit, inner_start, inner_limit;
};
/// A's (`is_a`) or B's tile of `along` rows or columns of C and `depth` of k.
operand_tile operand_tile_of(bool is_a, bool transposed, std::size_t along, std::size_t depth);

/// The lines that move the operands' pointers to the group's batch entry `entry`.
void emit_batch_entry(source_builder& b, const std::string& entry);
/// The group's block of C (row0, column0) of block_rows x block_columns, and its batch entry:
/// groups run through C's blocks row after row (or, where band_rows is not 0, down bands of that
/// many block rows, column by column), then through the batch entries.
void emit_block_origin(source_builder& b, std::size_t block_rows, std::size_t block_columns,
                       std::size_t band_rows);
/// The block of C (row0, column0) at `place` (a kernel variable, below tiles_m x tiles_n) in
/// emit_block_origin's order: what it places a group's block by, and a persistent kernel each of
/// the blocks it loops over.
void emit_block_place(source_builder& b, std::size_t block_rows, std::size_t block_columns,
                      std::size_t band_rows);
/// The work-groups of the kernels that emit_block_origin places: C's blocks in every batch entry.
std::size_t gemm_block_count(const gemm_problem& problem, std::size_t block_rows,
                             std::size_t block_columns);
/// The call of the user's epilogue on `value` at (row, column): what the kernel stores there.
std::string gemm_epilogue_call(const gemm_epilogue& epilogue, const std::string& value,
                               const std::string& row, const std::string& column);
/// What the epilogue stores of one accumulator at (row, column), before C's rounding: alpha acc
/// (+ beta `old`, C's value there, which is not read where beta is 0), passed through the user's
/// epilogue where there is one. An expression with no parentheses around it.
std::string gemm_stored_value(const gemm_types& types, const std::string& old,
                              const std::string& accumulator, const std::string& row,
                              const std::string& column);
/// The epilogue's store of one accumulator at (row, column), inside the matrix: C = alpha acc
/// (+ beta C where beta is not 0, which C's old value is not read under), passed through the
/// user's epilogue where there is one, rounded once to C's type.
std::string gemm_store(const gemm_types& types, const std::string& row, const std::string& column,
                       const std::string& accumulator);

}  // namespace kiln::detail
