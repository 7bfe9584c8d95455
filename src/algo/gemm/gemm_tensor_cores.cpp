// The tensor-core strategy, as CUTLASS layers its Ampere GEMM: a work-group's block of C staged
// through `stages` local buffers of op(A) and op(B) tiles, filled by cp.async 16 bytes at a time
// (zeros past the matrix's edges) while earlier tiles are multiplied; each warp's tile of C in
// registers, fed by ldmatrix from local memory to mma.sync m16n8k16 (16-bit inputs, float
// accumulation); the epilogue applies alpha and beta. docs/linear_algebra.md, "Strategies".
#include <kiln/error.hpp>
#include <string>

#include "codegen/device_vocabulary.hpp"
#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"

namespace kiln::detail {
namespace {

constexpr const char* tensor_kernel = "kiln_gemm_tensor_cores";
/// Elements of 16 bits in one cp.async and one ldmatrix row.
constexpr std::size_t chunk = 8;
/// Local rows are padded by one chunk: with rows an odd number of 16-byte chunks long, the eight
/// rows an ldmatrix reads fall on eight different groups of four banks.
constexpr std::size_t local_padding = chunk;

/// "8u": a constant of the kernels' uint arithmetic.
std::string uint_literal(std::size_t value) {
    return std::to_string(value) + "u";
}

/// One operand's tile as it lies in local memory: as in global memory (so that copies need no
/// transpose), `outer` rows of `inner` elements (plus padding), inner contiguous.
struct tile_layout : operand_tile {
    std::size_t row() const { return inner + local_padding; }
    std::size_t stage_elements() const { return outer * row(); }
};

tile_layout layout_of(const gemm_tensor_kernel& shape, bool is_a) {
    const gemm_tensor_tiles& t = shape.tiles;
    const bool transposed = is_a ? shape.a_transposed : shape.b_transposed;
    return {
        operand_tile_of(is_a, transposed, is_a ? t.block_rows : t.block_columns, t.block_depth)};
}

/// The copies of the tile whose k starts at k0 into local stage `stage`: each work-item's
/// chunks of 8 elements, the bytes past the matrix's last row or column zero.
void emit_tile_copy(source_builder& b, const tile_layout& l, const std::string& stage,
                    std::size_t group) {
    const std::size_t per_row = l.inner / chunk;
    const std::size_t chunks = l.outer * per_row;
    for (std::size_t i = 0; i < chunks / group; ++i) {
        b.open("");
        b.line("const uint c = tid + " + uint_literal(i * group) + ";");
        b.line("const ulong outer = " + l.outer_start + " + c / " + uint_literal(per_row) + ";");
        b.line("const ulong inner = " + l.inner_start + " + c % " + uint_literal(per_row) + " * " +
               uint_literal(chunk) + ";");
        b.line("const uint bytes = outer < " + l.outer_limit + " && inner < " + l.inner_limit +
               " ? 2u * (uint)min(" + l.inner_limit + " - inner, (ulong)" + uint_literal(chunk) +
               ") : 0u;");
        b.line("kiln_copy_async_16(" + l.name + "_tile + (" + stage + ") * " +
               uint_literal(l.stage_elements()) + " + c / " + uint_literal(per_row) + " * " +
               uint_literal(l.row()) + " + c % " + uint_literal(per_row) + " * " +
               uint_literal(chunk) + ", bytes ? " + l.name + " + outer * " + l.name +
               "_leading + inner : " + l.name + ", bytes);");
        b.close();
    }
}

/// The fragments of one k16 step at local column `kk` of stage `stage`: A's for each m16 tile of
/// the warp, B's for each pair of n8 tiles. An ldmatrix.x4 reads four 8x8 matrices, lanes 8j to
/// 8j + 7 naming the rows of matrix j; .trans where the tile lies with k outer.
void emit_fragment_loads(source_builder& b, const gemm_tensor_kernel& shape, const tile_layout& a,
                         const tile_layout& bl, std::size_t kk) {
    const gemm_tensor_tiles& t = shape.tiles;
    // A's registers a0..a3: rows 0-7 and 8-15 at k 0-7, then both at k 8-15.
    for (std::size_t mi = 0; mi < t.warp_rows / 16; ++mi) {
        const std::string m = "warp_row + " + uint_literal(mi * 16);
        const std::string at =
            a.k_is_inner ? "(" + m + " + lane % 16u) * " + uint_literal(a.row()) + " + " +
                               uint_literal(kk) + " + lane / 16u * 8u"
                         : "(" + uint_literal(kk) + " + lane / 16u * 8u + lane % 8u) * " +
                               uint_literal(a.row()) + " + " + m + " + lane / 8u % 2u * 8u";
        b.line(std::string(a.k_is_inner ? "kiln_ldmatrix_x4" : "kiln_ldmatrix_x4_trans") +
               "(a_fragments + " + uint_literal(mi * 4) + ", a_stage + " + at + ");");
    }
    // B's registers b0, b1 of one n8 tile are k 0-7 and 8-15; two tiles per ldmatrix.x4.
    for (std::size_t nj = 0; nj < t.warp_columns / 16; ++nj) {
        const std::string n = "warp_column + " + uint_literal(nj * 16);
        const std::string at =
            bl.k_is_inner
                ? "(" + n + " + lane / 16u * 8u + lane % 8u) * " + uint_literal(bl.row()) + " + " +
                      uint_literal(kk) + " + lane / 8u % 2u * 8u"
                : "(" + uint_literal(kk) + " + lane / 8u % 2u * 8u + lane % 8u) * " +
                      uint_literal(bl.row()) + " + " + n + " + lane / 16u * 8u";
        b.line(std::string(bl.k_is_inner ? "kiln_ldmatrix_x4" : "kiln_ldmatrix_x4_trans") +
               "(b_fragments + " + uint_literal(nj * 4) + ", b_stage + " + at + ");");
    }
}

std::string generate(const gemm_tensor_kernel& shape) {
    const gemm_tensor_tiles& t = shape.tiles;
    const std::size_t group = t.work_group_size();
    const tile_layout a = layout_of(shape, true), bl = layout_of(shape, false);
    const std::size_t m_tiles = t.warp_rows / 16, n_tiles = t.warp_columns / 8;
    const std::string mma =
        shape.types.a == gemm_element::bf16 ? "kiln_mma_m16n8k16_bf16" : "kiln_mma_m16n8k16_f16";
    const std::size_t wait_depth = t.stages - 2;  // groups left in flight: the later tiles'

    source_builder b;
    use_tensor_core_vocabulary(b, shape.target);
    b.begin_kernel(tensor_kernel, group);
    gemm_kernel_description(tensor_kernel, shape.types).declare(b);
    b.begin_body();
    // uint4: local arrays of 16-bit values are aligned to 16 bytes only so.
    b.local_array("uint4", "a_words", std::to_string(t.stages * a.stage_elements() / chunk));
    b.local_array("uint4", "b_words", std::to_string(t.stages * bl.stage_elements() / chunk));
    b.line("local ushort* a_tile = (local ushort*)a_words;");
    b.line("local ushort* b_tile = (local ushort*)b_words;");
    b.line("const uint tid = " + source_builder::local_id() + ";");
    b.line("const uint lane = tid % 32u, warp = tid / 32u;");
    b.line("const uint warp_row = warp / " + uint_literal(t.block_columns / t.warp_columns) +
           " * " + uint_literal(t.warp_rows) + ";");
    b.line("const uint warp_column = warp % " + uint_literal(t.block_columns / t.warp_columns) +
           " * " + uint_literal(t.warp_columns) + ";");
    // Groups run through C's blocks row after row, then through the batch entries.
    b.line("const ulong tiles_n = (n + " + uint_literal(t.block_columns - 1) + ") / " +
           uint_literal(t.block_columns) + ";");
    b.line("const ulong tiles = (m + " + uint_literal(t.block_rows - 1) + ") / " +
           uint_literal(t.block_rows) + " * tiles_n;");
    b.line("const ulong group = " + source_builder::group_id() + ";");
    emit_batch_entry(b, "(group / tiles)");
    b.line("const ulong row0 = group % tiles / tiles_n * " + uint_literal(t.block_rows) + ";");
    b.line("const ulong column0 = group % tiles % tiles_n * " + uint_literal(t.block_columns) +
           ";");
    b.line("float accumulators[" + std::to_string(m_tiles * n_tiles * 4) + "];");
    b.open("for (uint i = 0; i < " + uint_literal(m_tiles * n_tiles * 4) + "; ++i)");
    b.line("accumulators[i] = 0.0f;");
    b.close();
    b.line("uint a_fragments[" + std::to_string(m_tiles * 4) + "], b_fragments[" +
           std::to_string(n_tiles * 2) + "];");
    b.line("const ulong depth_tiles = (k + " + uint_literal(t.block_depth - 1) + ") / " +
           uint_literal(t.block_depth) + ";");
    // The prologue: the first stages - 1 tiles in flight, a group of copies each (empty past k,
    // so that the count of groups, which the waits take, is the same on every path).
    for (std::size_t s = 0; s + 1 < t.stages; ++s) {
        b.open("if (" + uint_literal(s) + " < depth_tiles)");
        b.line("const ulong k0 = " + uint_literal(s * t.block_depth) + ";");
        emit_tile_copy(b, a, uint_literal(s), group);
        emit_tile_copy(b, bl, uint_literal(s), group);
        b.close();
        b.line("kiln_copy_async_commit();");
    }
    b.open("for (ulong tile = 0; tile < depth_tiles; ++tile)");
    // This tile's group is complete once at most the later ones are in flight; the barrier makes
    // every work-item's copies visible and ends the reads of the stage copied into next.
    b.line("kiln_copy_async_wait_" + std::to_string(wait_depth) + "();");
    b.local_barrier();
    b.open("");
    b.line("const ulong next = tile + " + uint_literal(t.stages - 1) + ";");
    b.open("if (next < depth_tiles)");
    b.line("const ulong k0 = next * " + uint_literal(t.block_depth) + ";");
    b.line("const uint stage = (uint)(next % " + uint_literal(t.stages) + ");");
    emit_tile_copy(b, a, "stage", group);
    emit_tile_copy(b, bl, "stage", group);
    b.close();
    b.line("kiln_copy_async_commit();");
    b.close();
    b.line("const uint stage = (uint)(tile % " + uint_literal(t.stages) + ");");
    b.line("const local ushort* a_stage = a_tile + stage * " + uint_literal(a.stage_elements()) +
           ";");
    b.line("const local ushort* b_stage = b_tile + stage * " + uint_literal(bl.stage_elements()) +
           ";");
    for (std::size_t kk = 0; kk < t.block_depth; kk += 16) {
        emit_fragment_loads(b, shape, a, bl, kk);
        for (std::size_t mi = 0; mi < m_tiles; ++mi)
            for (std::size_t ni = 0; ni < n_tiles; ++ni)
                b.line(mma + "(accumulators + " + uint_literal((mi * n_tiles + ni) * 4) +
                       ", a_fragments + " + uint_literal(mi * 4) + ", b_fragments + " +
                       uint_literal(ni * 2) + ");");
    }
    b.close();
    // The epilogue: accumulator 2i + j of an m16n8 tile is row lane / 4 (+ 8 for i = 1), column
    // 2 (lane % 4) + j.
    for (std::size_t mi = 0; mi < m_tiles; ++mi)
        for (std::size_t ni = 0; ni < n_tiles; ++ni)
            for (std::size_t e = 0; e < 4; ++e) {
                const std::string row =
                    "row0 + warp_row + " + uint_literal(mi * 16 + (e / 2) * 8) + " + lane / 4u";
                const std::string column =
                    "column0 + warp_column + " + uint_literal(ni * 8 + e % 2) + " + lane % 4u * 2u";
                b.open("if (" + row + " < m && " + column + " < n)");
                b.line(gemm_store(
                    shape.types, "(" + row + ")", "(" + column + ")",
                    "accumulators[" + std::to_string((mi * n_tiles + ni) * 4 + e) + "]"));
                b.close();
            }
    b.end_kernel();
    return b.str();
}

/// Rows, offset and batch stride on 16-byte boundaries (the buffer's start is aligned further).
bool copies_by_16_bytes(const gemm_operand& x) {
    return x.leading_dimension % chunk == 0 && x.offset % chunk == 0 &&
           (x.batch == 1 || x.batch_stride % chunk == 0);
}

}  // namespace

bool tensor_core_layout_fits(const gemm_problem& problem) {
    return is_16_bit(problem.a.element) && problem.b.element == problem.a.element &&
           problem.c.element == gemm_element::f32 && copies_by_16_bytes(problem.a) &&
           copies_by_16_bytes(problem.b);
}

std::string gemm_tensor_kernel::key() const {
    return std::string(tensor_kernel) + ":" + tiles.key() + ":" + types.key() + ":" +
           (a_transposed ? "T" : "N") + (b_transposed ? "T" : "N") + ":" + target.key();
}

std::string gemm_tensor_kernel::source() const {
    const gemm_tensor_tiles& t = tiles;
    // The shapes the generator's loops assume.
    if (t.stages < 2 || t.stages > 4 || t.block_depth % 16 != 0 || t.warp_rows % 16 != 0 ||
        t.warp_columns % 16 != 0 || t.block_rows % t.warp_rows != 0 ||
        t.block_columns % t.warp_columns != 0 ||
        (t.block_rows * t.block_depth / chunk) % t.work_group_size() != 0 ||
        (t.block_columns * t.block_depth / chunk) % t.work_group_size() != 0)
        throw invalid_argument_error(
            "kiln::gemm", "tensor-core tiles " + t.key() + " are not a shape the kernel takes");
    return generate(*this);
}

event run_tensor_core_gemm(const queue& q, const gemm_problem& problem,
                           const gemm_tensor_tiles& tiles) {
    const gemm_tensor_kernel shape{tiles, gemm_types_of(problem), problem.a.transposed,
                                   problem.b.transposed, target_features_for(q.device())};
    const auto describe = [&] {
        return std::vector<kernel_description>{gemm_kernel_description(tensor_kernel, shape.types)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), shape.key(), describe, [&] { return shape.source(); });
    const std::size_t group = tiles.work_group_size();
    const std::size_t groups = (problem.m() + tiles.block_rows - 1) / tiles.block_rows *
                               ((problem.n() + tiles.block_columns - 1) / tiles.block_columns) *
                               problem.batch();
    return program.bind(bind_gemm(program, tensor_kernel, problem, shape.types))
        .launch(q, groups * group, group);
}

}  // namespace kiln::detail
