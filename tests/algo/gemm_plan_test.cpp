// SPDX-License-Identifier: Apache-2.0
// The GEMM plan on devices written by hand: which strategy and tiles each device and product
// takes, the tuning rows' keys and provenance (src/algo/gemm/gemm_plan.hpp).
#include "algo/gemm/gemm_plan.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <kiln/kiln.hpp>
#include <string>

#include "algo/gemm/gemm_strategies.hpp"
#include "algo/written_devices.hpp"

namespace {

using kiln::detail::gemm_strategy;

TEST(gemm_plan, cpu_devices_take_openblas_where_it_loads_else_the_cpu_tiles) {
    const auto cpu = kiln::test::written_by_hand(kiln::device_type::cpu, "pocl");
    EXPECT_EQ(kiln::detail::plan_gemm(cpu, {.host_blas = true}).strategy, gemm_strategy::host_blas);
    EXPECT_EQ(kiln::detail::plan_gemm(cpu, {.host_blas = false}).strategy,
              gemm_strategy::cpu_tiles);
    // Doubles keep the vector registers' bytes.
    const auto single = kiln::detail::plan_gemm(cpu, {}).cpu;
    const auto twice =
        kiln::detail::plan_gemm(cpu, {.element = kiln::detail::gemm_element::f64}).cpu;
    EXPECT_EQ(twice.vector_width * 2, single.vector_width);
    EXPECT_THROW(kiln::detail::plan_gemm(
                     kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation"),
                     {.forced = gemm_strategy::host_blas}),
                 kiln::invalid_argument_error);
}

TEST(gemm_plan, doubles_take_the_tensor_cores_on_nvidia_from_compute_capability_8) {
    using kiln::detail::gemm_element;
    auto hopper = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    hopper.compute_capability_major = 9;
    auto turing = hopper;
    turing.compute_capability_major = 7;
    const kiln::detail::gemm_plan_input aligned{
        .element = gemm_element::f64, .inputs = gemm_element::f64, .tensor_core_layout = true};
    const auto plan = kiln::detail::plan_gemm(hopper, aligned);
    EXPECT_EQ(plan.strategy, gemm_strategy::tensor_cores);
    EXPECT_EQ(plan.tensor.key(), plan.tuning.tensor_double.key());
    // Rows no 16-byte copy takes, older devices, a forced SIMT strategy and floats: SIMT.
    auto unaligned = aligned;
    unaligned.tensor_core_layout = false;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, unaligned).strategy, gemm_strategy::simt);
    EXPECT_EQ(kiln::detail::plan_gemm(turing, aligned).strategy, gemm_strategy::simt);
    auto simt = aligned;
    simt.forced = gemm_strategy::simt;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, simt).strategy, gemm_strategy::simt);
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, {.tensor_core_layout = true}).strategy,
              gemm_strategy::simt);
}

TEST(gemm_plan, doubles_take_deeper_tiles_where_cuda_stages_them_in_dynamic_local_memory) {
    using kiln::detail::gemm_element;
    auto opencl = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    opencl.compute_capability_major = 9;
    opencl.shared_memory_per_block_bytes = 227 * 1024;
    auto cuda = opencl;
    cuda.backend = kiln::backend_kind::cuda;
    const kiln::detail::gemm_plan_input doubles{
        .element = gemm_element::f64, .inputs = gemm_element::f64, .tensor_core_layout = true};
    const auto deep = kiln::detail::plan_gemm(cuda, doubles);
    ASSERT_TRUE(deep.tuning.tensor_double_deep.has_value());
    EXPECT_EQ(deep.strategy, gemm_strategy::tensor_cores);
    EXPECT_EQ(deep.tensor.key(), deep.tuning.tensor_double_deep->key());
    // NVIDIA's OpenCL holds a static array's 48 KiB, and a device with less to give: the row's.
    EXPECT_EQ(kiln::detail::plan_gemm(opencl, doubles).tensor.key(),
              deep.tuning.tensor_double.key());
    auto small = cuda;
    small.shared_memory_per_block_bytes = 48 * 1024;
    EXPECT_EQ(kiln::detail::plan_gemm(small, doubles).tensor.key(),
              deep.tuning.tensor_double.key());
    // 16-bit inputs keep theirs.
    const kiln::detail::gemm_plan_input bf16{.element = gemm_element::f32,
                                             .forced = gemm_strategy::tensor_cores,
                                             .inputs = gemm_element::bf16,
                                             .tensor_core_layout = true};
    EXPECT_EQ(kiln::detail::plan_gemm(cuda, bf16).tensor.key(), deep.tuning.tensor.key());
}

