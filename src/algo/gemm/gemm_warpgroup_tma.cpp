// SPDX-License-Identifier: Apache-2.0
// The warpgroup strategy fed by tile maps, as Hopper's fastest GEMMs are built: of a work-group's
// three warpgroups, two multiply (each block_rows / 2 rows of the block, by the whole tile of B,
// with wgmma m64nNk16, k8 for TF32, k32 for FP8) while one work-item of the third copies whole
// tiles of op(A) and op(B), one swizzled row of 128 bytes deep (64 elements of 16 bits, 32
// floats, 128 FP8), into `stages` buffers of dynamic local memory through the tensor memory
// accelerator (cp.async.bulk.tensor, zeros past the matrix's edges, the 128-byte swizzled layout
// that the descriptors name). Two barriers per stage pace them: "full" completes when a stage's
// bytes have landed, "free" when every multiplying warp has finished reading it. The copying
// warpgroup hands registers to the multiplying ones (setmaxnreg) for their accumulators. A
// persistent kernel runs one work-group per multiprocessor, each looping over C's blocks. sm_90a
// only: CUDA on compute capability 9.0 (docs/dev/gemm.md, "Strategies").
#include <algorithm>
#include <kiln/detail/tile_map.hpp>
#include <kiln/error.hpp>
#include <string>
#include <utility>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"
#include "gemm_warpgroup_layout.hpp"

