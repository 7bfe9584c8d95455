// SPDX-License-Identifier: Apache-2.0
// What the SIMT kernels share (gemm_simt.cpp, the next tile staged in registers;
// gemm_simt_copies.cpp, tiles copied by cp.async): the work-item's place in the block, its thread
// tile of accumulators, the products of one local tile, and the epilogue that stores them.
#pragma once

#include <cstddef>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"
#include "gemm_tuning.hpp"

namespace kiln::detail {

inline constexpr const char* gemm_simt_kernel_name = "kiln_gemm_simt";

/// tid, the group's block of C (row0, column0) and batch entry, the work-item's place in it (tx
/// along n, ty along m), and its accumulators, 0.
void emit_thread_tile_start(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types);

/// Where a work-item's thread tile starts in a local row of op(A) (`is_a`) or op(B): its ty (tx),
/// or with vector_reads its run of 4 (ty * 4).
std::string thread_tile_first(const gemm_simt_tiles& t, bool is_a);

/// Declares the arrays a_<name> and b_<name>: one k's values of a work-item's thread tile.
void emit_thread_tile_values(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                             const std::string& name);

/// The thread tile's values of op(A)'s column p and op(B)'s row p into a_<into> and b_<into>:
/// from `a_read` (the local tile plus thread_tile_first), rows of `a_row` elements along m, one
/// per k, and `b_read`, rows of `b_row` along n; by 4-vectors with vector_reads. `p`: a kernel
/// expression or a constant.
void emit_thread_tile_reads(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                            const std::string& p, const std::string& a_read, std::size_t a_row,
                            const std::string& b_read, std::size_t b_row, const std::string& into);

/// Every accumulator (i, j) += a_<from>[i] b_<from>[j]: by mad, or with `rounded_products` as a
/// product and a sum (gemm_simt_kernel::rounded_products).
void emit_thread_tile_mads(source_builder& b, const gemm_simt_tiles& t, const std::string& from,
                           bool rounded_products);

/// The products of one local tile block_depth deep in a loop over k: op(A)'s at `a_tile`, rows
/// of `a_row` elements along m, one per k; op(B)'s at `b_tile`, rows of `b_row` along n.
void emit_thread_tile_products(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                               const std::string& a_tile, std::size_t a_row,
                               const std::string& b_tile, std::size_t b_row, bool rounded_products);

/// The epilogue: each accumulator inside C stored (gemm_store).
void emit_thread_tile_store(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types);

/// The kernel of `shape`, whose tiles have copy_stages, float elements and an NVIDIA target
/// (gemm_simt_copies.cpp).
std::string simt_copies_source(const gemm_simt_kernel& shape);

}  // namespace kiln::detail
