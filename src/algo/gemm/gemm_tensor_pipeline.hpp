// What the tensor-core kernels share (gemm_tensor_cores.cpp for 16-bit inputs,
// gemm_tensor_cores_wide.cpp for doubles and TF32): operand tiles staged in local memory by
// cp.async 16 bytes at a time, through `stages` buffers, and the loop that keeps the next tiles'
// copies in flight while the warps multiply the current one.
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

/// One operand's tile as it lies in local memory: as in global memory (so that copies need no
/// transpose), `outer` rows of `inner` elements and `padding` more, inner contiguous.
struct staged_tile : operand_tile {
    /// The kernel's type of one element: ushort (16-bit bits), float or double.
    std::string element;
    std::size_t element_bytes = 2;
    std::size_t padding = 0;
    /// Elements in one 16-byte copy.
    std::size_t chunk() const { return 16 / element_bytes; }
    std::size_t row() const { return inner + padding; }
    std::size_t stage_elements() const { return outer * row(); }
    /// The element `along` rows or columns (whichever is not k) and `k` deep past a place in a
    /// stage: a constant, so that a warp's fragment reads are fixed offsets from one address.
    std::size_t offset(std::size_t along, std::size_t k) const {
        return k_is_inner ? along * row() + k : k * row() + along;
    }
};

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
/// `multiply`'s arithmetic on a_stage and b_stage, the tile's local buffers.
void emit_staged_loop(source_builder& b, const gemm_tensor_tiles& t, const staged_tile& a,
                      const staged_tile& bl, const std::function<void()>& multiply);

/// The source of `shape`'s kernel for doubles (mma.sync m8n8k4 or m16n8k8) or for floats
/// rounded to TF32 (m16n8k8): gemm_tensor_cores_wide.cpp.
std::string wide_tensor_kernel_source(const gemm_tensor_kernel& shape);

}  // namespace kiln::detail