TEST(gemm_plan, floats_take_the_tf32_tensor_cores_only_when_allowed) {
    auto hopper = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    hopper.compute_capability_major = 9;
    kiln::detail::gemm_plan_input allowed{.allow_tf32 = true, .tensor_core_layout = true};
    const auto plan = kiln::detail::plan_gemm(hopper, allowed);
    EXPECT_EQ(plan.strategy, gemm_strategy::tensor_cores);
    EXPECT_EQ(plan.tensor.key(), plan.tuning.tensor_tf32.key());
    allowed.allow_tf32 = false;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, allowed).strategy, gemm_strategy::simt);
    allowed.forced = gemm_strategy::tensor_cores;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, allowed).strategy, gemm_strategy::simt);
}

// TF32 and FP8 on Hopper through CUDA: the tile-map wgmma kernel, each operand that lies with k
// outer (or off 16 bytes) copied into the K-major layout first; a forced tensor_cores strategy
// keeps TF32 on mma.sync.
TEST(gemm_plan, tf32_and_float8_take_the_k_major_warpgroup_kernel_on_hopper_cuda) {
    using kiln::detail::gemm_element;
    auto hopper = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    hopper.compute_capability_major = 9;
    hopper.shared_memory_per_block_bytes = 227 * 1024;
    hopper.backend = kiln::backend_kind::cuda;
    const kiln::detail::gemm_plan_input tf32{.allow_tf32 = true, .b_k_major = false};
    const auto plan = kiln::detail::plan_gemm(hopper, tf32);
    EXPECT_EQ(plan.strategy, gemm_strategy::warpgroup_mma);
    EXPECT_TRUE(plan.warpgroup.tile_maps);
    EXPECT_FALSE(plan.k_major_a);
    EXPECT_TRUE(plan.k_major_b);
    auto forced = tf32;
    forced.forced = gemm_strategy::tensor_cores;
    forced.tensor_core_layout = true;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, forced).strategy, gemm_strategy::tensor_cores);
    const kiln::detail::gemm_plan_input float8{
        .element = gemm_element::bf16, .inputs = gemm_element::e4m3, .a_k_major = false};
    const auto fp8 = kiln::detail::plan_gemm(hopper, float8);
    EXPECT_EQ(fp8.strategy, gemm_strategy::warpgroup_mma);
    EXPECT_TRUE(fp8.k_major_a);
    EXPECT_FALSE(fp8.k_major_b);
    // Without wgmma (NVIDIA's OpenCL), FP8 is not planned there (it is widened first).
    auto opencl = hopper;
    opencl.backend = kiln::backend_kind::opencl;
    EXPECT_NE(kiln::detail::plan_gemm(opencl, float8).strategy, gemm_strategy::warpgroup_mma);
}

kiln::device_properties nvidia_properties() {
    return kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
}

