// The CUDA backend's host logic against the mock driver (mock_cuda_driver.cpp), which this test
// links so kiln's dlopen("libcuda.so.1") finds it: device properties, ownership of every handle,
// staging, fills, launch geometry and parameters, local memory layout, events, errors.
#include <gtest/gtest.h>

#include <cstring>
#include <kiln/error.hpp>
#include <numeric>
#include <thread>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#include "cuda_test_helpers.hpp"
#include "mock_cuda_driver.hpp"
#include "opencl_c_kernels.hpp"

namespace kiln_test {
namespace {

using kiln::detail::device_impl;
using kiln::detail::memory_impl;
using kiln::detail::cuda::launch_info;

class MockDriver : public ::testing::Test {
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
        // Everything kiln acquired from the driver has been given back.
        const auto& m = *kiln_mock_state();
        EXPECT_EQ(m.contexts_released, m.contexts_retained);
        EXPECT_EQ(m.live_allocations, 0);
        EXPECT_EQ(m.live_host_allocations, 0);
        EXPECT_EQ(m.live_streams, 0);
        EXPECT_EQ(m.live_events, 0);
        EXPECT_EQ(m.live_modules, 0);
    }

    static void require_nvrtc() {
        if (kiln::detail::cuda::nvrtc() == nullptr) GTEST_SKIP() << "builds need NVRTC";
    }
    std::shared_ptr<kiln::detail::program_impl> build(const std::string& source) {
        return device_->build(std::vector<std::string>{source}, "");
    }
    static kiln_mock::state& mock() { return *kiln_mock_state(); }

