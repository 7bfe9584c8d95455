// SPDX-License-Identifier: Apache-2.0
// The tensor-core strategy, as CUTLASS layers its Ampere GEMM: a work-group's block of C staged
// through `stages` local buffers of op(A) and op(B) tiles, filled by cp.async 16 bytes at a time
// (zeros past the matrix's edges) while earlier tiles are multiplied; each warp's tile of C in
// registers, fed by ldmatrix from local memory to mma.sync m16n8k16 (16-bit inputs, float
// accumulation); the epilogue applies alpha and beta. docs/dev/gemm.md, "Strategies".
#include <kiln/error.hpp>
#include <string>
#include <utility>

#include "codegen/device_vocabulary.hpp"
#include "gemm_fragments.hpp"
#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

constexpr const char* tensor_kernel = gemm_tensor_kernel_name;
/// Elements of 16 bits in one cp.async and one ldmatrix row.
constexpr std::size_t chunk_elements = 8;
/// Local rows are padded by one chunk: with rows an odd number of 16-byte chunks long, the eight
/// rows an ldmatrix reads fall on eight different groups of four banks.
constexpr std::size_t local_padding = chunk_elements;

/// Where lane l's rows start in the warp's first ldmatrix.x4 of each operand: of A, lanes 8j to
/// 8j + 7 name the rows of matrix j (rows 0-7 and 8-15 at k 0-7, then both at k 8-15); of B, two
/// n8 tiles' k 0-7 and 8-15. .trans where the tile lies with k outer.
std::string ldmatrix_lane(const staged_tile& l, bool is_a) {
    const std::string along = is_a ? "warp_row" : "warp_column";
    const std::string row = uint_literal(l.row());
    const std::string along_lane = is_a ? "lane % 16u" : "lane / 16u * 8u + lane % 8u";
    const std::string k_lane = is_a ? "lane / 16u * 8u" : "lane / 8u % 2u * 8u";
    if (l.k_is_inner) return "(" + along + " + " + along_lane + ") * " + row + " + " + k_lane;
    // With k outer, the lanes' k and rows swap roles: k from the lane's place among the eight.
    const std::string k_outer =
        is_a ? "lane / 16u * 8u + lane % 8u" : "lane / 8u % 2u * 8u + lane % 8u";
    const std::string along_outer = is_a ? "lane / 8u % 2u * 8u" : "lane / 16u * 8u";
    return "(" + k_outer + ") * " + row + " + " + along + " + " + along_outer;
}

/// The fragments of one k16 step at local column `kk`, read from a_warp and b_warp (the lanes'
/// starts in the stage) at constant offsets: A's for each m16 tile of the warp, B's for each pair
/// of n8 tiles.
void emit_fragment_loads(source_builder& b, const gemm_tensor_kernel& shape, const staged_tile& a,
                         const staged_tile& bl, std::size_t kk) {
    const gemm_tensor_tiles& t = shape.tiles;
    for (std::size_t mi = 0; mi < t.warp_rows / 16; ++mi)
        b.line(std::string(a.k_is_inner ? "kiln_ldmatrix_x4" : "kiln_ldmatrix_x4_trans") +
               "(a_fragments + " + uint_literal(mi * 4) + ", a_warp + " +
               uint_literal(a.offset(mi * 16, kk)) + ");");
    for (std::size_t nj = 0; nj < t.warp_columns / 16; ++nj)
        b.line(std::string(bl.k_is_inner ? "kiln_ldmatrix_x4" : "kiln_ldmatrix_x4_trans") +
               "(b_fragments + " + uint_literal(nj * 4) + ", b_warp + " +
               uint_literal(bl.offset(nj * 16, kk)) + ");");
}

