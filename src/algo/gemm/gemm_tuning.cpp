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

using gemm_row = tuning_row<gemm_tuning>;

const std::array gemm_table{
    gemm_row{
        nvidia_gpus,
        {gemm_strategy::simt, vector_reads(tiles(128, 128, 16, 8, 8, 4)), tiles(64, 64, 8, 4, 4, 2),
         cpu_tiles(4, 2, 8, 16, 256), tensor_tiles(128, 128, 32, 64, 32, 2),
         tensor_tiles(128, 64, 8, 64, 32, 2), tensor_tiles(128, 128, 16, 64, 32, 2),
         gemm_warpgroup_tiles{.block_rows = 256, .block_columns = 128, .stages = 4}},
        "H100, gemm_bench 4096^3 beside cuBLAS, CUDA / OpenCL (docs/linear_algebra.md, "
        "### GPUs): SGEMM 0.82x / 0.81x, DGEMM tensor_cores 0.61x / 0.63x, bf16 "
        "warpgroup_mma 0.62x; 16-bit tensor tiles CUTLASS's, TF32's chosen, not measured"},
    gemm_row{any_gpu,
             {gemm_strategy::simt,
              tiles(64, 64, 8, 4, 4, 4),
              tiles(64, 64, 8, 4, 4, 2),
              cpu_tiles(4, 2, 8, 16, 256),
              {},
              {},
              {},
              {}},
             "chosen, not measured: 256 work-items, 16 accumulators each, 4 KiB of local memory "
             "per float tile"},
    gemm_row{any_cpu,
             {gemm_strategy::host_blas,
              tiles(32, 32, 8, 4, 4, 1),
              tiles(32, 32, 8, 4, 4, 1),
              cpu_tiles(4, 4, 16, 32, 256),
              {},
              {},
              {},
              {}},
             "2-core Zen 5, PoCL 3.1, SGEMM 2048^3 (docs/linear_algebra.md, ### CPU): cpu_tiles "
             "0.066-0.082 TFLOP/s; OpenBLAS first, as issue 41 asks"},
    gemm_row{any_device,
             {gemm_strategy::simt,
              tiles(32, 32, 8, 2, 2, 1),
              tiles(32, 32, 8, 2, 2, 1),
              cpu_tiles(4, 2, 8, 16, 256),
              {},
              {},
              {},
              {}},
             "the fallback: small tiles every OpenCL device can hold (256 work-items, 2 KiB of "
             "local memory)"},
};

}  // namespace

std::span<const tuning_row<gemm_tuning>> algorithm::gemm_rows::rows() {
    return gemm_table;
}

gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_simt_tiles& tiles) {
    base.simt = base.simt_double = tiles;
    return base;
}

gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_tensor_tiles& tiles) {
    base.tensor = base.tensor_double = base.tensor_tf32 = tiles;
    return base;
}

gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_warpgroup_tiles& tiles) {
    base.warpgroup = tiles;
    return base;
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
           std::to_string(stages);
}

std::string gemm_cpu_tiles::key() const {
    return std::to_string(rows) + "x" + std::to_string(vectors) + "x" +
           std::to_string(vector_width) + " g" + std::to_string(work_group_size) + " d" +
           std::to_string(depth_block);
}

}  // namespace kiln::detail
