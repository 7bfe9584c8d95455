// SPDX-License-Identifier: Apache-2.0
// What the warpgroup strategy's two feeds share (gemm_warpgroup.cpp: every work-item's cp.async
// copies; gemm_warpgroup_tma.cpp: one work-item's tile-map copies): the swizzled layout of a
// stage's tiles in local memory, wgmma's descriptors of it, the instruction of the block's width,
// and the epilogue that stores a warpgroup's accumulators.
#pragma once

#include <cstddef>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_tensor_pipeline.hpp"
#include "gemm_tuning.hpp"

namespace kiln::detail {

/// Bytes of one swizzled row, the swizzle's span: 64 elements of 16 bits, 32 floats, 128 FP8.
inline constexpr std::size_t warpgroup_row_bytes = 128;
/// The bytes of k that one wgmma reads, whatever the inputs' width (k16 of 16 bits, k8 of TF32,
/// k32 of FP8): a swizzled row holds warpgroup_row_bytes / warpgroup_k_step_bytes of its steps.
inline constexpr std::size_t warpgroup_k_step_bytes = 32;

/// The local layout of one operand's tile: `outer` rows of 128 bytes per block of 128 bytes of
/// `inner`, the blocks one after another; the 16-byte chunk c of row r lies at chunk c ^ (r % 8)
/// of its row (wgmma's 128-byte swizzle, which spreads the rows wgmma reads together over every
/// bank, and the layout a tile map's 128-byte swizzle writes).
struct swizzled_tile {
    operand_tile tile;
    std::size_t offset = 0;  ///< within a stage, in bytes
    std::size_t element_bytes = 2;
    std::size_t block_bytes() const { return tile.outer * warpgroup_row_bytes; }
    std::size_t bytes() const { return tile.outer * tile.inner * element_bytes; }
};

/// The descriptor of the k step `kk` (32 bytes of k) of a tile at local address `stage` + the
/// tile's offset, from `rows` (A: the warpgroup's first row) on.
std::string warpgroup_descriptor(const swizzled_tile& s, const std::string& rows, std::size_t kk);

/// Defines kiln_wgmma_descriptor, which warpgroup_descriptor's text calls.
void define_warpgroup_descriptor(source_builder& b);

/// The wgmma function of the types and width ("kiln_wgmma_m64n256k16_bf16",
/// "kiln_wgmma_m64n128k8_tf32" for floats, "kiln_wgmma_m64n128k32_e4m3_e5m2").
std::string warpgroup_mma_function(const gemm_types& types, std::size_t block_columns);

/// Whether wgmma reads inputs of `types` with k outer too (16-bit ones): TF32 and FP8 tiles
/// must lie with k inner, A not transposed and B transposed.
bool warpgroup_transposes_inputs(const gemm_types& types);

/// The elements of k in one swizzled row of the inputs of `types` (the tile maps' and the
/// stages' depth): 64 of 16 bits, 32 floats, 128 FP8.
std::size_t warpgroup_row_elements(const gemm_types& types);

/// wgmma's transpose arguments for the two tiles, after a comma (", 0, 1": B lies with n inner),
/// or nothing for inputs that have none (warpgroup_transposes_inputs).
std::string warpgroup_transposes(const gemm_types& types, const swizzled_tile& a,
                                 const swizzled_tile& b);

/// The stores of the m64 x block_columns accumulator `d` (block_columns / 2 registers) whose first
/// row is `first_row` (a kernel expression), within C's bounds. With `pairs`, an accumulator
/// inside C whose rows allow it (the kernel's `c_pairs`) stores each pair of neighbouring columns
/// that a work-item holds as one 8-byte (float) or 4-byte (16-bit) store, a user's epilogue
/// called on each of the two: half the store instructions, and a warp's stores of a row fill
/// whole 32-byte sectors.
void emit_warpgroup_stores(source_builder& b, const gemm_types& types, const std::string& d,
                           std::size_t block_columns, const std::string& first_row,
                           bool pairs = false);
/// Defines the kernel's `c_pairs`, which emit_warpgroup_stores's pairs need: whether C's offset,
/// rows and batch stride are even, so that every pair starts on its size.
void emit_warpgroup_pairs_condition(source_builder& b);

}  // namespace kiln::detail