    std::unique_ptr<kiln::detail::backend> backend_;
    std::shared_ptr<device_impl> device_;
    std::unique_ptr<kiln::detail::queue_impl> queue_;
};

TEST_F(MockDriver, PropertiesComeFromTheDriverAndNoContextIsTakenToListThem) {
    auto fresh = kiln::detail::make_cuda_backend();
    const auto& p = fresh->devices().front()->properties();
    EXPECT_EQ(p.name, "Mock GPU 0");
    EXPECT_EQ(p.backend, kiln::backend_kind::cuda);
    EXPECT_EQ(p.platform, "CUDA");
    EXPECT_EQ(p.api_version, "CUDA 13.0");
    EXPECT_EQ(p.compute_units, 132u);
    EXPECT_EQ(p.clock_mhz, 1980u);
    EXPECT_EQ(p.compute_capability_major, 9);
    EXPECT_EQ(p.compute_capability_minor, 0);
    EXPECT_EQ(p.global_memory_bytes, 2ull << 30);
    EXPECT_EQ(p.max_allocation_bytes, p.global_memory_bytes);
    EXPECT_EQ(p.local_memory_bytes, 48u * 1024);
    EXPECT_EQ(p.shared_memory_per_block_bytes, 227u * 1024);
    EXPECT_EQ(p.shared_memory_per_multiprocessor_bytes, 228u * 1024);
    EXPECT_EQ(p.l2_cache_bytes, 50u << 20);
    EXPECT_EQ(p.constant_memory_bytes, 64u * 1024);
    EXPECT_EQ(p.memory_bus_width_bits, 5120u);
    EXPECT_EQ(p.memory_clock_mhz, 2619u);
    EXPECT_EQ(p.max_work_item_sizes[2], 64u);
    EXPECT_TRUE(p.has_extension("cl_khr_int64_extended_atomics"));
    EXPECT_NE(fresh->devices().front()->compiler_identity().find("CUDA driver 13000"),
              std::string::npos);
    // The fixture's queue took the only context so far.
    EXPECT_EQ(mock().contexts_retained, 1);
}

TEST_F(MockDriver, NoDevicesWhenTheDriverCannotStart) {
    mock().failures = {{"cuInit", CUDA_ERROR_NO_DEVICE}};
    EXPECT_TRUE(kiln::detail::make_cuda_backend()->devices().empty());
    mock().failures.clear();
}

TEST_F(MockDriver, AsynchronousTransfersGoThroughPinnedStaging) {
    const std::size_t count = 3'000'001;  // several 4 MiB chunks and a partial one
    std::vector<std::uint32_t> values(count), back(count, 0);
    std::iota(values.begin(), values.end(), 1u);
    std::shared_ptr<memory_impl> memory = device_->allocate(count * 4, kiln::inout);
    kiln::event written(queue_->write(*memory, 0, values.data(), count * 4, {}, false));
    kiln::event read(
        queue_->read(*memory, 0, back.data(), count * 4, std::span(&written, 1), false));
    read.wait();
    EXPECT_EQ(back, values);
    EXPECT_EQ(mock().pageable_transfers, 0)
        << "asynchronous transfers from pageable memory must be staged";
    EXPECT_EQ(mock().pinned_transfers, 6);
    EXPECT_EQ(mock().host_functions, 3);

    // Blocking transfers leave the staging to the driver.
    std::vector<std::uint32_t> small{1, 2, 3};
    queue_->write(*memory, 8, small.data(), 12, {}, true);
    EXPECT_EQ(mock().pageable_transfers, 1);

    // Memory that is already pinned is transferred directly.
    void* pinned = nullptr;
    ASSERT_EQ(cuMemHostAlloc(&pinned, 64, 0), CUDA_SUCCESS);
    queue_->read(*memory, 8, pinned, 12, {}, false)->wait();
    EXPECT_EQ(std::memcmp(pinned, small.data(), 12), 0);
    EXPECT_EQ(mock().host_functions, 3);
    cuMemFreeHost(pinned);
}

TEST_F(MockDriver, FillsOfEveryPatternSize) {
    for (std::size_t pattern_size = 1; pattern_size <= 128; pattern_size *= 2) {
        if (pattern_size >= 8 && kiln::detail::cuda::nvrtc() == nullptr)
            break;  // the fill kernel needs NVRTC
        std::vector<std::uint8_t> pattern(pattern_size);
        std::iota(pattern.begin(), pattern.end(), std::uint8_t(1));
        std::shared_ptr<memory_impl> memory = device_->allocate(4096, kiln::inout);
        const std::uint8_t zero = 0;
        queue_->fill(*memory, 0, &zero, 1, 4096, {});
        const std::size_t offset = 2 * pattern_size, bytes = 5 * pattern_size;
        queue_->fill(*memory, offset, pattern.data(), pattern_size, bytes, {});
        const auto filled = download<std::uint8_t>(*queue_, *memory);
        for (std::size_t i = 0; i < filled.size(); ++i) {
            const bool inside = i >= offset && i < offset + bytes;
            ASSERT_EQ(filled[i], inside ? pattern[(i - offset) % pattern_size] : 0)
                << pattern_size << "-byte pattern, byte " << i;
        }
    }
    std::shared_ptr<memory_impl> memory = device_->allocate(64, kiln::inout);
    const char odd[3] = {1, 2, 3};
    EXPECT_THROW(queue_->fill(*memory, 0, odd, 3, 63, {}), kiln::invalid_argument_error);
}

launch_info info_of(const kiln_mock::launch_record& launch) {
    launch_info info;
    std::memcpy(&info, launch.parameters.at(0).data(), sizeof info);
    return info;
}

TEST_F(MockDriver, LaunchGeometryAndParameters) {
    require_nvrtc();
    auto kernel = build(kiln_test::vector_add_source)->create_kernel("add");
    std::shared_ptr<memory_impl> a = device_->allocate(64, kiln::in),
                                 b = device_->allocate(64, kiln::in),
                                 c = device_->allocate(64, kiln::out);
    const std::uint32_t n = 1'000'003;
    std::vector<kernel_argument> args{buffer_argument(a), buffer_argument(b), buffer_argument(c),
                                      scalar_argument(n)};
    mock().parameter_sizes = {sizeof(launch_info), 8, 8, 8, 4};

    queue_->launch(*kernel, geometry({n}), args, {});
    queue_->launch(*kernel, geometry({300, 7}, {}, {500, 3}), args, {});
    queue_->launch(*kernel, geometry({112, 112}, {16, 16}), args, {});
    queue_->launch(*kernel, geometry({4, 6, 2}, {2, 3, 1}, {std::size_t(1) << 32, 0, 9}), args, {});
    ASSERT_EQ(mock().launches.size(), 4u);

    // kiln's choice: blocks of 256 work-items and a grid rounded up to cover the range.
    const auto& flat = mock().launches[0];
    EXPECT_EQ(flat.function, "add");
    EXPECT_EQ(std::vector<unsigned>(flat.block, flat.block + 3),
              (std::vector<unsigned>{256, 1, 1}));
    EXPECT_EQ(std::vector<unsigned>(flat.grid, flat.grid + 3), (std::vector<unsigned>{3907, 1, 1}));
    EXPECT_EQ(flat.shared_bytes, 0u);
    const auto info = info_of(flat);
    EXPECT_EQ(info.global_size[0], n);
    EXPECT_EQ(info.global_size[1], 1u);
    EXPECT_EQ(info.work_dim, 1u);
    CUdeviceptr pointer = 0;
    std::memcpy(&pointer, flat.parameters[3].data(), 8);
    EXPECT_EQ(pointer, static_cast<kiln::detail::cuda::cuda_memory&>(*c).address());
    std::uint32_t n_seen = 0;
    std::memcpy(&n_seen, flat.parameters[4].data(), 4);
    EXPECT_EQ(n_seen, n);

    const auto& offset = mock().launches[1];
    EXPECT_EQ(std::vector<unsigned>(offset.grid, offset.grid + 3),
              (std::vector<unsigned>{2, 7, 1}));
    EXPECT_EQ(info_of(offset).global_offset[0], 500u);
    EXPECT_EQ(info_of(offset).global_offset[1], 3u);
    EXPECT_EQ(info_of(offset).work_dim, 2u);

    const auto& tiled = mock().launches[2];
    EXPECT_EQ(std::vector<unsigned>(tiled.block, tiled.block + 3),
              (std::vector<unsigned>{16, 16, 1}));
    EXPECT_EQ(std::vector<unsigned>(tiled.grid, tiled.grid + 3), (std::vector<unsigned>{7, 7, 1}));

    const auto& three = mock().launches[3];
    EXPECT_EQ(std::vector<unsigned>(three.grid, three.grid + 3), (std::vector<unsigned>{2, 2, 2}));
    EXPECT_EQ(info_of(three).global_offset[0], std::uint64_t(1) << 32);
    EXPECT_EQ(info_of(three).global_offset[2], 9u);
    EXPECT_EQ(info_of(three).work_dim, 3u);

    // CUDA's grid limits are checked before anything is enqueued.
    EXPECT_THROW(queue_->launch(*kernel, geometry({1, 70000}, {1, 1}), args, {}),
                 kiln::invalid_argument_error);
}

TEST_F(MockDriver, LocalArgumentsShareOneAlignedBlockAndOptInBeyond48KiB) {
    require_nvrtc();
    auto kernel = build(
                      "kernel void two(local char* a, global int* x, local double* b) { x[0] = "
                      "a[0] + (int)b[0]; }\n")
                      ->create_kernel("two");
    const auto& params = kernel->parameters();
    ASSERT_EQ(params.size(), 3u);
    EXPECT_EQ(params[0].space, kiln::detail::parameter_info::address_space::local);
    EXPECT_EQ(params[2].type_name, "double*");
    std::shared_ptr<memory_impl> x = device_->allocate(4, kiln::inout);
    mock().parameter_sizes = {sizeof(launch_info), 4, 8, 4};

    std::vector<kernel_argument> args{local_argument(10), buffer_argument(x), local_argument(100)};
    queue_->launch(*kernel, geometry({64}, {64}), args, {});
    ASSERT_EQ(mock().launches.size(), 1u);
    unsigned first = 1, second = 0;
    std::memcpy(&first, mock().launches[0].parameters[1].data(), 4);
    std::memcpy(&second, mock().launches[0].parameters[3].data(), 4);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(second, 16u);
    EXPECT_EQ(mock().launches[0].shared_bytes, 116u);

    // Past 48 KiB the kernel must opt in, or the (mock) driver refuses the launch.
    args[2] = local_argument(100 * 1024);
    queue_->launch(*kernel, geometry({64}, {64}), args, {});
    EXPECT_EQ(mock().launches.back().shared_bytes, 16u + 100 * 1024);
    args[2] = local_argument(227 * 1024);
    EXPECT_THROW(queue_->launch(*kernel, geometry({64}, {64}), args, {}),
                 kiln::invalid_argument_error);
}

TEST_F(MockDriver, WaitListsUseStreamWaitsAndTheHostForOtherBackends) {
    class foreign_event final : public kiln::detail::event_impl {
      public:
        void wait() override { waited = true; }
        kiln::event_status status() override { return kiln::event_status::complete; }
        kiln::profiling_times times() override { return {}; }
        bool waited = false;
    };
    auto other = device_->create_queue(kiln::out_of_order);
    auto foreign = std::make_shared<foreign_event>();
    std::vector<kiln::event> after{kiln::event(queue_->marker({})), kiln::event(foreign),
                                   kiln::event()};
    other->marker(after)->wait();
    EXPECT_EQ(mock().stream_waits, 1);
    EXPECT_TRUE(foreign->waited);
}

TEST_F(MockDriver, ProfilingTimesAreOrdered) {
    require_nvrtc();
    auto profiled = device_->create_queue(kiln::profiled);
    auto kernel = build(kiln_test::vector_add_source)->create_kernel("add");
    std::shared_ptr<memory_impl> a = device_->allocate(64, kiln::inout);
    std::vector<kernel_argument> args{buffer_argument(a), buffer_argument(a), buffer_argument(a),
                                      scalar_argument(std::uint32_t{16})};
    auto first = profiled->launch(*kernel, geometry({16}), args, {});
    auto second = profiled->marker({});
    const auto t1 = first->times(), t2 = second->times();
    EXPECT_LE(t1.queued_ns, t1.submitted_ns);
    EXPECT_GE(t1.ended_ns - t1.started_ns, 5000u) << "the mock's kernels take 5 us";
    EXPECT_GE(t2.started_ns, t1.ended_ns);
    EXPECT_THROW(queue_->marker({})->times(), kiln::invalid_argument_error);
}

TEST_F(MockDriver, StickyErrorsAreReportedAsSuch) {
    auto event = queue_->marker({});
    mock().failures = {{"cuEventSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS}};
    try {
        event->wait();
        ADD_FAILURE() << "the error was not reported";
    } catch (const kiln::sticky_device_error& e) {
        EXPECT_EQ(e.call(), "cuEventSynchronize");
        EXPECT_EQ(e.code(), CUDA_ERROR_ILLEGAL_ADDRESS);
        EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
        EXPECT_NE(std::string(e.what()).find(
                      "cuEventSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
                  std::string::npos)
            << e.what();
    }
    mock().failures = {{"cuStreamSynchronize", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES}};
    try {
        queue_->finish();
        ADD_FAILURE() << "the error was not reported";
    } catch (const kiln::sticky_device_error&) {
        ADD_FAILURE() << "running out of resources is not sticky";
    } catch (const kiln::error& e) {
        EXPECT_EQ(e.code_name(), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    }
    mock().failures.clear();
}

TEST_F(MockDriver, AllocationFailuresNameTheRequest) {
    for (std::size_t bytes : {std::size_t{3} << 29, std::size_t{3} << 30}) {
        try {
            device_->allocate(bytes, kiln::inout);
            ADD_FAILURE() << bytes;
        } catch (const kiln::out_of_memory_error& e) {
            EXPECT_EQ(e.requested_bytes(), bytes);
            EXPECT_EQ(e.global_memory_bytes(), 2ull << 30);
            EXPECT_EQ(e.code_name(), "CUDA_ERROR_OUT_OF_MEMORY");
        }
    }
}

TEST_F(MockDriver, ProgramsRoundTripThroughTheirBinary) {
    require_nvrtc();
    auto program = build("#if 0\nkernel void hidden(global int* x) { x[0] = 1; }\n#endif\n" +
                         std::string(kiln_test::reduction_source));
    EXPECT_EQ(program->kernel_names(), std::vector<std::string>{"partial_sums"});
    auto loaded = device_->load(program->binary(), "");
    ASSERT_NE(loaded, nullptr);
    auto kernel = loaded->create_kernel("partial_sums");
    ASSERT_EQ(kernel->parameters().size(), 4u);
    EXPECT_EQ(kernel->parameters()[2].space, kiln::detail::parameter_info::address_space::local);
    EXPECT_EQ(kernel->max_work_group_size(), 1024u);
    EXPECT_EQ(device_->load(std::vector<std::byte>(64, std::byte{7}), ""), nullptr);
    EXPECT_THROW(program->create_kernel("hidden"), kiln::error);
}

TEST_F(MockDriver, ThreadsUseTheDeviceAtOnce) {
    std::vector<std::thread> threads;
    std::vector<int> correct(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            auto queue = device_->create_queue({});
            std::vector<int> values(100'000, t), back(values.size());
            std::shared_ptr<memory_impl> memory = device_->allocate(values.size() * 4, kiln::inout);
            kiln::event written(
                queue->write(*memory, 0, values.data(), values.size() * 4, {}, false));
            queue->read(*memory, 0, back.data(), back.size() * 4, std::span(&written, 1), false)
                ->wait();
            correct[t] = back == values;
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(correct, std::vector<int>(4, 1));
}

}  // namespace
}  // namespace kiln_test
