// SPDX-License-Identifier: Apache-2.0
// The CUDA backend on a real GPU, through the backend interface: memory, queues, events and
// translated kernels checked against host results. Skips when the machine has no CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <kiln/error.hpp>
#include <numeric>
#include <random>
#include <thread>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_binary.hpp"
#include "cuda_test_helpers.hpp"
#include "opencl_c_kernels.hpp"

namespace kiln_test {
namespace {

using kiln::detail::device_impl;
using kiln::detail::memory_impl;
using kiln::detail::program_impl;
using kiln::detail::queue_impl;

TEST(CudaBackend, ListsDevicesOrNoneWithoutComplaint) {
    const auto backend = kiln::detail::make_cuda_backend();
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->kind(), kiln::backend_kind::cuda);
    const auto devices = backend->devices();
    if (kiln::detail::cuda::driver() == nullptr) {
        EXPECT_TRUE(devices.empty());
    }
}

TEST(CudaBackend, DevicePropertiesComeFromTheDriver) {
    KILN_REQUIRE_CUDA_DEVICE();
    for (const auto& device : cuda_devices()) {
        const auto& p = device->properties();
        EXPECT_EQ(p.backend, kiln::backend_kind::cuda);
        EXPECT_EQ(p.type, kiln::device_type::gpu);
        EXPECT_EQ(p.platform, "CUDA");
        EXPECT_FALSE(p.name.empty());
        EXPECT_TRUE(p.api_version.starts_with("CUDA ")) << p.api_version;
        EXPECT_TRUE(p.compiler.starts_with("NVRTC ")) << p.compiler;
        EXPECT_EQ(p.address_bits, 64u);
        EXPECT_GT(p.compute_units, 0u);
        EXPECT_GT(p.clock_mhz, 0u);
        EXPECT_GE(p.compute_capability_major, 7);
        EXPECT_GT(p.global_memory_bytes, 0u);
        EXPECT_EQ(p.max_allocation_bytes, p.global_memory_bytes);
        EXPECT_GE(p.local_memory_bytes, 48u * 1024);
        EXPECT_GE(p.shared_memory_per_block_bytes, p.local_memory_bytes);
        EXPECT_GT(p.shared_memory_per_multiprocessor_bytes, 0u);
        EXPECT_GT(p.l2_cache_bytes, 0u);
        EXPECT_GT(p.constant_memory_bytes, 0u);
        EXPECT_EQ(p.max_work_group_size, 1024u);
        EXPECT_EQ(p.max_work_item_sizes[0], 1024u);
        EXPECT_EQ(p.sub_group_size, 32u);
        EXPECT_TRUE(p.work_group_collectives);
        EXPECT_TRUE(p.has_extension("cl_khr_subgroups"));
        EXPECT_TRUE(p.has_extension("cl_khr_fp64"));
        EXPECT_TRUE(p.has_extension("cl_khr_int64_base_atomics"));
        const auto identity = device->compiler_identity();
        EXPECT_NE(identity.find("sm_" + std::to_string(p.compute_capability_major)),
                  std::string::npos)
            << identity;
        std::cout << p.name << ": " << identity << ", " << p.driver_version << "\n";
    }
}

class CudaDevice : public ::testing::Test {
  protected:
    void SetUp() override {
        KILN_REQUIRE_CUDA_DEVICE();
        device_ = cuda_devices().front().get();
        queue_ = device_->create_queue({});
    }

    std::shared_ptr<program_impl> build(const std::string& source,
                                        const std::string& options = {}) {
        return device_->build(std::vector<std::string>{source}, options);
    }

