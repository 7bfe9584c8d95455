// SPDX-License-Identifier: Apache-2.0
// The GEMM module's plan: from a device's properties, the problem's element types and what the
// process has (OpenBLAS), the whole strategy and its tiles. Pure: it reads nothing but its
// arguments, so a test writes the properties by hand.
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>

#include "gemm_tuning.hpp"

namespace kiln::detail {

struct gemm_plan {
    gemm_strategy strategy = gemm_strategy::simt;
    gemm_simt_tiles simt;            ///< where strategy is simt
    gemm_cpu_tiles cpu;              ///< where strategy is cpu_tiles
    gemm_tensor_tiles tensor;        ///< where strategy is tensor_cores (for the problem's inputs)
    gemm_warpgroup_tiles warpgroup;  ///< where strategy is warpgroup_mma
    /// Where strategy is simt: A (B) is first copied into rows its vector loads can read
    /// (gemm_aligned_rows.hpp).
    bool align_a = false, align_b = false;
    /// Where strategy is warpgroup_mma with TF32 or FP8 inputs: A (B) is first copied into the
    /// K-major layout that their wgmma reads (gemm_k_major.hpp).
    bool k_major_a = false, k_major_b = false;
    /// What the plan was made from: the device's row, or a test's (scoped_algorithm_policy).
    gemm_tuning tuning;
};

/// What the plan needs to know beyond the device.
struct gemm_plan_input {
    gemm_element element = gemm_element::f32;  ///< C's
    /// OpenBLAS loads, and the problem fits its int arguments.
    bool host_blas = false;
    /// A test's or KILN_GEMM_STRATEGY's choice (automatic: none); one the device cannot run
    /// throws invalid_argument_error.
    gemm_strategy forced = gemm_strategy::automatic;
    /// A test's or benchmark's tuning (scoped_algorithm_policy), in place of the device's row:
    /// its tiles are taken as they are, not fitted to the device or shrunk to the problem, so
    /// that a test runs the shape it names (gemm_tuning_with).
    std::optional<gemm_tuning> tuning{};
    /// A's and B's: C's, or f16 or bf16 with a float C, or FP8 (both FP8, of either format).
    gemm_element inputs = gemm_element::f32;
    /// The user allows float products on TF32 tensor cores (gemm_options::allow_tf32).
    bool allow_tf32 = false;
    /// The operands' types, rows, offsets and batch strides let the tensor-core kernel take them:
    /// 16-bit inputs with a float C, or doubles, copied to local memory by 16 bytes
    /// (tensor_core_layout_fits).
    bool tensor_core_layout = false;
    /// C's rows and columns (each batch entry's); 0: not known, the row's tiles as they are.
    std::size_t rows = 0, columns = 0;
    /// The products' depth k; 0: not known.
    std::size_t depth = 0;
    /// A copy would let the SIMT kernel read A (B) by vectors (copy_aligns_rows).
    bool a_copy_aligns = false, b_copy_aligns = false;
    /// The tile-map wgmma kernel reads A (B) as it lies for TF32 and FP8 (lies_k_major).
    bool a_k_major = true, b_k_major = true;
};

gemm_plan plan_gemm(const device_properties& props, const gemm_plan_input& input);

/// Whether the device has NVIDIA tensor cores that mma.sync m16n8k16 with bf16 reaches (compute
/// capability 8.0 and later), through CUDA or NVIDIA's OpenCL.
bool has_nvidia_tensor_cores(const device_properties& props);
/// Whether the device runs wgmma: compute capability 9.0 through CUDA, whose programs for it are
/// sm_90a cubins (NVIDIA's OpenCL builds sm_90 PTX, which has no wgmma).
bool has_warpgroup_mma(const device_properties& props);

/// Whether a device of `props` can run `strategy` (with OpenBLAS loaded where `host_blas`).
/// Strategies that do not take a problem's types run it with the SIMT strategy (the tensor cores
/// float and double inputs, the CPU strategies 16-bit ones), so that forcing one is always valid
/// where it runs.
bool gemm_strategy_runs_on(gemm_strategy strategy, const device_properties& props, bool host_blas);

}  // namespace kiln::detail
