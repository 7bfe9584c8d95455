// SPDX-License-Identifier: Apache-2.0
// Translates OpenCL C kernels and compiles them with NVRTC for sm_90: runs without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/gemm_epilogue.hpp>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <kiln/detail/algo/stencil_2d_streaming.hpp>
#include <kiln/detail/algo/stencil_windows.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/error.hpp>
#include <kiln/kernel.hpp>
#include <kiln/vector.hpp>
#include <regex>
#include <string>
#include <vector>

#include "algo/gemm/gemm_float8.hpp"
#include "algo/gemm/gemm_k_major.hpp"
#include "algo/gemm/gemm_strategies.hpp"
#include "algo/reproducible_scan/reproducible_scan_kernels.hpp"
#include "algo/scan/reduce_by_key.hpp"
#include "algo/scan/unique.hpp"
#include "algo/sort/sort_kernels.hpp"
#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#include "opencl_c_kernels.hpp"

namespace kiln::detail::cuda {
namespace {

constexpr target_architecture hopper{90, true};
/// The CUDA backend's target: the prelude's vocabulary on warps of 32.
constexpr target_features cuda_warps{.vocabulary = vocabulary_target::cuda_prelude,
                                     .ballot = true,
                                     .shuffles = true,
                                     .device_fence = true,
                                     .sub_group_size = 32};

class NvrtcCompile : public ::testing::Test {
  protected:
    void SetUp() override {
        if (nvrtc() == nullptr) GTEST_SKIP() << nvrtc_load_failure();
    }

    static compiled_image compile(std::vector<std::string> sources, const std::string& options = {},
                                  target_architecture arch = hopper) {
        const auto parsed = parse_build_options(options);
        const auto translated = translate_opencl_c(sources, parsed.translation);
        return compile_with_nvrtc(translated.source, parsed, arch);
    }

    /// The build log of a compile that must fail.
    static std::string failure_log(std::vector<std::string> sources,
                                   const std::string& options = {}) {
        try {
            compile(std::move(sources), options);
        } catch (const build_error& e) {
            return e.log();
        }
        ADD_FAILURE() << "the build succeeded";
        return {};
    }

    static void expect_cubin(const compiled_image& compiled) {
        ASSERT_TRUE(compiled.is_cubin);
        ASSERT_GT(compiled.image.size(), 4u);
        EXPECT_EQ(std::memcmp(compiled.image.data(),
                              "\x7f"
                              "ELF",
                              4),
                  0)
            << "a cubin is an ELF file";
    }
};

TEST_F(NvrtcCompile, VectorAdd) {
    expect_cubin(compile({kiln_test::vector_add_source}));
}

TEST_F(NvrtcCompile, FftProgramsOfBothPrecisionsAndIndexWidths) {
    // Two builds cover both precisions and both index widths of kiln::fft's generated program.
    expect_cubin(compile({fft_program_source(false, false)}));
    expect_cubin(compile({fft_program_source(true, true)}));
}

TEST_F(NvrtcCompile, LocalMemoryReductionWithBarriers) {
    expect_cubin(compile({kiln_test::reduction_source}));
}

TEST_F(NvrtcCompile, TiledMatrixMultiplyWithLocalArrays) {
    expect_cubin(compile({kiln_test::tiled_matmul_source}));
}

// kiln::gemm's kernels as the CUDA backend builds them: the NVIDIA row's SIMT tiles in every
// layout, by float4 loads and element by element, in both precisions; the CPU tiles once.
TEST_F(NvrtcCompile, GemmKernelsOfEveryLayout) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    const gemm_types single{},
        twice{gemm_element::f64, gemm_element::f64, gemm_element::f64, gemm_element::f64};
    for (const bool a_transposed : {false, true})
        for (const bool b_transposed : {false, true}) {
            SCOPED_TRACE(std::string(a_transposed ? "T" : "N") + (b_transposed ? "T" : "N"));
            const bool vectors = a_transposed == b_transposed;
            gemm_simt_kernel kernel{nvidia.tuning.simt, single,  a_transposed,
                                    b_transposed,       vectors, vectors};
            kernel.target = cuda_warps;
            expect_cubin(compile({kernel.source()}));
        }
    expect_cubin(compile(
        {gemm_simt_kernel{nvidia.tuning.simt_double, twice, false, true, true, true}.source()}));
    expect_cubin(compile({gemm_cpu_kernel{nvidia.tuning.cpu, single, true, false}.source()}));
}

// The SIMT kernel whose tiles cp.async copies (copy_stages), for Ampere and Hopper: every layout,
// by 16-byte copies and by copies of one float, 256x128 and 128x256 blocks, thread tiles read by
// 4-vectors and one element at a time.
TEST_F(NvrtcCompile, GemmSimtCopiesOfEveryLayoutForAmpereAndHopper) {
    for (const char* key :
         {"256x128x8 t16x8 v4 s3 r4", "128x256x8 t8x16 v4 s3 r4", "128x256x8 t8x16 v4 s3"}) {
        SCOPED_TRACE(key);
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true}) {
                SCOPED_TRACE(std::string(a_transposed ? "T" : "N") + (b_transposed ? "T" : "N"));
                gemm_simt_kernel kernel{
                    *parse_gemm_simt_tiles(key), {}, a_transposed, b_transposed};
                kernel.a_vectors = kernel.b_vectors = a_transposed != b_transposed;
                kernel.target = cuda_warps;
                expect_cubin(compile({kernel.source()}));
                expect_cubin(compile({kernel.source()}, {}, target_architecture{80, true}));
            }
    }
}

// kiln::gemm's kernels for 16-bit inputs and a float C: the tensor-core kernel (mma.sync, ldmatrix
// and cp.async from the prelude's vocabulary) in every layout for Ampere and Hopper, and the SIMT
// kernel that converts each element.
TEST_F(NvrtcCompile, GemmTensorCoreKernelsOfEveryLayoutForAmpereAndHopper) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    for (const gemm_element input : {gemm_element::bf16, gemm_element::f16}) {
        const gemm_types types{input, input, gemm_element::f32, gemm_element::f32};
        SCOPED_TRACE(types.key());
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true}) {
                SCOPED_TRACE(std::string(a_transposed ? "T" : "N") + (b_transposed ? "T" : "N"));
                const std::string source =
                    gemm_tensor_kernel{nvidia.tuning.tensor, types, a_transposed, b_transposed,
                                       cuda_warps}
                        .source();
                expect_cubin(compile({source}));
                expect_cubin(compile({source}, {}, target_architecture{80, true}));
            }
        // Converted elements stage in registers: the same blocks without copies.
        gemm_simt_tiles registers = nvidia.tuning.simt;
        registers.copy_stages = 0;
        expect_cubin(
            compile({gemm_simt_kernel{registers, types, false, true, false, false}.source()}));
    }
}

// The passes that widen FP8 operands before kiln::gemm's kernels run and round a float product
// into an FP8 C after them (gemm_float8.hpp): the prelude's FP8 and 16-bit conversions.
TEST_F(NvrtcCompile, GemmFloat8WideningKernels) {
    for (const gemm_element from : {gemm_element::e4m3, gemm_element::e5m2}) {
        for (const gemm_element to : {gemm_element::f32, gemm_element::bf16, gemm_element::f16})
            expect_cubin(compile({gemm_widening_kernel{from, to}.source()}));
        expect_cubin(compile({gemm_narrowing_kernel{from}.source()}));
    }
}