    device_impl* device_ = nullptr;
    std::unique_ptr<queue_impl> queue_;
};

TEST_F(CudaDevice, BlockingAndAsynchronousTransfersRoundTrip) {
    // The largest size spans several staging chunks and ends in a partial one.
    for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{3'000'001}}) {
        std::vector<std::uint32_t> values(count);
        std::iota(values.begin(), values.end(), 7u);
        std::shared_ptr<memory_impl> memory = device_->allocate(count * 4, kiln::inout);
        queue_->write(*memory, 0, values.data(), count * 4, {}, true);
        EXPECT_EQ(download<std::uint32_t>(*queue_, *memory), values);

        std::vector<std::uint32_t> doubled(count), back(count, 0);
        std::transform(values.begin(), values.end(), doubled.begin(), [](auto v) { return v * 2; });
        auto written = kiln::event(queue_->write(*memory, 0, doubled.data(), count * 4, {}, false));
        auto read = kiln::event(
            queue_->read(*memory, 0, back.data(), count * 4, std::span(&written, 1), false));
        read.impl()->wait();
        EXPECT_EQ(back, doubled) << count << " values";
    }
}

TEST_F(CudaDevice, SubRangeTransfersAndCopies) {
    std::vector<float> values(1000);
    std::iota(values.begin(), values.end(), 0.0f);
    auto a = upload(*device_, *queue_, values);
    std::shared_ptr<memory_impl> b = device_->allocate(1000 * sizeof(float), kiln::inout);
    queue_->fill(*b, 0, &values[0], sizeof(float), 1000 * sizeof(float), {});
    queue_->copy(*a, 100 * sizeof(float), *b, 500 * sizeof(float), 200 * sizeof(float), {});
    std::vector<float> part(10);
    queue_->read(*b, 495 * sizeof(float), part.data(), part.size() * sizeof(float), {}, true);
    EXPECT_EQ(part, (std::vector<float>{0, 0, 0, 0, 0, 100, 101, 102, 103, 104}));
}

TEST_F(CudaDevice, FillsRepeatEveryPatternSize) {
    for (std::size_t pattern_size = 1; pattern_size <= 128; pattern_size *= 2) {
        std::vector<std::uint8_t> pattern(pattern_size);
        std::iota(pattern.begin(), pattern.end(), std::uint8_t(1));
        std::shared_ptr<memory_impl> memory = device_->allocate(64 * 128, kiln::inout);
        const std::uint8_t zero = 0;
        queue_->fill(*memory, 0, &zero, 1, memory->size_bytes(), {});
        const std::size_t offset = 3 * pattern_size, count = 11 * pattern_size;
        queue_->fill(*memory, offset, pattern.data(), pattern_size, count, {});
        const auto bytes = download<std::uint8_t>(*queue_, *memory);
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            const bool inside = i >= offset && i < offset + count;
            ASSERT_EQ(bytes[i], inside ? pattern[(i - offset) % pattern_size] : 0)
                << "pattern " << pattern_size << ", byte " << i;
        }
    }
}

TEST_F(CudaDevice, VectorAddWithAndWithoutALocalSize) {
    auto program = build(kiln_test::vector_add_source);
    auto kernel = program->create_kernel("add");
    EXPECT_EQ(kernel->parameter_count(), 4u);
    EXPECT_GT(kernel->max_work_group_size(), 0u);
    // A prime size: when kiln chooses the block, the last one is partial.
    for (auto [n, local] :
         {std::pair<std::uint32_t, std::size_t>{1'000'003, 0}, {1024, 128}, {1, 0}}) {
        std::vector<float> a(n), b(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            a[i] = float(i);
            b[i] = 0.5f * float(i);
        }
        auto da = upload(*device_, *queue_, a), db = upload(*device_, *queue_, b);
        std::shared_ptr<memory_impl> dc = device_->allocate(n * sizeof(float), kiln::out);
        std::vector<kernel_argument> args{buffer_argument(da), buffer_argument(db),
                                          buffer_argument(dc), scalar_argument(n)};
        queue_->launch(*kernel, local ? geometry({n}, {local}) : geometry({n}), args, {});
        const auto c = download<float>(*queue_, *dc);
        for (std::uint32_t i = 0; i < n; ++i)
            ASSERT_EQ(c[i], 1.5f * float(i)) << "n " << n << ", index " << i;
    }
}

