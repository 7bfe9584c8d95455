// SPDX-License-Identifier: Apache-2.0
// An operand copied into scratch whose rows start at multiples of 4 elements, so that the SIMT
// kernel reads it by vectors: where its leading dimension or offset is not such a multiple
// (4095 x 4095 matrices), a large product gains far more from the vector loads than the copy
// costs (the plan decides: gemm_plan.hpp).
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/queue.hpp>

#include "gemm_operand_copy.hpp"

namespace kiln::detail {

/// Elements a row of the copy starts at a multiple of.
inline constexpr std::size_t aligned_row_elements = 4;

/// Whether a copy would let vectors read `x`: one batch entry of floats or doubles whose leading
/// dimension or offset is not a multiple of aligned_row_elements.
bool copy_aligns_rows(const gemm_operand& x);

/// `x`'s rows copied on `q` into scratch (acquired here), each starting at a multiple of
/// aligned_row_elements.
operand_copy copy_with_aligned_rows(const queue& q, const gemm_operand& x);

}  // namespace kiln::detail