// The wgmma kernel (sm_90a's warpgroup vocabulary): every layout of bf16 into float with the
// row's tiles, and the other widths with f16 and a 16-bit C.
TEST_F(NvrtcCompile, GemmWarpgroupKernelsOfEveryLayoutForHopper) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    const auto expect_compiles = [&](const gemm_warpgroup_kernel& kernel) {
        SCOPED_TRACE(kernel.key());
        expect_cubin(compile({kernel.source()}));
    };
    const gemm_types bf16{gemm_element::bf16, gemm_element::bf16, gemm_element::f32,
                          gemm_element::f32};
    for (const bool a_transposed : {false, true})
        for (const bool b_transposed : {false, true})
            expect_compiles({nvidia.tuning.warpgroup, bf16, a_transposed, b_transposed});
    const gemm_types f16{gemm_element::f16, gemm_element::f16, gemm_element::f16,
                         gemm_element::f32};
    expect_compiles({{.block_rows = 128, .block_columns = 128, .stages = 3}, f16, true, false});
    expect_compiles({{.block_rows = 256, .block_columns = 64, .stages = 5}, f16, false, true});
    for (const bool a_transposed : {false, true})
        expect_compiles({{.block_rows = 256, .block_columns = 128, .stages = 3, .tile_maps = true},
                         f16,
                         a_transposed,
                         !a_transposed});
    expect_compiles({{.block_rows = 128, .block_columns = 64, .stages = 6, .tile_maps = true},
                     bf16,
                     false,
                     false});
    // Both schedules of tile maps, persistent and a work-group per block, in bands of block
    // rows, with paired stores into a float and a 16-bit C.
    for (const bool persistent : {false, true})
        for (const gemm_types& types : {bf16, f16})
            expect_compiles({{.block_rows = 256,
                              .block_columns = 128,
                              .stages = 4,
                              .tile_maps = true,
                              .band_rows = 8,
                              .persistent = persistent,
                              .paired_stores = true},
                             types,
                             false,
                             true});
}

/// The epilogue text of a KILN_LAMBDA, which takes only its types: no device is needed.
template <class Definition, class... Captures>
const gemm_epilogue& epilogue_text_of(const kernel_lambda<Definition, Captures...>&) {
    return gemm_epilogue_text<float, Definition, Captures...>();
}

// A user's epilogue in the row's tile-map kernel, whose paired stores' branch calls it once for
// each value it stores (in batches ahead of the stores), into a float and a bf16 C.
TEST_F(NvrtcCompile, GemmWarpgroupKernelWithAnEpilogueStoresPairs) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    ASSERT_TRUE(nvidia.tuning.warpgroup.paired_stores) << "the row's kernel stores pairs";
    const kiln::vector<float> bias;  // its type only: the text binds no argument
    const float slope = 0.125f;
    const gemm_epilogue& epilogue = epilogue_text_of(
        KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias, slope), {
            (void)row;
            const float biased = value + bias[column];
            return biased > 0.0f ? biased : slope * biased;
        }));
    for (const gemm_element c : {gemm_element::f32, gemm_element::bf16}) {
        const gemm_warpgroup_kernel kernel{
            nvidia.tuning.warpgroup,
            {gemm_element::bf16, gemm_element::bf16, c, gemm_element::f32, &epilogue},
            false,
            true};
        SCOPED_TRACE(kernel.key());
        const std::string source = kernel.source();
        const std::string pair_store =
            c == gemm_element::f32 ? "*(global float2*)(c + " : "*(global uint*)(c + ";
        const std::size_t branch = source.find("if (c_pairs && ");
        ASSERT_NE(branch, std::string::npos) << "the kernel stores pairs";
        const std::size_t pairs_end = source.find("else", branch);
        const auto count = [&](const std::string& what) {
            std::size_t found = 0;
            for (std::size_t at = source.find(what, branch); at < pairs_end;
                 at = source.find(what, at + 1))
                ++found;
            return found;
        };
        const std::size_t pairs = count(pair_store);
        EXPECT_GT(pairs, 0U);
        EXPECT_EQ(count("kiln_gemm_epilogue("), 2 * pairs)
            << "the pairs' branch calls the epilogue once for each value it stores";
        expect_cubin(compile({source}));
    }
}

// TF32 and FP8 on wgmma (k8 and k32, no transposes): the tile-map kernel of the K-major layout
// with the row's tiles and other widths, and the copies into that layout.
TEST_F(NvrtcCompile, GemmKMajorWarpgroupKernelsForHopper) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    const auto expect_compiles = [&](const gemm_warpgroup_kernel& kernel) {
        SCOPED_TRACE(kernel.key());
        expect_cubin(compile({kernel.source()}));
    };
    const gemm_types floats{gemm_element::f32, gemm_element::f32, gemm_element::f32,
                            gemm_element::f32};
    expect_compiles({nvidia.tuning.warpgroup, floats, false, true});
    expect_compiles({{.block_rows = 128, .block_columns = 256, .stages = 3, .tile_maps = true},
                     floats,
                     false,
                     true});
    for (const gemm_element a : {gemm_element::e4m3, gemm_element::e5m2})
        for (const gemm_element b : {gemm_element::e4m3, gemm_element::e5m2})
            expect_compiles({nvidia.tuning.warpgroup,
                             {a, b, gemm_element::bf16, gemm_element::f32},
                             false,
                             true});
    expect_compiles({{.block_rows = 128, .block_columns = 64, .stages = 6, .tile_maps = true},
                     {gemm_element::e4m3, gemm_element::e4m3, gemm_element::f32, gemm_element::f32},
                     false,
                     true});
    const gemm_warpgroup_tiles persistent{.block_rows = 128,
                                          .block_columns = 256,
                                          .stages = 4,
                                          .tile_maps = true,
                                          .band_rows = 4,
                                          .persistent = true,
                                          .paired_stores = true};
    expect_compiles({persistent, floats, false, true});
    expect_compiles(
        {persistent,
         {gemm_element::e4m3, gemm_element::e4m3, gemm_element::bf16, gemm_element::f32},
         false,
         true});
    // wgmma cannot transpose these inputs: the other layouts are refused.
    EXPECT_THROW(
        (void)gemm_warpgroup_kernel({nvidia.tuning.warpgroup, floats, false, false}).source(),
        invalid_argument_error);
    for (const gemm_element element : {gemm_element::f32, gemm_element::e4m3, gemm_element::e5m2})
        for (const bool transposes : {false, true})
            expect_cubin(compile({gemm_k_major_kernel{element, transposes}.source()}));
}

TEST_F(NvrtcCompile, NvidiaRegisterLimitReachesNvrtc) {
    expect_cubin(compile({kiln_test::vector_add_source}, "-cl-nv-maxrregcount 32"));
    expect_cubin(compile({kiln_test::vector_add_source}, "-cl-nv-maxrregcount=40"));
    EXPECT_NE(failure_log({kiln_test::vector_add_source}, "-cl-nv-maxrregcount many")
                  .find("needs a number of registers"),
              std::string::npos);
}