TEST_F(CudaDevice, ReductionThroughALocalMemoryArgument) {
    auto kernel = build(kiln_test::reduction_source)->create_kernel("partial_sums");
    const std::uint32_t n = 1'000'000;
    const std::size_t group = 256, groups = (n + group - 1) / group;
    std::vector<float> input(n);
    std::mt19937 random(42);
    std::uniform_real_distribution<float> values(0.0f, 1.0f);
    for (auto& v : input) v = values(random);
    auto din = upload(*device_, *queue_, input);
    std::shared_ptr<memory_impl> sums = device_->allocate(groups * sizeof(float), kiln::out);
    std::vector<kernel_argument> args{buffer_argument(din), buffer_argument(sums),
                                      local_argument(group * sizeof(float)), scalar_argument(n)};
    queue_->launch(*kernel, geometry({groups * group}, {group}), args, {});
    const auto partial = download<float>(*queue_, *sums);
    for (std::size_t g = 0; g < groups; ++g) {
        double expected = 0;
        for (std::size_t i = g * group; i < std::min<std::size_t>(n, (g + 1) * group); ++i)
            expected += input[i];
        ASSERT_NEAR(partial[g], expected, 1e-3) << "group " << g;
    }
}

TEST_F(CudaDevice, LocalArgumentsBeyond48KiBAndBeyondTheDevice) {
    auto kernel = build(kiln_test::reduction_source)->create_kernel("partial_sums");
    const std::size_t limit = device_->properties().shared_memory_per_block_bytes;
    const std::uint32_t n = 256;
    auto din = upload(*device_, *queue_, std::vector<float>(n, 1.0f));
    std::shared_ptr<memory_impl> sums = device_->allocate(sizeof(float), kiln::out);
    // The kernel only touches the first 256 floats; the rest makes the launch opt in.
    const std::size_t large = std::min<std::size_t>(limit, 64 * 1024);
    std::vector<kernel_argument> args{buffer_argument(din), buffer_argument(sums),
                                      local_argument(large), scalar_argument(n)};
    queue_->launch(*kernel, geometry({256}, {256}), args, {});
    EXPECT_EQ(download<float>(*queue_, *sums)[0], 256.0f);
    args[2] = local_argument(limit + 1);
    EXPECT_THROW(queue_->launch(*kernel, geometry({256}, {256}), args, {}),
                 kiln::invalid_argument_error);
}

TEST_F(CudaDevice, TiledMatrixMultiplyWithLocalArrays) {
    auto kernel = build(kiln_test::tiled_matmul_source)->create_kernel("matmul");
    const int n = 100;  // not a multiple of the 16x16 tile
    std::vector<float> a(n * n), b(n * n);
    for (int i = 0; i < n * n; ++i) {
        a[i] = float(i % 7) - 3.0f;
        b[i] = float(i % 5) * 0.25f;
    }
    auto da = upload(*device_, *queue_, a), db = upload(*device_, *queue_, b);
    std::shared_ptr<memory_impl> dc = device_->allocate(n * n * sizeof(float), kiln::out);
    std::vector<kernel_argument> args{scalar_argument(n), buffer_argument(da), buffer_argument(db),
                                      buffer_argument(dc)};
    queue_->launch(*kernel, geometry({112, 112}, {16, 16}), args, {});
    const auto c = download<float>(*queue_, *dc);
    for (int row = 0; row < n; ++row)
        for (int col = 0; col < n; ++col) {
            float expected = 0;
            for (int k = 0; k < n; ++k) expected += a[row * n + k] * b[k * n + col];
            ASSERT_NEAR(c[row * n + col], expected, 1e-3) << row << ", " << col;
        }
}

