// SPDX-License-Identifier: Apache-2.0
// The prelude's headers compiled alone under NVRTC (no GPU needed): without warnings, with
// errors that name the .cuh files and their own lines, and with every sub-group and work-group
// collective function compiling for each type OpenCL defines them for.
#include <gtest/gtest.h>

#include <kiln/error.hpp>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_prelude.hpp"
#include "backend/cuda/opencl_c_translation.hpp"

namespace kiln::detail::cuda {
namespace {

constexpr target_architecture hopper{90, true};
const std::string include_prelude = "#include \"" + std::string(opencl_c_prelude_name) + "\"\n";

class Prelude : public ::testing::Test {
  protected:
    void SetUp() override {
        if (nvrtc() == nullptr) GTEST_SKIP() << nvrtc_load_failure();
    }
};

TEST_F(Prelude, CompilesAloneWithoutWarnings) {
    const auto compiled =
        compile_with_nvrtc(include_prelude, parse_build_options("-Werror"), hopper);
    EXPECT_TRUE(compiled.is_cubin);
}

/// Line `number` (from 1) of `text` replaced by `replacement`.
std::string replace_line(std::string_view text, int number, std::string_view replacement) {
    std::string out;
    int line = 1;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = text.find('\n', start);
        const auto stop = end == std::string_view::npos ? text.size() : end;
        out += line == number ? std::string(replacement)
                              : std::string(text.substr(start, stop - start));
        if (end == std::string_view::npos) break;
        out += '\n';
        start = end + 1;
        ++line;
    }
    return out;
}

/// The number of an empty line near the middle of `text`: a statement put there stands alone.
int empty_line_near_middle(std::string_view text) {
    int line = 1, lines = 0;
    for (char c : text) lines += c == '\n';
    int best = 0;
    std::size_t start = 0;
    for (; start < text.size(); ++line) {
        const auto end = text.find('\n', start);
        if (end == std::string_view::npos) break;
        if (end == start && line >= lines / 2) {
            best = line;
            break;
        }
        start = end + 1;
    }
    return best;
}

TEST_F(Prelude, ErrorsNameTheCuhFileAndItsOwnLine) {
    const auto headers = opencl_c_prelude();
    const std::string files[] = {"src/backend/cuda/opencl_c_prelude.cuh",
                                 "src/backend/cuda/opencl_c_vectors.cuh",
                                 "src/backend/cuda/opencl_c_work_items.cuh",
                                 "src/backend/cuda/opencl_c_math.cuh",
                                 "src/backend/cuda/opencl_c_geometric_relational.cuh",
                                 "src/backend/cuda/opencl_c_subgroups.cuh",
                                 "src/backend/cuda/kiln_vocabulary.cuh",
                                 "kiln_tensor_cores.h",
                                 "src/backend/cuda/opencl_c_images.cuh",
                                 "src/backend/cuda/opencl_c_binary16.cuh",
                                 "src/backend/cuda/opencl_c_float8.cuh"};
    ASSERT_EQ(headers.size(), std::size(files));
    for (std::size_t broken = 0; broken < headers.size(); ++broken) {
        const int line = empty_line_near_middle(headers[broken].text);
        ASSERT_GT(line, 2) << files[broken];
        const std::string text =
            replace_line(headers[broken].text, line, "int kiln_deliberate_error = ;");
        std::vector<prelude_header> changed(headers.begin(), headers.end());
        changed[broken].text = text;
        try {
            compile_with_nvrtc(include_prelude, {}, hopper, changed);
            ADD_FAILURE() << "the broken prelude compiled";
        } catch (const build_error& e) {
            const std::string where = files[broken] + "(" + std::to_string(line) + ")";
            EXPECT_NE(e.log().find(where), std::string::npos) << where << "\n" << e.log();
        }
    }
}

// Every sub-group and work-group collective function, for each type, as kernel source uses them.
const char* subgroup_kernels = R"(
#define EVERY_FUNCTION(T)                                                                     \
void all_##T(global T* v, global int* n) {                                            \
    T x = v[get_global_id(0)];                                                               \
    uint4 ballot = sub_group_ballot(x > (T)0);                                               \
    n[0] = get_sub_group_size() + get_max_sub_group_size() + get_num_sub_groups() +          \
           get_enqueued_num_sub_groups() + get_sub_group_id() + get_sub_group_local_id() +   \
           sub_group_any(x > (T)1) + sub_group_all(x > (T)1) + work_group_any(x > (T)1) +     \
           work_group_all(x > (T)1) + sub_group_ballot_bit_count(ballot) +                    \
           sub_group_ballot_inclusive_scan(ballot) + sub_group_ballot_exclusive_scan(ballot) + \
           sub_group_ballot_find_lsb(ballot) + sub_group_ballot_find_msb(ballot) +            \
           sub_group_inverse_ballot(ballot) + sub_group_ballot_bit_extract(ballot, 3) +       \
           get_sub_group_eq_mask().x + get_sub_group_ge_mask().x + get_sub_group_gt_mask().x + \
           get_sub_group_le_mask().x + get_sub_group_lt_mask().x;                             \
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    v[0] = sub_group_broadcast(x, 0) + sub_group_reduce_add(x) + sub_group_reduce_min(x) +   \
           sub_group_reduce_max(x) + sub_group_scan_inclusive_add(x) +                       \
           sub_group_scan_inclusive_min(x) + sub_group_scan_inclusive_max(x) +               \
           sub_group_scan_exclusive_add(x) + sub_group_scan_exclusive_min(x) +               \
           sub_group_scan_exclusive_max(x) + sub_group_shuffle(x, 1) +                       \
           sub_group_shuffle_xor(x, 1) + sub_group_shuffle_up(x, 1) +                        \
           sub_group_shuffle_down(x, 1) + work_group_reduce_add(x) + work_group_reduce_min(x) + \
           work_group_reduce_max(x) + work_group_scan_inclusive_add(x) +                     \
           work_group_scan_inclusive_min(x) + work_group_scan_inclusive_max(x) +             \
           work_group_scan_exclusive_add(x) + work_group_scan_exclusive_min(x) +             \
           work_group_scan_exclusive_max(x) + work_group_broadcast(x, 0) +                   \
           work_group_broadcast(x, 0, 0) + work_group_broadcast(x, 0, 0, 0);                 \
}
EVERY_FUNCTION(int)
EVERY_FUNCTION(uint)
EVERY_FUNCTION(long)
EVERY_FUNCTION(ulong)
EVERY_FUNCTION(float)
EVERY_FUNCTION(double)
kernel void k_int(global int* v, global int* n) { all_int(v, n); }
kernel void k_uint(global uint* v, global int* n) { all_uint(v, n); }
kernel void k_long(global long* v, global int* n) { all_long(v, n); }
kernel void k_ulong(global ulong* v, global int* n) { all_ulong(v, n); }
kernel void k_float(global float* v, global int* n) { all_float(v, n); }
kernel void k_double(global double* v, global int* n) { all_double(v, n); }
// Called from a helper function, get_num_sub_groups needs the launch geometry there too.
uint groups_here(void) { return get_num_sub_groups(); }
kernel void from_helper(global uint* out) { out[get_global_id(0)] = groups_here(); }
)";

