// SPDX-License-Identifier: Apache-2.0
// The SIMT strategy: a work-group's block of C accumulated in its work-items' registers from
// tiles of op(A) and op(B) staged through local memory, the next tile's loads in flight (in
// registers) while the current one is multiplied, two local buffers so that one barrier per
// tile suffices. CUTLASS's SIMT GEMM and the "how to optimise a CUDA matmul" worklogs build it
// so; docs/dev/gemm.md, "Strategies". Tiles with copy_stages take gemm_simt_copies.cpp's
// kernel where the device has cp.async.
#include <algorithm>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_plan.hpp"
#include "gemm_simt_thread_tile.hpp"
#include "gemm_strategies.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

constexpr const char* simt_kernel = gemm_simt_kernel_name;
/// Local rows are padded so that work-items storing along the other dimension spread over banks.
constexpr std::size_t simt_local_padding = 4;

/// How one operand's tile is loaded: its `outer` x `inner` elements as they lie in memory (inner
/// contiguous), which of the two runs along k, and the width of its loads.
struct tile_loads : operand_tile {
    std::size_t per_item = 0;   // elements each work-item loads
    std::size_t width = 1;      // elements per load in full tiles
    std::size_t local_row = 0;  // the padded length of the local tile's rows (along m or n)
};

/// The widest load (at most the tiles' vector width, at most 4: float4 and double4 are what
/// every backend has) that divides the tile into whole loads per work-item.
std::size_t load_width(const gemm_simt_tiles& t, std::size_t outer, std::size_t inner) {
    std::size_t width = std::min<std::size_t>(t.vector_width, 4);
    while (width > 1 && (inner % width != 0 || (outer * inner / width) % t.work_group_size() != 0))
        width /= 2;
    return width;
}

tile_loads loads_of(const gemm_simt_kernel& shape, bool is_a) {
    const gemm_simt_tiles& t = shape.tiles;
    const bool transposed = is_a ? shape.a_transposed : shape.b_transposed;
    const std::size_t along = is_a ? t.block_rows : t.block_columns;  // along m or n
    tile_loads l{operand_tile_of(is_a, transposed, along, t.block_depth)};
    l.per_item = l.outer * l.inner / t.work_group_size();
    l.width = (is_a ? shape.a_vectors : shape.b_vectors) ? load_width(t, l.outer, l.inner) : 1;
    l.local_row = along + simt_local_padding;
    return l;
}

/// Element `v` of load `i`: its position in the tile (outer, inner), as kernel expressions.
struct load_position {
    std::string outer, inner;
};
load_position position(const tile_loads& l, std::size_t i, std::size_t v, std::size_t group) {
    const std::string e = "(tid + " + std::to_string(i * group) + "u)";
    const std::string per_row = std::to_string(l.inner / l.width);
    return {e + " / " + per_row, "(" + e + " % " + per_row + ") * " + std::to_string(l.width) +
                                     " + " + std::to_string(v)};
}

/// Loads of the tile whose k starts at k0 into the registers `<name>_stage`: by vectors without
/// bounds checks where the tile lies inside the matrix, else element by element, 0 outside.
void emit_tile_load(source_builder& b, const tile_loads& l, const gemm_types& types,
                    std::size_t group) {
    const std::string acc = opencl_name(types.accumulator);
    const gemm_element stored = l.name == "a" ? types.a : types.b;
    const std::string element = opencl_name(stored);
    const std::string& x = l.name;
    const auto address = [&](const load_position& p) {
        return "(" + l.outer_start + " + " + p.outer + ") * " + x + "_leading + " + l.inner_start +
               " + " + p.inner;
    };
    b.open("if (" + l.outer_start + " + " + std::to_string(l.outer) + " <= " + l.outer_limit +
           " && " + l.inner_start + " + " + std::to_string(l.inner) + " <= " + l.inner_limit + ")");
    const char* lanes[] = {".x", ".y", ".z", ".w"};
    for (std::size_t i = 0; i < l.per_item / l.width; ++i) {
        if (l.width == 1) {
            b.line(x + "_stage[" + std::to_string(i) + "] = " +
                   gemm_convert(stored, types.accumulator,
                                x + "[" + address(position(l, i, 0, group)) + "]") +
                   ";");
            continue;
        }
        const std::string vector = element + std::to_string(l.width);
        b.open("");
        b.line("const " + vector + " loaded = *(const global " + vector + "*)(" + x + " + " +
               address(position(l, i, 0, group)) + ");");
        for (std::size_t v = 0; v < l.width; ++v)
            b.line(x + "_stage[" + std::to_string(i * l.width + v) + "] = (" + acc + ")loaded" +
                   lanes[v] + ";");
        b.close();
    }
    b.close_with("else");
    b.open("");
    for (std::size_t i = 0; i < l.per_item / l.width; ++i)
        for (std::size_t v = 0; v < l.width; ++v) {
            const load_position p = position(l, i, v, group);
            b.line(x + "_stage[" + std::to_string(i * l.width + v) + "] = " + l.outer_start +
                   " + " + p.outer + " < " + l.outer_limit + " && " + l.inner_start + " + " +
                   p.inner + " < " + l.inner_limit + " ? " +
                   gemm_convert(stored, types.accumulator, x + "[" + address(p) + "]") + " : (" +
                   acc + ")0;");
        }
    b.close();
}

