// SPDX-License-Identifier: Apache-2.0
// The warpgroup strategy, as Hopper's GEMMs are built: a work-group of block_rows / 64
// warpgroups (four warps each) stages 64-deep tiles of op(A) and op(B) through `stages` buffers of
// dynamic local memory, filled by cp.async 16 bytes at a time (zeros past the matrix's edges) in
// the 128-byte swizzled layout that wgmma's descriptors name; each warpgroup multiplies its 64 rows
// of the block by the whole tile of B with wgmma.mma_async m64nNk16, which reads both operands
// from local memory and runs while the warpgroup returns to the copies. sm_90a only: CUDA on
// compute capability 9.0 (docs/dev/gemm.md, "Strategies").
#include <kiln/error.hpp>
#include <string>
#include <utility>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"
#include "gemm_tensor_pipeline.hpp"
#include "gemm_warpgroup_layout.hpp"

namespace kiln::detail {
namespace {

constexpr const char* warpgroup_kernel = "kiln_gemm_warpgroup";
/// Elements of 16 bits in one cp.async.
constexpr std::size_t chunk = 8;

void emit_tile_copy(source_builder& b, const swizzled_tile& s, const std::string& stage,
                    std::size_t group) {
    const operand_tile& l = s.tile;
    const std::size_t per_row = l.inner / chunk;
    const std::size_t chunks = l.outer * per_row;
    for (std::size_t first = 0; first < chunks; first += group) {
        b.open(first + group > chunks
                   ? "if (tid + " + uint_literal(first) + " < " + uint_literal(chunks) + ")"
                   : "");
        b.line("const uint c = tid + " + uint_literal(first) + ", r = c / " +
               uint_literal(per_row) + ", q = c % " + uint_literal(per_row) + ";");
        b.line("const ulong outer = " + l.outer_start + " + r;");
        b.line("const ulong inner = " + l.inner_start + " + q * " + uint_literal(chunk) + ";");
        b.line("const uint bytes = outer < " + l.outer_limit + " && inner < " + l.inner_limit +
               " ? 2u * (uint)min(" + l.inner_limit + " - inner, (ulong)" + uint_literal(chunk) +
               ") : 0u;");
        const std::string to = "stage_memory + " + stage + " + " + uint_literal(s.offset) +
                               " + q / 8u * " + uint_literal(s.block_bytes()) + " + r * " +
                               uint_literal(warpgroup_row_bytes) + " + ((q % 8u) ^ (r % 8u)) * 16u";
        b.line("kiln_copy_async_16((local ushort*)(" + to + "), bytes ? " + l.name + " + outer * " +
               l.name + "_leading + inner : " + l.name + ", bytes);");
        b.close();
    }
}

std::string generate(const gemm_warpgroup_kernel& shape) {
    const gemm_warpgroup_tiles& t = shape.tiles;
    const std::size_t depth = gemm_warpgroup_tiles::block_depth, group = t.work_group_size();
    swizzled_tile a{operand_tile_of(true, shape.a_transposed, t.block_rows, depth)};
    swizzled_tile bl{operand_tile_of(false, shape.b_transposed, t.block_columns, depth)};
    bl.offset = a.bytes();
    const std::size_t stage_bytes = a.bytes() + bl.bytes();
    const std::size_t registers = t.block_columns / 2;
    const std::string mma = warpgroup_mma_function(shape.types, t.block_columns);
    const std::string transposes = warpgroup_transposes(shape.types, a, bl);

    source_builder b;
    define_warpgroup_descriptor(b);
    b.begin_kernel(warpgroup_kernel, group);
    gemm_kernel_description(warpgroup_kernel, shape.types).local("uint4", "staging").declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    b.line("const uint tid = " + source_builder::local_id() + ";");
    b.line("const uint warpgroup = tid / 128u, warp = tid % 128u / 32u, lane = tid % 32u;");
    emit_block_origin(b, t.block_rows, t.block_columns, 0);
    // The stages start on the swizzle pattern's 1024-byte period, as the descriptors assume.
    b.line("const uint staging_address = kiln_shared_address(staging);");
    b.line("const uint aligned = (staging_address + 1023u) & ~1023u;");
    b.line("local uchar* stage_memory = (local uchar*)staging + (aligned - staging_address);");
    b.line("const ulong depth_tiles = (k + " + uint_literal(depth - 1) + ") / " +
           uint_literal(depth) + ";");
    b.line("float d[" + std::to_string(registers) + "];");
    // The prologue: stages - 2 tiles in flight, a group of copies each (empty past k, so that
    // every path commits the same count of groups, which the waits take).
    const auto copies = [&](const std::string& tile, const std::string& slot) {
        b.line("const ulong k0 = " + tile + " * " + uint_literal(depth) + ";");
        b.line("const uint slot = " + slot + " * " + uint_literal(stage_bytes) + ";");
        emit_tile_copy(b, a, "slot", group);
        emit_tile_copy(b, bl, "slot", group);
    };
    for (std::size_t s = 0; s + 2 < t.stages; ++s) {
        b.open("if (" + uint_literal(s) + " < depth_tiles)");
        copies(uint_literal(s), uint_literal(s));
        b.close();
        b.line("kiln_copy_async_commit();");
    }
    b.open("for (ulong tile = 0; tile < depth_tiles; ++tile)");
    // This tile's copies are done once at most the later stages - 3 are in flight; the fence
    // hands them from cp.async's proxy to wgmma's; after the barrier every warpgroup has also
    // finished the wgmma of tile - 2 (its wait_1 below), whose stage the next copies reuse.
    b.line("kiln_copy_async_wait_" + std::to_string(t.stages - 3) + "();");
    b.line("kiln_fence_proxy_async();");
    b.local_barrier();
    b.open("");
    b.line("const ulong next = tile + " + uint_literal(t.stages - 2) + ";");
    b.open("if (next < depth_tiles)");
    copies("next", "(uint)(next % " + uint_literal(t.stages) + ")");
    b.close();
    b.line("kiln_copy_async_commit();");
    b.close();
    b.line("const uint stage = aligned + (uint)(tile % " + uint_literal(t.stages) + ") * " +
           uint_literal(stage_bytes) + ";");
    b.line("kiln_wgmma_fence();");
    for (std::size_t kk = 0; kk < depth / 16; ++kk)
        b.line(mma + "(d, " + warpgroup_descriptor(a, "warpgroup * 64u", kk) + ", " +
               warpgroup_descriptor(bl, "0u", kk) + ", " + (kk == 0 ? "(int)(tile != 0)" : "1") +
               transposes + ");");
    b.line("kiln_wgmma_commit();");
    // The tile's products run on while the next iteration's copies start.
    b.line("kiln_wgmma_wait_1();");
    b.close();
    b.line("kiln_wgmma_wait_0();");
    b.open("if (depth_tiles == 0)");
    b.line("for (uint i = 0; i < " + uint_literal(registers) + "; ++i) d[i] = 0.0f;");
    b.close();
    emit_warpgroup_stores(b, shape.types, "d", t.block_columns, "row0 + warpgroup * 64u");
    b.end_kernel();
    return b.str();
}

}  // namespace

std::string gemm_warpgroup_kernel::key() const {
    return std::string(warpgroup_kernel) + ":" + tiles.key() + ":" + types.key() + ":" +
           (a_transposed ? "T" : "N") + (b_transposed ? "T" : "N");
}

std::string gemm_warpgroup_kernel::source() const {
    // TF32 and FP8 inputs: tile maps only, both tiles with k inner.
    const bool k_major_inputs = (types.a == gemm_element::f32 && types.b == gemm_element::f32 &&
                                 types.c == gemm_element::f32) ||
                                (is_float8(types.a) && is_float8(types.b));
    const bool inputs = is_16_bit(types.a) ? types.b == types.a
                                           : k_major_inputs && tiles.tile_maps && !a_transposed &&
                                                 b_transposed && !is_float8(types.c);
    if (!tiles.fits_together() || !inputs)
        throw invalid_argument_error("kiln::gemm", "warpgroup tiles " + tiles.key() + " for " +
                                                       types.key() +
                                                       " are not a shape the kernel takes");
    return tiles.tile_maps ? tile_map_source() : generate(*this);
}

event run_warpgroup_gemm(const queue& q, const gemm_problem& problem,
                         const gemm_warpgroup_tiles& tiles) {
    const gemm_warpgroup_kernel shape{tiles, gemm_types_of(problem), problem.a.transposed,
                                      problem.b.transposed};
    const auto describe = [&] {
        return std::vector<kernel_description>{
            gemm_kernel_description(warpgroup_kernel, shape.types).local("uint4", "staging")};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), shape.key(), describe, [&] { return shape.source(); });
    const std::size_t group = tiles.work_group_size();
    const std::size_t groups = gemm_block_count(problem, tiles.block_rows, tiles.block_columns);
    kernel_binding args = bind_gemm(program, warpgroup_kernel, problem, shape.types);
    args.local("staging", tiles.local_bytes());
    return program.bind(std::move(args)).launch(q, groups * group, group);
}

}  // namespace kiln::detail
