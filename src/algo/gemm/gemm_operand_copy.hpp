// SPDX-License-Identifier: Apache-2.0
// An operand copied into scratch before the product: into aligned rows (gemm_aligned_rows.hpp)
// or widened from FP8 (gemm_float8.hpp).
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/temporary_pool.hpp>

namespace kiln::detail {

/// A copy of an operand in `scratch`, which work enqueued afterwards on the queue that copied
/// it sees (the queue is in order).
struct operand_copy {
    temporary_lease scratch;
    /// The copy's shape and type; its storage is the lease's, which moves with it: operand().
    gemm_operand shape;
    /// The operand that reads the copy where the lease is now: valid while this object stays put
    /// (a pointer kept from before a move would read the moved-from, empty lease).
    gemm_operand operand() const {
        gemm_operand x = shape;
        x.storage = &scratch.bytes().storage();
        return x;
    }
};

}  // namespace kiln::detail
