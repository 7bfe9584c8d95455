// SPDX-License-Identifier: Apache-2.0
// An operand copied into scratch whose rows start at multiples of 4 elements, so that the SIMT
// kernel reads it by vectors: where its leading dimension or offset is not such a multiple
// (4095 x 4095 matrices), a large product gains far more from the vector loads than the copy
// costs (the plan decides: gemm_plan.hpp).
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>

namespace kiln::detail {

/// Elements a row of the copy starts at a multiple of.
inline constexpr std::size_t aligned_row_elements = 4;

/// Whether a copy would let vectors read `x`: one batch entry of floats or doubles whose leading
/// dimension or offset is not a multiple of aligned_row_elements.
bool copy_aligns_rows(const gemm_operand& x);

/// `x`'s rows copied on `q` into `scratch` (acquired here), each starting at a multiple of
/// aligned_row_elements, ready once `copied` is.
struct aligned_rows {
    temporary_lease scratch;
    /// The copy's shape; its storage is the lease's, which moves with it: operand().
    gemm_operand shape;
    event copied;
    /// The operand that reads the copy where the lease is now: valid while this object stays put
    /// (a pointer kept from before a move would read the moved-from, empty lease).
    gemm_operand operand() const {
        gemm_operand x = shape;
        x.storage = &scratch.bytes().storage();
        return x;
    }
};
aligned_rows copy_with_aligned_rows(const queue& q, const gemm_operand& x);

}  // namespace kiln::detail
