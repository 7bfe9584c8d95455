// SPDX-License-Identifier: Apache-2.0
// The GEMM module's strategies, a file each, as the plan (gemm_plan.hpp) calls them. Each runs a
// checked problem with m, n > 0 on q after q's earlier work and returns its last event.
#pragma once

#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_tuning.hpp"

namespace kiln::detail {

/// The SIMT kernel of one tile shape, element types and pair of layouts: its program key and its
/// source (tests compile it for targets the machine may not have).
struct gemm_simt_kernel {
    gemm_simt_tiles tiles;
    gemm_types types;
    bool a_transposed = false, b_transposed = false;
    /// Full tiles may read the operand by vectors of its loads' width: its rows (leading
    /// dimension), offset and batch stride are multiples of it (with copy_stages: of 16 bytes).
    bool a_vectors = false, b_vectors = false;
    /// With copy_stages: the target whose cp.async the kernel names (gemm_simt_copies.cpp).
    target_features target{};
    /// Reproducible mode: each product rounded before it is added (contraction off, no mad), so
    /// that every C element is the same sum in k's order on every device and tile shape.
    bool rounded_products = false;

    std::string key() const;
    std::string source() const;
};

/// The CPU kernel of one tile shape, element types and pair of layouts.
struct gemm_cpu_kernel {
    gemm_cpu_tiles tiles;
    gemm_types types;
    bool a_transposed = false, b_transposed = false;

    std::string key() const;
    std::string source() const;
};

/// The tensor-core kernel of one tile shape, element types (16-bit inputs, float C) and pair of
/// layouts, for one target's vocabulary (inline PTX or the CUDA prelude).
struct gemm_tensor_kernel {
    gemm_tensor_tiles tiles;
    gemm_types types;
    bool a_transposed = false, b_transposed = false;
    target_features target;
    /// Doubles by mma.sync m16n8k8 (m16n8k16 where the tiles are 16 deep), which compute
    /// capability 9.0 adds and runs at twice m8n8k4's rate; m8n8k4 otherwise.
    bool double_m16n8k8 = false;
    /// The stage buffers in dynamic local memory (a local argument) rather than local arrays:
    /// CUDA, where they pass the 48 KiB a static array may have.
    bool dynamic_stages = false;

    std::string key() const;
    std::string source() const;
    /// Its parameters: the GEMM kernels' (gemm_kernel_description), and the dynamic stages'.
    kernel_description description() const;
    /// The bytes of its stage buffers.
    std::size_t stage_bytes() const;
};

/// The wgmma kernel of one tile shape, element types (16-bit inputs; with tile maps also floats
/// as TF32 and FP8, whose layouts must be A not transposed and B transposed) and pair of
/// layouts, for the CUDA prelude's vocabulary on compute capability 9.0.
struct gemm_warpgroup_kernel {
    gemm_warpgroup_tiles tiles;
    gemm_types types;
    bool a_transposed = false, b_transposed = false;

    std::string key() const;
    /// The kernel of the tiles' feed: cp.async copies, or tile maps (tile_map_source).
    std::string source() const;
    /// The tile-map feed's kernel (gemm_warpgroup_tma.cpp).
    std::string tile_map_source() const;
};

/// Whether a tensor-core kernel takes the problem: A and B both f16 or both bf16 with C float or
/// of their type, or A, B and C all double or all float (TF32); A's and B's rows, offsets and
/// batch strides on 16 bytes (16-byte copies).
bool tensor_core_layout_fits(const gemm_problem& problem);

/// Register tiles staged through local memory (gemm_simt.cpp).
event run_simt_gemm(const queue& q, const gemm_problem& problem, const gemm_simt_tiles& tiles,
                    bool rounded_products);
/// mma.sync on tensor cores from tiles copied to local memory (gemm_tensor_cores.cpp).
event run_tensor_core_gemm(const queue& q, const gemm_problem& problem,
                           const gemm_tensor_tiles& tiles);
/// wgmma on Hopper's tensor cores from swizzled tiles in dynamic local memory
/// (gemm_warpgroup.cpp).
event run_warpgroup_gemm(const queue& q, const gemm_problem& problem,
                         const gemm_warpgroup_tiles& tiles);
/// wgmma on Hopper's tensor cores from tiles that the tensor memory accelerator copies through
/// tile maps (gemm_warpgroup_tma.cpp).
event run_warpgroup_tma_gemm(const queue& q, const gemm_problem& problem,
                             const gemm_warpgroup_tiles& tiles);
/// The user's epilogue over C, once host_blas has written the product (gemm_epilogue_pass.cpp).
event run_gemm_epilogue_pass(const queue& q, const gemm_problem& problem);
/// Vector register tiles read straight from memory (gemm_cpu_tiles.cpp).
event run_cpu_tiles_gemm(const queue& q, const gemm_problem& problem, const gemm_cpu_tiles& tiles);

}  // namespace kiln::detail
