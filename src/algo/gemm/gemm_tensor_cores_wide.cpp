// SPDX-License-Identifier: Apache-2.0
// The tensor-core strategy for 32- and 64-bit elements: the 16-bit kernel's pipeline
// (gemm_tensor_pipeline.hpp) feeding mma.sync with f64 operands (DMMA: m8n8k4 from compute
// capability 8.0, m16n8k8 and m16n8k16 from 9.0) or, where the user allows it, float operands
// rounded to TF32 (m16n8k8). Lane l holds elements at row l / 4 (+ 8) and k l % 4 (+ 4) of its
// fragments, read from local memory without ldmatrix. docs/dev/gemm.md, "Strategies".
#include <algorithm>
#include <array>
#include <kiln/error.hpp>
#include <string>
#include <vector>

#include "codegen/device_vocabulary.hpp"
#include "gemm_fragments.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

/// The most distinct 32-bit words that a warp's fragment load asks of one bank when local rows
/// are `row` elements of `words` words long: lane l reads row l / 4, column l % 4 of an 8 x 4
/// fragment where k is inner, row l % 4, column l / 4 where k is outer. Local memory serves
/// 8-byte reads a half-warp at a time, so only lanes of one phase conflict; `whole_warp` counts
/// the whole warp's words instead.
std::size_t bank_load(std::size_t row, bool k_is_inner, std::size_t words, bool whole_warp) {
    const std::size_t lanes_per_phase = whole_warp ? 32 : 32 / words;
    std::size_t worst = 0;
    for (std::size_t first = 0; first < 32; first += lanes_per_phase) {
        std::array<std::vector<std::size_t>, 32> banks;
        for (std::size_t lane = first; lane < first + lanes_per_phase; ++lane) {
            const std::size_t at =
                k_is_inner ? lane / 4 * row + lane % 4 : lane % 4 * row + lane / 4;
            for (std::size_t w = 0; w < words; ++w) {
                std::vector<std::size_t>& bank = banks[(words * at + w) % 32];
                if (whole_warp || std::find(bank.begin(), bank.end(), words * at + w) == bank.end())
                    bank.push_back(words * at + w);
            }
        }
        for (const auto& bank : banks) worst = std::max(worst, bank.size());
    }
    return worst;
}

/// The least padding, in whole 16-byte copies, that spreads a fragment load evenly over the
/// banks. Rows of 128 bytes or more are weighed by phases: there a quarter-warp's 16-byte copies
/// fill whole rows whatever the padding (128x128x16 tiles of doubles, CUDA, H100: 0.77x cuBLAS
/// against 0.73x with the whole-warp count's padding). Shorter rows keep the whole-warp count,
/// which measured faster for them (128x64x8 of doubles, NVIDIA OpenCL: 0.62x against 0.57x).
std::size_t conflict_free_padding(const staged_tile& tile) {
    const std::size_t words = tile.element_bytes / 4;
    const bool whole_warp = tile.inner * tile.element_bytes < 128;
    const auto load = [&](std::size_t padding) {
        return bank_load(tile.inner + padding, tile.k_is_inner, words, whole_warp);
    };
    std::size_t best = 0;
    for (std::size_t padding = 0; padding < 32; padding += tile.chunk())
        if (load(padding) < load(best)) best = padding;
    return best;
}

/// Where a lane's elements of the warp's fragments start in a stage tile: `along` (the warp's
/// first row or column) plus the lane's part of the operand's layout, `outer` its row (A) or
/// column (B), `k` its depth.
std::string fragment_lane(const staged_tile& l, const std::string& along, const std::string& outer,
                          const std::string& k) {
    const std::string row = uint_literal(l.row());
    return l.k_is_inner ? "(" + along + " + " + outer + ") * " + row + " + " + k
                        : k + " * " + row + " + " + along + " + " + outer;
}

/// The instruction a tile takes: TF32's m16n8k8, or for doubles m8n8k4, or m16n8k8 and m16n8k16
/// where compute capability 9.0 has them. Its shape and fragments are its row of the instruction
/// table.
std::string mma_function_of(const gemm_tensor_kernel& shape) {
    if (shape.types.a == gemm_element::f32) return "kiln_mma_m16n8k8_tf32";
    if (!shape.double_m16n8k8) return "kiln_mma_m8n8k4_f64";
    // Half the instructions for the same products where the tiles are 16 deep (128x64x16 w64x32
    // s3, CUDA, H100: 0.83-0.84x cuBLAS against m16n8k8's 0.78-0.79x).
    if (shape.tiles.block_depth % 16 == 0) return "kiln_mma_m16n8k16_f64";
    return "kiln_mma_m16n8k8_f64";
}

}  // namespace

staged_tile wide_stage_tile(const gemm_tensor_kernel& shape, bool is_a) {
    staged_tile tile = staged_tile_of(shape, is_a, element_bytes(shape.types.a), 0);
    tile.padding = conflict_free_padding(tile);
    return tile;
}

