// SPDX-License-Identifier: Apache-2.0
// The GEMM module's tuning: its type, its rows (gemm_tuning.cpp) and the shapes its strategies'
// kernels take. A row's numbers are compile-time constants of the kernels, so they are part of
// every GEMM program's key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// The SIMT strategy's tiles (gemm_simt.cpp): a work-group computes a block_rows x block_columns
/// block of C, staging block_depth columns of op(A) and rows of op(B) at a time through local
/// memory; each work-item keeps thread_rows x thread_columns of the block in registers, its rows
/// and columns block_rows / thread_rows (block_columns / thread_columns) apart so that
/// neighbouring work-items read neighbouring local words and store neighbouring C elements.
struct gemm_simt_tiles {
    std::size_t block_rows = 64, block_columns = 64, block_depth = 8;
    std::size_t thread_rows = 4, thread_columns = 4;
    /// Elements per load from global memory where an operand's rows allow it (1: scalar loads).
    std::size_t vector_width = 4;
    /// A work-item's rows (and columns) are runs of 4 adjacent ones, the runs a block / (thread
    /// tile / 4) apart, read from local memory as 4-vectors: a quarter of the local loads per
    /// multiply-add (CUTLASS's SIMT thread tiles). Needs thread tiles of multiples of 4.
    bool vector_reads = false;
    /// 0: the next tile's loads staged in registers, two local buffers (every device). 2 or more:
    /// float tiles copied straight to local memory by cp.async through this many stages, which
    /// frees the staging registers for larger thread tiles: NVIDIA GPUs of compute capability 8.0
    /// on (gemm_simt_copies.cpp); elsewhere, and for other element types, the same blocks take
    /// the register-staged kernel.
    std::size_t copy_stages = 0;
    /// Not 0: work-groups take C's blocks down bands of this many block rows, column after
    /// column within a band, rather than along whole block rows, so that the groups running at
    /// once share fewer rows of op(A) and columns of op(B) (emit_block_origin).
    std::size_t band_rows = 0;

    std::size_t work_group_size() const noexcept {
        return (block_rows / thread_rows) * (block_columns / thread_columns);
    }
    /// Whether the kernel can be written: thread tiles divide the block, each operand's tile
    /// divides into whole loads per work-item, and copies take 2 to 6 stages of an even depth
    /// (the cp.async kernel alternates two sets of values, k by k).
    bool fits_together() const noexcept {
        return thread_rows > 0 && thread_columns > 0 && block_rows % thread_rows == 0 &&
               block_columns % thread_columns == 0 && block_depth > 0 &&
               block_rows * block_depth % work_group_size() == 0 &&
               block_columns * block_depth % work_group_size() == 0 &&
               (!vector_reads || (thread_rows % 4 == 0 && thread_columns % 4 == 0)) &&
               (copy_stages == 0 || (copy_stages >= 2 && copy_stages <= 6 && block_depth % 2 == 0));
    }
    /// Local memory the kernel declares for accumulators of `accumulator_bytes`: two buffers (or
    /// copy_stages) of each operand's tile, padded.
    std::size_t local_bytes(std::size_t accumulator_bytes) const noexcept {
        return std::max<std::size_t>(copy_stages, 2) * block_depth *
               (block_rows + block_columns + 8) * accumulator_bytes;
    }
    /// "128x128x8 t8x8 v4" (" r4" with vector_reads, " s3" with copy_stages, " b8" with
    /// band_rows), for program keys.
    std::string key() const;
};

/// The CPU strategy's tiles (gemm_cpu_tiles.cpp): each work-item computes rows x
/// (vectors * vector_width) of C in vector registers, reading op(A) and op(B) straight from
/// memory (the caches stage them); a work-group's items share one column panel of op(B).
struct gemm_cpu_tiles {
    std::size_t rows = 4, vectors = 2, vector_width = 8;
    std::size_t work_group_size = 16;
    /// Not 0: the group's work-items take k in blocks of this many, a barrier between blocks.
    /// CPU implementations run a group's work-items one after another between barriers, so the
    /// block of op(B)'s panel that all of them read stays in the first-level cache.
    std::size_t depth_block = 256;
    std::size_t tile_columns() const noexcept { return vectors * vector_width; }
    /// Whether the kernel can be written: some rows and vectors per work-item, of an OpenCL
    /// vector width.
    bool fits_together() const noexcept {
        return rows > 0 && vectors > 0 && work_group_size > 0 &&
               (vector_width == 1 || vector_width == 2 || vector_width == 4 || vector_width == 8 ||
                vector_width == 16);
    }
    /// "4x2x8 g16 d256", for program keys.
    std::string key() const;
};

