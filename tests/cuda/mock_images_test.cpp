// SPDX-License-Identifier: Apache-2.0
// Images on the CUDA backend against the mock driver (no GPU needed): the CUDA array, texture and
// surface objects an image owns, row-pitched transfers, and the image parameter a launch passes.
#include <gtest/gtest.h>

#include <cstring>
#include <kiln/error.hpp>
#include <numeric>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#include "cuda_test_helpers.hpp"
#include "mock_cuda_driver.hpp"
#include "mock_driver_fixture.hpp"

namespace kiln_test {
namespace {

using kiln::detail::cuda::image_parameter;
using kiln::detail::cuda::launch_info;

class MockImages : public mock_driver_fixture {};

TEST_F(MockImages, AnImageOwnsAnArrayTwoTexturesAndASurface) {
    {
        auto image = device_->create_image(5, 3, kiln::image_format::rgba_unorm8);
        EXPECT_EQ(mock().live_arrays, 1);
        EXPECT_EQ(mock().live_textures, 2);
        EXPECT_EQ(mock().live_surfaces, 1);
        EXPECT_EQ(mock().texture_filters,
                  (std::vector<CUfilter_mode>{CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR}));
    }
    EXPECT_EQ(mock().live_arrays, 0);  // and TearDown checks the objects
    EXPECT_THROW(device_->create_image(40000, 2, kiln::image_format::r_float),
                 kiln::invalid_argument_error)
        << "past the driver's largest 2-D surface";
}

TEST_F(MockImages, TransfersKeepTheHostRowPitch) {
    auto image = device_->create_image(3, 2, kiln::image_format::r_float);
    // Two rows of three floats, each followed by a float of padding.
    const std::vector<float> padded{1, 2, 3, -1, 4, 5, 6, -1};
    queue_->write_image(*image, padded.data(), 4 * sizeof(float), {});
    std::vector<float> packed(6);
    queue_->read_image(*image, packed.data(), 3 * sizeof(float), {});
    EXPECT_EQ(packed, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(MockImages, LaunchesPassTheImageByValue) {
    if (kiln::detail::cuda::nvrtc() == nullptr) GTEST_SKIP() << "builds need NVRTC";
    const std::string source = R"(
        kernel void copy(read_only image2d_t in, write_only image2d_t out) {
            int2 at = (int2)(get_global_id(0), get_global_id(1));
            write_imagef(out, at, read_imagef(in, at));
        })";
    auto program = device_->build(std::vector<std::string>{source}, "");
    auto kernel = program->create_kernel("copy");
    ASSERT_EQ(kernel->parameters().size(), 2u);
    EXPECT_EQ(kernel->parameters()[0].type_name, "image2d_t");
    EXPECT_EQ(kernel->parameters()[1].name, "out");

    std::shared_ptr<kiln::detail::image_impl> in =
        device_->create_image(7, 4, kiln::image_format::rgba_unorm8);
    std::shared_ptr<kiln::detail::image_impl> out =
        device_->create_image(7, 4, kiln::image_format::r_float);
    std::vector<kernel_argument> args(2);
    args[0].what = args[1].what = kernel_argument::kind::image;
    args[0].image = in;
    args[1].image = out;
    mock().parameter_sizes = {sizeof(launch_info), sizeof(image_parameter),
                              sizeof(image_parameter)};
    queue_->launch(*kernel, geometry({7, 4}), args, {});
    ASSERT_EQ(mock().launches.size(), 1u);
    const auto& launch = mock().launches.front();
    image_parameter seen_in{}, seen_out{};
    std::memcpy(&seen_in, launch.parameters[1].data(), sizeof seen_in);
    std::memcpy(&seen_out, launch.parameters[2].data(), sizeof seen_out);
    // The mock names texture and surface objects after their array.
    const auto array_of = [](const kiln::detail::image_impl& image) {
        return reinterpret_cast<std::uint64_t>(
            static_cast<const kiln::detail::cuda::cuda_image&>(image).array());
    };
    EXPECT_EQ(seen_in.point_texture, array_of(*in));
    EXPECT_EQ(seen_in.linear_texture, array_of(*in));
    EXPECT_EQ(seen_in.surface, array_of(*in));
    EXPECT_EQ(seen_out.surface, array_of(*out));
    EXPECT_EQ(seen_in.width, 7);
    EXPECT_EQ(seen_in.height, 4);
    EXPECT_EQ(seen_in.channels, 4);
    EXPECT_EQ(seen_in.unorm8, 1);
    EXPECT_EQ(seen_out.channels, 1);
    EXPECT_EQ(seen_out.unorm8, 0);
}

}  // namespace
}  // namespace kiln_test
