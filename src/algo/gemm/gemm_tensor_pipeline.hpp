// SPDX-License-Identifier: Apache-2.0
// What the kernels that copy their tiles by cp.async share (gemm_tensor_cores.cpp for 16-bit
// inputs, gemm_tensor_cores_wide.cpp for doubles and TF32, gemm_simt_copies.cpp for floats on
// SIMT cores): operand tiles staged in local memory by cp.async 16 (or 4) bytes at a time,
// through `stages` buffers, and the loop that keeps the next tiles' copies in flight while the
// work-items multiply the current one.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"

namespace kiln::detail {

inline constexpr const char* gemm_tensor_kernel_name = "kiln_gemm_tensor_cores";

/// One operand's tile as it lies in local memory: as in global memory, `outer` rows of `inner`
/// elements and `padding` more, inner contiguous; or, `transposed`, `inner` rows of `outer` and
/// `padding` more, which copies of one element each write (cp.async cannot transpose a wider
/// copy).
struct staged_tile : operand_tile {
    /// The kernel's type of one element: ushort (16-bit bits), float or double.
    std::string element;
    std::size_t element_bytes = 2;
    std::size_t padding = 0;
    /// Bytes per cp.async: 16, or 4 (float tiles whose rows are not on 16 bytes, or transposed).
    std::size_t copy_bytes = 16;
    bool transposed = false;
    /// Elements in one copy.
    std::size_t chunk() const { return copy_bytes / element_bytes; }
    std::size_t row() const { return (transposed ? outer : inner) + padding; }
    std::size_t stage_elements() const { return (transposed ? inner : outer) * row(); }
    /// Whether the stage's rows run along k (its columns are the block's rows or columns).
    bool k_outer_in_stage() const { return k_is_inner == transposed; }
    /// The element `along` rows or columns (whichever is not k) and `k` deep past a place in a
    /// stage: a constant, so that a warp's fragment reads are fixed offsets from one address.
    std::size_t offset(std::size_t along, std::size_t k) const {
        return k_outer_in_stage() ? k * row() + along : along * row() + k;
    }
};

/// The main loop's pipeline: tiles block_depth deep, `stages` of them in local memory, copied by
/// the work_group_size work-items.
struct copy_pipeline {
    std::size_t block_depth = 0, stages = 2, work_group_size = 0;
};
copy_pipeline copy_pipeline_of(const gemm_tensor_tiles& t);

/// A's (`is_a`) or B's block tile of `shape`, of elements of `element_bytes` bytes.
staged_tile staged_tile_of(const gemm_tensor_kernel& shape, bool is_a, std::size_t element_bytes,
                           std::size_t padding);

/// "8u": a constant of the kernels' uint arithmetic.
std::string uint_literal(std::size_t value);

/// Rows, offset and batch stride on 16-byte boundaries (the buffer's start is aligned further).
bool copies_by_16_bytes(const gemm_operand& x);

/// The local buffers a_tile and b_tile of `stages` tiles each, aligned to 16 bytes: local arrays,
/// or the `staging` argument where `dynamic`.
void emit_stage_buffers(source_builder& b, const staged_tile& a, const staged_tile& bl,
                        std::size_t stages, bool dynamic);
/// A's (`is_a`) or B's stage tile of the kernel for doubles or TF32, padded as its fragment loads
/// want (gemm_tensor_cores_wide.cpp).
staged_tile wide_stage_tile(const gemm_tensor_kernel& shape, bool is_a);
/// tid, lane, warp; the warp's place in the block (warp_row, warp_column); the group's batch entry
/// and block of C (row0, column0).
void emit_block_start(source_builder& b, const gemm_tensor_tiles& t);
/// The loop over k's tiles: the first stages - 1 tiles' copies in flight before it, then for each
/// tile a wait for its copies and a barrier, the copies of the tile stages - 1 ahead, and
/// `multiply`'s arithmetic on a_stage and b_stage, the tile's local buffers. Needs `tid`, the
/// kernel's operands and the block's origin.
void emit_staged_loop(source_builder& b, const copy_pipeline& t, const staged_tile& a,
                      const staged_tile& bl, const std::function<void()>& multiply);

/// One tile's arithmetic on a_stage and b_stage, given `sync`, which it emits exactly once after
/// its last read of them: the wait for the following tile's copies and the barrier that makes
/// them visible and frees this tile's stage for the copies ahead.
using early_synced_multiply = std::function<void(const std::function<void()>& sync)>;

/// The loop of emit_staged_loop, but each tile's wait and barrier for the following tile come
/// where `multiply` emits them, so that it can read the following tile's first values before its
/// own last products (the SIMT kernel's register double buffer). Before the loop, the first
/// tile's wait and barrier, then `before` (the first tile visible in stage 0 at a_tile and
/// b_tile); in the loop, the following tile's stage is `following`.
void emit_staged_loop_synced_early(source_builder& b, const copy_pipeline& t, const staged_tile& a,
                                   const staged_tile& bl, const early_synced_multiply& multiply,
                                   const std::function<void()>& before);

/// The source of `shape`'s kernel for doubles (mma.sync m8n8k4 or m16n8k8) or for floats
/// rounded to TF32 (m16n8k8): gemm_tensor_cores_wide.cpp.
std::string wide_tensor_kernel_source(const gemm_tensor_kernel& shape);

}  // namespace kiln::detail
