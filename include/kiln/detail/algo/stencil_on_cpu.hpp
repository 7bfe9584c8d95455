// SPDX-License-Identifier: Apache-2.0
// The CPU shape of the stencils (src/algo/stencil/stencil_on_cpu.cpp): where the stencil's
// tuning has chunk_bytes set (the tuning table's CPU rows), groups of one work-item each walk a
// long contiguous run of outputs in a plain loop that the compiler vectorises, reading the
// neighbours straight from global memory, whose reuse the caches serve. Only a run's outputs
// whose window leaves the part (or the grid's border) take the clamped loads.
//
// The kernels take the tiled kernels' parameters (stencil_kernels.hpp), so the same arguments
// launch either.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/queue.hpp>

namespace kiln::detail {

/// Runs (work-groups of one work-item) for `bytes` of outputs on `dev`: runs of at least
/// tuning.chunk_bytes, and about 16 per compute unit to balance the load, as element-wise
/// expressions take.
std::size_t stencil_run_count(const device& dev, const stencil_tuning& tuning, std::size_t bytes);

/// The program of a shape's runs kernel, with its tiled kernel's parameters: for a
/// tiled_1d_shape, kiln_stencil_1d_runs, whose group g computes outputs [g * run, (g + 1) * run)
/// of the part, run a multiple of 16 covering m over the groups; for a tiled_2d_shape,
/// kiln_stencil_2d_runs, whose group g computes a run of row-major outputs, row by row. Made in
/// the library for those two; the template says it is exported because the visibility pragma
/// around public headers does not reach template instantiations.
template <class Shape>
[[gnu::visibility("default")]] const algorithm_program& stencil_runs_program(const device& dev,
                                                                             const Shape& shape);
/// Launches a runs program over `elements` outputs of `value_bytes` each.
void launch_stencil_runs(const algorithm_program& built, const queue& q, std::size_t elements,
                         std::size_t value_bytes, const stencil_tuning& tuning,
                         kernel_binding&& args);

}  // namespace kiln::detail
#pragma GCC visibility pop
