// SPDX-License-Identifier: Apache-2.0
// Operands copied into the layout that TF32 and FP8 wgmma read: k inner (A m x k not transposed,
// B stored n x k and read transposed), the rows on 16 bytes for the tile maps. wgmma transposes
// only 16-bit tiles, so an operand with k outer is transposed into scratch first, keeping its
// type (FP8 stays FP8, floats stay floats); one with k inner whose rows are off 16 bytes is
// copied as it lies.
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>

#include "gemm_operand_copy.hpp"

namespace kiln::detail {

/// Whether the tile-map wgmma kernel reads A (`is_a`) or B as it lies for TF32 or FP8: k inner,
/// and rows, offset and batch stride on 16 bytes.
bool lies_k_major(const gemm_operand& x, bool is_a);

/// The operand a K-major copy of `x` is: op(x)'s rows (A) or columns (B) as stored rows of k
/// elements, padded to 16 bytes, from offset 0, batch entries one after another (one entry where
/// `x` has one for the whole batch), B transposed; on no storage yet.
gemm_operand k_major_shape(const gemm_operand& x, bool is_a);

/// The copying kernel of one element type: a transpose through local memory where the operand
/// lies with k outer, a plain copy where it lies with k inner; its key and source
/// (algo.gemm_texts records each).
struct gemm_k_major_kernel {
    gemm_element element;
    bool transposes = false;
    std::string key() const;
    std::string source() const;
};

/// `x` copied on `q` into scratch (acquired here) as k_major_shape says.
operand_copy copy_k_major(const queue& q, const gemm_operand& x, bool is_a);

}  // namespace kiln::detail
