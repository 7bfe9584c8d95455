// The tensor-core strategy for doubles: the 16-bit kernel's pipeline (gemm_tensor_pipeline.hpp)
// feeding mma.sync m8n8k4 with f64 operands (DMMA, compute capability 8.0 and later), whose
// fragments are one element per lane, read from local memory without ldmatrix.
// docs/linear_algebra.md, "Strategies".
#include <algorithm>
#include <array>
#include <kiln/error.hpp>
#include <string>

#include "codegen/device_vocabulary.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

/// Doubles in one 16-byte copy.
constexpr std::size_t chunk = 2;

/// The most 32-bit words a warp's fragment load asks of one bank when local rows are `row`
/// doubles long: lane l reads row l / 4, column l % 4 of an 8 x 4 fragment where k is inner, row
/// l % 4, column l / 4 where k is outer.
std::size_t bank_load(std::size_t row, bool k_is_inner) {
    std::array<std::size_t, 32> words{};
    for (std::size_t lane = 0; lane < 32; ++lane) {
        const std::size_t at = k_is_inner ? lane / 4 * row + lane % 4 : lane % 4 * row + lane / 4;
        ++words[2 * at % 32];
        ++words[(2 * at + 1) % 32];
    }
    return *std::max_element(words.begin(), words.end());
}

/// The least padding, in whole 16-byte copies, that spreads a fragment load evenly over the banks
/// (two words a bank: 256 bytes in two passes).
std::size_t conflict_free_padding(std::size_t inner, bool k_is_inner) {
    std::size_t best = 0;
    for (std::size_t padding = 0; padding < 32; padding += chunk)
        if (bank_load(inner + padding, k_is_inner) < bank_load(inner + best, k_is_inner))
            best = padding;
    return best;
}

staged_tile double_tile(const gemm_tensor_kernel& shape, bool is_a) {
    staged_tile tile = staged_tile_of(shape, is_a, 8, 0);
    tile.padding = conflict_free_padding(tile.inner, tile.k_is_inner);
    return tile;
}

/// Lane l's element of an m8 (n8) fragment at local column kk: row l / 4 of the 8, k l % 4.
std::string fragment_at(const staged_tile& l, const std::string& along, std::size_t kk) {
    const std::string row = uint_literal(l.row());
    return l.k_is_inner
               ? "(" + along + " + lane / 4u) * " + row + " + " + uint_literal(kk) + " + lane % 4u"
               : "(" + uint_literal(kk) + " + lane % 4u) * " + row + " + " + along + " + lane / 4u";
}

}  // namespace

std::string double_tensor_kernel_source(const gemm_tensor_kernel& shape) {
    const gemm_tensor_tiles& t = shape.tiles;
    const std::size_t group = t.work_group_size();
    if (t.stages < 2 || t.stages > 4 || t.block_depth % 4 != 0 || t.warp_rows % 8 != 0 ||
        t.warp_columns % 8 != 0 || t.block_rows % t.warp_rows != 0 ||
        t.block_columns % t.warp_columns != 0 ||
        (t.block_rows * t.block_depth / chunk) % group != 0 ||
        (t.block_columns * t.block_depth / chunk) % group != 0)
        throw invalid_argument_error("kiln::gemm", "tensor-core tiles " + t.key() +
                                                       " are not a shape the double kernel takes");
    const staged_tile a = double_tile(shape, true), bl = double_tile(shape, false);
    const std::size_t m_tiles = t.warp_rows / 8, n_tiles = t.warp_columns / 8;

    source_builder b;
    use_tensor_core_vocabulary(b, shape.target);
    b.begin_kernel(gemm_tensor_kernel_name, group);
    gemm_kernel_description(gemm_tensor_kernel_name, shape.types).declare(b);
    b.begin_body();
    emit_stage_buffers(b, a, bl, t.stages);
    emit_block_start(b, t);
    b.line("double accumulators[" + std::to_string(m_tiles * n_tiles * 2) + "];");
    b.open("for (uint i = 0; i < " + uint_literal(m_tiles * n_tiles * 2) + "; ++i)");
    b.line("accumulators[i] = 0.0;");
    b.close();
    b.line("double a_fragments[" + std::to_string(m_tiles) + "], b_fragments[" +
           std::to_string(n_tiles) + "];");
    emit_staged_loop(b, t, a, bl, [&] {
        for (std::size_t kk = 0; kk < t.block_depth; kk += 4) {
            for (std::size_t mi = 0; mi < m_tiles; ++mi)
                b.line("a_fragments[" + std::to_string(mi) + "] = a_stage[" +
                       fragment_at(a, "warp_row + " + uint_literal(mi * 8), kk) + "];");
            for (std::size_t ni = 0; ni < n_tiles; ++ni)
                b.line("b_fragments[" + std::to_string(ni) + "] = b_stage[" +
                       fragment_at(bl, "warp_column + " + uint_literal(ni * 8), kk) + "];");
            for (std::size_t mi = 0; mi < m_tiles; ++mi)
                for (std::size_t ni = 0; ni < n_tiles; ++ni)
                    b.line("kiln_mma_m8n8k4_f64(accumulators + " +
                           uint_literal((mi * n_tiles + ni) * 2) + ", a_fragments[" +
                           std::to_string(mi) + "], b_fragments[" + std::to_string(ni) + "]);");
        }
    });
    // The epilogue: accumulator j of an m8n8 tile is row lane / 4, column 2 (lane % 4) + j.
    for (std::size_t mi = 0; mi < m_tiles; ++mi)
        for (std::size_t ni = 0; ni < n_tiles; ++ni)
            for (std::size_t e = 0; e < 2; ++e) {
                const std::string row =
                    "row0 + warp_row + " + uint_literal(mi * 8) + " + lane / 4u";
                const std::string column =
                    "column0 + warp_column + " + uint_literal(ni * 8 + e) + " + lane % 4u * 2u";
                b.open("if (" + row + " < m && " + column + " < n)");
                b.line(gemm_store(
                    shape.types, "(" + row + ")", "(" + column + ")",
                    "accumulators[" + std::to_string((mi * n_tiles + ni) * 2 + e) + "]"));
                b.close();
            }
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
