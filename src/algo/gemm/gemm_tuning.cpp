// SPDX-License-Identifier: Apache-2.0
// The GEMM module's tuning rows, from specific to generic, each saying in one line where its
// numbers come from (docs/benchmarks.md; the sweeps behind them in docs/dev/gemm.md, ### GPUs and
// ### CPU), and its tiles' keys.
#include "gemm_tuning.hpp"

#include <array>

#include "algo/tuning_key.hpp"

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

/// Tiles copied to local memory by cp.async through `stages` stages (gemm_simt_tiles::copy_stages).
constexpr gemm_simt_tiles copied(gemm_simt_tiles t, std::size_t stages) {
    t.copy_stages = stages;
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

/// Tiles whose blocks are taken down bands of `rows` block rows (gemm_tensor_tiles::band_rows).
constexpr gemm_tensor_tiles banded(gemm_tensor_tiles t, std::size_t rows) {
    t.band_rows = rows;
    return t;
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
    gemm_row{nvidia_gpus,
             // simt: 2026-11-27, H100, `KILN_GEMM_BENCH_TILES=... gemm_bench sgemm_4096
             // sgemm_8192`, CUDA and NVIDIA OpenCL: 128x256x8 t8x16 v4 s3 r4 0.92-0.93x cuBLAS
             // (128x128x16 0.81x). tensor_double (NVIDIA OpenCL's doubles, 48 KiB): 2026-11-27,
             // H100, `KILN_GEMM_BENCH_TENSOR_TILES=... gemm_bench dgemm_4096`: 128x64x8 w64x32 s3
             // 0.70x cuBLAS (s2 0.65x); 2026-11-28, H100, the same command: bands of 8 block rows
             // 0.74-0.75x (of 4 0.74x, of 16 0.71-0.73x, none 0.70-0.71x; CUDA's deep tiles ran
             // slower in bands of 4, 8 or 16: 0.82-0.84x against 0.87-0.89x).
             // tensor_double_deep (CUDA's doubles, m16n8k16, fragments read a tile at a time):
             // 2026-11-27, H100, the same command: 128x64x16 w64x32 s3 0.87-0.90x (64x128x16
             // w32x64 s3 0.80-0.82x, 128x128x16 w64x32 s3 0.74-0.75x); 2026-11-30, H200, CUDA:
             // 0.90x (s2 0.80x, s4 0.65x, s5 0.60x, 256x64x16 s3 0.71x), OpenCL's row 0.79x.
             // warpgroup (tile maps): 2026-11-29, H200, CUDA, `KILN_GEMM_BENCH_WARPGROUP_TILES=...
             // gemm_bench bf16_4096 bf16_8192 tf32_4096 tf32_8192 e4m3_4096 e4m3_8192`: 128x256 s4
             // b8 persistent pairs 1.01x / 0.93x cuBLAS bf16, 0.89x / 0.80x TF32, 0.96x / 0.93x
             // cuBLASLt FP8 (fast accumulation); 256x128 s4, no bands, a group per block, element
             // stores (the row before) 0.85x / 0.81x, 0.82x / 0.73x, 0.76x / 0.80x.
             {.strategy = gemm_strategy::simt,
              .simt = copied(vector_reads(tiles(128, 256, 8, 8, 16, 4)), 3),
              .simt_double = tiles(64, 64, 8, 4, 4, 2),
              .cpu = cpu_tiles(4, 2, 8, 16, 256),
              .tensor = tensor_tiles(128, 128, 32, 64, 32, 2),
              .tensor_double = banded(tensor_tiles(128, 64, 8, 64, 32, 3), 8),
              .tensor_tf32 = tensor_tiles(128, 128, 16, 64, 32, 2),
              .warpgroup = {.block_rows = 128,
                            .block_columns = 256,
                            .stages = 4,
                            .tile_maps = true,
                            .band_rows = 8,
                            .persistent = true,
                            .paired_stores = true},
              .simt_short = tiles(128, 128, 16, 8, 8, 4),
              .short_depth = 128,
              .tensor_double_deep = tensor_tiles(128, 64, 16, 64, 32, 3)},
             "gemm_bench / cuBLAS: H100 SGEMM 0.92x, DGEMM 0.74-0.90x; H200 k 64-77 0.87-0.94x, "
             "wgmma 0.79-0.98x; docs/benchmarks.md, ## Matrix multiply"},
    gemm_row{any_gpu,
             {.strategy = gemm_strategy::simt,
              .simt = tiles(64, 64, 8, 4, 4, 4),
              .simt_double = tiles(64, 64, 8, 4, 4, 2),
              .cpu = cpu_tiles(4, 2, 8, 16, 256)},
             "not measured: 256 work-items, 16 accumulators each, 4 KiB of local memory per float "
             "tile"},
    gemm_row{any_cpu,
             {.strategy = gemm_strategy::host_blas,
              .simt = tiles(32, 32, 8, 4, 4, 1),
              .simt_double = tiles(32, 32, 8, 4, 4, 1),
              .cpu = cpu_tiles(4, 4, 16, 32, 256)},
             "2-core Zen 5, PoCL 3.1, SGEMM 2048^3: cpu_tiles 0.066-0.082 TFLOP/s; OpenBLAS first "
             "(issue 41); docs/benchmarks.md, ## Matrix multiply"},
    gemm_row{any_device,
             {.strategy = gemm_strategy::simt,
              .simt = tiles(32, 32, 8, 2, 2, 1),
              .simt_double = tiles(32, 32, 8, 2, 2, 1),
              .cpu = cpu_tiles(4, 2, 8, 16, 256)},
             "not measured: the fallback, small tiles every OpenCL device can hold (256 "
             "work-items, 2 KiB of local memory)"},
};

/// "128x128x16 t8x8 v4 r4", "256x128x8 t16x8 v4 s3 r4" (s: copy_stages, b: band_rows, each left
/// out at 0)
constexpr tuning_key_number<gemm_simt_tiles> simt_key_numbers[] = {
    {"",
     {&gemm_simt_tiles::block_rows, &gemm_simt_tiles::block_columns,
      &gemm_simt_tiles::block_depth}},
    {"t", {&gemm_simt_tiles::thread_rows, &gemm_simt_tiles::thread_columns}},
    {"v", {&gemm_simt_tiles::vector_width}},
    {"s", {&gemm_simt_tiles::copy_stages}, false, true},
    {"b", {&gemm_simt_tiles::band_rows}, false, true}};
constexpr tuning_key_flag<gemm_simt_tiles> simt_key_flags[] = {
    {"r4", &gemm_simt_tiles::vector_reads}};
constexpr tuning_key_format<gemm_simt_tiles> simt_key_format{simt_key_numbers, simt_key_flags};

/// "128x128x32 w64x32 s2", "128x64x8 w64x32 s3 b8" (b: band_rows, left out at 0)
constexpr tuning_key_number<gemm_tensor_tiles> tensor_key_numbers[] = {
    {"",
     {&gemm_tensor_tiles::block_rows, &gemm_tensor_tiles::block_columns,
      &gemm_tensor_tiles::block_depth}},
    {"w", {&gemm_tensor_tiles::warp_rows, &gemm_tensor_tiles::warp_columns}},
    {"s", {&gemm_tensor_tiles::stages}},
    {"b", {&gemm_tensor_tiles::band_rows}, false, true}};
constexpr tuning_key_format<gemm_tensor_tiles> tensor_key_format{tensor_key_numbers};

/// "256x128 s4 tma", "256x128 s4 b8 tma persistent pairs" ("tma": fed by tile maps; b: band_rows,
/// left out at 0)
constexpr tuning_key_number<gemm_warpgroup_tiles> warpgroup_key_numbers[] = {
    {"", {&gemm_warpgroup_tiles::block_rows, &gemm_warpgroup_tiles::block_columns}},
    {"s", {&gemm_warpgroup_tiles::stages}},
    {"b", {&gemm_warpgroup_tiles::band_rows}, false, true}};
constexpr tuning_key_flag<gemm_warpgroup_tiles> warpgroup_key_flags[] = {
    {"tma", &gemm_warpgroup_tiles::tile_maps},
    {"persistent", &gemm_warpgroup_tiles::persistent},
    {"pairs", &gemm_warpgroup_tiles::paired_stores}};
constexpr tuning_key_format<gemm_warpgroup_tiles> warpgroup_key_format{warpgroup_key_numbers,
                                                                       warpgroup_key_flags};

/// "4x2x8 g16 d256"; d0: no k blocks.
constexpr tuning_key_number<gemm_cpu_tiles> cpu_key_numbers[] = {
    {"", {&gemm_cpu_tiles::rows, &gemm_cpu_tiles::vectors, &gemm_cpu_tiles::vector_width}},
    {"g", {&gemm_cpu_tiles::work_group_size}},
    {"d", {&gemm_cpu_tiles::depth_block}, true}};
constexpr tuning_key_format<gemm_cpu_tiles> cpu_key_format{cpu_key_numbers};

/// Tiles from `key`, the defaults where it leaves words out; nothing where it has none.
template <class Tiles>
std::optional<Tiles> parse_tiles(std::string_view key, const tuning_key_format<Tiles>& format) {
    Tiles tiles;
    if (tuning_key_words(key).empty() || !read_tuning_key(key, tiles, format)) return std::nullopt;
    return tiles;
}

}  // namespace