// Every row's tiles read back from their keys, as gemm_bench's KILN_GEMM_BENCH_*TILES give them.
TEST(gemm_tuning, tiles_read_back_from_their_keys) {
    for (const auto& row : kiln::detail::algorithm::gemm_rows::rows()) {
        const kiln::detail::gemm_tuning& t = row.tuning;
        for (const auto& tiles : {t.simt, t.simt_double, t.simt_short}) {
            const auto read = kiln::detail::parse_gemm_simt_tiles(tiles.key());
            ASSERT_TRUE(read.has_value()) << tiles.key();
            EXPECT_EQ(read->key(), tiles.key());
        }
        for (const auto& tiles :
             {t.tensor, t.tensor_double, t.tensor_tf32, t.tensor_double_deep.value_or(t.tensor)}) {
            const auto read = kiln::detail::parse_gemm_tensor_tiles(tiles.key());
            ASSERT_TRUE(read.has_value()) << tiles.key();
            EXPECT_EQ(read->key(), tiles.key());
        }
        const auto read = kiln::detail::parse_gemm_warpgroup_tiles(t.warpgroup.key());
        ASSERT_TRUE(read.has_value()) << t.warpgroup.key();
        EXPECT_EQ(read->key(), t.warpgroup.key());
    }
    EXPECT_EQ(kiln::detail::parse_gemm_simt_tiles("128x128x16 t8x8 v4 r4")->key(),
              "128x128x16 t8x8 v4 r4");
    EXPECT_FALSE(kiln::detail::parse_gemm_simt_tiles("64x64x8 t4x4 v2")->vector_reads);
    EXPECT_EQ(kiln::detail::parse_gemm_warpgroup_tiles(" 256x128 s3")->stages, 3u);
    // copy_stages: in the key where not 0.
    const auto copies = kiln::detail::parse_gemm_simt_tiles("256x128x8 t16x8 v4 s3 r4");
    ASSERT_TRUE(copies.has_value());
    EXPECT_EQ(copies->copy_stages, 3u);
    EXPECT_EQ(copies->key(), "256x128x8 t16x8 v4 s3 r4");
    EXPECT_EQ(kiln::detail::parse_gemm_simt_tiles("64x64x8 t4x4 v2")->copy_stages, 0u);
    // band_rows: in the key where not 0, for both kinds of tiles.
    const auto banded = kiln::detail::parse_gemm_tensor_tiles("128x64x8 w64x32 s3 b8");
    ASSERT_TRUE(banded.has_value());
    EXPECT_EQ(banded->band_rows, 8u);
    EXPECT_EQ(banded->key(), "128x64x8 w64x32 s3 b8");
    EXPECT_EQ(kiln::detail::parse_gemm_tensor_tiles("128x64x8 w64x32 s3")->band_rows, 0u);
    EXPECT_EQ(kiln::detail::parse_gemm_simt_tiles("32x32x8 t2x2 v1 b3")->band_rows, 3u);
    EXPECT_EQ(kiln::detail::parse_gemm_simt_tiles("32x32x8 t2x2 v1")->key(), "32x32x8 t2x2 v1");
    EXPECT_FALSE(kiln::detail::parse_gemm_simt_tiles("256x128x8 t16x8 s1")->fits_together());
    for (const char* bad : {"", "128x128 t8x8", "128x128x16 w8x8", "128x128x16 r2", "64x64x8 v0"})
        EXPECT_FALSE(kiln::detail::parse_gemm_simt_tiles(bad).has_value()) << bad;
    EXPECT_FALSE(kiln::detail::parse_gemm_tensor_tiles("128x128x32 w64x32x2").has_value());
    EXPECT_FALSE(kiln::detail::parse_gemm_warpgroup_tiles("128x256x64 s4").has_value());
}

TEST(gemm_plan, float_products_of_a_short_depth_take_the_rows_short_tiles) {
    const auto nvidia = nvidia_properties();
    const kiln::detail::gemm_tuning& row =
        kiln::detail::plan_gemm(nvidia, {.host_blas = true}).tuning;
    ASSERT_NE(row.short_depth, 0u);
    ASSERT_NE(row.simt_short.key(), row.simt.key());
    const auto plan_for = [&](kiln::detail::gemm_element element, std::size_t depth) {
        return kiln::detail::plan_gemm(
            nvidia,
            {.element = element, .inputs = element, .rows = 8192, .columns = 8192, .depth = depth});
    };
    using kiln::detail::gemm_element;
    EXPECT_EQ(plan_for(gemm_element::f32, row.short_depth).simt.key(), row.simt_short.key());
    EXPECT_EQ(plan_for(gemm_element::f32, 1).simt.key(), row.simt_short.key());
    EXPECT_EQ(plan_for(gemm_element::f32, row.short_depth + 1).simt.key(), row.simt.key());
    // Unknown depth, and doubles: the row's own.
    EXPECT_EQ(plan_for(gemm_element::f32, 0).simt.key(), row.simt.key());
    EXPECT_EQ(plan_for(gemm_element::f64, 64).simt.key(), row.simt_double.key());
}

