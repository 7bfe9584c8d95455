// SPDX-License-Identifier: Apache-2.0
// kiln on a program's own CUDA objects (kiln/interop/cuda.hpp), against the mock driver, whose
// device memory is host memory: streams and device memory used in place, what kiln releases and
// what it never does, and the bad handles refused before any device work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <kiln/detail/profiling.hpp>
#include <kiln/interop/cuda.hpp>
#include <kiln/kiln.hpp>
#include <numeric>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "mock_cuda_driver.hpp"

namespace {

namespace cu = kiln::interop::cuda;
using kiln::invalid_argument_error;

// Two mock GPUs, before kiln lists its devices.
const bool two_gpus = [] {
    kiln_mock_state()->device_count = 2;
    return true;
}();

kiln_mock::state& mock() {
    return *kiln_mock_state();
}

CUcontext primary_of(int ordinal) {
    return cu::native(cu::wrap_device(ordinal)).context;
}

/// What a program allocates and creates itself, in `context`.
CUdeviceptr allocate(CUcontext context, std::size_t bytes) {
    cuCtxSetCurrent(context);
    CUdeviceptr address = 0;
    EXPECT_EQ(cuMemAlloc(&address, bytes), CUDA_SUCCESS);
    return address;
}
CUstream stream_in(CUcontext context) {
    cuCtxSetCurrent(context);
    CUstream stream = nullptr;
    EXPECT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    return stream;
}

/// The mock's device memory is host memory: the program reads and writes it directly.
float* host_view(CUdeviceptr address) {
    return reinterpret_cast<float*>(address);
}

/// Whether every stream command logged since `from` went to `stream`.
bool all_on(CUstream stream, std::size_t from) {
    const auto& calls = mock().calls;
    return std::all_of(calls.begin() + static_cast<std::ptrdiff_t>(from), calls.end(),
                       [&](const kiln_mock::call_record& c) { return c.stream == stream; });
}

TEST(cuda_interop_mock, a_wrapped_stream_and_memory_are_used_in_place) {
    ASSERT_TRUE(two_gpus);
    kiln::device d = cu::wrap_device(0);
    EXPECT_EQ(d, kiln::devices(kiln::filters::backend(kiln::backend_kind::cuda)).front())
        << "the primary context's device is kiln's own";
    const auto own = cu::native(d);
    EXPECT_EQ(own.device, 0);
    EXPECT_EQ(cu::wrap_device(own.context), d);
    const std::size_t n = 1024;
    CUstream stream = stream_in(own.context);
    CUdeviceptr address = allocate(own.context, n * sizeof(float));
    {
        kiln::queue s = cu::wrap_stream(d, stream);
        EXPECT_EQ(cu::native(s), stream);
        auto w = cu::wrap_vector<float>(s, address, n);
        EXPECT_EQ(cu::native(w), address);
        const std::size_t from = mock().calls.size();
        // The program writes, kiln reads; kiln writes, the program reads.
        std::iota(host_view(address), host_view(address) + n, 0.0f);
        const auto read = w.read();
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(read[i], static_cast<float>(i));
        w.write(std::vector<float>(n, 5.0f));
        EXPECT_EQ(host_view(address)[n - 1], 5.0f);
        w = 3.0f;
        EXPECT_EQ(host_view(address)[0], 3.0f);
        EXPECT_TRUE(all_on(stream, from)) << "every command went to the program's stream";
        if (kiln::detail::cuda::nvrtc() != nullptr) {
            // The mock records kernels without running them: the launch took the stream and
            // the program's memory.
            // Among its first parameters (8 bytes each): the vector assigned to.
            mock().parameter_sizes = {8, 8, 8};
            w = 2 * w + 1;
            mock().parameter_sizes.clear();
            ASSERT_FALSE(mock().launches.empty());
            const auto& parameters = mock().launches.back().parameters;
            EXPECT_TRUE(std::any_of(parameters.begin(), parameters.end(), [&](const auto& bytes) {
                CUdeviceptr passed = 0;
                std::memcpy(&passed, bytes.data(), sizeof passed);
                return passed == address;
            }));
            EXPECT_TRUE(all_on(stream, from));
        }
    }
    // Borrowed: kiln destroyed and freed nothing.
    EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree(address), CUDA_SUCCESS) << "the memory was still allocated";
}

