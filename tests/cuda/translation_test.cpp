// SPDX-License-Identifier: Apache-2.0
// The OpenCL C to CUDA translation on its own: what each rule produces, and its errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <kiln/error.hpp>
#include <string>
#include <vector>

#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#include "opencl_c_kernels.hpp"

namespace kiln::detail::cuda {
namespace {

using space = parameter_info::address_space;

translation translate(const std::string& source, const std::string& options = {}) {
    return translate_opencl_c(std::vector<std::string>{source},
                              parse_build_options(options).translation);
}

/// The translated text of the user's source, without the prelude include and namespace.
std::string body(const translation& t) {
    const auto start = t.source.find("#line 1 \"source_1\"\n");
    const auto end = t.source.rfind("}  // namespace kiln_opencl");
    return t.source.substr(start, end - start);
}

std::string translation_error(const std::string& source, const std::string& options = {}) {
    try {
        translate(source, options);
    } catch (const build_error& e) {
        return e.log();
    }
    ADD_FAILURE() << "the translation succeeded";
    return {};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(Translation, KernelSignaturesAreParsed) {
    const auto t = translate(kiln_test::vector_add_source);
    ASSERT_EQ(t.kernels.size(), 1u);
    const auto& k = t.kernels[0];
    EXPECT_EQ(k.name, "add");
    EXPECT_EQ(k.symbol, "add");
    ASSERT_EQ(k.parameters.size(), 4u);
    EXPECT_EQ(k.parameters[0].space, space::global);
    EXPECT_EQ(k.parameters[0].type_name, "float*");
    EXPECT_EQ(k.parameters[0].name, "a");
    EXPECT_TRUE(k.parameters[0].pointee_const);
    EXPECT_FALSE(k.parameters[2].pointee_const);
    EXPECT_EQ(k.parameters[3].space, space::private_);
    EXPECT_EQ(k.parameters[3].type_name, "uint");
    EXPECT_TRUE(contains(t.source,
                         "extern \"C\" __global__ void add(::kiln_opencl::detail::launch_info "
                         "kiln_launch_parameter,"));
}

TEST(Translation, FpContractOffTurnsFusedMultiplyAddOff) {
    const std::string kernel = "kernel void f(global float* x) { x[0] = x[0] * x[1] + x[2]; }\n";
    EXPECT_FALSE(translate(kernel).contraction_off);
    EXPECT_FALSE(translate("#pragma OPENCL FP_CONTRACT ON\n" + kernel).contraction_off);
    const auto off = translate("#pragma OPENCL FP_CONTRACT OFF\n" + kernel);
    EXPECT_TRUE(off.contraction_off);
    EXPECT_FALSE(contains(body(off), "FP_CONTRACT"));
}

TEST(Translation, EveryLineStaysWhereItWas) {
    for (const char* source :
         {kiln_test::vector_add_source, kiln_test::reduction_source, kiln_test::tiled_matmul_source,
          kiln_test::atomics_source, kiln_test::vector_types_source}) {
        const auto translated = body(translate(source));
        const auto lines = std::count(translated.begin(), translated.end(), '\n');
        // Two more: the #line directive's own line, and the one that closes the namespace.
        EXPECT_EQ(lines,
                  std::count(source, source + std::char_traits<char>::length(source), '\n') + 2)
            << translated;
    }
}

TEST(Translation, LocalPointerParametersBecomeOffsetsIntoSharedMemory) {
    const auto t = translate(kiln_test::reduction_source);
    ASSERT_EQ(t.kernels.size(), 1u);
    const auto& params = t.kernels[0].parameters;
    ASSERT_EQ(params.size(), 4u);
    EXPECT_EQ(params[2].space, space::local);
    EXPECT_EQ(params[2].type_name, "float*");
    EXPECT_EQ(params[3].type_name, "uint");
    EXPECT_TRUE(contains(t.source, "unsigned int kiln_local_offset_2"));
    EXPECT_TRUE(contains(t.source,
                         "float * scratch = (float *)(::kiln_opencl::detail::dynamic_shared_memory "
                         "+ kiln_local_offset_2);"));
}

TEST(Translation, LocalArraysAndConstantTablesGetCudaMemorySpaces) {
    const auto matmul = body(translate(kiln_test::tiled_matmul_source));
    EXPECT_TRUE(contains(matmul, "__shared__ float a_tile[TILE][TILE];"));
    const auto vectors = body(translate(kiln_test::vector_types_source));
    EXPECT_TRUE(contains(vectors, "__constant__ float4 offsets[2]"));
    const auto t = translate(
        "kernel void k(constant float* table, global float* out) {\n"
        "  constant float* p = table; local float* q = 0; out[0] = p[0];\n}\n");
    EXPECT_EQ(t.kernels[0].parameters[0].space, space::constant);
    EXPECT_TRUE(contains(t.source, "const  float* table"));
    EXPECT_TRUE(contains(t.source, "  float* p = table;  float* q = 0;"));
}

TEST(Translation, ConstantPointerParametersReadModuleConstantAreas) {
    // The entry point takes no pointer for `table`: the body gets the kernel's __constant__ area,
    // which the launch fills from the argument first.
    const auto t = translate(
        "kernel void pick(constant float* table, uint i, global float* out) {\n"
        "  out[0] = table[i];\n}\n"
        "kernel void new(constant int* a, constant int* b, global int* out) { out[0] = a[0]; }\n");
    const std::size_t area = 60 * 1024 / 3 / 16 * 16;
    EXPECT_TRUE(contains(t.source,
                         "extern \"C\" __constant__ __align__(16) unsigned char "
                         "kiln_constant_pick_0[" +
                             std::to_string(area) + "];"))
        << t.source;
    EXPECT_TRUE(contains(t.source,
                         "extern \"C\" __global__ void pick(::kiln_opencl::detail::"
                         "launch_info kiln_launch_parameter, uint i, float * out)"))
        << "the entry point takes no pointer for the constant parameter:\n"
        << t.source;
    EXPECT_TRUE(contains(t.source,
                         "::kiln_opencl::detail::constant_area table{kiln_constant_pick_0}; "
                         "kiln_body_pick(kiln_launch_parameter, table, i, out); }"))
        << t.source;
    EXPECT_TRUE(contains(t.source, "kiln_constant_kiln_cxx_new_0[" + std::to_string(area)));
    EXPECT_TRUE(contains(t.source, "kiln_constant_kiln_cxx_new_1[" + std::to_string(area)));
    EXPECT_EQ(constant_area_symbol("kiln_cxx_new", 1), "kiln_constant_kiln_cxx_new_1");
}

TEST(Translation, TileMapParametersAreTheLaunchsOwnBytes) {
    // The copies read a tile map where the launch left it: the entry point's parameter is
    // __grid_constant__ and the body receives a reference to it, not a copy.
    const auto t = translate(
        "kernel void copy(kiln_tile_map a_map, global float* out, float scale) {\n"
        "  out[0] = scale;\n}\n");
    EXPECT_TRUE(contains(t.source,
                         "extern \"C\" __global__ void copy(::kiln_opencl::detail::launch_info "
                         "kiln_launch_parameter, const __grid_constant__ kiln_tile_map a_map, "
                         "float * out, float scale)"))
        << t.source;
    EXPECT_TRUE(contains(body(t), "kiln_tile_map const& a_map")) << body(t);
    EXPECT_EQ(t.kernels.at(0).parameters.at(0).type_name, "kiln_tile_map");
}

TEST(Translation, ConstantAreasShareABudgetThatLeavesRoomForProgramScopeConstants) {
    EXPECT_EQ(constant_area_bytes(0, false), 0u);
    EXPECT_EQ(constant_area_bytes(1, false), 60u * 1024);
    EXPECT_EQ(constant_area_bytes(1, true), 32u * 1024);
    EXPECT_EQ(constant_area_bytes(3, true), 32u * 1024 / 3 / 16 * 16);
    const auto t = translate(
        "constant float scale[2] = {1, 2};\n"
        "kernel void k(constant float* table, global float* out) { out[0] = table[0]; }\n");
    EXPECT_TRUE(contains(t.source, "kiln_constant_k_0[32768]")) << t.source;
    EXPECT_TRUE(contains(translation_error("kernel void k(constant float x, global float* out) "
                                           "{ out[0] = x; }\n"),
                         "is constant but not a pointer"));
}

TEST(Translation, ProgramScopeConstantsAreHostWritableCudaConstants) {
    // C linkage lets cuModuleGetGlobal find them by name; without `const` NVRTC cannot fold
    // their initializer into the kernels, so values the host writes later are the ones read.
    const auto t =
        body(translate("constant const float weights[4] = {1, 2, 3, 4};\n"
                       "constant int const offsets[2] = {0};\n"
                       "kernel void k(global float* out) { out[0] = weights[offsets[1]]; }\n"));
    EXPECT_TRUE(contains(t, "extern \"C\" __constant__  float weights[4] = {1, 2, 3, 4};")) << t;
    EXPECT_TRUE(contains(t, "extern \"C\" __constant__ int  offsets[2] = {0};")) << t;
}

TEST(Translation, VectorLiteralsBecomeConstructorCalls) {
    const auto t = body(translate(
        "#define REAL4 float4\ntypedef float4 real4;\n"
        "float4 f(float x) { return (float4)(x, 1.0f, (float2)(x)) + (real4)(x) + (REAL4)(2.0f) +\n"
        "  (float4)x + g((float)(x)) + (const float4){1, 2, 3, 4}; }\n"));
    EXPECT_TRUE(contains(t, "return float4(x, 1.0f, float2(x)) + real4(x) + REAL4(2.0f) +")) << t;
    EXPECT_TRUE(contains(t, "(float4)x + g((float)(x)) +  float4{1, 2, 3, 4};")) << t;
}

TEST(Translation, SwizzlesBecomeVectorMembers) {
    const auto t =
        body(translate("float4 f(float4 v, float8 w) {\n"
                       "  v.xy = v.wz; v.s3 += w.s7; v.lo = w.even.lo; return v.zyxw + "
                       "(float4)(w.odd.S01, v.x, v.rg.y);\n}\n"));
    EXPECT_TRUE(contains(t, "v.kiln_swizzle_ref<0,1>() = v.kiln_swizzle<3,2>();")) << t;
    EXPECT_TRUE(contains(t, "v.kiln_s<3>() += w.kiln_s<7>();")) << t;
    EXPECT_TRUE(contains(t, "v.kiln_lo_ref() = w.kiln_even().kiln_lo();")) << t;
    EXPECT_TRUE(contains(t,
                         "v.kiln_swizzle<2,1,0,3>() + float4(w.kiln_odd().kiln_swizzle<0,1>(), "
                         "v.x, v.kiln_swizzle<0,1>().y)"))
        << t;
}

TEST(Translation, StructMembersWithSwizzleNamesStayMembers) {
    const auto t =
        body(translate("typedef struct { int lo, hi; float xy; } range_t;\n"
                       "int width(range_t r) { return r.hi - r.lo + (int)r.xy; }\n"));
    EXPECT_TRUE(contains(t, "return r.hi - r.lo + (int)r.xy;")) << t;
}

TEST(Translation, CxxKeywordsUsedAsNamesAreRenamed) {
    const auto t = translate(
        "kernel void k(global int* new, int class) { int this = class; new[0] = this; }\n");
    ASSERT_EQ(t.kernels[0].parameters.size(), 2u);
    EXPECT_EQ(t.kernels[0].parameters[0].name, "new");
    EXPECT_TRUE(contains(t.source, "int* kiln_cxx_new, int kiln_cxx_class) { const"));
    EXPECT_TRUE(
        contains(t.source, "int kiln_cxx_this = kiln_cxx_class; kiln_cxx_new[0] = kiln_cxx_this;"));
}

TEST(Translation, BuiltinsWithTypesInTheirNamesBecomeTemplates) {
    const auto t =
        body(translate("void f(float4 v, global float* p) { int4 a = convert_int4_sat_rtz(v); uint "
                       "b = as_uint(v.x);\n"
                       "  float c = convert_float(a.x); vstore4(vload4(0, p), 1, p); }\n"));
    EXPECT_TRUE(contains(t, "::kiln_opencl::detail::convert< ::kiln_opencl::int4, true, 2>(v)"))
        << t;
    EXPECT_TRUE(contains(t, "::kiln_opencl::detail::as< ::kiln_opencl::uint>(v.x)")) << t;
    EXPECT_TRUE(contains(t, "::kiln_opencl::detail::convert< float, false, 0>(a.x)")) << t;
    EXPECT_TRUE(contains(
        t, "::kiln_opencl::detail::vstore<4>(::kiln_opencl::detail::vload<4>(0, p), 1, p)"))
        << t;
}

TEST(Translation, KernelAttributesAndPrototypes) {
    const auto t = translate(
        "kernel void k(global float* x);\n"
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k(global float* x) { x[0] = "
        "0; }\n"
        "kernel void empty(void) {}\n");
    ASSERT_EQ(t.kernels.size(), 2u);
    EXPECT_EQ(t.kernels[0].name, "k");
    EXPECT_EQ(t.kernels[1].name, "empty");
    EXPECT_TRUE(t.kernels[1].parameters.empty());
    EXPECT_TRUE(contains(t.source, "__launch_bounds__((64)*(1)*(1)) k("));
    EXPECT_TRUE(contains(t.source,
                         "void empty(::kiln_opencl::detail::launch_info kiln_launch_parameter) {"));
}

// NVRTC sizes a kernel's registers by its launch bounds and then ignores --maxrregcount: under
// NVIDIA's register limit option, the required work-group size gives no bounds.
TEST(Translation, RegisterLimitDropsLaunchBounds) {
    const std::string source =
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k(global float* x) { x[0] = "
        "0; }\n";
    EXPECT_TRUE(contains(body(translate(source)), "__launch_bounds__"));
    EXPECT_FALSE(contains(body(translate(source, "-cl-nv-maxrregcount 32")), "__launch_bounds__"));
}

TEST(Translation, WorkItemFunctionsOutsideKernelsReadTheSharedCopy) {
    const auto inside = translate(kiln_test::vector_add_source);
    EXPECT_FALSE(contains(inside.source, "__syncthreads()"));
    const auto outside = translate(
        "size_t index(void) { return get_global_id(0); }\n"
        "kernel void k(global int* x) { x[index()] = 1; }\n");
    EXPECT_TRUE(contains(outside.source,
                         "::kiln_opencl::kiln_launch = kiln_launch_parameter; __syncthreads();"));
}

TEST(Translation, KernelsAreDeviceBodiesThatOtherKernelsCall) {
    const auto t = translate(
        "kernel void inner(global int* x, local int* s) { x[0] = s[0]; }\n"
        "kernel void outer(global int* x, local int* s) { inner(x, s); }\n");
    ASSERT_EQ(t.kernels.size(), 2u);
    EXPECT_EQ(t.kernels[1].symbol, "outer");
    EXPECT_TRUE(contains(t.source,
                         "__device__ __forceinline__ void kiln_body_inner(const "
                         "::kiln_opencl::detail::launch_info& kiln_launch_parameter, "));
    EXPECT_TRUE(contains(t.source, "kiln_body_inner(kiln_launch, x, s);"));
    EXPECT_TRUE(contains(t.source, "extern \"C\" __global__ void outer("));
    EXPECT_TRUE(contains(t.source, "kiln_body_outer(kiln_launch_parameter, x, s); }"));
}

TEST(Translation, VectorPrintfExpandsFormatAndArgument) {
    const auto t = translate(
        "kernel void k(global float4* v) { printf(\"%d: %v4hlf %%v2d\\n\", 3, v[0]); }\n");
    EXPECT_TRUE(contains(t.source,
                         "printf(\"%d: %f,%f,%f,%f %%v2d\\n\", 3, "
                         "KILN_PRINTF_COMPONENTS4(v[0]))"))
        << t.source;
}

TEST(Translation, OpenclPragmasAreDropped) {
    const auto t = body(translate(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma unroll\nvoid f(void) {}\n"));
    EXPECT_FALSE(contains(t, "OPENCL"));
    EXPECT_TRUE(contains(t, "#pragma unroll"));
}

TEST(Translation, SinglePrecisionConstants) {
    const auto t =
        body(translate("double f(void) { return 1.5 + 1e3 + 0x1p3 + 2.5f + 2 + 1.0L; }\n",
                       "-cl-single-precision-constant"));
    EXPECT_TRUE(contains(t, "return 1.5f + 1e3f + 0x1p3f + 2.5f + 2 + 1.0L;")) << t;
}

TEST(Translation, UnsupportedFeaturesBecomePlaceholders) {
    const auto t = body(translate("kernel void k(read_write image3d_t img, global half4* h) {}\n"));
    EXPECT_TRUE(contains(t, "kiln_unsupported__read_write kiln_unsupported__image3d_t img"));
    EXPECT_TRUE(contains(t, "kiln_unsupported__half4* h"));
    // Scalar half pointers and their core loads and stores are the prelude's.
    const auto halves = body(
        translate("kernel void k(global const half* x, global half* y) {\n"
                  "    vstore_half_rte(vload_half(0, x), 0, y); vstore_half(1.0f, 1, y); }\n"));
    EXPECT_TRUE(contains(halves, "const half* x")) << halves;
    EXPECT_TRUE(contains(halves, "vstore_half_rte(vload_half(0, x), 0, y)")) << halves;
    EXPECT_FALSE(contains(halves, "kiln_unsupported")) << halves;
    const std::string explained = explain_compiler_log(
        "source_1(1): error: identifier \"kiln_unsupported__image3d_t\" is undefined\n");
    EXPECT_EQ(explained,
              "source_1(1): error: 'image3d_t' is not supported by kiln's CUDA backend (images "
              "other than image2d_t; see docs/cuda.md)\n");
    // 2-D images are supported: their access qualifiers go, image2d_t stays for the prelude.
    const auto images = body(translate("kernel void k(__read_only image2d_t in) {}\n"));
    EXPECT_TRUE(contains(images, " image2d_t in")) << images;
    EXPECT_FALSE(contains(images, "kiln_unsupported")) << images;
}

// A quoted include of a source given as a string is searched in the -I directories only: a file
// of that name in the current directory is never taken (as program::from_file never searches it).
TEST(Translation, IncludesAreNotSearchedInTheCurrentDirectory) {
    const auto folder =
        std::filesystem::temp_directory_path() / ("kiln-include-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "planted.cl") << "#define PLANTED 1\n";
    const auto previous = std::filesystem::current_path();
    std::filesystem::current_path(folder);
    const std::string error = translation_error("#include \"planted.cl\"\n");
    const auto named = translate("#include \"planted.cl\"\n", "-I " + folder.string());
    std::filesystem::current_path(previous);
    std::filesystem::remove_all(folder);
    EXPECT_TRUE(contains(error, "cannot open include file \"planted.cl\"")) << error;
    EXPECT_TRUE(contains(named.source, "#define PLANTED 1"));
}

TEST(Translation, ErrorsNameTheLine) {
    EXPECT_TRUE(contains(translation_error("\n\n#include \"no_such_file.cl\"\n"),
                         "source_1(3): error: cannot open include file \"no_such_file.cl\""));
    EXPECT_TRUE(contains(translation_error("\nkernel void (global float* x) {}\n"),
                         "source_1(2): error: cannot find the kernel's name"));
    EXPECT_TRUE(contains(translation_error("\n\n/* never closed\n\n"),
                         "source_1(3): error: unterminated /* comment"));
    EXPECT_TRUE(contains(translation_error("kernel void k(global float*) {}\n"),
                         "source_1(1): error: kernel parameter 1 needs a name"));
    EXPECT_TRUE(contains(translation_error("\nchar* s = \"open;\n"),
                         "source_1(2): error: unterminated string literal"));
}

TEST(BuildOptions, CommonOpenclOptionsAreAccepted) {
    const auto parsed = parse_build_options(
        "-DA -D B=2 -DC=\"x y\" -I /tmp/include -I/tmp/more -cl-fast-relaxed-math -cl-mad-enable "
        "-cl-std=CL2.0 "
        "-w -Werror -cl-kernel-arg-info -cl-single-precision-constant -cl-denorms-are-zero");
    ASSERT_EQ(parsed.translation.macros.size(), 3u);
    EXPECT_EQ(parsed.translation.macros[0], std::make_pair(std::string("A"), std::string("1")));
    EXPECT_EQ(parsed.translation.macros[1], std::make_pair(std::string("B"), std::string("2")));
    EXPECT_EQ(parsed.translation.macros[2], std::make_pair(std::string("C"), std::string("x y")));
    ASSERT_EQ(parsed.translation.include_directories.size(), 2u);
    EXPECT_EQ(parsed.translation.include_directories[1], "/tmp/more");
    EXPECT_TRUE(parsed.translation.single_precision_constants);
    EXPECT_TRUE(parsed.warnings_are_errors);
    const auto& nvrtc = parsed.nvrtc_options;
    for (const char* expected :
         {"-DA=1", "-DB=2", "--use_fast_math", "--fmad=true", "-w", "--ftz=true",
          "-D__FAST_RELAXED_MATH__=1", "-D__OPENCL_C_VERSION__=200"})
        EXPECT_NE(std::find(nvrtc.begin(), nvrtc.end(), expected), nvrtc.end()) << expected;
}

TEST(BuildOptions, UnknownOptionsAreRejectedByName) {
    for (const char* options :
         {"-O3", "-cl-std=CL9.9", "--use_fast_math", "-D", "-cl-fast-relaxed-math -x"}) {
        try {
            parse_build_options(options);
            ADD_FAILURE() << options << " was accepted";
        } catch (const build_error& e) {
            EXPECT_EQ(e.code_name(), "NVRTC_ERROR_INVALID_OPTION");
            EXPECT_TRUE(contains(e.log(), "build option '")) << e.log();
        }
    }
}

}  // namespace
}  // namespace kiln::detail::cuda