/// The staged registers into local buffer `buffer`, laid out [k][m] for A and [k][n] for B.
void emit_tile_store(source_builder& b, const tile_loads& l, const std::string& buffer,
                     std::size_t depth, std::size_t group) {
    const std::string base = "(" + buffer + ") * " + std::to_string(depth * l.local_row) + "u";
    for (std::size_t i = 0; i < l.per_item / l.width; ++i)
        for (std::size_t v = 0; v < l.width; ++v) {
            const load_position p = position(l, i, v, group);
            const std::string k = l.k_is_inner ? p.inner : p.outer;
            const std::string along = l.k_is_inner ? p.outer : p.inner;
            b.line(l.name + "_tile[" + base + " + (" + k + ") * " + std::to_string(l.local_row) +
                   "u + " + along + "] = " + l.name + "_stage[" + std::to_string(i * l.width + v) +
                   "];");
        }
}

std::string generate(const gemm_simt_kernel& shape) {
    const kernel_description kernel = gemm_kernel_description(simt_kernel, shape.types);
    const gemm_simt_tiles& t = shape.tiles;
    const std::size_t group = t.work_group_size();
    const tile_loads a = loads_of(shape, true), b_loads = loads_of(shape, false);
    const std::string acc = opencl_name(shape.types.accumulator);

    source_builder b;
    if (shape.rounded_products) b.turn_off_contraction();
    b.begin_kernel(simt_kernel, group);
    kernel.declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    const std::size_t a_elements = 2 * t.block_depth * a.local_row,
                      b_elements = 2 * t.block_depth * b_loads.local_row;
    if (t.vector_reads) {
        // Declared as 4-vectors, so that runs of 4 are read as aligned vectors.
        b.local_array(acc + "4", "a_tile4", std::to_string(a_elements / 4));
        b.local_array(acc + "4", "b_tile4", std::to_string(b_elements / 4));
        b.line("local " + acc + "* a_tile = (local " + acc + "*)a_tile4;");
        b.line("local " + acc + "* b_tile = (local " + acc + "*)b_tile4;");
    } else {
        b.local_array(acc, "a_tile", std::to_string(a_elements));
        b.local_array(acc, "b_tile", std::to_string(b_elements));
    }
    emit_thread_tile_start(b, t, shape.types);
    b.line(acc + " a_stage[" + std::to_string(a.per_item) + "], b_stage[" +
           std::to_string(b_loads.per_item) + "];");
    b.line("const ulong depth_tiles = (k + " + std::to_string(t.block_depth - 1) + ") / " +
           std::to_string(t.block_depth) + ";");
    b.line("ulong k0 = 0;");
    b.open("if (depth_tiles > 0)");
    emit_tile_load(b, a, shape.types, group);
    emit_tile_load(b, b_loads, shape.types, group);
    emit_tile_store(b, a, "0", t.block_depth, group);
    emit_tile_store(b, b_loads, "0", t.block_depth, group);
    b.close();
    b.local_barrier();
    b.open("for (ulong tile = 0; tile < depth_tiles; ++tile)");
    b.line("const uint buffer = (uint)(tile & 1);");
    b.line("const bool more = tile + 1 < depth_tiles;");
    // The next tile's loads go out before this tile's products, which hide their latency.
    b.open("if (more)");
    b.line("k0 += " + std::to_string(t.block_depth) + ";");
    emit_tile_load(b, a, shape.types, group);
    emit_tile_load(b, b_loads, shape.types, group);
    b.close();
    emit_thread_tile_products(
        b, t, shape.types, "a_tile + buffer * " + std::to_string(t.block_depth * a.local_row) + "u",
        a.local_row, "b_tile + buffer * " + std::to_string(t.block_depth * b_loads.local_row) + "u",
        b_loads.local_row, shape.rounded_products);
    // The other buffer was last read before the previous barrier: it may be written now.
    b.open("if (more)");
    emit_tile_store(b, a, "buffer ^ 1u", t.block_depth, group);
    emit_tile_store(b, b_loads, "buffer ^ 1u", t.block_depth, group);
    b.close();
    b.local_barrier();
    b.close();
    emit_thread_tile_store(b, t, shape.types);
    b.end_kernel();
    return b.str();
}