std::string wide_tensor_kernel_source(const gemm_tensor_kernel& shape) {
    const gemm_tensor_tiles& t = shape.tiles;
    const std::size_t group = t.work_group_size();
    const std::size_t bytes = element_bytes(shape.types.a);
    const std::string accumulator = opencl_name(shape.types.accumulator);
    if (!t.fits_together(bytes))
        throw invalid_argument_error(
            "kiln::gemm", "tensor-core tiles " + t.key() + " are not a shape the kernel takes");
    const staged_tile a = wide_stage_tile(shape, true), bl = wide_stage_tile(shape, false);
    const std::string mma_function = mma_function_of(shape);
    const ptx_mma_shape& mma = tensor_core_atom(mma_function);
    if (t.warp_rows % mma.m != 0 || t.block_depth % mma.k != 0)
        throw invalid_argument_error(
            "kiln::gemm", "tensor-core tiles " + t.key() + " do not divide into the instruction's");
    const std::size_t m_tiles = t.warp_rows / mma.m, n_tiles = t.warp_columns / mma.n;
    const std::size_t a_size = mma.a.value_count(), b_size = mma.b.value_count(),
                      c_size = mma.c.value_count();
    const fragment_lane_position a_lane = lane_position(mma.a), b_lane = lane_position(mma.b);

    source_builder b;
    use_tensor_core_vocabulary(b, shape.target);
    b.begin_kernel(gemm_tensor_kernel_name, group);
    shape.description().declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    emit_stage_buffers(b, a, bl, t.stages, shape.dynamic_stages);
    emit_block_start(b, t);
    b.line(accumulator + " accumulators[" + std::to_string(m_tiles * n_tiles * c_size) + "];");
    b.open("for (uint i = 0; i < " + uint_literal(m_tiles * n_tiles * c_size) + "; ++i)");
    b.line("accumulators[i] = 0;");
    b.close();
    b.line(a.element + " a_fragments[" + std::to_string(m_tiles * a_size) + "], b_fragments[" +
           std::to_string(n_tiles * b_size) + "];");
    b.line("const uint a_lane = " + fragment_lane(a, "warp_row", a_lane.row, a_lane.column) + ";");
    b.line("const uint b_lane = " + fragment_lane(bl, "warp_column", b_lane.column, b_lane.row) +
           ";");
    emit_staged_loop(b, copy_pipeline_of(t), a, bl, [&] {
        b.line("const local " + a.element + "* const a_warp = a_stage + a_lane;");
        b.line("const local " + bl.element + "* const b_warp = b_stage + b_lane;");
        const auto load_a = [&](std::size_t kk, std::size_t mi) {
            for (unsigned e = 0; e < a_size; ++e) {
                const auto at = mma.a.at(0, e);
                b.line("a_fragments[" + std::to_string(mi * a_size + e) + "] = a_warp[" +
                       uint_literal(a.offset(mi * mma.m + at.row, kk + at.column)) + "];");
            }
        };
        const auto load_b = [&](std::size_t kk, std::size_t ni) {
            for (unsigned e = 0; e < b_size; ++e) {
                const auto at = mma.b.at(0, e);
                b.line("b_fragments[" + std::to_string(ni * b_size + e) + "] = b_warp[" +
                       uint_literal(bl.offset(ni * mma.n + at.column, kk + at.row)) + "];");
            }
        };
        const auto multiply = [&](std::size_t mi, std::size_t ni) {
            b.line(mma_function + "(accumulators + " + uint_literal((mi * n_tiles + ni) * c_size) +
                   ", a_fragments + " + uint_literal(mi * a_size) + ", b_fragments + " +
                   uint_literal(ni * b_size) + ");");
        };
        for (std::size_t kk = 0; kk < t.block_depth; kk += mma.k) {
            if (shape.types.a == gemm_element::f32) {
                // TF32 reads every fragment before its products (128x128x16 w64x32 s2, CUDA,
                // H100: 122 TFLOP/s against 112 in the doubles' order).
                for (std::size_t mi = 0; mi < m_tiles; ++mi) load_a(kk, mi);
                for (std::size_t ni = 0; ni < n_tiles; ++ni) load_b(kk, ni);
                for (std::size_t mi = 0; mi < m_tiles; ++mi)
                    for (std::size_t ni = 0; ni < n_tiles; ++ni) multiply(mi, ni);
            } else if (m_tiles * a_size >= n_tiles * b_size) {
                // Doubles read the smaller operand's fragments first, then the larger's a tile
                // at a time, each followed by its products, so that the compiler overlaps the
                // reads of one tile with the products of the one before (128x64x16 w64x32 s3,
                // CUDA, H100: 0.88-0.90x cuBLAS against 0.83x; the reverse order 0.86x).
                for (std::size_t ni = 0; ni < n_tiles; ++ni) load_b(kk, ni);
                for (std::size_t mi = 0; mi < m_tiles; ++mi) {
                    load_a(kk, mi);
                    for (std::size_t ni = 0; ni < n_tiles; ++ni) multiply(mi, ni);
                }
            } else {
                for (std::size_t mi = 0; mi < m_tiles; ++mi) load_a(kk, mi);
                for (std::size_t ni = 0; ni < n_tiles; ++ni) {
                    load_b(kk, ni);
                    for (std::size_t mi = 0; mi < m_tiles; ++mi) multiply(mi, ni);
                }
            }
        }
    });
    emit_warp_tile_stores(b, shape.types, mma.c, m_tiles, n_tiles);
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
