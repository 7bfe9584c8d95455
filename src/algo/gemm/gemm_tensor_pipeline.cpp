// The tensor-core kernels' staging and main loop (gemm_tensor_pipeline.hpp).
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

/// The copies of the tile whose k starts at k0 into local stage `stage`: each work-item's
/// 16-byte chunks, the bytes past the matrix's last row or column zero.
void emit_tile_copy(source_builder& b, const staged_tile& l, const std::string& stage,
                    std::size_t group) {
    const std::size_t chunk = l.chunk();
    const std::size_t per_row = l.inner / chunk;
    const std::size_t chunks = l.outer * per_row;
    // cp.async takes 16 bytes whatever the elements; the 16-bit kernels' pointers are already
    // the vocabulary's.
    const bool cast = l.element != "ushort";
    for (std::size_t i = 0; i < chunks / group; ++i) {
        b.open("");
        b.line("const uint c = tid + " + uint_literal(i * group) + ";");
        b.line("const ulong outer = " + l.outer_start + " + c / " + uint_literal(per_row) + ";");
        b.line("const ulong inner = " + l.inner_start + " + c % " + uint_literal(per_row) + " * " +
               uint_literal(chunk) + ";");
        b.line("const uint bytes = outer < " + l.outer_limit + " && inner < " + l.inner_limit +
               " ? " + uint_literal(l.element_bytes) + " * (uint)min(" + l.inner_limit +
               " - inner, (ulong)" + uint_literal(chunk) + ") : 0u;");
        const std::string to = l.name + "_tile + (" + stage + ") * " +
                               uint_literal(l.stage_elements()) + " + c / " +
                               uint_literal(per_row) + " * " + uint_literal(l.row()) + " + c % " +
                               uint_literal(per_row) + " * " + uint_literal(chunk);
        const std::string from =
            "bytes ? " + l.name + " + outer * " + l.name + "_leading + inner : " + l.name;
        b.line(cast ? "kiln_copy_async_16((local ushort*)(" + to + "), (const global ushort*)(" +
                          from + "), bytes);"
                    : "kiln_copy_async_16(" + to + ", " + from + ", bytes);");
        b.close();
    }
}

}  // namespace

std::string uint_literal(std::size_t value) {
    return std::to_string(value) + "u";
}

staged_tile staged_tile_of(const gemm_tensor_kernel& shape, bool is_a, std::size_t element_bytes,
                           std::size_t padding) {
    const gemm_tensor_tiles& t = shape.tiles;
    const bool transposed = is_a ? shape.a_transposed : shape.b_transposed;
    return {operand_tile_of(is_a, transposed, is_a ? t.block_rows : t.block_columns, t.block_depth),
            element_bytes == 8   ? "double"
            : element_bytes == 4 ? "float"
                                 : "ushort",
            element_bytes, padding};
}

bool copies_by_16_bytes(const gemm_operand& x) {
    const std::size_t chunk = 16 / element_bytes(x.element);
    return x.leading_dimension % chunk == 0 && x.offset % chunk == 0 &&
           (x.batch == 1 || x.batch_stride % chunk == 0);
}

void emit_stage_buffers(source_builder& b, const staged_tile& a, const staged_tile& bl,
                        std::size_t stages, bool dynamic) {
    const std::size_t a_words = stages * a.stage_elements() * a.element_bytes / 16;
    if (dynamic) {
        b.line("local uint4* a_words = staging;");
        b.line("local uint4* b_words = staging + " + uint_literal(a_words) + ";");
    } else {
        // uint4: local arrays are aligned to 16 bytes, as cp.async writes them, only so.
        b.local_array("uint4", "a_words", std::to_string(a_words));
        b.local_array("uint4", "b_words",
                      std::to_string(stages * bl.stage_elements() * bl.element_bytes / 16));
    }
    b.line("local " + a.element + "* a_tile = (local " + a.element + "*)a_words;");
    b.line("local " + bl.element + "* b_tile = (local " + bl.element + "*)b_words;");
}

void emit_block_start(source_builder& b, const gemm_tensor_tiles& t) {
    b.line("const uint tid = " + source_builder::local_id() + ";");
    b.line("const uint lane = tid % 32u, warp = tid / 32u;");
    b.line("const uint warp_row = warp / " + uint_literal(t.block_columns / t.warp_columns) +
           " * " + uint_literal(t.warp_rows) + ";");
    b.line("const uint warp_column = warp % " + uint_literal(t.block_columns / t.warp_columns) +
           " * " + uint_literal(t.warp_columns) + ";");
    emit_block_origin(b, t.block_rows, t.block_columns);
}

void emit_staged_loop(source_builder& b, const gemm_tensor_tiles& t, const staged_tile& a,
                      const staged_tile& bl, const std::function<void()>& multiply) {
    const std::size_t group = t.work_group_size();
    const std::size_t wait_depth = t.stages - 2;  // groups left in flight: the later tiles'
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
    b.line("const local " + a.element + "* a_stage = a_tile + stage * " +
           uint_literal(a.stage_elements()) + ";");
    b.line("const local " + bl.element + "* b_stage = b_tile + stage * " +
           uint_literal(bl.stage_elements()) + ";");
    multiply();
    b.close();
}

}  // namespace kiln::detail
