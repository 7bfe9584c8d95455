// SPDX-License-Identifier: Apache-2.0
// A kernel that writes through a wild pointer leaves the CUDA context unusable: kiln reports
// that as kiln::sticky_device_error. Its own process, since the device is lost afterwards.
#include <gtest/gtest.h>

#include <kiln/error.hpp>

#include "cuda_test_helpers.hpp"

namespace kiln_test {
namespace {

TEST(CudaStickyErrors, IllegalAddressIsReportedAsSticky) {
    KILN_REQUIRE_CUDA_DEVICE();
    auto& device = *cuda_devices().front();
    auto queue = device.create_queue({});
    auto program =
        device.build(std::vector<std::string>{"kernel void wild(global int* x) { global int* p = "
                                              "(global int*)0x10; p[get_global_id(0)] = x[0]; }\n"},
                     "");
    auto kernel = program->create_kernel("wild");
    std::shared_ptr<kiln::detail::memory_impl> x = upload(device, *queue, std::vector<int>{1});
    std::vector<kernel_argument> args{buffer_argument(x)};
    try {
        queue->launch(*kernel, geometry({256}), args, {})->wait();
        FAIL() << "the illegal write went unnoticed";
    } catch (const kiln::sticky_device_error& e) {
        EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS") << e.what();
        EXPECT_NE(std::string(e.what()).find("sticky"), std::string::npos) << e.what();
    }
    // Everything after it fails too, and says so.
    EXPECT_THROW(queue->finish(), kiln::sticky_device_error);
}

}  // namespace
}  // namespace kiln_test