// The tensor-core kernel for doubles (mma.sync m8n8k4, and Hopper's m16n8k8, from the prelude's
// vocabulary) and for floats rounded to TF32 (m16n8k8) in every layout.
TEST_F(NvrtcCompile, GemmDoubleTensorCoreKernelsOfEveryLayoutForAmpereAndHopper) {
    const tuning_row<gemm_tuning>& nvidia = algorithm::gemm_rows::rows().front();
    const gemm_types twice{gemm_element::f64, gemm_element::f64, gemm_element::f64,
                           gemm_element::f64};
    for (const bool a_transposed : {false, true})
        for (const bool b_transposed : {false, true}) {
            SCOPED_TRACE(std::string(a_transposed ? "T" : "N") + (b_transposed ? "T" : "N"));
            const gemm_tensor_kernel ampere{
                nvidia.tuning.tensor_double, twice, a_transposed, b_transposed, cuda_warps, false};
            gemm_tensor_kernel hopper_shapes = ampere;
            hopper_shapes.double_m16n8k8 = true;
            expect_cubin(compile({ampere.source()}));
            expect_cubin(compile({ampere.source()}, {}, target_architecture{80, true}));
            expect_cubin(compile({hopper_shapes.source()}));
            // Tiles 16 deep take m16n8k16.
            gemm_tensor_kernel hopper_deep = hopper_shapes;
            hopper_deep.tiles = *nvidia.tuning.tensor_double_deep;
            EXPECT_NE(hopper_deep.source().find("kiln_mma_m16n8k16_f64"), std::string::npos);
            expect_cubin(compile({hopper_deep.source()}));
            const gemm_tensor_kernel tf32{nvidia.tuning.tensor_tf32,
                                          gemm_types{},
                                          a_transposed,
                                          b_transposed,
                                          cuda_warps,
                                          false};
            expect_cubin(compile({tf32.source()}, {}, target_architecture{80, true}));
        }
    // Stages in dynamic local memory, past the static arrays' 48 KiB: doubles and bf16.
    gemm_tensor_kernel deep{{.block_rows = 128,
                             .block_columns = 128,
                             .block_depth = 16,
                             .warp_rows = 64,
                             .warp_columns = 32,
                             .stages = 6},
                            twice,
                            false,
                            true,
                            cuda_warps,
                            true,
                            true};
    EXPECT_GT(deep.stage_bytes(), 48u * 1024);
    expect_cubin(compile({deep.source()}));
    deep.types = {gemm_element::bf16, gemm_element::bf16, gemm_element::f32, gemm_element::f32};
    deep.tiles.block_depth = 32;
    deep.tiles.stages = 4;
    expect_cubin(compile({deep.source()}));
}

TEST_F(NvrtcCompile, Atomics) {
    expect_cubin(compile({kiln_test::atomics_source}));
}

TEST_F(NvrtcCompile, VectorTypes) {
    expect_cubin(compile({kiln_test::vector_types_source}));
}

TEST_F(NvrtcCompile, ScalarBuiltinsAndPrintf) {
    expect_cubin(compile({kiln_test::scalar_builtins_source}));
}

TEST_F(NvrtcCompile, HalfAndBfloat16LoadsStoresAndHelpers) {
    expect_cubin(compile({kiln_test::binary16_source}));
}

/// The kernel of `target = value` under GPUs' launch policy, as kiln::assignment_source writes
/// it for a device; the vectors are never touched, so they need none.
template <class T, class E>
std::string gpu_assignment_source(const kiln::vector<T>& target, const E& value,
                                  const launch_policy& policy = {}, bool reproducible = false) {
    auto node = as_node_beside<T>(value);
    assignment<std::tuple<vector_terminal<T>>, std::tuple<decltype(node)>> statement(
        {vector_terminal<T>(target)}, {std::move(node)});
    return statement.source(policy, cuda_warps, nullptr, reproducible);
}

TEST_F(NvrtcCompile, HalfAndBfloat16Expressions) {
    const kiln::vector<kiln::half> x, y;
    const kiln::vector<kiln::bfloat16> b;
    const kiln::vector<float> z;
    expect_cubin(compile({gpu_assignment_source(y, 2 * x + z)}));
    expect_cubin(compile({gpu_assignment_source(b, b * 3 + x)}));
    expect_cubin(compile({gpu_assignment_source(z, kiln::reverse(x) - b)}));
    // 16-bit statements and reductions through 16-byte accesses (ushort8 bits, .s0 to .s7).
    const std::string wide = gpu_assignment_source(y, 2 * x + x);
    EXPECT_NE(wide.find("ushort8"), std::string::npos) << wide;
    expect_cubin(compile({wide}));
    // One 16-byte load per step (the GPU rows') and several, as expr_bench's sweep runs.
    for (const std::size_t wide_loads : {std::size_t{1}, std::size_t{4}}) {
        const std::string sum = reduce_program_source(
            reduce_input_of<kiln::reducers::sum>(vector_terminal<kiln::bfloat16>(b)),
            reduce_tuning{.loop = loop_style::strided, .wide_loads = wide_loads});
        EXPECT_NE(sum.find("ushort8"), std::string::npos) << sum;
        expect_cubin(compile({sum}));
    }
    // CPU devices' vector form, which tests force on CUDA: bfloat16's vector helpers.
    const launch_policy chunked{loop_style::chunked, 1, 16, 64};
    expect_cubin(compile({gpu_assignment_source(b, b * 3 + b, chunked)}));
}

TEST_F(NvrtcCompile, Float8HelpersAndExpressions) {
    expect_cubin(compile({kiln_test::float8_source}));
    const kiln::vector<kiln::float8_e4m3> x;
    const kiln::vector<kiln::float8_e5m2> y;
    const kiln::vector<float> z;
    expect_cubin(compile({gpu_assignment_source(y, 2 * x + z)}));
    // FP8 statements and reductions through 16-byte accesses (uchar16 bits, .s0 to .sf).
    const std::string wide = gpu_assignment_source(y, 2 * y + y);
    EXPECT_NE(wide.find("uchar16"), std::string::npos) << wide;
    expect_cubin(compile({wide}));
    const std::string sum = reduce_program_source(
        reduce_input_of<kiln::reducers::sum>(vector_terminal<kiln::float8_e4m3>(x)),
        reduce_tuning{.loop = loop_style::strided, .wide_loads = 1});
    EXPECT_NE(sum.find("uchar16"), std::string::npos) << sum;
    expect_cubin(compile({sum}));
    // CPU devices' vector form, which tests force on CUDA: the FP8 vector helpers.
    const launch_policy chunked{loop_style::chunked, 1, 16, 64};
    expect_cubin(compile({gpu_assignment_source(x, x * 3 + y, chunked)}));
}

/// The multiplies in `ptx` without a rounding mode (mul.f32, mul.f64) whose result an add or a
/// subtract without one takes: pairs that ptxas contracts into an fma or not, by where they land
/// among the other instructions.
std::size_t pairs_left_to_ptxas(const compiled_image& compiled) {
    const std::string ptx(reinterpret_cast<const char*>(compiled.image.data()),
                          compiled.image.size());
    const std::regex multiply(R"(\n\s*mul\.f(32|64)\s+(%\w+),)");
    const std::regex add(R"(\n\s*(add|sub)\.f(32|64)\s+%\w+,\s*(%\w+),\s*(%\w+);)");
    std::vector<std::string> products;
    for (std::sregex_iterator m(ptx.begin(), ptx.end(), multiply), end; m != end; ++m)
        products.push_back((*m)[2]);
    std::size_t pairs = 0;
    for (std::sregex_iterator m(ptx.begin(), ptx.end(), add), end; m != end; ++m)
        for (const auto& product : products)
            if ((*m)[3] == product || (*m)[4] == product) ++pairs;
    return pairs;
}