namespace kiln::detail {
namespace {

constexpr const char* tma_kernel = "kiln_gemm_warpgroup_tma";
/// The warps that multiply, each arriving once on a stage's "free" barrier.
constexpr std::size_t multiplying_warps = 8;

struct tma_layout {
    swizzled_tile a, b;
    std::size_t stage_bytes() const { return a.bytes() + b.bytes(); }
};

tma_layout layout_of(const gemm_warpgroup_kernel& shape) {
    const gemm_warpgroup_tiles& t = shape.tiles;
    const std::size_t depth = warpgroup_row_elements(shape.types);
    tma_layout l{{operand_tile_of(true, shape.a_transposed, t.block_rows, depth), 0,
                  element_bytes(shape.types.a)},
                 {operand_tile_of(false, shape.b_transposed, t.block_columns, depth), 0,
                  element_bytes(shape.types.b)}};
    l.b.offset = l.a.bytes();
    return l;
}

/// Elements per box row: one swizzled row of 128 bytes.
std::size_t box_inner(const swizzled_tile& s) {
    return warpgroup_row_bytes / s.element_bytes;
}

/// The copies of one operand's tile of the stage at local address `stage`: a box of box_inner x
/// outer elements per block of box_inner of inner, at (inner start + box_inner j, outer start,
/// batch entry).
void emit_tile_copies(source_builder& b, const swizzled_tile& s) {
    const operand_tile& l = s.tile;
    const std::size_t box = box_inner(s);
    for (std::size_t j = 0; j < l.inner / box; ++j)
        b.line("kiln_tile_copy(stage + " + uint_literal(s.offset + j * s.block_bytes()) + ", " +
               l.name + "_map, (int)(" + l.inner_start + " + " + uint_literal(j * box) +
               "), (int)(" + l.outer_start + "), " + l.name + "_entry, full);");
}

kernel_description tma_description(const gemm_types& types) {
    return gemm_kernel_description(tma_kernel, types)
        .scalar<tile_map>("a_map")
        .scalar<tile_map>("b_map")
        .local("uint4", "staging");
}

/// The block a persistent kernel's loop is at (`work`, over every batch entry's blocks): its
/// batch entry, origin (row0, column0), and C moved to the entry.
void emit_persistent_block(source_builder& b, const gemm_warpgroup_tiles& t, bool moves_c) {
    b.line("const ulong entry = work / tiles, place = work % tiles;");
    emit_block_place(b, t.block_rows, t.block_columns, t.band_rows);
    if (moves_c) b.line("c = c_entries + entry * c_stride;");
}

std::string generate_tile_map_kernel(const gemm_warpgroup_kernel& shape) {
    const gemm_warpgroup_tiles& t = shape.tiles;
    const tma_layout l = layout_of(shape);
    const std::size_t stages = t.stages, depth = warpgroup_row_elements(shape.types);
    const std::size_t rows_per_warpgroup = t.block_rows / 2, registers = t.block_columns / 2;
    const std::size_t m64_tiles = rows_per_warpgroup / 64;
    const std::string mma = warpgroup_mma_function(shape.types, t.block_columns);
    const std::string transposes = warpgroup_transposes(shape.types, l.a, l.b);
    // The stages go round by `step`: the k tile of the block, or a persistent kernel's count of
    // every k tile it has taken, whose barriers' phases run on from block to block.
    const std::string step = t.persistent ? "step" : "tile";

    source_builder b;
    define_warpgroup_descriptor(b);
    b.begin_kernel(tma_kernel, t.work_group_size());
    tma_description(shape.types).declare(b);
    define_gemm_epilogue(b, shape.types);
    b.begin_body();
    b.line("const uint tid = " + source_builder::local_id() + ";");
    b.line("const uint warpgroup = tid / 128u, warp = tid % 128u / 32u, lane = tid % 32u;");
    if (t.persistent) {
        b.line("const ulong tiles_n = (n + " + uint_literal(t.block_columns - 1) + ") / " +
               uint_literal(t.block_columns) + ";");
        b.line("const ulong tiles_m = (m + " + uint_literal(t.block_rows - 1) + ") / " +
               uint_literal(t.block_rows) + ";");
        b.line("const ulong tiles = tiles_m * tiles_n;");
        b.line("const ulong group = " + source_builder::group_id() + ";");
        b.line("const ulong groups = " + source_builder::group_count() + ";");
    } else {
        emit_block_origin(b, t.block_rows, t.block_columns, t.band_rows);
        // The tile maps span every batch entry; an operand without a batch stride has one.
        for (const char* operand : {"a", "b"})
            b.line(std::string("const int ") + operand + "_entry = " + operand +
                   "_stride == 0 ? 0 : (int)(group / tiles);");
    }
    b.line("const uint staging_address = kiln_shared_address(staging);");
    b.line("const uint aligned = (staging_address + 1023u) & ~1023u;");
    b.line("const uint full_barriers = aligned + " + uint_literal(stages * l.stage_bytes()) + ";");
    b.line("const uint free_barriers = full_barriers + " + uint_literal(8 * stages) + ";");
    b.line("const ulong depth_tiles = (k + " + uint_literal(depth - 1) + ") / " +
           uint_literal(depth) + ";");
    b.open("if (tid == 0u)");
    b.open("for (uint s = 0; s < " + uint_literal(stages) + "; ++s)");
    b.line("kiln_barrier_init(full_barriers + 8u * s, 1u);");
    b.line("kiln_barrier_init(free_barriers + 8u * s, " + uint_literal(multiplying_warps) + ");");
    b.close();
    b.line("kiln_barrier_init_fence();");
    b.close();
    b.local_barrier();

    // A persistent kernel's loop over its blocks, the batch entries' one after another.
    const auto open_block_loop = [&](bool moves_c) {
        if (!t.persistent) return;
        b.line("ulong step = 0;");
        b.open("for (ulong work = group; work < tiles * batch; work += groups)");
        emit_persistent_block(b, t, moves_c);
    };
    const std::string next_step = t.persistent ? "; ++tile, ++step)" : "; ++tile)";

    b.open("if (warpgroup == 2u)");
    b.line("kiln_registers_release_to_40();");
    b.open("if (tid == 256u)");
    open_block_loop(false);
    if (t.persistent)
        for (const char* operand : {"a", "b"})
            b.line(std::string("const int ") + operand + "_entry = " + operand +
                   "_stride == 0 ? 0 : (int)entry;");
    b.open("for (ulong tile = 0; tile < depth_tiles" + next_step);
    b.line("const uint slot = (uint)(" + step + " % " + uint_literal(stages) + ");");
    // A stage is free again once the multiplying warps have read it (round step / stages - 1);
    // in the first round the parity of the phase before the barrier's first passes at once.
    b.line("kiln_barrier_wait(free_barriers + 8u * slot, (uint)(" + step + " / " +
           uint_literal(stages) + " % 2u) ^ 1u);");
    b.line("const uint full = full_barriers + 8u * slot;");
    b.line("const uint stage = aligned + slot * " + uint_literal(l.stage_bytes()) + ";");
    b.line("const ulong k0 = tile * " + uint_literal(depth) + ";");
    b.line("kiln_barrier_expect_bytes(full, " + uint_literal(l.stage_bytes()) + ");");
    emit_tile_copies(b, l.a);
    emit_tile_copies(b, l.b);
    b.close();
    if (t.persistent) b.close();
    b.close();
    b.close();

    b.open("else");
    b.line("kiln_registers_take_232();");
    b.line("float d[" + std::to_string(m64_tiles * registers) + "];");
    if (t.paired_stores) emit_warpgroup_pairs_condition(b);
    if (t.persistent)
        b.line("global " + opencl_name(shape.types.c) + "* const c_entries = c + c_offset;");
    open_block_loop(true);
    b.open("for (ulong tile = 0; tile < depth_tiles" + next_step);
    b.line("const uint slot = (uint)(" + step + " % " + uint_literal(stages) + ");");
    b.line("kiln_barrier_wait(full_barriers + 8u * slot, (uint)(" + step + " / " +
           uint_literal(stages) + " % 2u));");
    b.line("const uint stage = aligned + slot * " + uint_literal(l.stage_bytes()) + ";");
    b.line("kiln_wgmma_fence();");
    for (std::size_t kk = 0; kk < warpgroup_row_bytes / warpgroup_k_step_bytes; ++kk)
        for (std::size_t i = 0; i < m64_tiles; ++i)
            b.line(mma + "(d + " + std::to_string(i * registers) + ", " +
                   warpgroup_descriptor(l.a,
                                        "(warpgroup * " + uint_literal(rows_per_warpgroup) + " + " +
                                            uint_literal(i * 64) + ")",
                                        kk) +
                   ", " + warpgroup_descriptor(l.b, "0u", kk) + ", " +
                   (kk == 0 ? "(int)(tile != 0)" : "1") + transposes + ");");
    b.line("kiln_wgmma_commit();");
    // The tile's products run on while this warp waits for the one before, whose stage it then
    // frees.
    b.line("kiln_wgmma_wait_1();");
    b.open("if (tile > 0 && lane == 0u)");
    b.line("kiln_barrier_arrive(free_barriers + 8u * (uint)((" + step + " - 1) % " +
           uint_literal(stages) + "));");
    b.close();
    b.close();
    b.line("kiln_wgmma_wait_0();");
    // The block's last stage, which a kernel of one block never needs again.
    if (t.persistent) {
        b.open("if (depth_tiles > 0 && lane == 0u)");
        b.line("kiln_barrier_arrive(free_barriers + 8u * (uint)((step - 1) % " +
               uint_literal(stages) + "));");
        b.close();
    }
    b.open("if (depth_tiles == 0)");
    b.line("for (uint i = 0; i < " + uint_literal(m64_tiles * registers) + "; ++i) d[i] = 0.0f;");
    b.close();
    for (std::size_t i = 0; i < m64_tiles; ++i)
        emit_warpgroup_stores(
            b, shape.types, "(d + " + std::to_string(i * registers) + ")", t.block_columns,
            "row0 + warpgroup * " + uint_literal(rows_per_warpgroup) + " + " + uint_literal(i * 64),
            t.paired_stores);
    if (t.persistent) b.close();
    b.close();
    b.end_kernel();
    return b.str();
}

/// The tile map of operand `x` whose block tile is `s`: the stored matrix (columns inner, then
/// rows, then batch entries), boxes of one swizzled row x outer elements.
tile_map operand_map(const gemm_operand& x, const swizzled_tile& s) {
    const std::uint64_t element = element_bytes(x.element);
    const std::uint64_t row_bytes = x.leading_dimension * element;
    const bool batched = x.batch > 1 && x.batch_stride != 0;
    tile_map_request r;
    r.element_bytes = element;
    r.offset_bytes = x.offset * element;
    // A product with k = 0 copies nothing, but its maps must still be valid.
    r.extents = {std::max<std::uint64_t>(x.columns, 1), std::max<std::uint64_t>(x.rows, 1),
                 batched ? x.batch : 1};
    r.strides_bytes = {
        std::max<std::uint64_t>(row_bytes, 16),
        batched ? x.batch_stride * element : std::max<std::uint64_t>(row_bytes * r.extents[1], 16)};
    r.box = {static_cast<std::uint32_t>(box_inner(s)), static_cast<std::uint32_t>(s.tile.outer), 1};
    r.swizzle_bytes = warpgroup_row_bytes;
    return encode_tile_map(*x.storage, r);
}

}  // namespace

std::string gemm_warpgroup_kernel::tile_map_source() const {
    return generate_tile_map_kernel(*this);
}

event run_warpgroup_tma_gemm(const queue& q, const gemm_problem& problem,
                             const gemm_warpgroup_tiles& tiles) {
    const gemm_warpgroup_kernel shape{tiles, gemm_types_of(problem), problem.a.transposed,
                                      problem.b.transposed};
    const gemm_types& types = shape.types;
    const algorithm_program& program = algorithm_program_for(
        q.device(), shape.key(), [&] { return std::vector{tma_description(types)}; },
        [&] { return shape.source(); });
    const tma_layout l = layout_of(shape);
    const std::size_t group = tiles.work_group_size();
    std::size_t groups = gemm_block_count(problem, tiles.block_rows, tiles.block_columns);
    // One persistent work-group per multiprocessor: the registers the multiplying warpgroups
    // take (232 each, 40 for the copying one) leave room for no second.
    if (tiles.persistent)
        groups = std::min<std::size_t>(groups, std::max(1u, q.device().properties().compute_units));
    kernel_binding args = bind_gemm(program, tma_kernel, problem, types);
    args.scalar("a_map", operand_map(problem.a, l.a));
    args.scalar("b_map", operand_map(problem.b, l.b));
    args.local("staging", tiles.local_bytes());
    return program.bind(std::move(args)).launch(q, groups * group, group);
}

}  // namespace kiln::detail