std::span<const tuning_row<gemm_tuning>> algorithm::gemm_rows::rows() {
    return gemm_table;
}

gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_simt_tiles& tiles) {
    base.simt = base.simt_double = base.simt_short = tiles;
    return base;
}

gemm_tuning gemm_tuning_with(gemm_tuning base, const gemm_tensor_tiles& tiles) {
    base.tensor = base.tensor_double = base.tensor_tf32 = tiles;
    base.tensor_double_deep = tiles;
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
    return write_tuning_key({}, *this, simt_key_format);
}

std::string gemm_tensor_tiles::key() const {
    return write_tuning_key({}, *this, tensor_key_format);
}

std::string gemm_warpgroup_tiles::key() const {
    return write_tuning_key({}, *this, warpgroup_key_format);
}

std::string gemm_cpu_tiles::key() const {
    return write_tuning_key({}, *this, cpu_key_format);
}

std::optional<gemm_simt_tiles> parse_gemm_simt_tiles(std::string_view key) {
    return parse_tiles(key, simt_key_format);
}

std::optional<gemm_tensor_tiles> parse_gemm_tensor_tiles(std::string_view key) {
    return parse_tiles(key, tensor_key_format);
}

std::optional<gemm_warpgroup_tiles> parse_gemm_warpgroup_tiles(std::string_view key) {
    return parse_tiles(key, warpgroup_key_format);
}

}  // namespace kiln::detail