TEST_F(CudaDevice, Atomics) {
    auto kernel = build(kiln_test::atomics_source)->create_kernel("histogram");
    const std::uint32_t n = 4096;
    std::vector<std::uint32_t> values(n);
    std::iota(values.begin(), values.end(), 0u);
    auto dvalues = upload(*device_, *queue_, values);
    auto bins = upload(*device_, *queue_, std::vector<std::int32_t>(32, 0));
    auto total = upload(*device_, *queue_, std::vector<std::uint32_t>{0});
    auto sum = upload(*device_, *queue_, std::vector<float>{0.0f});
    auto wide = upload(*device_, *queue_, std::vector<std::int64_t>{0, 0});
    std::vector<kernel_argument> args{buffer_argument(dvalues), buffer_argument(bins),
                                      buffer_argument(total),   buffer_argument(sum),
                                      buffer_argument(wide),    local_argument(sizeof(int))};
    queue_->launch(*kernel, geometry({n}, {64}), args, {});
    const auto b = download<std::int32_t>(*queue_, *bins);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(b[i], int(n / 16)) << "bin " << i;
    EXPECT_EQ(b[16], int(n - 1));
    EXPECT_EQ(b[17], -int(n - 1));
    EXPECT_EQ(b[18], 1);
    EXPECT_EQ(b[19], 7);
    EXPECT_EQ(b[20], 0);
    EXPECT_EQ(b[21], 1);
    EXPECT_EQ(b[22], 0);
    EXPECT_EQ(b[23], -int(n));
    EXPECT_EQ(b[24], -int(n));
    EXPECT_EQ(download<std::uint32_t>(*queue_, *total)[0], n * (n - 1) / 2);
    EXPECT_EQ(download<float>(*queue_, *sum)[0], 0.5f * n);
    const auto w = download<std::int64_t>(*queue_, *wide);
    EXPECT_EQ(w[0], std::int64_t(n) * (n - 1) / 2);
    EXPECT_EQ(w[1], std::int64_t(n - 1));
}

TEST_F(CudaDevice, VectorTypesSwizzlesAndComparisons) {
    auto kernel = build(R"(
kernel void swizzle(global const float4* in, global float4* out, global int4* masks, global float3* packed) {
    const size_t i = get_global_id(0);
    const float4 v = in[i];
    float4 r = v.wzyx;
    r.xy = v.zw * 2.0f;
    r.s3 += 1.0f;
    out[i] = r;
    masks[i] = v > (float4)(2.0f);
    packed[i] = (float3)(v.x, v.yz + 1.0f);
}
)")
                      ->create_kernel("swizzle");
    const std::size_t n = 64;
    std::vector<float> in(4 * n);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i % 5);
    auto din = upload(*device_, *queue_, in);
    std::shared_ptr<memory_impl> out = device_->allocate(n * 16, kiln::out),
                                 masks = device_->allocate(n * 16, kiln::out),
                                 packed = device_->allocate(n * 16, kiln::out);
    std::vector<kernel_argument> args{buffer_argument(din), buffer_argument(out),
                                      buffer_argument(masks), buffer_argument(packed)};
    queue_->launch(*kernel, geometry({n}), args, {});
    const auto r = download<float>(*queue_, *out);
    const auto m = download<std::int32_t>(*queue_, *masks);
    const auto p = download<float>(*queue_, *packed);
    for (std::size_t i = 0; i < n; ++i) {
        const float* v = &in[4 * i];
        EXPECT_EQ(r[4 * i + 0], v[2] * 2.0f);
        EXPECT_EQ(r[4 * i + 1], v[3] * 2.0f);
        EXPECT_EQ(r[4 * i + 2], v[1]);
        EXPECT_EQ(r[4 * i + 3], v[0] + 1.0f);
        for (int c = 0; c < 4; ++c) EXPECT_EQ(m[4 * i + c], v[c] > 2.0f ? -1 : 0);
        // float3 takes 16 bytes in a buffer, as in OpenCL.
        EXPECT_EQ(p[4 * i + 0], v[0]);
        EXPECT_EQ(p[4 * i + 1], v[1] + 1.0f);
        EXPECT_EQ(p[4 * i + 2], v[2] + 1.0f);
    }
}

