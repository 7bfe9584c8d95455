// The GEMM module's tuning rows, from specific to generic, each saying where its numbers come
// from (docs/linear_algebra.md, "Tuning").
#include "gemm_tuning.hpp"

#include <array>

namespace kiln::detail {
namespace {

constexpr gemm_simt_tiles tiles(std::size_t block_rows, std::size_t block_columns,
                                std::size_t block_depth, std::size_t thread_rows,
                                std::size_t thread_columns, std::size_t vector_width) {
    return {.block_rows = block_rows,
            .block_columns = block_columns,
            .block_depth = block_depth,
            .thread_rows = thread_rows,
            .thread_columns = thread_columns,
            .vector_width = vector_width,
            .vector_reads = false};
}

/// Thread tiles read from local memory by 4-vectors (gemm_simt_tiles::vector_reads).
constexpr gemm_simt_tiles vector_reads(gemm_simt_tiles t) {
    t.vector_reads = true;
    return t;
}

constexpr gemm_tensor_tiles tensor_tiles(std::size_t block_rows, std::size_t block_columns,
                                         std::size_t block_depth, std::size_t warp_rows,
                                         std::size_t warp_columns, std::size_t stages) {
    return {.block_rows = block_rows,
            .block_columns = block_columns,
            .block_depth = block_depth,
            .warp_rows = warp_rows,
            .warp_columns = warp_columns,
            .stages = stages};
}

constexpr gemm_cpu_tiles cpu_tiles(std::size_t rows, std::size_t vectors, std::size_t width,
                                   std::size_t group, std::size_t depth_block) {
    return {.rows = rows,
            .vectors = vectors,
            .vector_width = width,
            .work_group_size = group,
            .depth_block = depth_block};
}

const std::array rows{
    gemm_tuning_row{
        nvidia_gpus,
        {gemm_strategy::simt, vector_reads(tiles(128, 128, 16, 8, 8, 4)), tiles(64, 64, 8, 4, 4, 2),
         cpu_tiles(4, 2, 8, 16, 256), tensor_tiles(128, 128, 32, 64, 32, 2),
         tensor_tiles(128, 64, 8, 64, 32, 2), tensor_tiles(128, 128, 16, 64, 32, 2),
         gemm_warpgroup_tiles{
             .block_rows = 256, .block_columns = 128, .stages = 4, .tile_maps = true}},
        "H100, gemm_bench 4096^3 beside cuBLAS (TF32 off), CUDA / OpenCL: SGEMM 128x128x16 t8x8 "
        "v4 r4 0.82x / 0.81x (x8: 0.77x / 0.74x, 64x64 t4x4 r4 0.56x); DGEMM 64x64x8 t4x4 v2 "
        "0.25x / 0.24x, with r4 0.18x. Tensor cores: CUTLASS's 128x128x32 Ampere bf16 block of 8 "
        "warps of 64x32, two stages so that padded tiles stay within 48 KiB of static local "
        "memory. Doubles (m16n8k8 on 9.0): DGEMM 128x64x8 w64x32 s2 0.61x / 0.63x, 128x128x8 "
        "0.54x / 0.58x, 64x64x8 w32x32 s3 0.58x / 0.51x; SIMT 0.26x / 0.24x. TF32: chosen, not "
        "measured: the double kernel's 8 warps of 64x32, 16 deep in 37 KiB. wgmma (CUDA, 9.0), "
        "bf16 / "
        "f16 4096^3 / 8192^3 beside cuBLAS (H200, gemm_bench): with tile maps (TMA) 256x128 s4 "
        "0.86x / 0.83x, 0.86x / 0.83x; s3 0.81x / 0.83x, 0.81x / 0.82x; 128x256 s4 0.86x / 0.79x, "
        "0.86x / 0.77x; s3 0.86x / 0.84x, 0.85x / 0.82x; 128x128 s6 0.72x / 0.64x (a standalone "
        "prototype); a 2-CTA cluster sharing B 0.47-0.52x (prototype); with cp.async 256x128 s4 "
        "0.64x / 0.60x (H100: 0.62x / 0.61x; 128x256 s4 0.57x / 0.55x, 128x128 s4 0.49x / 0.46x)"},
    gemm_tuning_row{
        any_gpu,
        {gemm_strategy::simt,
         tiles(64, 64, 8, 4, 4, 4),
         tiles(64, 64, 8, 4, 4, 2),
         cpu_tiles(4, 2, 8, 16, 256),
         {},
         {},
         {},
         {}},
        "chosen, not measured: 256 work-items, 16 accumulators each, 4 KiB of local memory per "
        "float tile"},
    gemm_tuning_row{
        any_cpu,
        {gemm_strategy::host_blas,
         tiles(32, 32, 8, 4, 4, 1),
         tiles(32, 32, 8, 4, 4, 1),
         cpu_tiles(4, 4, 16, 32, 256),
         {},
         {},
         {},
         {}},
        "2-core Zen 5 (AVX-512), PoCL 3.1, SGEMM 2048^3 (docs/linear_algebra.md, \"CPU\"): 4 x "
        "(4 x 16) floats 0.066-0.082 TFLOP/s at load 3-6, 4 x (2 x 8) 0.023, 8 x (2 x 16) 0.069, "
        "no k blocks 0.051; OpenBLAS first, as issue 41 asks"},
    gemm_tuning_row{
        any_device,
        {gemm_strategy::simt,
         tiles(32, 32, 8, 2, 2, 1),
         tiles(32, 32, 8, 2, 2, 1),
         cpu_tiles(4, 2, 8, 16, 256),
         {},
         {},
         {},
         {}},
        "the fallback: small tiles every OpenCL device can hold (256 work-items, 2 KiB of local "
        "memory)"},
};

}  // namespace

std::span<const gemm_tuning_row> gemm_tuning_rows() {
    return rows;
}

const gemm_tuning_row& gemm_row_for(const device_properties& props) {
    for (const gemm_tuning_row& row : rows)
        if (matches(row.devices, props)) return row;
    return rows.back();
}

bool is_nvidia_gpu(const device_properties& props) {
    return matches(nvidia_gpus, props);
}

std::string gemm_simt_tiles::key() const {
    return std::to_string(block_rows) + "x" + std::to_string(block_columns) + "x" +
           std::to_string(block_depth) + " t" + std::to_string(thread_rows) + "x" +
           std::to_string(thread_columns) + " v" + std::to_string(vector_width) +
           (vector_reads ? " r4" : "");
}

std::string gemm_tensor_tiles::key() const {
    return std::to_string(block_rows) + "x" + std::to_string(block_columns) + "x" +
           std::to_string(block_depth) + " w" + std::to_string(warp_rows) + "x" +
           std::to_string(warp_columns) + " s" + std::to_string(stages);
}

std::string gemm_warpgroup_tiles::key() const {
    return std::to_string(block_rows) + "x" + std::to_string(block_columns) + " s" +
           std::to_string(stages) + (tile_maps ? " tma" : "");
}

std::string gemm_cpu_tiles::key() const {
    return std::to_string(rows) + "x" + std::to_string(vectors) + "x" +
           std::to_string(vector_width) + " g" + std::to_string(work_group_size) + " d" +
           std::to_string(depth_block);
}

}  // namespace kiln::detail
