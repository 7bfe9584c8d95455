// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's host logic against the mock driver (mock_cuda_driver.cpp), which this test
// links so kiln's dlopen("libcuda.so.1") finds it: device properties, ownership of every handle,
// staging, fills, launch geometry and parameters, local memory layout, events, errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <kiln/error.hpp>
#include <kiln/runtime/pinned.hpp>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#include "cuda_test_helpers.hpp"
#include "mock_cuda_driver.hpp"
#include "mock_driver_fixture.hpp"
#include "opencl_c_kernels.hpp"

namespace kiln_test {
namespace {

using kiln::detail::device_impl;
using kiln::detail::memory_impl;
using kiln::detail::cuda::launch_info;

class MockDriver : public mock_driver_fixture {};

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

// A copy between two devices goes peer to peer where cuDeviceCanAccessPeer allows it (access
// enabled once), else through pinned staging chunks on the queue's stream; the bytes arrive
// either way, and the driver is asked once per pair of contexts. copy_between, which
// kiln::buffer::copy_to and kiln::copy_route_between ask, says which of the two it is.
TEST_F(MockDriver, CopiesBetweenDevicesGoPeerToPeerWhereTheDriverAllows) {
    for (const bool peer : {true, false}) {
        SCOPED_TRACE(peer ? "peer access" : "no peer access");
        mock().device_count = 2;
        mock().peer_access = peer;
        mock().peer_queries = mock().peer_enables = 0;
        const auto two = kiln::detail::make_cuda_backend();
        ASSERT_EQ(two->devices().size(), 2u);
        const auto first = two->devices()[0], second = two->devices()[1];
        auto first_queue = first->create_queue({}), second_queue = second->create_queue({});
        // Several staging chunks, the last one partial.
        const std::size_t bytes = 2 * kiln::detail::cuda::staging_pool::chunk_bytes + 12345;
        std::vector<std::uint8_t> values(bytes);
        for (std::size_t i = 0; i < bytes; ++i) values[i] = static_cast<std::uint8_t>(i * 13 + 7);
        std::shared_ptr<memory_impl> from = first->allocate(bytes, kiln::inout),
                                     to = second->allocate(bytes, kiln::inout);
        first_queue->write(*from, 0, values.data(), bytes, {}, true);
        EXPECT_EQ(first->copy_between(*second),
                  peer ? device_impl::device_copy::peer : device_impl::device_copy::staged);
        mock().calls.clear();
        first_queue->copy(*from, 0, *to, 0, bytes, {})->wait();
        first_queue->copy(*from, 0, *to, 0, bytes, {})->wait();
        const auto count = [](const char* name) {
            return std::count_if(mock().calls.begin(), mock().calls.end(),
                                 [&](const kiln_mock::call_record& c) { return c.name == name; });
        };
        EXPECT_EQ(count("cuMemcpyPeerAsync"), peer ? 2 : 0);
        EXPECT_EQ(count("cuMemcpyDtoHAsync"), peer ? 0 : 2 * 3);
        EXPECT_EQ(count("cuMemcpyHtoDAsync"), peer ? 0 : 2 * 3);
        EXPECT_EQ(mock().peer_queries, 1);
        EXPECT_EQ(mock().peer_enables, peer ? 1 : 0);
        std::vector<std::uint8_t> back(bytes);
        second_queue->read(*to, 0, back.data(), bytes, {}, true);
        EXPECT_EQ(back, values);
        from.reset();
        to.reset();
        first_queue.reset();
        second_queue.reset();
    }
    mock().device_count = 1;
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

/// Checks a staged device-to-host pipeline in the mock's call log: every chunk is filled on the
/// queue's stream and copied out by a host function on another stream, and a staging chunk is
/// filled again only after the queue's stream has waited for an event recorded, on the
/// copy-out stream, after a host function that came after the chunk's previous fill. Returns
/// how many fills reused a chunk.
int check_read_pipeline(const std::vector<kiln_mock::call_record>& calls, std::size_t chunks) {
    CUstream queue_stream = nullptr, copy_out_stream = nullptr;
    for (const auto& c : calls) {
        if (c.name == "cuMemcpyDtoHAsync" && queue_stream == nullptr) queue_stream = c.stream;
        if (c.name == "cuLaunchHostFunc" && copy_out_stream == nullptr) copy_out_stream = c.stream;
    }
    EXPECT_NE(queue_stream, copy_out_stream) << "host functions would stall the copies";
    std::map<CUevent, std::size_t> recorded_at;    // event -> log index of its last record
    std::map<const void*, std::size_t> filled_at;  // staging chunk -> log index of its fill
    std::vector<std::size_t> host_functions, queue_waits_on_copy_out;
    std::size_t fills = 0;
    int reuses = 0;
    for (std::size_t n = 0; n < calls.size(); ++n) {
        const auto& c = calls[n];
        if (c.name == "cuEventRecord") recorded_at[c.event] = n;
        if (c.name == "cuLaunchHostFunc") host_functions.push_back(n);
        if (c.name == "cuStreamWaitEvent" && c.stream == queue_stream &&
            recorded_at.contains(c.event) && calls[recorded_at[c.event]].stream == copy_out_stream)
            queue_waits_on_copy_out.push_back(n);
        if (c.name != "cuMemcpyDtoHAsync") continue;
        EXPECT_EQ(c.stream, queue_stream);
        ++fills;
        if (auto previous = filled_at.find(c.host); previous != filled_at.end()) {
            ++reuses;
            // A wait between the two fills on an event recorded after a host function that
            // itself came after the previous fill.
            const bool drained = std::any_of(
                queue_waits_on_copy_out.begin(), queue_waits_on_copy_out.end(), [&](std::size_t w) {
                    if (w < previous->second || w > n) return false;
                    const std::size_t record = recorded_at.at(calls[w].event);
                    return std::any_of(
                        host_functions.begin(), host_functions.end(),
                        [&](std::size_t h) { return h > previous->second && h < record; });
                });
            EXPECT_TRUE(drained) << "staging chunk refilled at call " << n
                                 << " before its previous contents were copied out";
        }
        filled_at[c.host] = n;
    }
    EXPECT_EQ(fills, chunks);
    EXPECT_EQ(host_functions.size(), chunks);
    // The queue's stream, and so the read's event, follows the last copy out.
    EXPECT_FALSE(queue_waits_on_copy_out.empty());
    if (!queue_waits_on_copy_out.empty() && !host_functions.empty()) {
        EXPECT_GT(queue_waits_on_copy_out.back(), host_functions.back());
    }
    return reuses;
}

TEST_F(MockDriver, StagedReadsPipelineTheirChunksInOrder) {
    const std::size_t chunk = kiln::detail::cuda::staging_pool::chunk_bytes;
    // More chunks than the pipeline holds, the last one partial and split unevenly between the
    // threads that copy chunks out.
    const std::size_t bytes = 9 * chunk + 1'234'567;
    const std::size_t offset = 5;  // an odd place in the buffer
    std::vector<std::uint8_t> values(bytes + offset);
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<std::uint8_t>(i * 7 + i / 4093);
    std::shared_ptr<memory_impl> memory = device_->allocate(values.size(), kiln::inout);
    queue_->write(*memory, 0, values.data(), values.size(), {}, true);
    mock().calls.clear();

    std::vector<std::uint8_t> back(bytes + 3, 0);
    queue_->read(*memory, offset, back.data() + 3, bytes, {}, false)->wait();
    EXPECT_TRUE(std::equal(back.begin() + 3, back.end(), values.begin() + offset));
    EXPECT_EQ(back[0] + back[1] + back[2], 0) << "written before the destination";
    EXPECT_GT(check_read_pipeline(mock().calls, 10), 0) << "the chunks were never reused";
}

TEST_F(MockDriver, AFailureMidPipelineIsReportedOnceAndNothingStaysInFlight) {
    const std::size_t bytes = 7 * kiln::detail::cuda::staging_pool::chunk_bytes;
    std::shared_ptr<memory_impl> memory = device_->allocate(bytes, kiln::inout);
    std::vector<std::uint8_t> back(bytes);
    mock().failures = {{"cuLaunchHostFunc", CUDA_ERROR_INVALID_VALUE}};
    mock().failures_after = 5;
    mock().calls.clear();
    int reported = 0;
    try {
        queue_->read(*memory, 0, back.data(), bytes, {}, false);
    } catch (const kiln::error& e) {
        ++reported;
        EXPECT_NE(std::string(e.what()).find("cuLaunchHostFunc"), std::string::npos) << e.what();
    }
    EXPECT_EQ(reported, 1);
    EXPECT_EQ(mock().host_functions, 5);
    // Both streams were drained after the failing call, so no host function enqueued before it
    // can write into `back` once the caller has seen the error.
    const auto& calls = mock().calls;
    const auto failed = std::find_if(calls.begin(), calls.end(),
                                     [](const auto& c) { return c.name == "cuLaunchHostFunc"; }) -
                        calls.begin();
    std::set<CUstream> drained;
    for (std::size_t n = static_cast<std::size_t>(failed); n < calls.size(); ++n)
        if (calls[n].name == "cuStreamSynchronize") drained.insert(calls[n].stream);
    EXPECT_EQ(drained.size(), 2u);

    // The staging chunks came back: the next reads work and reuse them.
    mock().failures.clear();
    const long host_allocations = mock().live_host_allocations;
    queue_->read(*memory, 0, back.data(), bytes, {}, false)->wait();
    queue_->read(*memory, 0, back.data(), bytes, {}, false)->wait();
    EXPECT_EQ(mock().live_host_allocations, host_allocations);
}

TEST_F(MockDriver, PinnedHostVectorsSkipStagingAndTheDriversPointerQuery) {
    kiln::device dev(device_);
    kiln::host_vector<std::uint32_t> pinned(1000, 7u, kiln::pinned_allocator<std::uint32_t>(dev));
    std::shared_ptr<memory_impl> memory = device_->allocate(4000, kiln::inout);
    queue_->write(*memory, 0, pinned.data() + 1, 3996, {}, false)->wait();
    queue_->read(*memory, 0, pinned.data(), 4000, {}, false)->wait();
    EXPECT_EQ(mock().pinned_transfers, 2);
    EXPECT_EQ(mock().pageable_transfers, 0);
    EXPECT_EQ(mock().host_functions, 0);
    EXPECT_EQ(mock().pointer_queries, 0) << "kiln's own pinned memory is known without asking";
    EXPECT_TRUE(kiln::detail::is_kiln_pinned(pinned.data() + 999, 4));
    EXPECT_FALSE(kiln::detail::is_kiln_pinned(pinned.data() + 999, 5));
    std::vector<std::uint32_t> ordinary(10);
    EXPECT_FALSE(kiln::detail::is_kiln_pinned(ordinary.data(), 4));
}

TEST_F(MockDriver, LaunchesReuseTheirQueuesEvents) {
    require_nvrtc();
    auto program = build("kernel void k(global int* x) { x[get_global_id(0)] = 1; }");
    auto kernel = program->create_kernel("k");
    std::shared_ptr<memory_impl> memory = device_->allocate(64, kiln::inout);
    std::vector<kernel_argument> args{buffer_argument(memory)};
    const long before = mock().events_created;
    for (int i = 0; i < 100; ++i) queue_->launch(*kernel, geometry({16}), args, {})->wait();
    EXPECT_LE(mock().events_created - before, 2) << "a fresh CUevent per launch";
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
    EXPECT_EQ(info.overhang, 1u) << "1000003 work-items in blocks of 256";
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
    EXPECT_EQ(info_of(tiled).overhang, 0u) << "the grid covers the range exactly";

    const auto& three = mock().launches[3];
    EXPECT_EQ(std::vector<unsigned>(three.grid, three.grid + 3), (std::vector<unsigned>{2, 2, 2}));
    EXPECT_EQ(info_of(three).global_offset[0], std::uint64_t(1) << 32);
    EXPECT_EQ(info_of(three).global_offset[2], 9u);
    EXPECT_EQ(info_of(three).work_dim, 3u);
    EXPECT_EQ(info_of(three).overhang, 0u);

    // Past CUDA's 65535 blocks in y and z the range becomes several launches, each told its
    // first work-group and the range's count so that group and global ids are the true ones.
    mock().launches.clear();
    queue_->launch(*kernel, geometry({3, 70000, 65536}, {3, 1, 1}), args, {});
    ASSERT_EQ(mock().launches.size(), 4u);
    const std::vector<std::vector<unsigned>> grids{
        {1, 65535, 65535}, {1, 4465, 65535}, {1, 65535, 1}, {1, 4465, 1}};
    const std::vector<std::vector<unsigned>> firsts{
        {0, 0, 0}, {0, 65535, 0}, {0, 0, 65535}, {0, 65535, 65535}};
    for (std::size_t part = 0; part < 4; ++part) {
        const auto& launch = mock().launches[part];
        const auto part_info = info_of(launch);
        EXPECT_EQ(std::vector<unsigned>(launch.grid, launch.grid + 3), grids[part]) << part;
        EXPECT_EQ(std::vector<unsigned>(part_info.group_offset, part_info.group_offset + 3),
                  firsts[part])
            << part;
        EXPECT_EQ(std::vector<unsigned>(part_info.num_groups, part_info.num_groups + 3),
                  (std::vector<unsigned>{1, 70000, 65536}));
        EXPECT_EQ(part_info.global_size[1], 70000u);
    }
    // Group ids travel as 32-bit numbers: beyond them, a clear error before anything runs.
    mock().launches.clear();
    EXPECT_THROW(queue_->launch(*kernel, geometry({1, std::size_t(1) << 33}, {1, 1}), args, {}),
                 kiln::invalid_argument_error);
    EXPECT_TRUE(mock().launches.empty());
}

TEST_F(MockDriver, PrintfBufferSizeComesFromTheEnvironment) {
    EXPECT_EQ(mock().printf_fifo_size, 0u) << "the driver's default unless asked";
    queue_.reset();
    device_.reset();
    backend_.reset();
    ::setenv("KILN_PRINTF_BUFFER_SIZE", "8388608", 1);
    backend_ = kiln::detail::make_cuda_backend();
    device_ = backend_->devices().front();
    queue_ = device_->create_queue({});
    EXPECT_EQ(mock().printf_fifo_size, 8388608u);
    queue_.reset();
    device_.reset();
    backend_.reset();
    ::setenv("KILN_PRINTF_BUFFER_SIZE", "lots", 1);
    backend_ = kiln::detail::make_cuda_backend();
    device_ = backend_->devices().front();
    EXPECT_THROW(device_->create_queue({}), kiln::invalid_argument_error);
    ::unsetenv("KILN_PRINTF_BUFFER_SIZE");
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

TEST_F(MockDriver, SetConstantCopiesIntoTheNamedGlobalBetweenContextSynchronizations) {
    require_nvrtc();
    const auto program = build(
        "constant float weights[4] = {0};\n"
        "constant int offsets[2] = {0};\n"
        "kernel void k(global float* out) { out[0] = weights[offsets[1]]; }\n");
    const float values[4] = {1.5f, -2, 3, 4};
    mock().calls.clear();
    program->set_constant("weights", values, sizeof values);
    ASSERT_EQ(mock().globals["weights"].size(), sizeof values);
    EXPECT_EQ(std::memcmp(mock().globals["weights"].data(), values, sizeof values), 0);
    EXPECT_FALSE(mock().globals.contains("offsets")) << "another global was touched";
    std::vector<std::string> names;
    for (const auto& call : mock().calls) names.push_back(call.name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"cuCtxSynchronize", "cuMemcpyHtoD", "cuCtxSynchronize"}));
    EXPECT_EQ(mock().calls[1].host, static_cast<const void*>(values));
}

TEST_F(MockDriver, SetConstantRefusesUnknownNamesAndOtherSizesBeforeCopying) {
    require_nvrtc();
    const auto program = build(
        "constant float weights[4] = {0};\n"
        "kernel void k(global float* out) { out[0] = weights[1]; }\n");
    const float values[4] = {};
    mock().calls.clear();
    try {
        program->set_constant("weights", values, 3 * sizeof(float));
        ADD_FAILURE() << "a 12-byte write to a 16-byte constant succeeded";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("has 16 bytes, not 12"), std::string::npos)
            << e.what();
    }
    try {
        program->set_constant("bias", values, sizeof values);
        ADD_FAILURE() << "an unknown constant was written";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("no program-scope constant 'bias'"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(mock().calls.empty()) << mock().calls.front().name;
}

TEST_F(MockDriver, ConstantArgumentsAreCopiedIntoTheKernelsAreaBeforeEachLaunch) {
    require_nvrtc();
    auto kernel = build(
                      "kernel void pick(constant float* table, uint i, global float* out) "
                      "{ out[0] = table[i]; }\n")
                      ->create_kernel("pick");
    const std::size_t area_bytes = 60 * 1024;
    EXPECT_EQ(kernel->parameters()[0].constant_bytes, area_bytes);
    ASSERT_EQ(mock().globals["kiln_constant_pick_0"].size(), area_bytes);
    auto first = upload(*device_, *queue_, std::vector<float>{1, 2, 3, 4});
    auto second = upload(*device_, *queue_, std::vector<float>{5, 6, 7, 8, 9, 10});
    std::shared_ptr<memory_impl> out = device_->allocate(4, kiln::out);
    const std::uint32_t index = 3;
    auto other_queue = device_->create_queue({});
    mock().parameter_sizes = {sizeof(launch_info), 4, 8};
    mock().calls.clear();

    std::vector<kernel_argument> args{buffer_argument(first), scalar_argument(index),
                                      buffer_argument(out)};
    queue_->launch(*kernel, geometry({1}), args, {});
    args[0] = buffer_argument(second);
    other_queue->launch(*kernel, geometry({1}), args, {});

    // The area holds the last argument, and the entry point takes no pointer for it.
    const auto& area = mock().globals["kiln_constant_pick_0"];
    std::vector<float> held(6);
    std::memcpy(held.data(), area.data(), held.size() * sizeof(float));
    EXPECT_EQ(held, (std::vector<float>{5, 6, 7, 8, 9, 10}));
    ASSERT_EQ(mock().launches.size(), 2u);
    std::uint32_t index_seen = 0;
    std::memcpy(&index_seen, mock().launches[1].parameters[1].data(), 4);
    EXPECT_EQ(index_seen, index);
    CUdeviceptr out_seen = 0;
    std::memcpy(&out_seen, mock().launches[1].parameters[2].data(), 8);
    EXPECT_EQ(out_seen, static_cast<kiln::detail::cuda::cuda_memory&>(*out).address());

    // Copy, launch, the area's event; on the other stream the copy first waits for that event.
    const auto& calls = mock().calls;
    std::vector<std::string> names;
    for (const auto& call : calls) names.push_back(call.name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"cuMemcpyDtoDAsync", "cuLaunchKernel", "cuEventRecord",
                                        "cuEventRecord", "cuStreamWaitEvent", "cuMemcpyDtoDAsync",
                                        "cuLaunchKernel", "cuEventRecord", "cuEventRecord"}));
    ASSERT_EQ(calls.size(), 9u);
    EXPECT_EQ(calls[4].event, calls[2].event) << "the copy waits for the first launch's end";
    EXPECT_NE(calls[4].stream, calls[2].stream);
    EXPECT_EQ(calls[7].event, calls[2].event) << "the area's one event, recorded again";
    EXPECT_EQ(calls[5].stream, calls[4].stream);
}

TEST_F(MockDriver, AConstantArgumentLargerThanItsAreaIsRefusedBeforeAnythingRuns) {
    require_nvrtc();
    auto kernel = build(
                      "constant float scale[2] = {1, 2};\n"
                      "kernel void pick(constant float* table, uint i, global float* out) "
                      "{ out[0] = table[i] * scale[1]; }\n")
                      ->create_kernel("pick");
    // A program with program-scope constants leaves them half of the bank.
    const std::size_t area_bytes = 32 * 1024;
    ASSERT_EQ(kernel->parameters()[0].constant_bytes, area_bytes);
    std::shared_ptr<memory_impl> table = device_->allocate(area_bytes + 4, kiln::in);
    std::shared_ptr<memory_impl> out = device_->allocate(4, kiln::out);
    const std::vector<kernel_argument> args{
        buffer_argument(table), scalar_argument(std::uint32_t{0}), buffer_argument(out)};
    mock().calls.clear();
    try {
        queue_->launch(*kernel, geometry({1}), args, {});
        ADD_FAILURE() << "a buffer past the constant area was launched";
    } catch (const kiln::invalid_argument_error& e) {
        const std::string what = e.what();
        for (const char* part : {"kernel 'pick'", "parameter 0 'table'", "32772 bytes",
                                 "32768 bytes of constant memory"})
            EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
    }
    EXPECT_TRUE(mock().calls.empty());
    EXPECT_TRUE(mock().launches.empty());
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
