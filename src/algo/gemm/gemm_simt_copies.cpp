// SPDX-License-Identifier: Apache-2.0
// The SIMT strategy's kernel for tiles with copy_stages, on NVIDIA GPUs from compute capability
// 8.0: op(A)'s and op(B)'s tiles copied straight to local memory by cp.async through copy_stages
// buffers (the tensor-core kernels' pipeline, gemm_tensor_pipeline.hpp), k outer there so that
// work-items read their thread tiles as 4-vectors (gemm_simt_thread_tile.hpp). No registers hold
// the next tile, so 256x128 blocks of 16x8 thread tiles fit, cuBLAS's SGEMM shape on Hopper. A
// tile whose k is inner in memory (A, or Bᵀ) is transposed by copies of one float each; the
// other is copied by 16 bytes where its rows allow. docs/dev/gemm.md, "Strategies".
#include <kiln/error.hpp>
#include <string>

#include "codegen/device_vocabulary.hpp"
#include "gemm_simt_thread_tile.hpp"
#include "gemm_strategies.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

/// Local rows are padded by 4 floats: rows of a multiple of 32 floats then start 4 banks apart,
/// so that a warp's copies into a transposed tile (4 of its rows of 8 k each) hit 32 banks, and
/// rows stay on 16 bytes for the vector reads.
constexpr std::size_t copied_row_padding = 4;

staged_tile copied_tile(const gemm_simt_kernel& shape, bool is_a) {
    const gemm_simt_tiles& t = shape.tiles;
    const bool transposed = is_a ? shape.a_transposed : shape.b_transposed;
    staged_tile tile{
        operand_tile_of(is_a, transposed, is_a ? t.block_rows : t.block_columns, t.block_depth),
        "float", 4, copied_row_padding};
    tile.transposed = tile.k_is_inner;
    const bool rows_on_16_bytes = is_a ? shape.a_vectors : shape.b_vectors;
    tile.copy_bytes = rows_on_16_bytes && !tile.transposed &&
                              tile.outer * tile.inner / 4 % t.work_group_size() == 0
                          ? 16
                          : 4;
    return tile;
}

}  // namespace

std::string simt_copies_source(const gemm_simt_kernel& shape) {
    const gemm_simt_tiles& t = shape.tiles;
    const gemm_types& types = shape.types;
    if (types.a != gemm_element::f32 || types.b != gemm_element::f32 ||
        types.accumulator != gemm_element::f32 || !t.fits_together() || t.copy_stages < 2)
        throw invalid_argument_error(
            "kiln::gemm", "SIMT tiles " + t.key() + " copy float tiles only, by 2 to 6 stages");
    const staged_tile a = copied_tile(shape, true), bl = copied_tile(shape, false);
    source_builder b;
    if (shape.rounded_products) b.turn_off_contraction();
    use_tensor_core_vocabulary(b, shape.target);
    b.begin_kernel(gemm_simt_kernel_name, t.work_group_size());
    gemm_kernel_description(gemm_simt_kernel_name, types).declare(b);
    define_gemm_epilogue(b, types);
    b.begin_body();
    emit_stage_buffers(b, a, bl, t.copy_stages, false);
    emit_thread_tile_start(b, t, types);
    // A k's values in values0 (k even) or values1 (odd): each k's reads go out before the
    // previous k's products, and the following tile's first reads (after the barrier) before this
    // tile's last products, which hide their latency.
    emit_thread_tile_values(b, t, types, "values0");
    emit_thread_tile_values(b, t, types, "values1");
    const std::string a_first = thread_tile_first(t, true), b_first = thread_tile_first(t, false);
    const std::string a_stage = uint_literal(a.stage_elements()),
                      b_stage = uint_literal(bl.stage_elements());
    const auto values = [](std::size_t p) { return p % 2 == 0 ? "values0" : "values1"; };
    const auto reads = [&](const std::string& a_read, const std::string& b_read, std::size_t p) {
        emit_thread_tile_reads(b, t, types, uint_literal(p), a_read, a.row(), b_read, bl.row(),
                               values(p));
    };
    const std::size_t depth = t.block_depth;
    emit_staged_loop_synced_early(
        b, {depth, t.copy_stages, t.work_group_size()}, a, bl,
        [&](const std::function<void()>& sync) {
            b.line("const local float* a_read = a_stage + " + a_first + ";");
            b.line("const local float* b_read = b_stage + " + b_first + ";");
            for (std::size_t p = 0; p + 1 < depth; ++p) {
                reads("a_read", "b_read", p + 1);
                emit_thread_tile_mads(b, t, values(p), shape.rounded_products);
            }
            sync();
            reads("a_tile + following * " + a_stage + " + " + a_first,
                  "b_tile + following * " + b_stage + " + " + b_first, 0);
            emit_thread_tile_mads(b, t, values(depth - 1), shape.rounded_products);
        },
        [&] { reads("a_tile + " + a_first, "b_tile + " + b_first, 0); });
    emit_thread_tile_store(b, t, types);
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