TEST_F(CudaDevice, GlobalOffsetsAndWorkItemFunctionsInHelpers) {
    auto kernel = build(R"(
size_t position(void) { return get_global_id(0) - get_global_offset(0) + (get_global_id(1) - get_global_offset(1)) * get_global_size(0); }
kernel void ids(global ulong* out) {
    out[position()] = get_global_id(0) * 1000 + get_global_id(1) + 1000000 * get_work_dim() + 10000000 * get_local_size(0);
}
)")
                      ->create_kernel("ids");
    const std::size_t width = 300, height = 7;
    std::shared_ptr<memory_impl> out = device_->allocate(width * height * 8, kiln::out);
    std::vector<kernel_argument> args{buffer_argument(out)};
    queue_->launch(*kernel, geometry({width, height}, {}, {500, 3}), args, {});
    const auto ids = download<std::uint64_t>(*queue_, *out);
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x) {
            // kiln chose 256-wide groups: the last one along x holds the remaining 44 work-items.
            const std::uint64_t local_size = x < 256 ? 256 : width - 256;
            ASSERT_EQ(ids[y * width + x],
                      (500 + x) * 1000 + (3 + y) + 2000000 + 10000000 * local_size)
                << x << ", " << y;
        }
}

TEST_F(CudaDevice, MathBuiltinsAndPrintfRun) {
    auto kernel = build(kiln_test::scalar_builtins_source)->create_kernel("builtins");
    const std::size_t n = 8;
    std::shared_ptr<memory_impl> ints = device_->allocate(n * 4, kiln::out),
                                 uints = device_->allocate(n * 4, kiln::out),
                                 floats = device_->allocate(n * 4, kiln::out),
                                 longs = device_->allocate(n * 8, kiln::out),
                                 ulongs = device_->allocate(n * 8, kiln::out);
    std::vector<kernel_argument> args{
        buffer_argument(ints),  buffer_argument(uints),  buffer_argument(floats),
        buffer_argument(longs), buffer_argument(ulongs), scalar_argument(std::uint64_t{12345})};
    queue_->launch(*kernel, geometry({n}, {n}), args, {});
    const auto f = download<float>(*queue_, *floats);
    // sqrt(0) + e + 3 + 8 + 5 + 5 + pi/4 + 1 + 1 + 2 + 180 - 1 + 0.5 + pi + 0 + 1 - 1 + 1 - 2
    EXPECT_NEAR(f[0],
                2.7182818f + 3 + 8 + 5 + 5 + 0.7853982f + 1 + 1 + 2 + 180 - 1 + 0.5f + 3.1415927f +
                    1 - 1 + 1 - 2,
                1e-3);
    const auto u = download<std::uint32_t>(*queue_, *uints);
    EXPECT_EQ(u[2], (2u << 16 | 1u) + 0u + 0u);
}

TEST_F(CudaDevice, ProfilingTimesAreOrderedAndNeedAProfilingQueue) {
    auto profiled = device_->create_queue(kiln::profiled);
    auto kernel = build(
                      "kernel void spin(global float* x) { float v = x[0]; for (int i = 0; i < "
                      "100000; ++i) v = v * 0.999f + 1.0f; x[1] = v; }\n")
                      ->create_kernel("spin");
    std::shared_ptr<memory_impl> x = upload(*device_, *profiled, std::vector<float>{1.0f, 0.0f});
    std::vector<kernel_argument> args{buffer_argument(x)};
    auto done = profiled->launch(*kernel, geometry({1}), args, {});
    const auto t = done->times();
    EXPECT_LE(t.queued_ns, t.submitted_ns);
    EXPECT_LE(t.submitted_ns, t.started_ns);
    EXPECT_LT(t.started_ns, t.ended_ns);
    EXPECT_EQ(done->status(), kiln::event_status::complete);
    auto unprofiled = queue_->marker({});
    EXPECT_THROW(unprofiled->times(), kiln::invalid_argument_error);
}

TEST_F(CudaDevice, EventsOrderWorkAcrossQueues) {
    auto other = device_->create_queue(kiln::out_of_order);
    const std::size_t count = 5'000'000;
    std::vector<std::uint32_t> values(count, 0xabcdef01u), back(count, 0);
    std::shared_ptr<memory_impl> memory = device_->allocate(count * 4, kiln::inout);
    kiln::event written(queue_->write(*memory, 0, values.data(), count * 4, {}, false));
    kiln::event marker(other->marker(std::span(&written, 1)));
    other->read(*memory, 0, back.data(), count * 4, std::span(&marker, 1), true);
    EXPECT_EQ(back, values);
    other->finish();
    queue_->finish();
}