TEST(gemm_plan, large_products_copy_operands_whose_rows_vectors_cannot_read) {
    const auto nvidia = nvidia_properties();
    const kiln::detail::gemm_plan_input large{
        .rows = 4095, .columns = 4095, .depth = 4095, .a_copy_aligns = true, .b_copy_aligns = true};
    const auto plan = kiln::detail::plan_gemm(nvidia, large);
    EXPECT_TRUE(plan.align_a && plan.align_b);
    auto aligned = large;
    aligned.a_copy_aligns = aligned.b_copy_aligns = false;
    EXPECT_FALSE(kiln::detail::plan_gemm(nvidia, aligned).align_a);
    // A small product, or a narrow C (A's copy weighs against n, B's against m): no copy.
    auto small = large;
    small.rows = small.columns = small.depth = 512;
    EXPECT_FALSE(kiln::detail::plan_gemm(nvidia, small).align_a);
    auto narrow = large;
    narrow.columns = 256;
    narrow.depth = 1 << 16;
    const auto narrow_plan = kiln::detail::plan_gemm(nvidia, narrow);
    EXPECT_FALSE(narrow_plan.align_a);
    EXPECT_TRUE(narrow_plan.align_b);
    // Other strategies read their operands as they are.
    auto cpu = large;
    cpu.host_blas = true;
    EXPECT_FALSE(
        kiln::detail::plan_gemm(kiln::test::written_by_hand(kiln::device_type::cpu, "pocl"), cpu)
            .align_a);
}

TEST(gemm_plan, gpus_take_simt_tiles_that_fit_them) {
    const auto nvidia = kiln::detail::plan_gemm(nvidia_properties(), {.host_blas = true});
    EXPECT_EQ(nvidia.strategy, gemm_strategy::simt);
    EXPECT_EQ(nvidia.simt.block_rows, 128u);
    EXPECT_EQ(nvidia.simt.work_group_size(), 256u);
    auto small = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    small.max_work_group_size = 128;
    small.local_memory_bytes = 4096;
    const auto fitted = kiln::detail::plan_gemm(small, {});
    EXPECT_LE(fitted.simt.work_group_size(), 128u);
    EXPECT_LE(
        2 * fitted.simt.block_depth * (fitted.simt.block_rows + fitted.simt.block_columns) * 4,
        4096u);
    for (const auto& row : kiln::detail::algorithm::gemm_rows::rows()) {
        // One line: measured (and where it is written down), or not.
        EXPECT_LE(row.provenance.size(), 160u) << row.provenance;
        EXPECT_TRUE(row.provenance.starts_with("not measured") ||
                    row.provenance.ends_with("docs/benchmarks.md, ## Matrix multiply"))
            << row.provenance;
        EXPECT_TRUE(row.tuning.simt.fits_together()) << row.tuning.simt.key();
        EXPECT_TRUE(row.tuning.simt_double.fits_together()) << row.tuning.simt_double.key();
    }
    // Blocks shrink to small matrices, keeping their work-items: a batch of 64^3 products takes
    // 64x64 blocks; a single row, blocks as short as the thread tiles allow.
    const auto small_products =
        kiln::detail::plan_gemm(nvidia_properties(), {.rows = 64, .columns = 64});
    EXPECT_EQ(small_products.simt.block_rows, 64u);
    EXPECT_EQ(small_products.simt.block_columns, 64u);
    EXPECT_EQ(small_products.simt.work_group_size(), 256u);
    const auto one_row = kiln::detail::plan_gemm(nvidia_properties(), {.rows = 1, .columns = 4096});
    EXPECT_TRUE(one_row.simt.fits_together());
    EXPECT_LT(one_row.simt.block_rows, 128u);
    EXPECT_EQ(one_row.simt.block_columns,
              kiln::detail::plan_gemm(nvidia_properties(), {}).simt.block_columns);
    // A forced tuning's tiles run as they are: neither shrunk to small matrices nor replaced by
    // the fallback row's where the device cannot hold them, so that a test runs what it names.
    const kiln::detail::gemm_tuning nvidia_row =
        kiln::detail::plan_gemm(nvidia_properties(), {}).tuning;
    const auto forced_on_small = kiln::detail::plan_gemm(
        nvidia_properties(), {.tuning = nvidia_row, .rows = 64, .columns = 64});
    EXPECT_EQ(forced_on_small.simt.key(), nvidia_row.simt.key());
    const auto forced_on_tiny = kiln::detail::plan_gemm(small, {.tuning = nvidia_row});
    EXPECT_EQ(forced_on_tiny.simt.block_rows, 128u);
    // Tiles that leave work-items without whole loads are refused, not written.
    kiln::detail::gemm_simt_tiles uneven{.block_rows = 16,
                                         .block_columns = 16,
                                         .block_depth = 4,
                                         .thread_rows = 1,
                                         .thread_columns = 1};
    EXPECT_THROW(kiln::detail::plan_gemm(nvidia_properties(),
                                         {.tuning = kiln::detail::gemm_tuning_with({}, uneven)}),
                 kiln::invalid_argument_error);
}