TEST_F(Prelude, EverySubGroupAndCollectiveFunctionCompilesForEachType) {
    const auto options = parse_build_options("-Werror");
    const std::vector<std::string> sources{subgroup_kernels};
    const auto translated = translate_opencl_c(sources, options.translation);
    const auto compiled = compile_with_nvrtc(translated.source, options, hopper);
    EXPECT_TRUE(compiled.is_cubin);
}

// Every image function with every sampler that OpenCL defines for it.
const char* image_kernels = R"(
#define SAMPLE(address, filter)                                                               \
    read_imagef(in, address | filter | CLK_NORMALIZED_COORDS_TRUE, (float2)(0.3f, 0.7f)) +     \
        read_imagef(in, address | filter | CLK_NORMALIZED_COORDS_FALSE, (float2)(2.5f, 1.5f))
const sampler_t integer_sampler = CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_FALSE;
kernel void every_read(__read_only image2d_t in, __write_only image2d_t out, global float4* sum) {
    int2 at = (int2)(get_image_width(in) - 1, get_image_height(in) - 1) + get_image_dim(out);
    float4 s = SAMPLE(CLK_ADDRESS_NONE, CLK_FILTER_NEAREST) + SAMPLE(CLK_ADDRESS_NONE, CLK_FILTER_LINEAR) +
               SAMPLE(CLK_ADDRESS_CLAMP_TO_EDGE, CLK_FILTER_NEAREST) +
               SAMPLE(CLK_ADDRESS_CLAMP_TO_EDGE, CLK_FILTER_LINEAR) +
               SAMPLE(CLK_ADDRESS_CLAMP, CLK_FILTER_NEAREST) + SAMPLE(CLK_ADDRESS_CLAMP, CLK_FILTER_LINEAR) +
               read_imagef(in, integer_sampler, at) + read_imagef(in, at);
    for (int a = CLK_ADDRESS_REPEAT; a <= CLK_ADDRESS_MIRRORED_REPEAT; a += 2)
        s += read_imagef(in, a | CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_TRUE, (float2)(1.3f, -0.2f)) +
             read_imagef(in, a | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_TRUE, (float2)(1.3f, -0.2f));
    write_imagef(out, at, s);
    sum[0] = s;
}
)";

TEST_F(Prelude, EveryImageFunctionCompilesWithEverySampler) {
    // Also unoptimised: the calls that name undefined samplers must fold away there too.
    for (const char* flags : {"-Werror", "-cl-opt-disable"}) {
        const auto options = parse_build_options(flags);
        const std::vector<std::string> sources{image_kernels};
        const auto translated = translate_opencl_c(sources, options.translation);
        EXPECT_TRUE(compile_with_nvrtc(translated.source, options, hopper).is_cubin) << flags;
    }
}

TEST_F(Prelude, UndefinedSamplersAreNamedBuildErrors) {
    const auto options = parse_build_options("");
    for (const std::string read :
         {"read_imagef(in, CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST, (float2)(0.5f, 0.5f))",
          "read_imagef(in, CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR, (int2)(1, 1))"}) {
        const std::vector<std::string> sources{
            "kernel void k(read_only image2d_t in, global float4* out) { out[0] = " + read + "; }"};
        const auto translated = translate_opencl_c(sources, options.translation);
        try {
            compile_with_nvrtc(translated.source, options, hopper);
            ADD_FAILURE() << read << " compiled";
        } catch (const build_error& e) {
            EXPECT_NE(explain_compiler_log(e.log()).find("a sampler that OpenCL leaves undefined"),
                      std::string::npos)
                << e.log();
        }
    }
}

}  // namespace
}  // namespace kiln::detail::cuda
