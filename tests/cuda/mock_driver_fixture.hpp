// SPDX-License-Identifier: Apache-2.0
// The fixture of the tests against the mock driver: a fresh mock state, the CUDA backend with its
// one device and a queue, and, after each test, the check that kiln gave back everything it
// acquired from the driver.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "mock_cuda_driver.hpp"

namespace kiln_test {

class mock_driver_fixture : public ::testing::Test {
  protected:
    void SetUp() override {
        *kiln_mock_state() = {};
        backend_ = kiln::detail::make_cuda_backend();
        const auto devices = backend_->devices();
        ASSERT_EQ(devices.size(), 1u) << "the mock driver was not the one loaded";
        device_ = devices.front();
        queue_ = device_->create_queue({});
    }

    void TearDown() override {
        queue_.reset();
        device_.reset();
        backend_.reset();
        const auto& m = *kiln_mock_state();
        EXPECT_EQ(m.contexts_released, m.contexts_retained);
        EXPECT_EQ(m.live_allocations, 0);
        EXPECT_EQ(m.live_host_allocations, 0);
        EXPECT_EQ(m.live_streams, 0);
        EXPECT_EQ(m.live_events, 0);
        EXPECT_EQ(m.live_modules, 0);
        EXPECT_EQ(m.live_arrays, 0);
        EXPECT_EQ(m.live_textures, 0);
        EXPECT_EQ(m.live_surfaces, 0);
    }

    static void require_nvrtc() {
        if (kiln::detail::cuda::nvrtc() == nullptr) GTEST_SKIP() << "builds need NVRTC";
    }
    std::shared_ptr<kiln::detail::program_impl> build(const std::string& source) {
        return device_->build(std::vector<std::string>{source}, "");
    }
    static kiln_mock::state& mock() { return *kiln_mock_state(); }

    std::unique_ptr<kiln::detail::backend> backend_;
    std::shared_ptr<kiln::detail::device_impl> device_;
    std::unique_ptr<kiln::detail::queue_impl> queue_;
};

}  // namespace kiln_test
