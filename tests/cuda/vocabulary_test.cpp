// SPDX-License-Identifier: Apache-2.0
// The device vocabulary's CUDA definitions (src/backend/cuda/kiln_vocabulary.cuh) compiled alone
// under NVRTC (no GPU needed), each function called from a kernel: they must not lean on the
// rest of the prelude.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_prelude.hpp"

namespace kiln::detail::cuda {
namespace {

constexpr target_architecture hopper{90, true};

const char* calls_every_function = R"(#include "kiln_vocabulary.h"
extern "C" __global__ void every_function(unsigned* words, unsigned long long* wide, float2* pairs) {
    const unsigned i = threadIdx.x;
    words[i] = kiln_ballot(i & 1u) + kiln_shuffle_up(words[i], 1u) + kiln_shuffle_down(words[i], 2u);
    kiln_sub_group_sync();
    words[i] += kiln_match_any(words[i] & 7u) + kiln_ballot_agree(words[i], 4u);
    wide[i] = kiln_shuffle_up_64(wide[i], 1u) + kiln_shuffle_down_64(wide[i], 3u);
    kiln_store_streaming(pairs + i, kiln_load_streaming(pairs + i + 32));
    kiln_fence_acq_rel();
}
)";

TEST(CudaVocabulary, CompilesAloneWithEveryFunctionCalled) {
    if (nvrtc() == nullptr) GTEST_SKIP() << nvrtc_load_failure();
    const auto prelude = opencl_c_prelude();
    const auto vocabulary = std::find_if(prelude.begin(), prelude.end(), [](const auto& header) {
        return std::string_view(header.name) == "kiln_vocabulary.h";
    });
    // With the tensor cores' wrappers, which it includes and the prelude lists next.
    ASSERT_LT(vocabulary + 1, prelude.end());
    ASSERT_EQ(std::string_view(vocabulary[1].name), "kiln_tensor_cores.h");
    const auto compiled = compile_with_nvrtc(calls_every_function, parse_build_options("-Werror"),
                                             hopper, std::span(&*vocabulary, 2));
    EXPECT_TRUE(compiled.is_cubin);
}

}  // namespace
}  // namespace kiln::detail::cuda
