// SPDX-License-Identifier: Apache-2.0
// The CPU strategy: each work-item keeps rows x (vectors * vector_width) of C in vector
// registers and reads op(A) and op(B) straight from memory, which the caches stage; a group's
// work-items, consecutive blocks of rows, share one column panel of op(B) and take k in blocks
// so that the panel's block stays in the first-level cache (gemm_tuning.hpp, gemm_cpu_tiles).
#include <algorithm>
#include <string>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"

namespace kiln::detail {
namespace {

constexpr const char* cpu_kernel = "kiln_gemm_cpu_tiles";

std::string generate(const gemm_cpu_kernel& shape) {
    const kernel_description kernel = gemm_kernel_description(cpu_kernel, shape.types);
    const gemm_cpu_tiles& t = shape.tiles;
    const std::string acc = opencl_name(shape.types.accumulator);
    const std::string width = std::to_string(t.vector_width);
    const std::string vector = acc + width;
    const std::string rows = std::to_string(t.rows), columns = std::to_string(t.tile_columns());
    // op(A)(i, p) and op(B)(p, j) from memory, converted to the accumulator's type.
    const auto a_at = [&](const std::string& row, const std::string& p) {
        const std::string i = "(" + row + ")";
        return "(" + acc + ")a[" +
               (shape.a_transposed ? p + " * a_leading + " + i : i + " * a_leading + " + p) + "]";
    };
    const auto b_at = [&](const std::string& p, const std::string& column) {
        const std::string j = "(" + column + ")";
        return "(" + acc + ")b[" +
               (shape.b_transposed ? j + " * b_leading + " + p : p + " * b_leading + " + j) + "]";
    };

    source_builder b;
    b.begin_kernel(cpu_kernel, t.work_group_size);
    kernel.declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    b.line("const ulong row_tiles = (m + " + rows + " - 1) / " + rows + ";");
    b.line("const ulong tiles = row_tiles * ((n + " + columns + " - 1) / " + columns + ");");
    b.line("const ulong item = " + source_builder::global_id() + ";");
    // Work-items past the last tile still meet the group's barriers.
    b.line("const bool active = item < tiles * batch;");
    b.line("const ulong tile = active ? item % tiles : 0;");
    emit_batch_entry(b, "(active ? item / tiles : 0)");
    b.line("const ulong row0 = tile % row_tiles * " + rows + ";");
    b.line("const ulong column0 = tile / row_tiles * " + columns + ";");
    b.line("const bool full = active && row0 + " + rows + " <= m && column0 + " + columns +
           " <= n;");
    for (std::size_t i = 0; i < t.rows; ++i)
        for (std::size_t l = 0; l < t.vectors; ++l)
            b.line(vector + " acc" + std::to_string(i) + "_" + std::to_string(l) + " = (" + vector +
                   ")0;");
    // One step of k for the tile: op(B)'s vectors of the row, each row of op(A) times them. Tiles
    // across the matrix's edges (clamped) read A's last row for rows past it and B's last column
    // for columns past it, whose products are not stored: no branch in the loop.
    const auto emit_step = [&](bool clamped) {
        for (std::size_t l = 0; l < t.vectors; ++l) {
            const std::string column = "column0 + " + std::to_string(l * t.vector_width);
            const std::string name = "b" + std::to_string(l);
            if (shape.b_transposed || clamped) {
                std::string lanes;
                for (std::size_t v = 0; v < t.vector_width; ++v) {
                    const std::string at = column + " + " + std::to_string(v);
                    lanes += (v ? ", " : "") + b_at("p", clamped ? "min(" + at + ", n - 1)" : at);
                }
                b.line("const " + vector + " " + name + " = (" + vector + ")(" + lanes + ");");
            } else {
                b.line("const " + vector + " " + name + " = convert_" + vector + "(vload" + width +
                       "(0, b + p * b_leading + " + column + "));");
            }
        }
        for (std::size_t i = 0; i < t.rows; ++i) {
            const std::string row = "row0 + " + std::to_string(i);
            b.line("const " + vector + " a" + std::to_string(i) + " = (" + vector + ")(" +
                   a_at(clamped ? "min(" + row + ", m - 1)" : row, "p") + ");");
            for (std::size_t l = 0; l < t.vectors; ++l) {
                const std::string slot = "acc" + std::to_string(i) + "_" + std::to_string(l);
                b.line(slot + " = mad(a" + std::to_string(i) + ", b" + std::to_string(l) + ", " +
                       slot + ");");
            }
        }
    };
    const std::string block = t.depth_block ? std::to_string(t.depth_block) : "k";
    b.open("for (ulong k0 = 0; k0 < k; k0 += " + block + ")");
    b.line("const ulong k1 = min(k, k0 + " + block + ");");
    // Edge tiles run after this loop, not between its barriers: PoCL 5 aborted forming work-group
    // regions (assertion region_entry_barrier != NULL) on an edge-tile loop here.
    b.open("if (full)");
    b.open("for (ulong p = k0; p < k1; ++p)");
    emit_step(false);
    b.close();
    b.close();
    if (t.depth_block) b.line("barrier(CLK_LOCAL_MEM_FENCE);");
    b.close();
    // The elements of the tile inside the matrix, lane by lane, through gemm_store.
    const auto emit_lane_stores = [&] {
        b.line(acc + " lanes[" + width + "];");
        for (std::size_t i = 0; i < t.rows; ++i) {
            const std::string row = "(row0 + " + std::to_string(i) + ")";
            b.open("if (" + row + " < m)");
            for (std::size_t l = 0; l < t.vectors; ++l) {
                const std::string first = std::to_string(l * t.vector_width);
                b.line("vstore" + width + "(acc" + std::to_string(i) + "_" + std::to_string(l) +
                       ", 0, lanes);");
                b.open("for (uint v = 0; v < " + width + "u && column0 + " + first +
                       " + v < n; ++v)");
                b.line(gemm_store(shape.types, row, "(column0 + " + first + " + v)", "lanes[v]"));
                b.close();
            }
            b.close();
        }
    };
    b.open("if (full)");
    // A user's epilogue is a function of one element: full tiles store component by component
    // (through a private array, as edge tiles do, PoCL 5 stored garbage on AVX-512).
    if (shape.types.epilogue) {
        for (std::size_t i = 0; i < t.rows; ++i)
            for (std::size_t l = 0; l < t.vectors; ++l)
                for (std::size_t v = 0; v < t.vector_width; ++v) {
                    const std::string slot = "acc" + std::to_string(i) + "_" + std::to_string(l);
                    const std::string lane =
                        t.vector_width == 1 ? slot : slot + ".s" + "0123456789abcdef"[v];
                    b.line(gemm_store(shape.types, "(row0 + " + std::to_string(i) + ")",
                                      "(column0 + " + std::to_string(l * t.vector_width + v) + ")",
                                      lane));
                }
    } else {
        for (std::size_t i = 0; i < t.rows; ++i)
            for (std::size_t l = 0; l < t.vectors; ++l) {
                const std::string at = "c + (row0 + " + std::to_string(i) +
                                       ") * c_leading + column0 + " +
                                       std::to_string(l * t.vector_width);
                const std::string slot = "acc" + std::to_string(i) + "_" + std::to_string(l);
                b.line("vstore" + width + "(beta == 0 ? alpha * " + slot + " : alpha * " + slot +
                       " + beta * vload" + width + "(0, " + at + "), 0, " + at + ");");
            }
    }
    // Tiles across the edges: all of k, then the elements inside the matrix, lane by lane.
    b.close_with("else if (active)");
    b.open("");
    b.open("for (ulong p = 0; p < k; ++p)");
    emit_step(true);
    b.close();
    emit_lane_stores();
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

std::string gemm_cpu_kernel::key() const {
    return std::string(cpu_kernel) + ":" + tiles.key() + ":" + types.key() + ":" +
           (a_transposed ? "T" : "N") + (b_transposed ? "T" : "N");
}

std::string gemm_cpu_kernel::source() const {
    return generate(*this);
}

event run_cpu_tiles_gemm(const queue& q, const gemm_problem& problem, const gemm_cpu_tiles& tiles) {
    const gemm_cpu_kernel shape{tiles, gemm_types_of(problem), problem.a.transposed,
                                problem.b.transposed};
    const auto describe = [&] {
        return std::vector<kernel_description>{gemm_kernel_description(cpu_kernel, shape.types)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), shape.key(), describe, [&] { return shape.source(); });
    const std::size_t group = tiles.work_group_size;
    const std::size_t tiles_per_entry =
        (problem.m() + tiles.rows - 1) / tiles.rows *
        ((problem.n() + tiles.tile_columns() - 1) / tiles.tile_columns());
    const std::size_t items = (tiles_per_entry * problem.batch() + group - 1) / group * group;
    return program.bind(bind_gemm(program, cpu_kernel, problem, shape.types))
        .launch(q, items, group);
}

}  // namespace kiln::detail