/// The tensor-core strategy's tiles (gemm_tensor_cores.cpp): a work-group computes a block_rows x
/// block_columns block of C, copying block_depth columns of op(A) and rows of op(B) at a time into
/// `stages` local buffers (the copies of the next stages - 1 tiles in flight while one is
/// multiplied); each warp computes warp_rows x warp_columns of the block with mma.sync m16n8k16.
struct gemm_tensor_tiles {
    std::size_t block_rows = 128, block_columns = 128, block_depth = 32;
    std::size_t warp_rows = 64, warp_columns = 32;
    std::size_t stages = 2;
    /// Not 0: work-groups take C's blocks down bands of this many block rows, column after
    /// column within a band, rather than along whole block rows, so that the groups running at
    /// once share fewer rows of op(A) and columns of op(B) (as gemm_simt_tiles::band_rows).
    std::size_t band_rows = 0;

    std::size_t warps() const noexcept {
        return (block_rows / warp_rows) * (block_columns / warp_columns);
    }
    std::size_t work_group_size() const noexcept { return 32 * warps(); }
    /// Whether the kernel can be written for operands of `element_bytes` (2: f16 and bf16 by
    /// m16n8k16; 4: TF32 by m16n8k8; 8: doubles by m8n8k4, m16n8k8 or m16n8k16): 2 to 6 stages,
    /// warp tiles of whole instructions that divide the block, and each operand's tile in whole
    /// 16-byte copies per work-item.
    bool fits_together(std::size_t element_bytes) const noexcept {
        const bool narrow = element_bytes == 2;
        const std::size_t depth = narrow               ? 16
                                  : element_bytes == 4 ? 8
                                                       : 4,
                          rows = narrow || element_bytes == 4 ? 16 : 8, columns = narrow ? 16 : 8,
                          chunk = 16 / element_bytes;
        return (element_bytes == 2 || element_bytes == 4 || element_bytes == 8) && stages >= 2 &&
               stages <= 6 && block_depth % depth == 0 && warp_rows % rows == 0 &&
               warp_columns % columns == 0 && warp_rows > 0 && warp_columns > 0 &&
               block_rows % warp_rows == 0 && block_columns % warp_columns == 0 &&
               (block_rows * block_depth / chunk) % work_group_size() == 0 &&
               (block_columns * block_depth / chunk) % work_group_size() == 0;
    }
    /// "128x128x32 w64x32 s2" (" b8" with band_rows), for program keys.
    std::string key() const;
};

/// The warpgroup strategy's tiles: a work-group computes a block_rows x block_columns block of C
/// with wgmma m64nNk16 (N = block_columns) from 64-deep tiles of op(A) and op(B) in `stages`
/// local buffers of dynamic local memory (128-byte swizzled rows).
/// - cp.async copies: block_rows / 64 warpgroups, each 64 of the rows, copy and multiply alike (the
///   copies of the next stages - 2 tiles in flight while one is multiplied and the one before
///   drains);
/// - tile_maps: two warpgroups multiply, each block_rows / 2 of the rows, while a third one's
///   single work-item copies whole tiles into every free stage, barriers in local memory saying
///   which stages are full and which are free.
struct gemm_warpgroup_tiles {
    std::size_t block_rows = 128, block_columns = 256, stages = 4;
    /// How the stages are filled: one work-item's copies of whole tiles through tile maps,
    /// Hopper's tensor memory accelerator (gemm_warpgroup_tma.cpp), or every work-item's cp.async
    /// copies of 16 bytes (gemm_warpgroup.cpp).
    bool tile_maps = false;
    /// Not 0: work-groups take C's blocks down bands of this many block rows, column after
    /// column within a band (as gemm_simt_tiles::band_rows), so that the blocks in flight at once
    /// share rows of op(A) and columns of op(B) in the second-level cache. Tile maps only.
    std::size_t band_rows = 0;
    /// One work-group per multiprocessor, each looping over C's blocks (tile maps only): the
    /// copying warpgroup fills the stages of a work-group's next block while the multiplying
    /// ones store the last, and the barriers' setup is paid once per multiprocessor.
    bool persistent = false;
    /// The multiplying warpgroups store each pair of neighbouring columns of C they hold as one
    /// store where C's rows allow it (emit_warpgroup_stores). Tile maps only.
    bool paired_stores = false;
    /// k per stage: one 128-byte row of 16-bit elements, the swizzle's width (TF32 and FP8
    /// stages hold a row of their elements: 32 or 128 deep, the same bytes).
    static constexpr std::size_t block_depth = 64;