TEST(cuda_interop_mock, kiln_releases_what_it_adopts) {
    kiln::device d = cu::wrap_device(0);
    const CUcontext context = cu::native(d).context;
    const long allocations = mock().live_allocations, streams = mock().live_streams,
               events = mock().live_events;
    {
        kiln::queue s = cu::wrap_stream(d, stream_in(context), kiln::interop::adopt);
        auto w = cu::wrap_vector<float>(s, allocate(context, 256), 64, kiln::interop::adopt);
        w = 1.0f;
        CUevent e = nullptr;
        cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
        s.marker(cu::wrap_event(s, e, kiln::interop::adopt)).wait();
        s.finish();
    }
    EXPECT_EQ(mock().live_allocations, allocations) << "cuMemFree";
    EXPECT_EQ(mock().live_streams, streams) << "cuStreamDestroy";
    EXPECT_EQ(mock().live_events, events) << "cuEventDestroy";
    // A primary context adopted: kiln keeps its own retain, and releases the one handed over.
    const long released = mock().contexts_released;
    CUcontext primary = nullptr;
    cuDevicePrimaryCtxRetain(&primary, 0);
    EXPECT_EQ(cu::wrap_device(primary, kiln::interop::adopt), d);
    EXPECT_EQ(mock().contexts_released, released + 1);
}

TEST(cuda_interop_mock, a_context_of_the_program_is_a_device_of_its_own) {
    const CUcontext context = kiln_mock_create_context(0);
    const long created = mock().live_created_contexts;
    kiln::device mine = cu::wrap_device(context, kiln::interop::adopt);  // destroyed at exit
    EXPECT_NE(mine, cu::wrap_device(0));
    EXPECT_EQ(cu::native(mine).context, context);
    EXPECT_EQ(mine.name(), cu::wrap_device(0).name());
    kiln::queue kilns(mine);  // a stream kiln makes, in the program's context
    CUcontext of = nullptr;
    ASSERT_EQ(cuStreamGetCtx(cu::native(kilns), &of), CUDA_SUCCESS);
    EXPECT_EQ(of, context);
    kiln::queue s = cu::wrap_stream(mine, stream_in(context), kiln::interop::adopt);
    auto w = cu::wrap_vector<float>(s, allocate(context, 1024), 256, kiln::interop::adopt);
    w = 4.0f;
    EXPECT_EQ(w.read(), std::vector<float>(256, 4.0f));
    EXPECT_EQ(mock().live_created_contexts, created) << "kiln keeps it for the process";
}

TEST(cuda_interop_mock, events_cross_both_ways) {
    kiln::device d = cu::wrap_device(0);
    CUstream stream = stream_in(cu::native(d).context);
    kiln::queue s = cu::wrap_stream(d, stream);
    CUevent program_event = nullptr;
    cuEventCreate(&program_event, CU_EVENT_DISABLE_TIMING);
    const std::size_t from = mock().calls.size();
    kiln::event after = s.marker(cu::wrap_event(s, program_event));
    const auto& calls = mock().calls;
    EXPECT_TRUE(std::any_of(calls.begin() + static_cast<std::ptrdiff_t>(from), calls.end(),
                            [&](const kiln_mock::call_record& c) {
                                return c.name == "cuStreamWaitEvent" && c.stream == stream &&
                                       c.event == program_event;
                            }))
        << "the stream waits for the program's event on the device";
    EXPECT_NE(cu::native(after), nullptr);
    EXPECT_EQ(cu::native(kiln::event()), nullptr);
    cuEventDestroy(program_event);
    s.finish();
    cuStreamDestroy(stream);
}

TEST(cuda_interop_mock, a_profile_records_a_wrapped_stream) {
    kiln::detail::profiling::scoped_session session;
    kiln::device d = cu::wrap_device(0);
    CUstream stream = stream_in(cu::native(d).context);
    {
        kiln::queue s = cu::wrap_stream(d, stream);
        EXPECT_TRUE(s.options().profiling);
        kiln::vector<float> v(s, 64);
        v = 2.0f;
        s.finish();
    }
    EXPECT_NE(session.trace_json().find("\"cat\":\"fill\""), std::string::npos);
    cuStreamDestroy(stream);
}