// Issue 66: on CUDA an expression kernel's element loop contracted `sin(x) * y - x / d` into no
// fma, its 16-byte steps (and a fused group's kernel) into one: NVRTC left the pair to ptxas,
// which joined it only where no division's branch came between. Each product and sum is now
// written as the fma or the rounded operation it stands for.
TEST_F(NvrtcCompile, ExpressionKernelsLeavePtxasNoMultiplyAddToContract) {
    const kiln::vector<float> x, y;
    const kiln::vector<double> a, b;
    const std::string sources[] = {
        gpu_assignment_source(x, kiln::sin(x) * y - x / (y * y + 1.0f)),
        gpu_assignment_source(a, a * b + kiln::sin(-a * a)),
        gpu_assignment_source(b, kiln::sqrt(kiln::fabs(a)) + b * b - a * 3.0),
        gpu_assignment_source(y, 2.0f * x * y - (x - y) * (x + y))};
    for (const std::string& source : sources) {
        const compiled_image ptx = compile({source}, "", {90, false});
        ASSERT_FALSE(ptx.is_cubin);
        EXPECT_EQ(pairs_left_to_ptxas(ptx), 0u) << source;
    }
    // CPU devices' vector form, which tests force on CUDA: maths built-ins in its element loop
    // are called in their vector form too, and its steps round as the element loop does.
    const launch_policy chunked{loop_style::chunked, 1, 16, 64};
    const std::string broadcast =
        gpu_assignment_source(x, kiln::exp(x) * y + (x - y) * (x + y), chunked);
    EXPECT_NE(broadcast.find("exp(((float16)(p"), std::string::npos) << broadcast;
    expect_cubin(compile({broadcast}));
}

// Reproducible mode's sums (docs/reproducibility.md): the running bins' structs, pointers and
// ldexp/ilogb translate, and a dot product's multiply stays a rounding of its own.
TEST_F(NvrtcCompile, ReproducibleSumsCompileAndRoundEachProduct) {
    const kiln::vector<float> x, y;
    const std::string dot =
        reduce_program_source(reduce_input_of<kiln::reducers::reproducible_sum>(x * y),
                              reduce_tuning{.loop = loop_style::strided});
    EXPECT_NE(dot.find("FP_CONTRACT OFF"), std::string::npos) << dot;
    expect_cubin(compile({dot}));
    const compiled_image ptx = compile({dot}, "", {90, false});
    ASSERT_FALSE(ptx.is_cubin);
    EXPECT_EQ(pairs_left_to_ptxas(ptx), 0u) << dot;
}

TEST_F(NvrtcCompile, ReproducibleScansCompile) {
    const auto plain = [](kiln::detail::source_builder& b) {
        b.parameter("global const double* x");
        return kiln::detail::element_input{.value = "x[idx]"};
    };
    for (const bool exclusive : {false, true})
        for (const bool double_values : {false, true}) {
            kiln::detail::reproducible_scan_shape shape{
                .double_values = double_values, .exclusive = exclusive, .expression = "x"};
            const std::string source = kiln::detail::write_reproducible_scan_program(shape, plain);
            EXPECT_NE(source.find("FP_CONTRACT OFF"), std::string::npos) << source;
            expect_cubin(compile({source}));
            // The group scans' shuffles within warps, as a CUDA device plans them
            // (target_features_for).
            shape.target = {.vocabulary = vocabulary_target::cuda_prelude,
                            .ballot = true,
                            .shuffles = true,
                            .device_fence = true,
                            .sub_group_size = 32};
            shape.sub_group_size = 32;
            const std::string shuffled =
                kiln::detail::write_reproducible_scan_program(shape, plain);
            EXPECT_NE(shuffled.find("kiln_shuffle_up_64"), std::string::npos) << shuffled;
            expect_cubin(compile({shuffled}));
        }
}

// Reproducible mode (docs/reproducibility.md): an expression kernel writes out no fma for CUDA
// (the default writes those FP_CONTRACT ON stands for) and is compiled as cuda_device::build
// compiles a program with contraction off, so each product is a rounding of its own.
TEST_F(NvrtcCompile, ReproducibleStatementsRoundEveryProduct) {
    const kiln::vector<float> x, y, z;
    const std::string by_default = gpu_assignment_source(z, x * y + z);
    EXPECT_NE(by_default.find("fma("), std::string::npos) << by_default;
    const std::string rounded = gpu_assignment_source(z, x * y + z, {}, true);
    EXPECT_EQ(rounded.find("fma("), std::string::npos) << rounded;
    build_options options = parse_build_options("");
    const std::vector<std::string> sources{rounded};
    const translation translated = translate_opencl_c(sources, options.translation);
    ASSERT_TRUE(translated.contraction_off) << rounded;
    options.nvrtc_options.push_back("--fmad=false");
    const compiled_image ptx = compile_with_nvrtc(translated.source, options, {90, false});
    const std::string text(reinterpret_cast<const char*>(ptx.image.data()), ptx.image.size());
    EXPECT_EQ(text.find("fma.rn.f32"), std::string::npos) << text;
    EXPECT_NE(text.find("mul.rn.f32"), std::string::npos) << text;
}

TEST_F(NvrtcCompile, BuildOptionsReachTheCompiler) {
    const char* source = R"(
kernel void scale(global REAL* x) { x[get_global_id(0)] *= FACTOR * 0.5; }
)";
    expect_cubin(compile({source},
                         "-DREAL=float -D FACTOR=3 -cl-fast-relaxed-math -cl-mad-enable "
                         "-cl-std=CL1.2 -cl-kernel-arg-info -cl-single-precision-constant -w"));
    expect_cubin(compile({source}, "-DREAL=double -DFACTOR=2 -cl-denorms-are-zero -g"));
}

TEST_F(NvrtcCompile, SeveralSourcesFormOneProgram) {
    expect_cubin(
        compile({"constant float scale = 2.0f;\nfloat twice(float x) { return scale * x; }\n",
                 "kernel void apply(global float* x) { x[get_global_id(0)] = "
                 "twice(x[get_global_id(0)]); }\n"}));
}

