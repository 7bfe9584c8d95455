// SPDX-License-Identifier: Apache-2.0
// Where the tensor cores' fragments lie, from the PTX instruction table's layouts
// (include/kiln/detail/ptx_instructions.hpp), as the GEMM kernels' expressions: the layouts are
// written once, as data, and every writer reads them.
#pragma once

#include <kiln/detail/ptx_instructions.hpp>
#include <string>
#include <string_view>

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

}  // namespace kiln::detail
