// The GEMM module's strategies, a file each, as the plan (gemm_plan.hpp) calls them. Each runs a
// checked problem with m, n > 0 on q after q's earlier work and returns its last event.
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>

#include "gemm_tuning.hpp"

namespace kiln::detail {

/// Register tiles staged through local memory (gemm_simt.cpp).
event run_simt_gemm(const queue& q, const gemm_problem& problem, const gemm_simt_tiles& tiles);
/// Vector register tiles read straight from memory (gemm_cpu_tiles.cpp).
event run_cpu_tiles_gemm(const queue& q, const gemm_problem& problem, const gemm_cpu_tiles& tiles);

}  // namespace kiln::detail