TEST_F(NvrtcCompile, SyntaxErrorIsReportedOnItsOriginalLine) {
    const char* source =
        "// line 1\n"
        "kernel void broken(global float* x,\n"
        "                   local float* scratch) {\n"
        "    float4 v = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
        "    x[get_global_id(0)] = v.x + v.yz.x;\n"
        "\n"
        "    x[0] = undefined_name + 1;\n"
        "}\n";
    const auto log = failure_log({source});
    EXPECT_NE(log.find("source_1(7): error"), std::string::npos) << log;
    EXPECT_NE(log.find("undefined_name"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, ErrorsInLaterSourcesNameThatSource) {
    const auto log = failure_log({"float helper(float x) { return x; }\n",
                                  "\n\nkernel void k(global float* x) { x[0] = helper(x[0]) }\n"});
    EXPECT_NE(log.find("source_2(3): error"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, LineDirectivesOfFileSourcesWin) {
    const auto log = failure_log(
        {"#line 1 \"kernels/add.cl\"\nkernel void k(global float* x) {\n  x[0] = oops;\n}\n"});
    EXPECT_NE(log.find("kernels/add.cl(2): error"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, UnsupportedFeaturesAreNamedWithTheirLine) {
    const auto images =
        failure_log({"\nkernel void blur(image3d_t in, global float* out) {\n"
                     "    out[0] = 1.0f;\n}\n"});
    EXPECT_NE(images.find("source_1(2)"), std::string::npos) << images;
    EXPECT_NE(
        images.find(
            "'image3d_t' is not supported by kiln's CUDA backend (images other than image2d_t"),
        std::string::npos)
        << images;
    const auto access = failure_log({"kernel void blur(read_write image2d_t in) {}\n"});
    EXPECT_NE(
        access.find("'read_write' is not supported by kiln's CUDA backend (read-write images"),
        std::string::npos)
        << access;

    const auto half =
        failure_log({"kernel void k(global float* out) {\n\n    half4 h;\n    out[0] = 0;\n}\n"});
    EXPECT_NE(half.find("source_1(3)"), std::string::npos) << half;
    EXPECT_NE(half.find("'half4' is not supported"), std::string::npos) << half;
    const auto half_vector_load =
        failure_log({"kernel void k(global half* h, global float4* out) {\n    out[0] = "
                     "vloada_half4(0, h);\n}\n"});
    EXPECT_NE(half_vector_load.find("'vloada_half4' is not supported"), std::string::npos)
        << half_vector_load;

    const auto vector_printf =
        failure_log({"kernel void k(global float4* v) {\n    printf(\"%v5f\\n\", v[0]);\n}\n"});
    EXPECT_NE(vector_printf.find("source_1(2)"), std::string::npos) << vector_printf;
    EXPECT_NE(vector_printf.find("printf with a vector conversion"), std::string::npos)
        << vector_printf;
}

TEST_F(NvrtcCompile, KernelsCallOtherKernelsAsFunctions) {
    // OpenCL C lets a kernel call another; CUDA cannot call a __global__ function.
    expect_cubin(compile(
        {"kernel void scale(global float* x, local float* scratch, float by) {\n"
         "  scratch[get_local_id(0)] = x[get_global_id(0)] * by;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "  x[get_global_id(0)] = scratch[get_local_id(0)];\n}\n"
         "void twice(global float* x, local float* s) { scale(x, s, 2.0f); }\n"
         "kernel void empty(void) {}\n"
         "kernel void quadruple(global float* x, local float* s) { twice(x, s); twice(x, s); "
         "empty(); }\n"}));
}

TEST_F(NvrtcCompile, VectorPrintfConversionsBecomeOnePerComponent) {
    expect_cubin(compile({"int f(int a, int b) { return a + b; }\n",
                          "kernel void k(global float4* v, global int2* i, global uchar16* c) {\n"
                          "  printf(\"%d %v4hlf|%5.1v2d|\" \"%v16hhu %s\\n\", 7, v[f(1, 2)], i[0], "
                          "c[0], \"end\");\n}\n"}));
}

TEST_F(NvrtcCompile, NamesThatLookLikeUnsupportedFunctionsStayUsable) {
    expect_cubin(
        compile({"kernel void k(global int* v) { int work_group_size = get_local_size(0);\n"
                 "  int sub_group_count = 2; v[0] = work_group_size + sub_group_count; }\n"}));
}

TEST_F(NvrtcCompile, QualifierMacrosThatAreOneWordAreTranslated) {
    expect_cubin(
        compile({"#define KERNEL __kernel\n#define GLOBAL __global\n#define LOCAL __local\n"
                 "KERNEL void k(GLOBAL float* x, LOCAL float* scratch) {\n"
                 "  LOCAL float tile[4];\n  tile[0] = scratch[0] = x[0];\n"
                 "  barrier(CLK_LOCAL_MEM_FENCE);\n  x[0] = tile[0];\n}\n"}));
}

TEST_F(NvrtcCompile, QualifiersHiddenInLargerMacrosAreRefused) {
    const auto log =
        failure_log({"#define TILE(n) __local float tile[n]\n"
                     "kernel void k(global float* x) {\n  TILE(4);\n  x[0] = tile[0];\n}\n"});
    EXPECT_NE(log.find("__local qualifier inside a macro expansion"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, UntranslatedVectorLiteralIsAnErrorNotACommaExpression) {
    // A vector type reached through a function-like macro is invisible to the translator.
    const auto log = failure_log(
        {"#define VEC(t) t\n"
         "kernel void k(global float4* x) { x[0] = (VEC(float4))(1.0f, 2.0f, 3.0f, 4.0f); }\n"});
    EXPECT_NE(log.find("expression has no effect"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, WerrorTurnsWarningsIntoErrors) {
    const char* source =
        "kernel void k(global float* x) { int unused_result = 1 / 0; x[0] = 1.0f; }\n";
    expect_cubin(compile({source}));
    const auto log = failure_log({source}, "-Werror");
    EXPECT_NE(log.find("warning"), std::string::npos) << log;
}

TEST_F(NvrtcCompile, UnknownOptionsAreRejected) {
    try {
        compile({kiln_test::vector_add_source}, "-cl-fast-relaxed-math --frobnicate");
        FAIL() << "an unknown option was accepted";
    } catch (const build_error& e) {
        EXPECT_NE(e.log().find("--frobnicate"), std::string::npos) << e.log();
        EXPECT_EQ(e.code_name(), "NVRTC_ERROR_INVALID_OPTION");
    }
}

TEST_F(NvrtcCompile, IncludesAreTranslatedToo) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("kiln_cuda_include_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "helpers.cl")
        << "#ifndef HELPERS\n#define HELPERS\n"
           "float4 splat(float x) { return (float4)(x, x, x, x); }\n#endif\n";
    std::ofstream(dir / "broken.cl") << "float4 f(void) {\n  return nope;\n}\n";
    const auto compiled = compile({"#include \"helpers.cl\"\n#include <helpers.cl>\n"
                                   "kernel void k(global float4* v) { v[0] = splat(1.0f); }\n"},
                                  "-I " + dir.string());
    expect_cubin(compiled);
    const auto log =
        failure_log({"\n#include \"broken.cl\"\nkernel void k(global float4* v) { v[0] = f(); }\n"},
                    "-I" + dir.string());
    EXPECT_NE(log.find("broken.cl(2): error"), std::string::npos) << log;
    std::filesystem::remove_all(dir);
}

TEST_F(NvrtcCompile, NewerDevicesGetPtxForTheNewestKnownArchitecture) {
    const auto arch = choose_architecture(1000);  // compute capability 100.0 does not exist yet
    EXPECT_FALSE(arch.cubin);
    const auto compiled = compile({kiln_test::vector_add_source}, {}, arch);
    ASSERT_FALSE(compiled.is_cubin);
    const std::string ptx(reinterpret_cast<const char*>(compiled.image.data()),
                          compiled.image.size());
    EXPECT_NE(ptx.find(".entry add("), std::string::npos);
    EXPECT_EQ(choose_architecture(90).number, 90);
    EXPECT_TRUE(choose_architecture(90).cubin);
}

TEST_F(NvrtcCompile, ProgramScopeConstantsAreVisibleModuleGlobals) {
    // cuModuleGetGlobal finds a global by its name in the cubin's symbol table.
    const auto compiled =
        compile({"constant float weights[4] = {0};\n"
                 "constant const int offsets[2] = {0, 1};\n"
                 "kernel void k(global float* out) {\n"
                 "  out[get_global_id(0)] = weights[offsets[1]];\n}\n"});
    expect_cubin(compiled);
    const std::string image(reinterpret_cast<const char*>(compiled.image.data()),
                            compiled.image.size());
    for (const char* name : {"weights", "offsets"})
        EXPECT_NE(image.find(std::string(1, '\0') + name + std::string(1, '\0')), std::string::npos)
            << name;
}

TEST_F(NvrtcCompile, ConstantParametersAreReadThroughTheConstantCache) {
    // The body receives the area's address as a plain pointer; inlined into the entry point it
    // must still load from the constant bank (ld.const), and the global buffer with ld.global.
    const auto compiled = compile(
        {"kernel void pick(constant float4* table, global const uint* index, global float4* out) "
         "{\n  size_t i = get_global_id(0);\n  out[i] = table[index[i]] * 2.0f;\n}\n"
         "kernel void twice(constant float4* table, global const uint* index, global float4* out) "
         "{\n  pick(table, index, out);\n  pick(table, index, out);\n}\n"},
        {}, {90, false});
    const std::string ptx(reinterpret_cast<const char*>(compiled.image.data()),
                          compiled.image.size());
    for (const char* name : {"kiln_constant_pick_0", "kiln_constant_twice_0"})
        EXPECT_TRUE(std::regex_search(
            ptx, std::regex(std::string(R"(\.const \.align 16 \.b8 )") + name + R"(\[30720\])")))
            << name << "\n"
            << ptx;
    EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(ld\.const\.v4\.f32)"))) << ptx;
    EXPECT_FALSE(std::regex_search(ptx, std::regex(R"(ld\.global(\.nc)?\.v4\.f32)"))) << ptx;
    // Sixty kibibytes of areas and a small program-scope table still fit the bank together with
    // the math library's tables, which sinf needs.
    expect_cubin(
        compile({"kernel void k(constant float* table, global float* out) "
                 "{ out[0] = sin(table[get_global_id(0)]); }\n"}));
}

TEST_F(NvrtcCompile, ConstantsPastSixtyFourKibibytesAreABuildError) {
    const auto log =
        failure_log({"constant float table[16385] = {0};\n"
                     "kernel void k(global float* out, uint i) { out[0] = table[i]; }\n"});
    EXPECT_NE(log.find("too much global constant data"), std::string::npos) << log;
}

// The scan family's look-back within a warp, with states too wide for one word (values written
// apart, behind a fence): on GPUs only CUDA runs that combination (NVIDIA's OpenCL takes
// reduce-then-scan for it), so here it must at least translate and build, for 8-byte values and
// 16-byte pairs shuffled per component.
TEST_F(NvrtcCompile, WarpLookBackWithSeparateStatesBuilds) {
    scan_policy policy{128, 8};
    policy.sub_group_size = 32;
    policy.target = cuda_warps;
    policy.lookback_depth = 2;
    policy.schedule = scan_schedule::single_pass;
    const declare_input<scan_input> input = [](source_builder& b) {
        b.parameter("global const ulong* in");
        return scan_input{.element = {.value = "in[idx]"}};
    };
    for (const auto& operation : {make_scan_operation<std::uint64_t, reducers::sum>(),
                                  make_scan_operation<double, reducers::maximum>(),
                                  segment_operation<std::int64_t, reducers::sum>(false)}) {
        SCOPED_TRACE(operation.value_type);
        ASSERT_EQ(operation.packing, state_packing::separate);
        const std::string source = scan_program_source(operation, input, policy, false);
        EXPECT_NE(source.find("kiln_shuffle_down"), std::string::npos);
        EXPECT_NE(source.find("#define KILN_ORDER_WINDOW 64"), std::string::npos);
        expect_cubin(compile({source}));
    }
}

// The chunk kernels (the scan family's CPU strategy, which the tests force on GPUs too)
// translate and build: scans of 4- and 8-byte values, inclusive and exclusive, element by element
// and by vectors, compaction at a cursor and by vectors, and a scattering program of
// reduce_by_key's pairs.
TEST_F(NvrtcCompile, ChunkKernelsBuild) {
    const declare_input<element_input> input = [](source_builder& b) {
        b.parameter("global const uint* in");
        return element_input{.value = "in[idx]", .plain_array = "in"};
    };
    const scan_schedule chained = scan_schedule::single_pass;
    for (const scan_schedule schedule : {chained, scan_schedule::multi_pass}) {
        for (const bool exclusive : {false, true}) {
            for (const auto& operation : {make_scan_operation<std::uint32_t, reducers::sum>(),
                                          make_scan_operation<double, reducers::maximum>()}) {
                SCOPED_TRACE(operation.value_type + (exclusive ? " exclusive" : " inclusive") +
                             (schedule == chained ? " chained" : " two passes"));
                const std::string source =
                    chunk_scan_program_source(operation, input, 256, schedule, exclusive);
                for (const auto& kernel : chunk_scan_kernels(operation, false, schedule))
                    EXPECT_NE(source.find(kernel.name()), std::string::npos) << kernel.name();
                expect_cubin(compile({source}));
                // By vectors (scan_chunk_lanes.cpp).
                ASSERT_TRUE(chunk_lanes_apply(operation, 8));
                expect_cubin(compile({chunk_lane_scan_program_source(operation, input, 256,
                                                                     schedule, exclusive, 8)}));
            }
        }
    }
    // Compaction writing at a cursor (compaction_chunks.cpp).
    const declare_input<compaction_input> kept = [](source_builder& b) {
        b.parameter("global long* kiln_out");
        b.parameter("ulong kiln_capacity");
        b.parameter("global const long* in");
        return compaction_input{.keep = {.value = "(uint)(in[idx] % 3 != 0)"},
                                .kept_value = "in[idx]"};
    };
    expect_cubin(compile({compaction_chunk_program_source(
        make_scan_operation<std::uint32_t, reducers::sum>(), kept, 256, chained)}));
    // Compaction by vectors (compaction_vector_chunks.cpp): its table, packed stores and lanes
    // picked by subscripts.
    const declare_input<compaction_input> runs_kept = [](source_builder& b) {
        b.parameter("global long* kiln_out");
        b.parameter("ulong kiln_capacity");
        b.parameter("global const long* in");
        return compaction_input{.keep = {.value = "(uint)(idx == 0 || in[idx] != in[idx - 1])"},
                                .kept_type = "long",
                                .kept_value = "in[idx]"};
    };
    expect_cubin(compile({compaction_vector_chunk_program_source(
        make_scan_operation<std::uint32_t, reducers::sum>(), runs_kept, 256, chained)}));
    // The element loops' scatter, over pairs (each a run's head and a value).
    const declare_input<compaction_input> runs = [](source_builder& b) {
        b.parameter("global const uint* keys");
        b.parameter("global float* sums");
        return compaction_input{
            .keep = {.value = "kiln_segment((idx == 0 || keys[idx] != keys[idx - 1]), 1.0f)"},
            .scatter = [](source_builder& s) {
                s.line("if (x.x != 0 && had) sums[(ulong)running.x - 2] = as_float(before.y);");
            }};
    };
    expect_cubin(compile({compaction_scatter_chunk_program_source(
        segment_operation<float, reducers::sum>(false), runs, 512, chained)}));
    // reduce_by_key's loops, element by element and by vectors (reduce_by_key_lane_chunks.cpp),
    // over 4-byte keys and values and over 8-byte keys with values from an expression.
    const value_combine sum = [](source_builder&, const std::string& a, const std::string& b) {
        return "(" + a + " + " + b + ")";
    };
    for (const bool wide : {false, true}) {
        SCOPED_TRACE(wide ? "ulong keys, long values" : "int keys and values");
        const std::string key = wide ? "ulong" : "int", value = wide ? "long" : "int";
        const declare_input<reduce_by_key_input> by_key = [&](source_builder& b) {
            b.parameter("global " + key + "* " + run_outputs::keys);
            b.parameter("global " + value + "* " + run_outputs::values);
            b.parameter(std::string("ulong ") + run_outputs::capacity);
            b.parameter(std::string("ulong ") + run_outputs::run_base);
            b.parameter("global const " + key + "* keys");
            b.parameter("global const " + value + "* values");
            return reduce_by_key_input{
                .value = wide ? element_input{{"const long twice = 2 * values[idx];"}, "twice + 1"}
                              : element_input{.value = "values[idx]", .plain_array = "values"},
                .value_type = value,
                .head = "(idx == 0 || keys[idx] != keys[idx - 1])",
                .key_type = key,
                .key = "keys[idx]",
                .keys_array = "keys"};
        };
        const scan_operation pairs = wide ? segment_operation<std::int64_t, reducers::sum>(false)
                                          : segment_operation<std::int32_t, reducers::sum>(true);
        expect_cubin(
            compile({reduce_by_key_chunk_program_source(pairs, sum, by_key, 512, chained)}));
        expect_cubin(compile(
            {reduce_by_key_prefix_chunk_program_source(pairs, sum, by_key, 512, chained, 16)}));
    }
}

// The NVIDIA rows' tiles of reduce_by_key (runs in registers, staged through one local array
// aliased by a pointer) and unique (keys compared in local memory) translate and build.
TEST_F(NvrtcCompile, RegisterRunsAndUniqueTilesBuild) {
    scan_policy rbk{256, 16};
    rbk.sub_group_size = 32;
    rbk.target = cuda_warps;
    rbk.register_runs = true;
    rbk.full_tiles = tile_access::wide;
    const declare_input<reduce_by_key_input> by_key = [&](source_builder& b) {
        b.parameter(std::string("global int* ") + run_outputs::keys);
        b.parameter(std::string("global int* ") + run_outputs::values);
        b.parameter(std::string("ulong ") + run_outputs::capacity);
        b.parameter(std::string("ulong ") + run_outputs::run_base);
        b.parameter("int kiln_has_previous");
        b.parameter("int kiln_previous_key");
        b.parameter("global const int* kiln_keys");
        b.parameter("global const int* values");
        reduce_by_key_input runs{
            .value = {.value = "values[idx]"},
            .value_type = "int",
            .head =
                "(idx == 0 ? !kiln_has_previous || kiln_keys[0] != kiln_previous_key : "
                "kiln_keys[idx] != kiln_keys[idx - 1])",
            .key_type = "int",
            .key = "kiln_keys[idx]",
            .pair =
                [](const std::string& head, const std::string& value) {
                    return "kiln_segment(" + head + ", " + value + ")";
                },
            .runs_begun = [](const std::string& pair) { return "(ulong)(" + pair + ").x"; },
            .open_value = [](const std::string& pair) { return "as_int((" + pair + ").y)"; }};
        runs.wide.loads = {{"values", "int4"}};
        for (int lane = 0; lane < 4; ++lane)
            runs.wide.lanes.push_back({{}, "values_in." + std::string(1, "xyzw"[lane])});
        return runs;
    };
    const value_combine sum = [](source_builder&, const std::string& a, const std::string& b) {
        return "(" + a + " + " + b + ")";
    };
    // Each of what the runs may keep from their loads, staged and written by each work-item.
    for (const run_items kept : {run_items::none, run_items::values, run_items::values_and_keys})
        for (const bool staged : {true, false}) {
            rbk.kept_run_items = kept;
            rbk.staged_writes = staged;
            expect_cubin(compile({reduce_by_key_program_source(
                segment_operation<std::int32_t, reducers::sum>(true), sum, false, by_key, rbk)}));
        }
    scan_policy select{128, 32};
    select.sub_group_size = 32;
    select.target = cuda_warps;
    select.full_tiles = tile_access::unrolled;
    const scan_operation count{"uint", 4,
                               [](source_builder&, const std::string& a, const std::string& b) {
                                   return "(" + a + " + " + b + ")";
                               },
                               1, state_packing::low_32_bits};
    expect_cubin(compile({compaction_program_source(
        count,
        [](source_builder& b) {
            unique_shape shape;
            shape.plan.counting.narrow = true;
            return declare_unique_input(b, shape);
        },
        select)}));
}

// The 2-D stencil's strips kernel (stencil_2d_streaming.cpp) translates and builds: the GPU
// rows' 3 x 3 floats, 1 x 1 (no halo columns), and doubles whose halo is wider than the group
// (two halo slots per work-item).
TEST_F(NvrtcCompile, StencilStripsBuild) {
    const auto shape = [](std::string type, std::size_t kr, std::size_t kc, std::size_t cr,
                          std::size_t cc, std::size_t group) {
        return tiled_2d_shape{
            .type = std::move(type),
            .kernel_rows = kr,
            .kernel_columns = kc,
            .center_row = cr,
            .center_column = cc,
            .tuning = {.work_group_size = group, .items_per_work_item = 4, .strip_rows = 64}};
    };
    for (const tiled_2d_shape& s :
         {shape("float", 3, 3, 1, 1, 128), shape("float", 1, 1, 0, 0, 256),
          shape("double", 5, 40, 2, 7, 32)}) {
        SCOPED_TRACE(s.key());
        const std::string source = stencil_strips_source(s);
        EXPECT_NE(source.find("kiln_stencil_2d_strips"), std::string::npos);
        expect_cubin(compile({source}));
    }
}

// The stencil windows of expression kernels (stencil_windows.cpp) translate and build: a step of
// wide lanes filling its private window through the aligned wide load, taps and a user body over
// the window, and the element form of the tail, as the expression kernel of
// y = x * S + op(x) calls them (floats in lanes of 4, doubles in lanes of 2).
TEST_F(NvrtcCompile, StencilWindowsBuild) {
    for (const auto& [type, lanes] :
         {std::pair<std::string, unsigned>{"float", 4}, {"double", 2}}) {
        SCOPED_TRACE(type);
        source_builder b;
        const std::string window = define_stencil_window(b, type, 5, 2, lanes);
        const std::string taps = define_stencil_taps(b, type, 5);
        const std::string element = define_stencil_element(b, type, 5, 2);
        b.define("body", type + " body(const " + type +
                             "* x) {\n    return (sin(x[0] - x[-1]) + x[2]);\n}\n");
        const std::string pointer = "global const " + type + "* ";
        b.begin_kernel("kiln_assign");
        for (const std::string& p : std::vector<std::string>{
                 "ulong n", "global " + type + "* y", pointer + "xs", pointer + "before",
                 pointer + "after", "long m", "uint at_start", "uint at_end", pointer + "c"})
            b.parameter(p);
        b.begin_body();
        std::string coefficients;
        for (int k = 0; k < 5; ++k) {
            b.line("const " + type + " c_" + std::to_string(k) + " = c[" + std::to_string(k) +
                   "];");
            coefficients += ", c_" + std::to_string(k);
        }
        const std::string l = std::to_string(lanes);
        b.open("for (ulong kiln_j = (ulong)get_global_id(0); kiln_j < n / " + l +
               "; kiln_j += (ulong)get_global_size(0))");
        b.line(type + " w[" + std::to_string(4 + lanes) + "];");
        b.line(window + "(xs, before, after, m, at_start, at_end, (long)(" + l + " * kiln_j), w);");
        for (unsigned lane = 0; lane < lanes; ++lane)
            b.line("y[" + l + " * kiln_j + " + std::to_string(lane) + "] = " + taps + "(w + " +
                   std::to_string(lane) + coefficients + ") + body(w + " +
                   std::to_string(lane + 2) + ");");
        b.close();
        b.line("const ulong i = n - 1;");
        b.line("y[i] = " + element + "(xs, before, after, m, at_start, at_end" + coefficients +
               ", (long)i);");
        b.end_kernel();
        expect_cubin(compile({b.str()}));
    }
}

namespace {

/// reduce_by_key's input over int keys and values, as reduce_by_key.hpp declares it; `wide`: read
/// also as int4 lanes (runs in registers).
reduce_by_key_input int_runs(source_builder& b, bool wide) {
    b.parameter(std::string("global int* ") + run_outputs::keys);
    b.parameter(std::string("global int* ") + run_outputs::values);
    b.parameter(std::string("ulong ") + run_outputs::capacity);
    b.parameter(std::string("ulong ") + run_outputs::run_base);
    b.parameter("global const int* kiln_keys");
    b.parameter("global const int* values");
    reduce_by_key_input runs{
        .value = {.value = "values[idx]"},
        .value_type = "int",
        .head = "(idx == 0 || kiln_keys[idx] != kiln_keys[idx - 1])",
        .key_type = "int",
        .key = "kiln_keys[idx]",
        .pair =
            [](const std::string& flag, const std::string& payload) {
                return "kiln_segment(" + flag + ", " + payload + ")";
            },
        .runs_begun = [](const std::string& pair) { return "(ulong)(" + pair + ").x"; },
        .open_value = [](const std::string& pair) { return "as_int((" + pair + ").y)"; }};
    if (wide)
        runs.wide = {.lanes = {{{}, "values_in.x"},
                               {{}, "values_in.y"},
                               {{}, "values_in.z"},
                               {{}, "values_in.w"}},
                     .loads = {{"values", "int4"}}};
    return runs;
}

}  // namespace

// reduce_by_key's runs in registers, staged in local memory, at the H100 rows' shape (256 x 16
// under warps): keys, then values, through one padded tile of ints beside the group scan, and the
// kernels translate and build.
TEST_F(NvrtcCompile, ReduceByKeyStagedRunsBuild) {
    scan_policy policy{256, 16};
    policy.sub_group_size = 32;
    policy.target = cuda_warps;
    policy.register_runs = true;
    policy.full_tiles = tile_access::wide;
    ASSERT_TRUE(policy.staged_writes);
    const declare_input<reduce_by_key_input> runs = [](source_builder& b) {
        return int_runs(b, true);
    };
    const std::string source = reduce_by_key_tile_program_source(
        segment_operation<std::int32_t, reducers::sum>(true), runs, policy);
    EXPECT_NE(source.find("local int* kiln_run_keys = (local int*)kiln_run_values;"),
              std::string::npos)
        << source;
    expect_cubin(compile({source}));
}

// Staged compaction and reduce_by_key's split tiles under warps keep their 0/1 flags as ballot
// words, with no byte-wide local-memory traffic (the byte tile failed on CUDA alone, H100,
// 2026-11-22): the generated kernels must say so, and translate and build for 8-byte kept
// values with 32-bit counts and for (head, value) pairs.
TEST_F(NvrtcCompile, CompactionFlagsUnderWarpsAreBallotWords) {
    scan_policy policy{256, 8};
    policy.sub_group_size = 32;
    policy.target = cuda_warps;
    const scan_operation count{"uint", 4,
                               [](source_builder&, const std::string& a, const std::string& b) {
                                   return "(" + a + " + " + b + ")";
                               },
                               1, state_packing::low_32_bits};
    ASSERT_TRUE(policy.staged_writes);
    const declare_input<compaction_input> compaction = [](source_builder& b) {
        b.parameter("global long* kiln_out");
        b.parameter("ulong kiln_capacity");
        b.parameter("global const long* in");
        return compaction_input{.keep = {.value = "(uint)(in[idx] % 3 != 0)"},
                                .kept_type = "long",
                                .kept_value = "in[idx]"};
    };
    const declare_input<reduce_by_key_input> runs = [](source_builder& b) {
        return int_runs(b, false);
    };
    for (const bool split : {false, true}) {
        SCOPED_TRACE(split ? "reduce_by_key" : "copy_if");
        const std::string source =
            split ? reduce_by_key_tile_program_source(
                        segment_operation<std::int32_t, reducers::sum>(true), runs, policy)
                  : compaction_tile_program_source(count, compaction, policy);
        EXPECT_NE(source.find("local uint kiln_flag_bits["), std::string::npos) << source;
        EXPECT_EQ(source.find("local uchar"), std::string::npos) << source;
        EXPECT_EQ(source.find("kiln_my_flags") != std::string::npos, !split) << source;
        expect_cubin(compile({source}));
    }
}

// The radix multi-split under warps calls the vocabulary's ballots, warp barriers and (its group
// scans) shuffles, all of which the prelude defines: it translates and builds.
namespace {

// A 4-byte-key multi-split sort shape under CUDA's warps, with ballots.
radix_sort_shape warp_multi_split_shape() {
    radix_sort_shape shape;
    shape.keys = {sort_key_kind::unsigned_integer, 4};
    shape.work_group_size = 256;
    shape.items_per_work_item = 8;
    shape.sub_group_size = 32;
    shape.multi_split = true;
    shape.ballots = true;
    shape.target = cuda_warps;
    return shape;
}

}  // namespace

TEST_F(NvrtcCompile, RadixMultiSplitWithBallotsBuilds) {
    radix_sort_shape shape = warp_multi_split_shape();
    shape.value_bytes = 4;
    const std::string source = radix_sort_source(shape);
    EXPECT_NE(source.find("kiln_ballot_agree("), std::string::npos);
    EXPECT_NE(source.find("kiln_sub_group_sync()"), std::string::npos);
    EXPECT_NE(source.find("kiln_shuffle_up("), std::string::npos);
    expect_cubin(compile({source}));
}

// The radix sort's single pass looks back over 32-bit state words (lookback_state::for_counts)
// by volatile accesses, which the translation keeps: it translates and builds.
TEST_F(NvrtcCompile, RadixSinglePassBuilds) {
    radix_sort_shape shape = warp_multi_split_shape();
    shape.single_pass = true;
    const std::string source = radix_sort_source(shape);
    EXPECT_NE(source.find("kiln_onesweep_pass"), std::string::npos);
    EXPECT_NE(source.find("*(volatile global uint*)&words["), std::string::npos) << source;
    expect_cubin(compile({source}));
}

// Floating-point keys stay in their stored form between the single pass's passes, each pass
// converting them in or out where the passes before or after it left them: float, half and double
// keys, with values, in both directions, translate and build.
TEST_F(NvrtcCompile, RadixSinglePassOfFloatingPointKeysBuilds) {
    for (const sort_key_info keys : {sort_key_info{sort_key_kind::floating, 23, 4},
                                     sort_key_info{sort_key_kind::floating, 10, 2},
                                     sort_key_info{sort_key_kind::floating, 52, 8}}) {
        for (const bool descending : {false, true}) {
            SCOPED_TRACE(std::to_string(keys.bytes) + (descending ? " descending" : ""));
            radix_sort_shape shape = warp_multi_split_shape();
            shape.keys = keys;
            shape.descending = descending;
            shape.value_bytes = 4;
            shape.single_pass = true;
            const std::string source = radix_sort_source(shape);
            EXPECT_NE(source.find("kiln_sort_raw(k)"), std::string::npos);
            EXPECT_NE(source.find("if (stored_out)"), std::string::npos);
            expect_cubin(compile({source}));
        }
    }
}

// The single pass with the multi-split's peers found by match.any and the histogram's peers
// adding once (sort_bench --sweep's "m" and "a"), its counters per warp and digit-major: the
// prelude's kiln_match_any translates and builds.
TEST_F(NvrtcCompile, RadixMatchAnyAndHistogramVariantsBuild) {
    radix_sort_shape shape = warp_multi_split_shape();
    shape.single_pass = true;
    shape.match_any = true;
    shape.histogram = {.copies = 4, .per_sub_group = true, .digit_major = true, .aggregated = true};
    const std::string source = radix_sort_source(shape);
    EXPECT_NE(source.find("kiln_match_any(digit0)"), std::string::npos);
    EXPECT_NE(source.find("kiln_match_any(digit0_0)"), std::string::npos);
    expect_cubin(compile({source}));
}

// A radix row's register limit reaches NVRTC as the program's build option.
TEST_F(NvrtcCompile, RadixSinglePassBuildsWithARegisterLimit) {
    radix_sort_shape shape = warp_multi_split_shape();
    shape.single_pass = true;
    shape.register_limit = 56;
    EXPECT_EQ(shape.build_options(), "-cl-nv-maxrregcount=56");
    expect_cubin(compile({radix_sort_source(shape)}, shape.build_options()));
}

TEST_F(NvrtcCompile, VersionIsReported) {
    EXPECT_TRUE(std::regex_match(nvrtc_version_string(), std::regex(R"(NVRTC \d+\.\d+)")))
        << nvrtc_version_string();
}

}  // namespace
}  // namespace kiln::detail::cuda
