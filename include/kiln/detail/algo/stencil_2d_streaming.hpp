// SPDX-License-Identifier: Apache-2.0
// The streaming shape of 2-D stencils (src/algo/stencil/stencil_2d_streaming.cpp), chosen where
// the 2-D tuning has strip_rows set: each work-group owns work_group_size adjacent columns of a
// strip of strip_rows consecutive output rows and walks down it one input row per step. A step's
// row (with the kernel_columns - 1 halo columns) goes through a local-memory row buffer, so that
// every work-item reads its horizontal neighbours from there; each work-item keeps the
// kernel_rows partial sums its column's input row feeds in registers and stores the one that the
// row completes. Clamping is worked out once per work-item (columns) and once per step (the row),
// never per element.
//
// The kernel takes the tiled kernel's parameters (stencil_kernels.hpp), so the same arguments
// launch either.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>

namespace kiln::detail {

/// Kernel kiln_stencil_2d_strips(rows, columns, x, y, c).
kernel_description stencil_strips_kernel(const tiled_2d_shape& shape);
std::string stencil_strips_source(const tiled_2d_shape& shape);
/// The program of the strips kernel on `dev`. Where the device allows the kernel fewer
/// work-items than the tuning's group, the group (its columns) halves; shape.tuning becomes
/// what was built.
const algorithm_program& stencil_strips_program(const device& dev, tiled_2d_shape& shape);
void launch_stencil_strips(const algorithm_program& built, const queue& q, std::size_t rows,
                           std::size_t columns, const tiled_2d_shape& shape, kernel_binding&& args);

}  // namespace kiln::detail
#pragma GCC visibility pop
