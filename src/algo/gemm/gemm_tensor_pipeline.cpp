// SPDX-License-Identifier: Apache-2.0
// The cp.async kernels' staging and main loop (gemm_tensor_pipeline.hpp).
#include "gemm_tensor_pipeline.hpp"

#include <optional>

namespace kiln::detail {
namespace {

/// The name of copy `i`'s variable `what` for tile `l` ("a_source3").
std::string copy_variable(const staged_tile& l, const char* what, std::size_t i) {
    return l.name + "_" + what + std::to_string(i);
}

/// Where the group covers whole rows of tile `l`, every copy's place is the first's and a
/// constant, which the copy instruction takes as an offset rather than a register: that constant
/// for copy `i`; none where the group does not.
std::optional<std::size_t> place_past_first(const staged_tile& l, std::size_t i,
                                            std::size_t group) {
    const std::size_t per_row = l.inner / l.chunk();
    if (group % per_row != 0) return std::nullopt;
    return i * group / per_row * (l.transposed ? 1 : l.row());
}

/// Before the loop, what each of a work-item's copies of tile `l` keeps from tile to tile: its
/// source (at k = 0 here, moved a tile on after each tile's copies), its place in a stage, and the
/// bytes it takes where k is not past the matrix (the other dimension's edge: zeros past it). The
/// loop then moves the sources alone, rather than recomputing 64-bit indices and bounds for every
/// copy of every tile.
void emit_copy_setup(source_builder& b, const staged_tile& l, std::size_t group) {
    const std::size_t chunk = l.chunk();
    const std::size_t per_row = l.inner / chunk;
    const std::size_t chunks = l.outer * per_row;
    // k0 = 0 in the tile's starts: the row of k (outer) or its column (inner) is added per tile.
    const std::string outer_start = l.k_is_inner ? l.outer_start : "0";
    const std::string inner_start = l.k_is_inner ? "0" : l.inner_start;
    for (std::size_t i = 0; i < chunks / group; ++i) {
        const std::string c = "(tid + " + uint_literal(i * group) + ")";
        const std::string r = c + " / " + uint_literal(per_row);
        const std::string q = c + " % " + uint_literal(per_row) + " * " + uint_literal(chunk);
        b.line("const ulong " + copy_variable(l, "outer", i) + " = " + outer_start + " + " + r +
               ";");
        b.line("const ulong " + copy_variable(l, "inner", i) + " = " + inner_start + " + " + q +
               ";");
        // A copy past the other dimension's edge takes no bytes, but its source stays on the
        // block's first row (or column), so that whole tiles add k0 without a select.
        const std::string outer = copy_variable(l, "outer", i),
                          inner = copy_variable(l, "inner", i);
        const std::string source_outer =
            l.k_is_inner
                ? "(" + outer + " < " + l.outer_limit + " ? " + outer + " : " + l.outer_start + ")"
                : outer;
        const std::string source_inner =
            l.k_is_inner
                ? inner
                : "(" + inner + " < " + l.inner_limit + " ? " + inner + " : " + l.inner_start + ")";
        b.line("const global " + l.element + "* " + copy_variable(l, "source", i) + " = " + l.name +
               " + " + source_outer + " * " + l.name + "_leading + " + source_inner + ";");
        if (i == 0 || !place_past_first(l, i, group))
            b.line("const uint " + copy_variable(l, "place", i) + " = " +
                   (l.transposed ? q + " * " + uint_literal(l.row()) + " + " + r
                                 : r + " * " + uint_literal(l.row()) + " + " + q) +
                   ";");
        // The dimension that is not k: its edge does not move with the tiles.
        const std::string along = copy_variable(l, l.k_is_inner ? "outer" : "inner", i);
        const std::string along_limit = l.k_is_inner ? l.outer_limit : l.inner_limit;
        b.line("const uint " + copy_variable(l, "bytes", i) + " = " + along + " < " + along_limit +
               " ? " +
               (l.k_is_inner ? uint_literal(l.copy_bytes)
                             : uint_literal(l.element_bytes) + " * (uint)min(" + along_limit +
                                   " - " + along + ", (ulong)" + uint_literal(chunk) + ")") +
               " : 0u;");
    }
}

/// The copies of the tile whose k starts at k0 into local stage `stage` (emit_copy_setup's
/// variables), the bytes past the matrix's last row or column zero; `whole_depth`: k0 + the
/// tile's depth is within k, so only the other dimension's edge (fixed per copy) can cut them.
void emit_tile_copy(source_builder& b, const staged_tile& l, const std::string& stage,
                    std::size_t group, bool whole_depth) {
    const std::size_t chunk = l.chunk();
    const std::size_t chunks = l.outer * (l.inner / chunk);
    // cp.async of 16 bytes takes them whatever the elements (the 16-bit kernels' pointers are
    // already the vocabulary's); of 4, floats.
    const bool cast = l.copy_bytes == 16 && l.element != "ushort";
    const std::string copy = "kiln_copy_async_" + std::to_string(l.copy_bytes);
    const std::string first = l.name + "_first";
    b.line("local " + l.element + "* const " + first + " = " + l.name + "_tile + (" + stage +
           ") * " + uint_literal(l.stage_elements()) + " + " + copy_variable(l, "place", 0) + ";");
    for (std::size_t i = 0; i < chunks / group; ++i) {
        b.open("");
        std::string bytes = copy_variable(l, "bytes", i);
        if (!whole_depth) {
            // The tile's k of this copy: its row (k outer), or its first column (k inner).
            const std::string k_at =
                "k0 + " + copy_variable(l, l.k_is_inner ? "inner" : "outer", i);
            bytes = k_at + " < k ? " +
                    (l.k_is_inner ? "min(" + bytes + ", " + uint_literal(l.element_bytes) +
                                        " * (uint)min(k - (" + k_at + "), (ulong)" +
                                        uint_literal(chunk) + "))"
                                  : bytes) +
                    " : 0u";
        }
        b.line("const uint bytes = " + bytes + ";");
        const std::optional<std::size_t> past_first = place_past_first(l, i, group);
        const std::string to = i == 0       ? first
                               : past_first ? first + " + " + uint_literal(*past_first)
                                            : l.name + "_tile + (" + stage + ") * " +
                                                  uint_literal(l.stage_elements()) + " + " +
                                                  copy_variable(l, "place", i);
        // Within whole tiles every source lies inside the matrix; past k, none is read.
        const std::string source = copy_variable(l, "source", i);
        const std::string from = whole_depth ? source : "bytes ? " + source + " : " + l.name;
        b.line(cast ? copy + "((local ushort*)(" + to + "), (const global ushort*)(" + from +
                          "), bytes);"
                    : copy + "(" + to + ", " + from + ", bytes);");
        b.close();
    }
}

/// Tile `l`'s copies' sources moved on by one tile (past the matrix after the last, where no
/// copy reads them).
void emit_sources_advance(source_builder& b, const staged_tile& l, std::size_t depth,
                          std::size_t group) {
    const std::size_t chunks = l.outer * (l.inner / l.chunk());
    const std::string step =
        l.k_is_inner ? uint_literal(depth) : uint_literal(depth) + " * " + l.name + "_leading";
    for (std::size_t i = 0; i < chunks / group; ++i)
        b.line(copy_variable(l, "source", i) + " += " + step + ";");
}

/// Both tiles' copies for the tile at k0, a branch for the last tile where k ends inside it;
/// then their sources moved to the next tile.
void emit_tile_copies(source_builder& b, const copy_pipeline& t, const staged_tile& a,
                      const staged_tile& bl, const std::string& stage) {
    const std::size_t group = t.work_group_size;
    b.open("if (k0 + " + uint_literal(t.block_depth) + " <= k)");
    emit_tile_copy(b, a, stage, group, true);
    emit_tile_copy(b, bl, stage, group, true);
    b.close();
    b.open("else");
    emit_tile_copy(b, a, stage, group, false);
    emit_tile_copy(b, bl, stage, group, false);
    b.close();
    emit_sources_advance(b, a, t.block_depth, group);
    emit_sources_advance(b, bl, t.block_depth, group);
}

/// Both loops: `early`, `multiply` places each tile's sync itself (and `before` follows the first
/// tile's), else the sync comes at the tile's start and `multiply` is handed none to emit. The
/// tensor-core kernels take the second: with the sync at the tile's end instead, DGEMM ran 1.7%
/// slower on CUDA and 17% on NVIDIA OpenCL (H100, 2026-11-27), as the compilers scheduled the
/// loop otherwise.
void emit_loop(source_builder& b, const copy_pipeline& t, const staged_tile& a,
               const staged_tile& bl, bool early, const early_synced_multiply& multiply,
               const std::function<void()>& before) {
    const std::size_t group = t.work_group_size;
    const std::size_t wait_depth = t.stages - 2;  // groups left in flight: the later tiles'
    b.line("const ulong depth_tiles = (k + " + uint_literal(t.block_depth - 1) + ") / " +
           uint_literal(t.block_depth) + ";");
    emit_copy_setup(b, a, group);
    emit_copy_setup(b, bl, group);
    // The prologue: the first stages - 1 tiles in flight, a group of copies each (empty past k,
    // so that the count of groups, which the waits take, is the same on every path).
    for (std::size_t s = 0; s + 1 < t.stages; ++s) {
        b.open("if (" + uint_literal(s) + " < depth_tiles)");
        b.line("const ulong k0 = " + uint_literal(s * t.block_depth) + ";");
        emit_tile_copies(b, t, a, bl, uint_literal(s));
        b.close();
        b.line("kiln_copy_async_commit();");
    }
    // A tile's group is complete once at most the later ones are in flight; the barrier makes
    // every work-item's copies visible, and ends the reads of the stage that the next tile's
    // copies overwrite.
    const auto sync = [&] {
        b.line("kiln_copy_async_wait_" + std::to_string(wait_depth) + "();");
        b.local_barrier();
    };
    if (early) {
        sync();
        if (before) before();
    }
    // The stages rotate by counters: a modulo of the 64-bit tile index costs a dozen
    // instructions a tile.
    b.line("uint stage = 0u, next_stage = " + uint_literal(t.stages - 1) + ";");
    b.open("for (ulong tile = 0; tile < depth_tiles; ++tile)");
    if (!early) sync();
    b.line("const uint following = stage == " + uint_literal(t.stages - 1) + " ? 0u : stage + 1u;");
    b.open("");
    b.line("const ulong next = tile + " + uint_literal(t.stages - 1) + ";");
    b.open("if (next < depth_tiles)");
    b.line("const ulong k0 = next * " + uint_literal(t.block_depth) + ";");
    emit_tile_copies(b, t, a, bl, "next_stage");
    b.close();
    b.line("kiln_copy_async_commit();");
    b.close();
    b.line("const local " + a.element + "* a_stage = a_tile + stage * " +
           uint_literal(a.stage_elements()) + ";");
    b.line("const local " + bl.element + "* b_stage = b_tile + stage * " +
           uint_literal(bl.stage_elements()) + ";");
    multiply(sync);
    b.line("next_stage = stage;");
    b.line("stage = following;");
    b.close();
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
    emit_block_origin(b, t.block_rows, t.block_columns, t.band_rows);
}

copy_pipeline copy_pipeline_of(const gemm_tensor_tiles& t) {
    return {t.block_depth, t.stages, t.work_group_size()};
}

void emit_staged_loop(source_builder& b, const copy_pipeline& t, const staged_tile& a,
                      const staged_tile& bl, const std::function<void()>& multiply) {
    emit_loop(b, t, a, bl, false, [&](const std::function<void()>&) { multiply(); }, {});
}

void emit_staged_loop_synced_early(source_builder& b, const copy_pipeline& t, const staged_tile& a,
                                   const staged_tile& bl, const early_synced_multiply& multiply,
                                   const std::function<void()>& before) {
    emit_loop(b, t, a, bl, true, multiply, before);
}

}  // namespace kiln::detail