    std::size_t work_group_size() const noexcept { return tile_maps ? 3 * 128 : 2 * block_rows; }
    /// The staging buffers, 1 KiB to align them to the swizzle's 1024-byte pattern, and with tile
    /// maps two 8-byte barriers per stage.
    std::size_t local_bytes() const noexcept {
        return stages * block_depth * (block_rows + block_columns) * 2 + 1024 +
               (tile_maps ? 16 * stages : 0);
    }
    /// The shapes the kernels take: an N that wgmma has; copies: whole warpgroups of 64 rows,
    /// one to three tiles in flight; tile maps: 64 or 128 rows per multiplying warpgroup, at
    /// most 128 accumulators per work-item, two to eight stages.
    bool fits_together() const noexcept {
        const bool width = block_columns == 64 || block_columns == 128 || block_columns == 256;
        if (tile_maps)
            return width && (block_rows == 128 || block_rows == 256) &&
                   block_rows / 128 * block_columns <= 256 && stages >= 2 && stages <= 8;
        return width && block_rows % 64 == 0 && block_rows >= 64 && block_rows <= 256 &&
               stages >= 3 && stages <= 5 && band_rows == 0 && !persistent && !paired_stores;
    }
    /// "256x128 s4", " b8" with band_rows, " tma" for tile maps, " persistent", " pairs" with
    /// paired_stores, for program keys.
    std::string key() const;
};

struct gemm_tuning {
    /// What the device's row prefers for float and double; the plan falls back where it cannot
    /// run (host_blas without OpenBLAS: cpu_tiles).
    gemm_strategy strategy = gemm_strategy::simt;
    gemm_simt_tiles simt{};  ///< for float
    gemm_simt_tiles simt_double{};
    gemm_cpu_tiles cpu{};               ///< for float; doubles take half the vector width
    gemm_tensor_tiles tensor{};         ///< for 16-bit inputs on NVIDIA tensor cores
    gemm_tensor_tiles tensor_double{};  ///< for doubles on NVIDIA tensor cores
    gemm_tensor_tiles tensor_tf32{};    ///< for floats where the user allows TF32
    gemm_warpgroup_tiles warpgroup{};   ///< for 16-bit inputs on Hopper through CUDA
    /// For float products whose depth k is at most short_depth (0: none), whose few k tiles leave
    /// the first loads and C's stores to dominate: SIMT tiles that suit them.
    gemm_simt_tiles simt_short{};
    std::size_t short_depth = 0;
    /// For doubles on NVIDIA tensor cores where dynamic local memory holds more stages than a
    /// static array's 48 KiB (CUDA): deeper tiles; elsewhere tensor_double.
    std::optional<gemm_tensor_tiles> tensor_double_deep{};
};

/// Tiles from their key() ("128x128x16 t8x8 v4 r4", "128x128x32 w64x32 s2", "256x128 s4 tma"), as
/// gemm_bench's KILN_GEMM_BENCH_*TILES list them: words in any order, those left out keeping
/// the defaults; nothing where a word is not the tiles'.
std::optional<gemm_simt_tiles> parse_gemm_simt_tiles(std::string_view key);
std::optional<gemm_tensor_tiles> parse_gemm_tensor_tiles(std::string_view key);
std::optional<gemm_warpgroup_tiles> parse_gemm_warpgroup_tiles(std::string_view key);

/// `base` with `tiles` for every element type the SIMT strategy takes (float and double): what
/// tests and benchmarks force (scoped_algorithm_policy) to run one shape on every device.
gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_simt_tiles& tiles);
/// `base` with `tiles` for every input the tensor cores take (16-bit, double, TF32).
gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_tensor_tiles& tiles);
/// `base` with the warpgroup strategy's `tiles`.
gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_warpgroup_tiles& tiles);

namespace algorithm {

/// The GEMM module's rows in the generic tuning table, searched from the top; the last matches
/// every device. scoped_algorithm_policy(algorithm::gemm, tuning) forces one in tests, its tiles
/// taken as they are (gemm_plan.hpp).
struct gemm_rows {
    using tuning = gemm_tuning;
    static constexpr std::string_view name = "gemm";
    static std::span<const tuning_row<gemm_tuning>> rows();
};
inline constexpr gemm_rows gemm{};

}  // namespace algorithm

scoped_algorithm_policy(gemm_tuning)->scoped_algorithm_policy<algorithm::gemm_rows>;

/// Whether `props` is an NVIDIA GPU, through CUDA or NVIDIA's OpenCL alike (its vendor or
/// platform name says so): the class of the NVIDIA row.
bool is_nvidia_gpu(const device_properties& props);

}  // namespace kiln::detail
