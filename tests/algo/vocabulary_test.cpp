// SPDX-License-Identifier: Apache-2.0
// The device vocabulary's OpenCL definitions (src/codegen/device_vocabulary.cpp) built alone on
// every device, once per variant the device can take, and its sub-group functions checked
// against the host: sub-group builtins, inline PTX on NVIDIA's OpenCL, under CUDA the prelude's
// kiln_vocabulary.cuh, and the local-memory fallback everywhere but CUDA.
#include <gtest/gtest.h>

#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/buffer.hpp>
#include <string>
#include <vector>

#include "codegen/device_vocabulary.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::target_features;
using kiln::detail::vocabulary_target;

class algo_vocabulary_test : public kiln::test::device_queue_test {
  protected:
    /// The device's own target, and the local-memory one beside it (except under CUDA, whose
    /// prelude defines the vocabulary in every program).
    std::vector<target_features> variants() const {
        const target_features own = kiln::detail::target_features_for(device());
        std::vector<target_features> all{own};
        if (own.vocabulary != vocabulary_target::cuda_prelude &&
            own.vocabulary != vocabulary_target::local_memory) {
            target_features local;
            local.device_fence = own.device_fence;
            all.push_back(local);
        }
        return all;
    }
};

constexpr std::size_t group = 64;

std::uint32_t shuffled_word(std::size_t lid) {
    return static_cast<std::uint32_t>(lid * 7 + 1);
}
std::uint64_t shuffled_long(std::size_t lid) {
    return (std::uint64_t{lid} + 1) << 40 | lid;
}

/// The local-memory target's fallback stands in for sub-groups of 32.
bool emulated(const target_features& target) {
    return target.vocabulary == vocabulary_target::local_memory;
}

std::string sub_group_source(const target_features& target) {
    kiln::detail::source_builder b;
    kiln::detail::use_device_vocabulary(b, target);
    b.begin_kernel("sub_groups", group);
    for (const char* p :
         {"global uint* lanes", "global uint* ballots", "global uint* agree", "global uint* up",
          "global uint* down", "global ulong* up64", "global ulong* down64"})
        b.parameter(p);
    b.begin_body();
    b.line("const uint lid = get_local_id(0);");
    // Targets of a fixed size know their lanes without OpenCL's sub-group functions (which
    // NVIDIA's OpenCL lacks).
    const std::size_t fixed = emulated(target) ? 32 : target.sub_group_size;
    if (fixed)
        b.line("lanes[lid] = lid % " + std::to_string(fixed) + "u | " + std::to_string(fixed) +
               "u << 16;");
    else
        b.line("lanes[lid] = get_sub_group_local_id() | get_sub_group_size() << 16;");
    // The fallback's functions take their scratch first and end in _local.
    std::string scratch, local;
    if (emulated(target)) {
        b.local_array("uint", "scratch", std::to_string(group));
        scratch = "scratch, ";
        local = "_local";
    }
    const auto call = [&](const std::string& name, const std::string& arguments) {
        return name + local + "(" + scratch + arguments + ")";
    };
    if (target.ballot || emulated(target)) {
        b.line("ballots[lid] = " + call("kiln_ballot", "lid % 3u == 0u") + ";");
        if (!emulated(target)) b.line("kiln_sub_group_sync();");
    }
    if (target.ballot) b.line("agree[lid] = kiln_ballot_agree(lid * 5u, 2u);");
    if (target.shuffles || emulated(target)) {
        b.line("up[lid] = " + call("kiln_shuffle_up", "lid * 7u + 1u, 1u") + ";");
        b.line("down[lid] = " + call("kiln_shuffle_down", "lid * 7u + 1u, 2u") + ";");
        b.line("const ulong wide = ((ulong)(lid + 1) << 40) | lid;");
        b.line("up64[lid] = " + call("kiln_shuffle_up_64", "wide, 3u") + ";");
        b.line("down64[lid] = " + call("kiln_shuffle_down_64", "wide, 1u") + ";");
    }
    b.end_kernel();
    return b.str();
}