TEST(cuda_interop_mock, bad_handles_are_refused_before_any_device_work) {
    kiln::device d = cu::wrap_device(0);
    const CUcontext context = cu::native(d).context, other_gpu = primary_of(1);
    const CUcontext program_context = kiln_mock_create_context(0);
    CUstream stream = stream_in(context);
    kiln::queue s = cu::wrap_stream(d, stream);
    CUdeviceptr address = allocate(context, 4096);
    CUdeviceptr elsewhere = allocate(other_gpu, 4096),
                in_program_context = allocate(program_context, 4096);
    CUstream other_gpu_stream = stream_in(other_gpu), program_stream = stream_in(program_context);
    void* pinned = nullptr;
    cuMemHostAlloc(&pinned, 8192, 0);
    // Where an allocation of the device could begin (a real driver's pinned memory is a page's).
    const auto pinned_aligned = (reinterpret_cast<CUdeviceptr>(pinned) + 255) / 256 * 256;
    void* pageable = std::aligned_alloc(256, 4096);  // aligned as an allocation would be
    const std::size_t calls = mock().calls.size();
    const long allocations = mock().live_allocations;

    const auto refused = [](auto call, const char* why) {
        try {
            call();
            ADD_FAILURE() << "not refused: " << why;
        } catch (const invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    };
    refused([&] { cu::wrap_device(CUcontext(nullptr)); }, "null");
    refused([&] { cu::wrap_device(7); }, "not one of kiln's devices");
    refused([&] { cu::wrap_stream(d, nullptr); }, "CU_STREAM_LEGACY");
    refused([&] { cu::wrap_stream(d, CU_STREAM_LEGACY, kiln::interop::adopt); },
            "cannot be adopted");
    refused([&] { cu::wrap_stream(d, other_gpu_stream); }, "another device");
    refused([&] { cu::wrap_stream(d, program_stream); }, "another context");
    refused([&] { cu::wrap_vector<float>(s, 0, 4); }, "null");
    refused([&] { cu::wrap_vector<float>(s, elsewhere, 4); }, "another device");
    refused([&] { cu::wrap_vector<float>(s, in_program_context, 4); }, "another context");
    refused([&] { cu::wrap_vector<float>(s, address, 1025); }, "end of its allocation");
    refused([&] { cu::wrap_vector<float>(s, address + 2048, 513); }, "end of its allocation");
    refused([&] { cu::wrap_vector<float>(s, address + 2, 4); }, "misaligned for the element type");
    refused([&] { cu::wrap_vector<float>(s, address + 4, 4); }, "multiple of 256");
    refused([&] { cu::wrap_vector<float>(s, address + 256, 4, kiln::interop::adopt); },
            "whole allocation");
    refused([&] { cu::wrap_vector<float>(s, pinned_aligned, 4); }, "host memory");
    refused([&] { cu::wrap_vector<float>(s, reinterpret_cast<CUdeviceptr>(pageable), 4); },
            "not memory the CUDA driver allocated");
    refused([&] { cu::wrap_event(s, nullptr); }, "null");
    EXPECT_EQ(mock().calls.size(), calls) << "nothing was enqueued";
    EXPECT_EQ(mock().live_allocations, allocations);
    // A range inside the allocation, where an allocation may begin, is taken.
    EXPECT_EQ(cu::native(cu::wrap_vector<float>(s, address + 256, 4)), address + 256);
    // An OpenCL queue is no CUDA stream.
    const auto opencl = kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl));
    if (!opencl.empty()) refused([&] { cu::native(kiln::queue(opencl.front())); }, "opencl");

    for (CUdeviceptr a : {address, elsewhere, in_program_context}) cuMemFree(a);
    for (CUstream st : {stream, other_gpu_stream, program_stream}) cuStreamDestroy(st);
    cuCtxDestroy(program_context);
    cuMemFreeHost(pinned);
    std::free(pageable);
}

}  // namespace