std::string generate(const gemm_tensor_kernel& shape) {
    const gemm_tensor_tiles& t = shape.tiles;
    const staged_tile a = staged_tile_of(shape, true, 2, local_padding),
                      bl = staged_tile_of(shape, false, 2, local_padding);
    const std::size_t m_tiles = t.warp_rows / 16, n_tiles = t.warp_columns / 8;
    const std::string mma =
        shape.types.a == gemm_element::bf16 ? "kiln_mma_m16n8k16_bf16" : "kiln_mma_m16n8k16_f16";

    source_builder b;
    use_tensor_core_vocabulary(b, shape.target);
    b.begin_kernel(tensor_kernel, t.work_group_size());
    shape.description().declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    emit_stage_buffers(b, a, bl, t.stages, shape.dynamic_stages);
    emit_block_start(b, t);
    b.line("float accumulators[" + std::to_string(m_tiles * n_tiles * 4) + "];");
    b.open("for (uint i = 0; i < " + uint_literal(m_tiles * n_tiles * 4) + "; ++i)");
    b.line("accumulators[i] = 0.0f;");
    b.close();
    b.line("uint a_fragments[" + std::to_string(m_tiles * 4) + "], b_fragments[" +
           std::to_string(n_tiles * 2) + "];");
    b.line("const uint a_lane = " + ldmatrix_lane(a, true) + ";");
    b.line("const uint b_lane = " + ldmatrix_lane(bl, false) + ";");
    emit_staged_loop(b, copy_pipeline_of(t), a, bl, [&] {
        b.line("const local " + a.element + "* const a_warp = a_stage + a_lane;");
        b.line("const local " + bl.element + "* const b_warp = b_stage + b_lane;");
        for (std::size_t kk = 0; kk < t.block_depth; kk += 16) {
            emit_fragment_loads(b, shape, a, bl, kk);
            for (std::size_t mi = 0; mi < m_tiles; ++mi)
                for (std::size_t ni = 0; ni < n_tiles; ++ni)
                    b.line(mma + "(accumulators + " + uint_literal((mi * n_tiles + ni) * 4) +
                           ", a_fragments + " + uint_literal(mi * 4) + ", b_fragments + " +
                           uint_literal(ni * 2) + ");");
        }
    });
    emit_warp_tile_stores(b, shape.types, tensor_core_atom(mma).c, m_tiles, n_tiles);
    b.end_kernel();
    return b.str();
}

}  // namespace

bool tensor_core_layout_fits(const gemm_problem& problem) {
    const gemm_element input = problem.a.element, output = problem.c.element;
    // 16-bit inputs with a float or their own output; doubles; floats (TF32 where allowed).
    const bool types = problem.b.element == input &&
                       (output == input || (is_16_bit(input) && output == gemm_element::f32));
    return types && copies_by_16_bytes(problem.a) && copies_by_16_bytes(problem.b);
}

std::string gemm_tensor_kernel::key() const {
    return std::string(tensor_kernel) + ":" + tiles.key() + ":" + types.key() + ":" +
           (a_transposed ? "T" : "N") + (b_transposed ? "T" : "N") + ":" + target.key() +
           (double_m16n8k8 ? ":m16n8k8" : "") + (dynamic_stages ? ":dynamic" : "");
}

kernel_description gemm_tensor_kernel::description() const {
    kernel_description kernel = gemm_kernel_description(tensor_kernel, types);
    if (dynamic_stages) kernel.local("uint4", "staging");
    return kernel;
}

std::size_t gemm_tensor_kernel::stage_bytes() const {
    const bool narrow = is_16_bit(types.a);
    const staged_tile a = narrow ? staged_tile_of(*this, true, 2, local_padding)
                                 : wide_stage_tile(*this, true),
                      bl = narrow ? staged_tile_of(*this, false, 2, local_padding)
                                  : wide_stage_tile(*this, false);
    return tiles.stages *
           (a.stage_elements() * a.element_bytes + bl.stage_elements() * bl.element_bytes);
}

std::string gemm_tensor_kernel::source() const {
    if (!is_16_bit(types.a)) return wide_tensor_kernel_source(*this);
    if (!tiles.fits_together(2))
        throw invalid_argument_error(
            "kiln::gemm", "tensor-core tiles " + tiles.key() + " are not a shape the kernel takes");
    return generate(*this);
}

event run_tensor_core_gemm(const queue& q, const gemm_problem& problem,
                           const gemm_tensor_tiles& tiles) {
    const gemm_types types = gemm_types_of(problem);
    const device_properties& props = q.device().properties();
    gemm_tensor_kernel shape{tiles,
                             types,
                             problem.a.transposed,
                             problem.b.transposed,
                             target_features_for(q.device()),
                             types.a == gemm_element::f64 && props.compute_capability_major >= 9};
    // Stages past the static local arrays' limit: dynamic local memory, which CUDA opts into.
    shape.dynamic_stages = shape.target.vocabulary == vocabulary_target::cuda_prelude &&
                           shape.stage_bytes() > props.local_memory_bytes;
    const auto describe = [&] { return std::vector<kernel_description>{shape.description()}; };
    const algorithm_program& program =
        algorithm_program_for(q.device(), shape.key(), describe, [&] { return shape.source(); });
    const std::size_t group = tiles.work_group_size();
    const std::size_t groups = gemm_block_count(problem, tiles.block_rows, tiles.block_columns);
    kernel_binding args = bind_gemm(program, tensor_kernel, problem, shape.types);
    if (shape.dynamic_stages) args.local("staging", shape.stage_bytes());
    return program.bind(std::move(args)).launch(q, groups * group, group);
}

}  // namespace kiln::detail
