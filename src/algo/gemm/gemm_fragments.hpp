// SPDX-License-Identifier: Apache-2.0
// Where the tensor cores' fragments lie, from the PTX instruction table's layouts
// (include/kiln/detail/ptx_instructions.hpp), as the GEMM kernels' expressions: the layouts are
// written once, as data, and every writer reads them.
#pragma once

#include <cstddef>
#include <kiln/detail/ptx_instructions.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_kernels.hpp"

namespace kiln::detail {

/// A lane's part of a layout's row and column as kernel expressions of `lane` (the lane in its
/// warp) and, for a warpgroup's layouts, `warp` (the warp in its warpgroup): "lane / 4u" and
/// "lane % 4u * 2u" for the m16n8 accumulators. A value's own part is layout.at(0, value).
struct fragment_lane_position {
    std::string row, column;
};
fragment_lane_position lane_position(const ptx_fragment_layout& layout);

/// The shape and fragment layouts of the instruction table's `mma_function` (an mma.sync or
/// wgmma wrapper's name).
const ptx_mma_shape& tensor_core_atom(std::string_view mma_function);

/// One accumulator's store: its row and column in C and its value (kernel expressions, as
/// gemm_store takes them), and the condition that it is inside C.
struct fragment_store {
    std::string row, column, value, inside;
};
/// The stores of a tile whose elements are all inside C where `tile_inside` (a kernel condition)
/// holds, each guarded by C's bounds. With a user's epilogue, a tile inside C stores without the
/// guards: the compiler may then load what the epilogue reads for many elements at once, where a
/// load behind each guard waits for the one before it.
void emit_fragment_stores(source_builder& b, const gemm_types& types,
                          const std::vector<fragment_store>& stores,
                          const std::string& tile_inside);

/// The mma.sync kernels' epilogue: a warp's m_tiles x n_tiles tiles of accumulators
/// (`accumulators`, tile by tile, each in `c`'s layout) stored into C where inside it, the warp's
/// tile starting at (row0 + warp_row, column0 + warp_column).
void emit_warp_tile_stores(source_builder& b, const gemm_types& types, const ptx_fragment_layout& c,
                           std::size_t m_tiles, std::size_t n_tiles);

}  // namespace kiln::detail
