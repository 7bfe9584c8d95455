// What the GEMM module's kernels share: the typed description of a kernel's operands and
// scalars, the element types' OpenCL C names, and the launch of a described GEMM kernel over a
// problem.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/algorithm_program.hpp>
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
    /// "f32 f32 f32 acc f32", for program keys.
    std::string key() const;
};
/// Double for double outputs, float otherwise (16-bit inputs accumulate in float).
gemm_types gemm_types_of(const gemm_problem& problem);
/// The OpenCL C type kernels hold `e` in: float, double, or ushort for the 16-bit formats (their
/// bits: kernels convert them, so that no device needs cl_khr_fp16).
std::string opencl_name(gemm_element e);
/// `value`, an element of type `e` as opencl_name holds it, as a float or double of type
/// `accumulator` (exactly: every 16-bit value is a float).
std::string gemm_convert(gemm_element e, gemm_element accumulator, const std::string& value);
/// The functions gemm_convert's expressions call, defined once in `b`'s program.
void use_gemm_conversions(source_builder& b);

/// Every GEMM kernel's parameters, in one place so that generators and the binding agree:
/// a, b and c with their offsets, leading dimensions and batch strides (in elements), m, n, k,
/// the batch entries and alpha, beta.
kernel_description gemm_kernel_description(const std::string& name, const gemm_types& types);
/// `name` bound to the problem's operands (batch entries move by the strides).
kernel_binding bind_gemm(const algorithm_program& program, const std::string& name,
                         const gemm_problem& problem, const gemm_types& types);

/// The lines that move the operands' pointers to the group's batch entry `entry`.
void emit_batch_entry(source_builder& b, const std::string& entry);
/// The epilogue's store of one accumulator at (row, column), inside the matrix: C = alpha acc
/// (+ beta C where beta is not 0, which C's old value is not read under).
std::string gemm_store(const gemm_types& types, const std::string& row, const std::string& column,
                       const std::string& accumulator);

}  // namespace kiln::detail