/// Whether full tiles may read `operand` by vectors of `width`: every row, the offset and the
/// batch stride start at a multiple of it (the buffer itself is aligned further).
bool vectors_fit(const gemm_operand& operand, std::size_t width) {
    // 16-bit elements load one by one: their conversions are per element.
    return width > 1 && !is_16_bit(operand.element) && operand.leading_dimension % width == 0 &&
           operand.offset % width == 0 && (operand.batch == 1 || operand.batch_stride % width == 0);
}

}  // namespace

void emit_thread_tile_start(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types) {
    const std::string acc = opencl_name(types.accumulator);
    const std::size_t column_step = t.block_columns / t.thread_columns;
    b.line("const uint tid = " + source_builder::local_id() + ";");
    emit_block_origin(b, t.block_rows, t.block_columns, t.band_rows);
    b.line("const uint tx = tid % " + std::to_string(column_step) + "u, ty = tid / " +
           std::to_string(column_step) + "u;");
    b.line(acc + " accumulators[" + std::to_string(t.thread_rows * t.thread_columns) + "];");
    for (std::size_t i = 0; i < t.thread_rows * t.thread_columns; ++i)
        b.line("accumulators[" + std::to_string(i) + "] = 0;");
}

std::string thread_tile_first(const gemm_simt_tiles& t, bool is_a) {
    return std::string(is_a ? "ty" : "tx") + (t.vector_reads ? " * 4u" : "");
}

void emit_thread_tile_reads(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                            const std::string& p, const std::string& a_read, std::size_t a_row,
                            const std::string& b_read, std::size_t b_row, const std::string& into) {
    const std::string acc = opencl_name(types.accumulator);
    const auto emit_reads = [&](const std::string& x, const std::string& read, std::size_t count,
                                std::size_t step, std::size_t local_row) {
        const std::string row = p + " * " + std::to_string(local_row) + "u + ";
        const std::string to = x + "_" + into;
        if (!t.vector_reads) {
            for (std::size_t i = 0; i < count; ++i)
                b.line(to + "[" + std::to_string(i) + "] = (" + read + ")[" + row +
                       std::to_string(i * step) + "u];");
            return;
        }
        // Runs of 4 as aligned 4-vectors.
        const char* lanes[] = {".x", ".y", ".z", ".w"};
        for (std::size_t run = 0; run < count / 4; ++run) {
            b.open("");
            b.line("const " + acc + "4 run = *(const local " + acc + "4*)(" + read + " + " + row +
                   std::to_string(run * 4 * step) + "u);");
            for (std::size_t v = 0; v < 4; ++v)
                b.line(to + "[" + std::to_string(run * 4 + v) + "] = run" + lanes[v] + ";");
            b.close();
        }
    };
    emit_reads("a", a_read, t.thread_rows, t.block_rows / t.thread_rows, a_row);
    emit_reads("b", b_read, t.thread_columns, t.block_columns / t.thread_columns, b_row);
}

void emit_thread_tile_mads(source_builder& b, const gemm_simt_tiles& t, const std::string& from,
                           bool rounded_products) {
    for (std::size_t i = 0; i < t.thread_rows; ++i)
        for (std::size_t j = 0; j < t.thread_columns; ++j) {
            const std::string slot =
                "accumulators[" + std::to_string(i * t.thread_columns + j) + "]";
            const std::string a = "a_" + from + "[" + std::to_string(i) + "]",
                              bj = "b_" + from + "[" + std::to_string(j) + "]";
            b.line(slot + " = " +
                   (rounded_products ? slot + " + " + a + " * " + bj
                                     : "mad(" + a + ", " + bj + ", " + slot + ")") +
                   ";");
        }
}

void emit_thread_tile_values(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                             const std::string& name) {
    const std::string acc = opencl_name(types.accumulator);
    b.line(acc + " a_" + name + "[" + std::to_string(t.thread_rows) + "], b_" + name + "[" +
           std::to_string(t.thread_columns) + "];");
}