TEST_F(CudaDevice, BinariesLoadBackAndForeignOnesAreRefused) {
    auto program = build(kiln_test::vector_add_source, "-cl-fast-relaxed-math");
    const auto binary = program->binary();
    auto loaded = device_->load(binary, "-cl-fast-relaxed-math");
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(loaded->kernel_names(), std::vector<std::string>{"add"});
    auto kernel = loaded->create_kernel("add");
    ASSERT_EQ(kernel->parameters().size(), 4u);
    EXPECT_EQ(kernel->parameters()[0].type_name, "float*");
    const std::uint32_t n = 3;
    auto a = upload(*device_, *queue_, std::vector<float>{1, 2, 3});
    std::shared_ptr<memory_impl> c = device_->allocate(12, kiln::out);
    std::vector<kernel_argument> args{buffer_argument(a), buffer_argument(a), buffer_argument(c),
                                      scalar_argument(n)};
    queue_->launch(*kernel, geometry({n}), args, {});
    EXPECT_EQ(download<float>(*queue_, *c), (std::vector<float>{2, 4, 6}));

    EXPECT_EQ(device_->load(std::vector<std::byte>(100, std::byte{1}), {}), nullptr);
    auto other_architecture = kiln::detail::cuda::unpack_binary(binary);
    ASSERT_TRUE(other_architecture);
    other_architecture->architecture = 10;
    EXPECT_EQ(device_->load(kiln::detail::cuda::pack_binary(*other_architecture), {}), nullptr);
}

TEST_F(CudaDevice, KernelsInDisabledCodeAndUnknownNames) {
    auto program = build(
        "#if 0\nkernel void hidden(global int* x) { x[0] = 1; }\n#endif\n"
        "kernel void shown(global int* x) { x[0] = 2; }\n");
    EXPECT_EQ(program->kernel_names(), std::vector<std::string>{"shown"});
    EXPECT_THROW(program->create_kernel("hidden"), kiln::error);
    EXPECT_THROW(program->create_kernel("nope"), kiln::error);
}

TEST_F(CudaDevice, BuildErrorsCarryTheLog) {
    try {
        build("kernel void k(global int* x) {\n  x[0] = missing;\n}\n");
        FAIL() << "the build succeeded";
    } catch (const kiln::build_error& e) {
        EXPECT_NE(e.log().find("source_1(2): error"), std::string::npos) << e.log();
    }
}

TEST_F(CudaDevice, AllocationsBeyondTheDeviceNameTheRequest) {
    const auto& p = device_->properties();
    for (std::uint64_t bytes : {std::uint64_t{1} << 50, p.global_memory_bytes}) {
        try {
            device_->allocate(bytes, kiln::inout);
            FAIL() << bytes << " bytes were allocated";
        } catch (const kiln::out_of_memory_error& e) {
            EXPECT_EQ(e.requested_bytes(), bytes);
            EXPECT_EQ(e.global_memory_bytes(), p.global_memory_bytes);
            EXPECT_NE(std::string(e.what()).find(p.name), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(device_->allocate(0, kiln::inout)->size_bytes(), 0u);
}

TEST_F(CudaDevice, SeveralThreadsShareTheDevice) {
    auto kernel = build(kiln_test::vector_add_source)->create_kernel("add");
    std::vector<std::thread> threads;
    std::vector<int> correct(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            auto queue = device_->create_queue({});
            const std::uint32_t n = 100'000;
            std::vector<float> a(n, float(t)), b(n, 1.0f);
            auto da = upload(*device_, *queue, a), db = upload(*device_, *queue, b);
            std::shared_ptr<memory_impl> dc = device_->allocate(n * 4, kiln::out);
            std::vector<kernel_argument> args{buffer_argument(da), buffer_argument(db),
                                              buffer_argument(dc), scalar_argument(n)};
            queue->launch(*kernel, geometry({n}), args, {});
            const auto c = download<float>(*queue, *dc);
            correct[t] =
                std::all_of(c.begin(), c.end(), [&](float v) { return v == float(t) + 1.0f; });
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(correct, std::vector<int>(4, 1));
}

}  // namespace
}  // namespace kiln_test
