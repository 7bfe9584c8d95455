// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's scan of sources for sub-group and collective calls, on simulated devices:
// one with some sub-group extensions and not others (as PoCL on the GPU machine reports), and one
// without collectives. No device needed; runtime.subgroup runs the same calls on real devices.
// Also the register limit NVIDIA's programs take through their PTX (algo.sort's capped variant
// runs it on NVIDIA's OpenCL).
// And the compiler identity that keys cached OpenCL binaries, which names the helpers kiln
// prepends.
#include <gtest/gtest.h>

#include <kiln/error.hpp>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/opencl/opencl_kernel_features.hpp"
#include "backend/opencl/opencl_quirks.hpp"
#include "backend/opencl/opencl_register_limit.hpp"
#include "runtime/device_quirks.hpp"
#include "test_helpers.hpp"

namespace {

using kiln::detail::opencl::prepare_kernel_features;

/// An OpenCL 3.0 CPU device with three sub-group extensions (not PoCL's platform, whose ballot
/// extension kiln does not trust: see the test at the end).
kiln::device_properties pocl_like() {
    kiln::device_properties p;
    p.name = "simulated CPU";
    p.platform = "Simulated Platform";
    p.api_version = "OpenCL 3.0";
    p.max_work_group_size = 4096;
    p.local_memory_bytes = 4 << 20;
    p.extensions = {"cl_khr_subgroups", "cl_khr_subgroup_ballot", "cl_khr_subgroup_shuffle"};
    return p;
}

std::string build_log(const kiln::device_properties& p, const std::string& source) {
    try {
        prepare_kernel_features(p, std::vector<std::string>{source}, "");
    } catch (const kiln::build_error& e) {
        EXPECT_EQ(e.code_name(), "KILN_KERNEL_FEATURE_UNSUPPORTED");
        return e.log();
    }
    ADD_FAILURE() << "accepted";
    return {};
}

TEST(KernelFeatures, AMissingExtensionIsNamedWithItsCallAndLine) {
    const auto log = build_log(pocl_like(),
                               "kernel void k(global int* v) {\n"
                               "    v[0] = sub_group_reduce_add(v[1]);\n"
                               "    v[1] = sub_group_shuffle_down(v[2], 1u);\n}\n");
    EXPECT_NE(log.find("simulated CPU"), std::string::npos) << log;
    EXPECT_NE(log.find("sub_group_shuffle_down (source 1, line 3) needs "
                       "cl_khr_subgroup_shuffle_relative"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find("sub_group_reduce_add"), std::string::npos) << "supported: " << log;
}

TEST(KernelFeatures, CallsInMacroBodiesCount) {
    const auto log = build_log(pocl_like(),
                               "#define NEXT(x) \\\n    sub_group_shuffle_up((x), 1u)\n"
                               "kernel void k(global int* v) { v[0] = NEXT(v[1]); }\n");
    EXPECT_NE(log.find("sub_group_shuffle_up (source 1, line 2)"), std::string::npos) << log;
}

TEST(KernelFeatures, ExtensionsTheDeviceHasGetTheirPragmasAndLanguage) {
    const std::vector<std::string> sources{
        "kernel void k(global uint* v) {\n"
        "    uint4 b = sub_group_ballot(v[0] > 1);\n"
        "    v[0] = sub_group_shuffle_xor(v[1], 1u) + sub_group_scan_inclusive_add(b.x);\n}\n"};
    const auto setup = prepare_kernel_features(pocl_like(), sources, "-DX=1");
    EXPECT_NE(setup.prologue.find("#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n"),
              std::string::npos);
    EXPECT_NE(setup.prologue.find("#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable\n"),
              std::string::npos);
    EXPECT_NE(setup.prologue.find("#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable\n"),
              std::string::npos);
    EXPECT_TRUE(setup.prologue.ends_with("#line 1\n")) << "the sources keep their line numbers";
    EXPECT_EQ(setup.extra_options, " -cl-std=CL3.0");
    EXPECT_EQ(setup.sources, sources);
    // A language the user chose stays.
    EXPECT_EQ(prepare_kernel_features(pocl_like(), sources, "-cl-std=CL2.0").extra_options, "");
}

TEST(KernelFeatures, SourcesWithoutSuchCallsAreLeftAlone) {
    const std::vector<std::string> sources{
        "// sub_group_reduce_add(x)\nkernel void k(global int* v) { int sub_group_size = 1; "
        "v[0] = sub_group_size; const char* s = \"work_group_any(\"; }\n"};
    kiln::device_properties bare;
    const auto setup = prepare_kernel_features(bare, sources, "");
    EXPECT_EQ(setup.prologue, "");
    EXPECT_EQ(setup.extra_options, "");
    EXPECT_EQ(setup.sources, sources);
}

TEST(KernelFeatures, CollectivesTheDeviceLacksComeFromKilnWithAScratchPerKernel) {
    auto p = pocl_like();
    p.max_work_group_size = 1024;
    const std::vector<std::string> sources{
        "int helper(int x) { return x + 1; }\n"
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
        "void a(global int* v) {\n"
        "    v[0] = work_group_reduce_add(helper(v[1]));\n}\n"
        "#define BODY { }\n"
        "kernel void b(global int* v) { v[0] = work_group_broadcast(v[1], 0); }\n"};
    const auto setup = prepare_kernel_features(p, sources, "");
    EXPECT_NE(setup.prologue.find("#define KILN_COLLECTIVE_SLOTS 1024\n"), std::string::npos);
    EXPECT_NE(setup.prologue.find("#define work_group_reduce_add(x)"), std::string::npos);
    EXPECT_EQ(setup.extra_options, "") << "kiln's collectives are OpenCL C 1.2";
    const std::string scratch = " local ulong kiln_collective_scratch[KILN_COLLECTIVE_SLOTS];";
    const std::string expected =
        "int helper(int x) { return x + 1; }\n"
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
        "void a(global int* v) {" +
        scratch +
        "\n"
        "    v[0] = work_group_reduce_add(helper(v[1]));\n}\n"
        "#define BODY { }\n"
        "kernel void b(global int* v) {" +
        scratch + " v[0] = work_group_broadcast(v[1], 0); }\n";
    ASSERT_EQ(setup.sources.size(), 1u);
    EXPECT_EQ(setup.sources[0], expected);
    // A device with its own collectives keeps its sources and compiles them as OpenCL C 2.0+.
    p.work_group_collectives = true;
    const auto native = prepare_kernel_features(p, sources, "");
    EXPECT_EQ(native.sources, sources);
    EXPECT_EQ(native.extra_options, " -cl-std=CL3.0");
}

// PoCL names cl_khr_subgroup_ballot, but the GPU machine's PoCL could not link two of its
// functions (runtime.subgroup, 2026-11-22): kiln says so itself instead of the driver's linker.
TEST(KernelFeatures, PoclsBallotExtensionCountsAsMissing) {
    kiln::device_properties pocl = pocl_like();
    pocl.platform = "Portable Computing Language";
    const auto log =
        build_log(pocl,
                  "kernel void k(global uint* v) {\n"
                  "    v[0] = sub_group_ballot_bit_count(sub_group_ballot(v[0] > 1));\n}\n");
    EXPECT_NE(log.find("needs cl_khr_subgroup_ballot"), std::string::npos) << log;
}

// PoCL 5.0 sorted float keys wrongly now and then inside kiln (docs/sorting.md, Known limits):
// kiln sorts them on the host there, keyed on PoCL's version, which its driver version starts
// with; PoCL 3.1 keeps the radix sort, and so does any other platform.
TEST(KernelFeatures, FloatRadixSortIsDistrustedFromPocl5) {
    kiln::device_properties pocl = pocl_like();
    pocl.platform = "Portable Computing Language";
    const auto distrusted = [&](const std::string& driver_version) {
        pocl.driver_version = driver_version;
        return kiln::detail::device_quirks_for(pocl).float_radix_sort_unreliable;
    };
    EXPECT_TRUE(distrusted("5.0+debian"));
    EXPECT_TRUE(distrusted("6.0"));
    EXPECT_FALSE(distrusted("3.1+debian"));
    EXPECT_FALSE(distrusted(""));
    kiln::device_properties other = pocl_like();
    other.driver_version = "5.0";
    EXPECT_FALSE(kiln::detail::device_quirks_for(other).float_radix_sort_unreliable);
}

// PoCL compiles a kernel a second time on its first launch unless its work-group specialisation
// is off (opencl_quirks.hpp): kiln turns it off for its process, before PoCL reads its settings,
// and leaves a value the user gave alone.
TEST(PoclDefaults, SpecialisationIsOffUnlessTheUserSetIt) {
    using kiln::detail::opencl::pocl_specialization_variable;
    (void)kiln::devices();
    EXPECT_NE(std::getenv(pocl_specialization_variable), nullptr)
        << "finding the devices sets it before PoCL loads";
    {
        kiln::test::scoped_env unset(pocl_specialization_variable, std::nullopt);
        kiln::detail::opencl::set_pocl_defaults();
        ASSERT_NE(std::getenv(pocl_specialization_variable), nullptr);
        EXPECT_STREQ(std::getenv(pocl_specialization_variable),
                     kiln::detail::opencl::pocl_specialization_default);
    }
    kiln::test::scoped_env users(pocl_specialization_variable, "1");
    kiln::detail::opencl::set_pocl_defaults();
    EXPECT_STREQ(std::getenv(pocl_specialization_variable), "1");
}

}  // namespace

TEST(RegisterLimit, ReadsTheOptionNvidiasCompilerBuilds) {
    using kiln::detail::opencl::register_limit_in;
    EXPECT_EQ(register_limit_in("-cl-nv-maxrregcount=56"), 56u);
    EXPECT_EQ(register_limit_in("-cl-fast-relaxed-math -cl-nv-maxrregcount=48 -cl-std=CL2.0"), 48u);
    EXPECT_EQ(register_limit_in(""), std::nullopt);
    // Spelled with a space the driver refuses to build, so kiln never passes it on as a limit.
    EXPECT_EQ(register_limit_in("-cl-nv-maxrregcount 56"), std::nullopt);
    EXPECT_EQ(register_limit_in("-cl-nv-maxrregcount=56x"), std::nullopt);
    EXPECT_EQ(register_limit_in("-Dx-cl-nv-maxrregcount=56"), std::nullopt);
}

TEST(RegisterLimit, EveryEntryOfThePtxTakesIt) {
    // The shape of NVIDIA's OpenCL output (driver 580.159): one entry with reqd_work_group_size
    // (.reqntid), one without.
    const std::string ptx =
        ".version 8.8\n.target sm_90\n.address_size 64\n\n"
        ".visible .entry plain(\n\t.param .u64 .ptr .global .align 4 plain_param_0\n)\n{\n"
        "\tret;\n}\n"
        ".visible .entry fixed(\n\t.param .u64 .ptr .global .align 4 fixed_param_0\n)\n"
        ".reqntid 256, 1, 1\n{\n\tret;\n}\n";
    EXPECT_EQ(kiln::detail::opencl::with_register_limit(ptx, 56),
              ".version 8.8\n.target sm_90\n.address_size 64\n\n"
              ".visible .entry plain(\n\t.param .u64 .ptr .global .align 4 plain_param_0\n)\n"
              ".maxnreg 56\n{\n\tret;\n}\n"
              ".visible .entry fixed(\n\t.param .u64 .ptr .global .align 4 fixed_param_0\n)\n"
              ".reqntid 256, 1, 1\n.maxnreg 56\n{\n\tret;\n}\n");
    EXPECT_THROW(kiln::detail::opencl::with_register_limit(".version 8.8\n.target sm_90\n", 56),
                 kiln::error);
    kiln::device_properties nvidia;
    nvidia.platform = "NVIDIA CUDA";
    EXPECT_TRUE(kiln::detail::opencl::quirks_for(nvidia).register_limit_through_ptx);
    EXPECT_FALSE(kiln::detail::opencl::quirks_for(pocl_like()).register_limit_through_ptx);
    // The same driver understates every kernel's group limit (runtime.launch runs past it).
    EXPECT_TRUE(kiln::detail::opencl::quirks_for(nvidia).kernel_group_limit_understated);
    EXPECT_FALSE(kiln::detail::opencl::quirks_for(pocl_like()).kernel_group_limit_understated);
}

// OpenCL programs compile with kiln's helpers put before their sources: the helpers' texts are
// part of the compiler identity that keys cached binaries, so a library whose helpers changed
// rebuilds rather than loading what the old ones compiled to.
TEST(CompilerIdentity, NamesTheHelpersKilnPrepends) {
    bool any = false;
    for (const kiln::device& dev : kiln::devices()) {
        if (dev.backend() != kiln::backend_kind::opencl) continue;
        any = true;
        const std::string identity = dev.impl().compiler_identity();
        EXPECT_TRUE(identity.ends_with(
            " | helpers " + std::to_string(kiln::detail::opencl::prologue_helpers_hash())))
            << identity;
    }
    if (!any) GTEST_SKIP() << "no OpenCL device";
}