std::string fence_and_streaming_source(const target_features& target) {
    kiln::detail::source_builder b;
    kiln::detail::use_device_vocabulary(b, target);
    kiln::detail::use_streaming_vocabulary(b, target, "float2");
    b.begin_kernel("fence_and_streaming", group);
    b.parameter("global float* out");
    b.parameter("global const float* in");
    b.begin_body();
    b.line("const uint i = get_global_id(0);");
    b.line(
        "kiln_store_streaming((global float2*)out + i, kiln_load_streaming((global const "
        "float2*)in + i) * 2.0f);");
    b.line("kiln_fence_acq_rel();");
    b.end_kernel();
    return b.str();
}

TEST_P(algo_vocabulary_test, fences_and_streaming_accesses_build_and_move_data) {
    for (const target_features& target : variants()) {
        SCOPED_TRACE(target.key());
        const auto& program = kiln::detail::algorithm_program_for(
            device(), "test.vocabulary.streaming " + target.key(), {"fence_and_streaming"},
            [&] { return fence_and_streaming_source(target); });
        std::vector<float> in(4 * group);
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 7.5f;
        kiln::buffer<float> from(q, in.size()), to(q, in.size());
        from.write(q, in);
        program.kernel("fence_and_streaming")(to, from).launch(q, 2 * group, group).wait();
        const auto got = to.read(q);
        for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(got[i], 2 * in[i]) << i;
    }
}

TEST_P(algo_vocabulary_test, ballots_and_shuffles_match_the_host) {
    for (const target_features& target : variants()) {
        if (!target.ballot && !target.shuffles && !emulated(target)) continue;
        const bool ballots_run = target.ballot || emulated(target);
        const bool shuffles_run = target.shuffles || emulated(target);
        SCOPED_TRACE(target.key());
        const auto& program = kiln::detail::algorithm_program_for(
            device(), "test.vocabulary.sub_groups " + target.key(), {"sub_groups"},
            [&] { return sub_group_source(target); });
        kiln::buffer<std::uint32_t> lanes(q, group), ballots(q, group), agree(q, group),
            up(q, group), down(q, group);
        kiln::buffer<std::uint64_t> up64(q, group), down64(q, group);
        program.kernel("sub_groups")(lanes, ballots, agree, up, down, up64, down64)
            .launch(q, group, group)
            .wait();
        const auto lane = lanes.read(q), ballot = ballots.read(q), agreeing = agree.read(q);
        const auto u = up.read(q), d = down.read(q);
        const auto u64 = up64.read(q), d64 = down64.read(q);
        for (std::size_t lid = 0; lid < group; ++lid) {
            SCOPED_TRACE("work-item " + std::to_string(lid));
            const std::size_t l = lane[lid] & 0xffff, size = lane[lid] >> 16;
            ASSERT_TRUE(size > 0 && size <= 32 && group % size == 0 && l < size) << size;
            const std::size_t first = lid - l;
            if (ballots_run) {
                std::uint32_t expected = 0;
                for (std::size_t j = 0; j < size; ++j)
                    if ((first + j) % 3 == 0) expected |= std::uint32_t{1} << j;
                EXPECT_EQ(ballot[lid], expected);
            }
            if (target.ballot) {
                const auto bit_of = [](std::size_t w) { return (w * 5 & 2) != 0; };
                std::uint32_t expected = 0;
                for (std::size_t j = 0; j < size; ++j)
                    if (bit_of(first + j) == bit_of(lid)) expected |= std::uint32_t{1} << j;
                EXPECT_EQ(agreeing[lid], expected);
            }
            if (!shuffles_run) continue;
            // OpenCL leaves lanes without a source undefined: only those with one are checked.
            if (l >= 1) {
                EXPECT_EQ(u[lid], shuffled_word(lid - 1));
            }
            if (l + 2 < size) {
                EXPECT_EQ(d[lid], shuffled_word(lid + 2));
            }
            if (l >= 3) {
                EXPECT_EQ(u64[lid], shuffled_long(lid - 3));
            }
            if (l + 1 < size) {
                EXPECT_EQ(d64[lid], shuffled_long(lid + 1));
            }
        }
    }
}

}  // namespace

KILN_INSTANTIATE_FOR_EVERY_DEVICE(algo_vocabulary_test);
