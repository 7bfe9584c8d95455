// SPDX-License-Identifier: Apache-2.0
// The CUDA program binary format: what binary() stores must come back from load() intact,
// and anything else must be refused rather than misread.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "backend/cuda/cuda_binary.hpp"

namespace kiln::detail::cuda {
namespace {

program_binary sample() {
    program_binary binary;
    binary.architecture = 90;
    binary.is_cubin = true;
    kernel_signature kernel;
    kernel.name = "new";
    kernel.symbol = "kiln_cxx_new";
    parameter_info input;
    input.space = parameter_info::address_space::global;
    input.type_name = "float4*";
    input.name = "input";
    input.pointee_const = true;
    parameter_info scratch;
    scratch.space = parameter_info::address_space::local;
    scratch.type_name = "float*";
    scratch.name = "scratch";
    kernel.parameters = {input, scratch};
    binary.kernels = {kernel, kernel_signature{"empty", "empty", {}}};
    for (int i = 0; i < 100; ++i) binary.image.push_back(static_cast<std::byte>(i));
    return binary;
}

TEST(BinaryFormat, RoundTrip) {
    const auto original = sample();
    const auto unpacked = unpack_binary(pack_binary(original));
    ASSERT_TRUE(unpacked);
    EXPECT_EQ(unpacked->architecture, 90);
    EXPECT_TRUE(unpacked->is_cubin);
    EXPECT_EQ(unpacked->image, original.image);
    ASSERT_EQ(unpacked->kernels.size(), 2u);
    const auto& kernel = unpacked->kernels[0];
    EXPECT_EQ(kernel.name, "new");
    EXPECT_EQ(kernel.symbol, "kiln_cxx_new");
    ASSERT_EQ(kernel.parameters.size(), 2u);
    EXPECT_EQ(kernel.parameters[0].space, parameter_info::address_space::global);
    EXPECT_EQ(kernel.parameters[0].type_name, "float4*");
    EXPECT_EQ(kernel.parameters[0].name, "input");
    EXPECT_TRUE(kernel.parameters[0].pointee_const);
    EXPECT_EQ(kernel.parameters[1].space, parameter_info::address_space::local);
    EXPECT_TRUE(unpacked->kernels[1].parameters.empty());
}

TEST(BinaryFormat, TruncatedOrExtendedBinariesAreRefused) {
    const auto packed = pack_binary(sample());
    for (std::size_t size = 0; size < packed.size(); ++size)
        EXPECT_FALSE(unpack_binary(std::span(packed.data(), size))) << "truncated to " << size;
    auto longer = packed;
    longer.push_back(std::byte{0});
    EXPECT_FALSE(unpack_binary(longer));
}

TEST(BinaryFormat, ForeignBytesAreRefused) {
    auto packed = pack_binary(sample());
    auto wrong_magic = packed;
    wrong_magic[0] = std::byte{'X'};
    EXPECT_FALSE(unpack_binary(wrong_magic));
    auto wrong_version = packed;
    wrong_version[8] = std::byte{99};
    EXPECT_FALSE(unpack_binary(wrong_version));
    const std::vector<std::byte> elf{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'},
                                     std::byte{'F'}};
    EXPECT_FALSE(unpack_binary(elf));
}

}  // namespace
}  // namespace kiln::detail::cuda