void emit_thread_tile_products(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types,
                               const std::string& a_tile, std::size_t a_row,
                               const std::string& b_tile, std::size_t b_row,
                               bool rounded_products) {
    const std::string acc = opencl_name(types.accumulator);
    b.open("");
    b.line("const local " + acc + "* a_read = " + a_tile + " + " + thread_tile_first(t, true) +
           ";");
    b.line("const local " + acc + "* b_read = " + b_tile + " + " + thread_tile_first(t, false) +
           ";");
    b.open("for (uint p = 0; p < " + std::to_string(t.block_depth) + "u; ++p)");
    emit_thread_tile_values(b, t, types, "values");
    emit_thread_tile_reads(b, t, types, "p", "a_read", a_row, "b_read", b_row, "values");
    emit_thread_tile_mads(b, t, "values", rounded_products);
    b.close();
    b.close();
}

void emit_thread_tile_store(source_builder& b, const gemm_simt_tiles& t, const gemm_types& types) {
    const std::size_t row_step = t.block_rows / t.thread_rows;
    const std::size_t column_step = t.block_columns / t.thread_columns;
    // Where accumulator (i, j) lies: row ty + i step, or in runs of 4 (ty * 4 + i % 4 +
    // (i / 4) 4 step); the same for columns.
    const auto offset = [&](const std::string& id, std::size_t i, std::size_t step) {
        if (!t.vector_reads) return id + " + " + std::to_string(i * step) + "u";
        return id + " * 4u + " + std::to_string(i / 4 * 4 * step + i % 4) + "u";
    };
    for (std::size_t i = 0; i < t.thread_rows; ++i)
        for (std::size_t j = 0; j < t.thread_columns; ++j) {
            const std::string row = "row0 + " + offset("ty", i, row_step);
            const std::string column = "column0 + " + offset("tx", j, column_step);
            b.open("if (" + row + " < m && " + column + " < n)");
            b.line(gemm_store(types, "(" + row + ")", "(" + column + ")",
                              "accumulators[" + std::to_string(i * t.thread_columns + j) + "]"));
            b.close();
        }
}

std::string gemm_simt_kernel::key() const {
    return std::string(simt_kernel) + ":" + tiles.key() + ":" + types.key() + ":" +
           (a_transposed ? "T" : "N") + (b_transposed ? "T" : "N") + ":" + (a_vectors ? "v" : "s") +
           (b_vectors ? "v" : "s") + (tiles.copy_stages > 0 ? ":" + target.key() : "") +
           (rounded_products ? ":rounded" : "");
}

std::string gemm_simt_kernel::source() const {
    return tiles.copy_stages > 0 ? simt_copies_source(*this) : generate(*this);
}

event run_simt_gemm(const queue& q, const gemm_problem& problem, const gemm_simt_tiles& tiles,
                    bool rounded_products) {
    gemm_simt_kernel shape{tiles, gemm_types_of(problem), problem.a.transposed,
                           problem.b.transposed};
    shape.rounded_products = rounded_products;
    // cp.async copies float tiles on NVIDIA GPUs that have it; elsewhere, and for other types,
    // the same blocks stage their loads in registers.
    const gemm_types& types = shape.types;
    const bool floats = types.a == gemm_element::f32 && types.b == gemm_element::f32 &&
                        types.accumulator == gemm_element::f32;
    if (!floats || !has_nvidia_tensor_cores(q.device().properties())) shape.tiles.copy_stages = 0;
    if (shape.tiles.copy_stages > 0) {
        shape.target = target_features_for(q.device());
        shape.a_vectors = copies_by_16_bytes(problem.a);
        shape.b_vectors = copies_by_16_bytes(problem.b);
    } else {
        // The widths full tiles would load by, then whether the operands' layouts allow them.
        shape.a_vectors = shape.b_vectors = true;
        shape.a_vectors = vectors_fit(problem.a, loads_of(shape, true).width);
        shape.b_vectors = vectors_fit(problem.b, loads_of(shape, false).width);
    }
    const std::string key = shape.key();
    const auto describe = [&] {
        return std::vector<kernel_description>{gemm_kernel_description(simt_kernel, shape.types)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), key, describe, [&] { return shape.source(); });
    const std::size_t group = tiles.work_group_size();
    const std::size_t groups = gemm_block_count(problem, tiles.block_rows, tiles.block_columns);
    return program.bind(bind_gemm(program, simt_kernel, problem, shape.types))
        .launch(q, groups * group, group);
}

}  // namespace kiln::detail
