// SPDX-License-Identifier: Apache-2.0
// FP8 operands widened into scratch before the product: every kiln::float8_e4m3 and
// kiln::float8_e5m2 value is exact in bfloat16, in half and in float, so one pass over each FP8
// operand turns an FP8 product into a 16-bit (or float) one that every strategy already runs,
// the tensor cores included, with the same results as a kernel that widened inside its tile
// loads. The scratch's rows start at multiples of 8 elements, so that the tensor cores' 16-byte
// copies take any FP8 layout.
#pragma once

#include <functional>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>

#include "gemm_operand_copy.hpp"

namespace kiln::detail {

/// What FP8 operands become for a C of `c`: C's own type for a half or bfloat16 C, which the
/// 16-bit strategies take with inputs of its type; for a float C, float on CPU devices (OpenBLAS
/// and the CPU tiles multiply floats, and convert no 16-bit element) and bfloat16 elsewhere
/// (the tensor cores' rate, half the bytes of float, and widened by a shift in the SIMT kernel).
gemm_element widened_element(gemm_element c, const device_properties& props);

/// The operand that a widened copy of `x` in elements of `to` is: its rows padded to a multiple
/// of 8 elements, from offset 0, batch entries one after another (transposed as `x` is), on no
/// storage yet; invalid_argument_error where its size overflows.
gemm_operand widened_shape(const gemm_operand& x, gemm_element to);

/// The widening kernel from FP8 elements of `from` to elements of `to`: its program key and its
/// source (algo.gemm_texts records each).
struct gemm_widening_kernel {
    gemm_element from, to;
    std::string key() const;
    std::string source() const;
};

/// `x` (FP8) widened on `q` into scratch (acquired here) as elements of `to`: each batch entry
/// `rows` rows of a leading dimension rounded up to 8, one entry after another.
operand_copy widen_float8(const queue& q, const gemm_operand& x, gemm_element to);

/// The narrowing kernel from float scratch (widened_shape's layout) into an FP8 C of `to`.
struct gemm_narrowing_kernel {
    gemm_element to;
    std::string key() const;
    std::string source() const;
};

/// A product whose C is FP8, which no strategy writes: `run` computes it into float scratch of
/// widened_shape's layout (C's old values widened into it first where beta reads them; an
/// epilogue runs there, in float), and one pass rounds the scratch into C, to nearest even as
/// kiln::float8_e4m3 and kiln::float8_e5m2 round floats: C is rounded once, as a 16-bit C is.
event run_with_float8_output(const queue& q, const gemm_problem& problem,
                             const std::function<event(const gemm_problem&)>& run);

}  // namespace kiln::detail