// Every row's tiles of every type are shapes their kernels take (the tensor cores' for the
// inputs each is for), so that a bad row fails here, not at its first launch; the plan refuses a
// forced tuning whose tiles do not fit.
TEST(gemm_tuning, every_rows_tiles_fit_together) {
    for (const auto& row : kiln::detail::algorithm::gemm_rows::rows()) {
        const kiln::detail::gemm_tuning& t = row.tuning;
        SCOPED_TRACE(row.provenance);
        for (const auto* simt : {&t.simt, &t.simt_double, &t.simt_short})
            EXPECT_TRUE(simt->fits_together()) << simt->key();
        EXPECT_TRUE(t.cpu.fits_together()) << t.cpu.key();
        EXPECT_TRUE(t.tensor.fits_together(2)) << t.tensor.key();
        EXPECT_TRUE(t.tensor_tf32.fits_together(4)) << t.tensor_tf32.key();
        EXPECT_TRUE(t.tensor_double.fits_together(8)) << t.tensor_double.key();
        if (t.tensor_double_deep) {
            EXPECT_TRUE(t.tensor_double_deep->fits_together(8)) << t.tensor_double_deep->key();
        }
        EXPECT_TRUE(t.warpgroup.fits_together()) << t.warpgroup.key();
    }
    auto hopper = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    hopper.compute_capability_major = 9;
    const kiln::detail::gemm_tensor_tiles shallow{.block_depth = 8};
    EXPECT_FALSE(shallow.fits_together(2));
    EXPECT_TRUE(shallow.fits_together(8));
    const kiln::detail::gemm_plan_input bf16{.element = kiln::detail::gemm_element::f32,
                                             .tuning = kiln::detail::gemm_tuning_with({}, shallow),
                                             .inputs = kiln::detail::gemm_element::bf16,
                                             .tensor_core_layout = true};
    EXPECT_THROW(kiln::detail::plan_gemm(hopper, bf16), kiln::invalid_argument_error);
    auto doubles = bf16;
    doubles.element = doubles.inputs = kiln::detail::gemm_element::f64;
    EXPECT_EQ(kiln::detail::plan_gemm(hopper, doubles).strategy, gemm_strategy::tensor_cores);
    const kiln::detail::gemm_cpu_tiles odd{.vector_width = 3};
    EXPECT_FALSE(odd.fits_together());
    kiln::detail::gemm_tuning odd_cpu;
    odd_cpu.cpu = odd;
    EXPECT_THROW(
        kiln::detail::plan_gemm(kiln::test::written_by_hand(kiln::device_type::cpu, "pocl"),
                                {.forced = gemm_strategy::cpu_tiles, .tuning = odd_cpu}),
        kiln::invalid_argument_error);
}

}  // namespace
