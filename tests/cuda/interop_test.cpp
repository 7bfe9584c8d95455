// SPDX-License-Identifier: Apache-2.0
// kiln on a program's own CUDA memory and stream (kiln/interop/cuda.hpp) on every CUDA device,
// with a real driver: the same memory on both sides, kiln's commands ordered with the program's
// on its stream without a host wait, kiln's algorithms, GEMM into a matrix view with a leading
// dimension, FFT, fused blocks, captures and profiles on wrapped objects, and the driver's own
// answers refusing bad handles. The program's driver calls go through kiln's loaded driver
// table, so that this test starts where there is no driver (and skips). Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <kiln/detail/profiling.hpp>
#include <kiln/interop/cuda.hpp>
#include <kiln/kiln.hpp>
#include <numeric>
#include <vector>

#include "backend/cuda/cuda_api.hpp"

namespace {

namespace cu = kiln::interop::cuda;
using kiln::invalid_argument_error;

std::vector<kiln::device> cuda_devices() {
    return kiln::devices(kiln::filters::backend(kiln::backend_kind::cuda));
}
#define KILN_REQUIRE_CUDA_DEVICES() \
    if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device"

const kiln::detail::cuda::driver_api& api() {
    return *kiln::detail::cuda::driver();
}
void ok(CUresult result) {
    ASSERT_EQ(result, CUDA_SUCCESS);
}

/// A program's own stream and allocations on a device, in its primary context, freed after.
class program_objects {
  public:
    explicit program_objects(const kiln::device& d) : context_(cu::native(d).context) {
        api().cuCtxSetCurrent(context_);
        api().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING);
    }
    ~program_objects() {
        api().cuCtxSetCurrent(context_);
        api().cuStreamSynchronize(stream_);
        for (CUdeviceptr p : allocations_) api().cuMemFree(p);
        api().cuStreamDestroy(stream_);
    }
    program_objects(const program_objects&) = delete;
    program_objects& operator=(const program_objects&) = delete;

    CUstream stream() const { return stream_; }
    CUdeviceptr allocate(std::size_t bytes) {
        api().cuCtxSetCurrent(context_);
        CUdeviceptr p = 0;
        EXPECT_EQ(api().cuMemAlloc(&p, bytes), CUDA_SUCCESS);
        allocations_.push_back(p);
        return p;
    }
    template <class T>
    CUdeviceptr allocate(const std::vector<T>& host) {
        const CUdeviceptr p = allocate(host.size() * sizeof(T));
        EXPECT_EQ(api().cuMemcpyHtoDAsync(p, host.data(), host.size() * sizeof(T), stream_),
                  CUDA_SUCCESS);
        EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
        return p;
    }
    /// Read on the program's stream, after what it holds (kiln's commands included).
    template <class T>
    std::vector<T> read(CUdeviceptr p, std::size_t n) {
        std::vector<T> host(n);
        api().cuCtxSetCurrent(context_);
        EXPECT_EQ(api().cuMemcpyDtoHAsync(host.data(), p, n * sizeof(T), stream_), CUDA_SUCCESS);
        EXPECT_EQ(api().cuStreamSynchronize(stream_), CUDA_SUCCESS);
        return host;
    }

  private:
    CUcontext context_;
    CUstream stream_ = nullptr;
    std::vector<CUdeviceptr> allocations_;
};

TEST(cuda_interop, a_wrapped_vector_is_the_memory_itself) {
    KILN_REQUIRE_CUDA_DEVICES();
    for (const kiln::device& d : cuda_devices()) {
        SCOPED_TRACE(d.name());
        program_objects program(d);
        const std::size_t n = 100'000;
        std::vector<float> host(n);
        std::iota(host.begin(), host.end(), 0.0f);
        const CUdeviceptr p = program.allocate(host);
        kiln::queue s = cu::wrap_stream(d, program.stream());
        auto v = cu::wrap_vector<float>(s, p, n);
        EXPECT_EQ(cu::native(v), p);
        EXPECT_EQ(v.read(), host);
        v = 2 * v + 1;
        const auto written = program.read<float>(p, n);  // on the stream, no wait between
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(written[i], 2 * host[i] + 1) << i;
        EXPECT_EQ(kiln::sum(v), static_cast<float>(n) * static_cast<float>(n));
    }
}

TEST(cuda_interop, algorithms_gemm_fft_fused_capture_and_profiles_run_on_wrapped_objects) {
    KILN_REQUIRE_CUDA_DEVICES();
    for (const kiln::device& d : cuda_devices()) {
        SCOPED_TRACE(d.name());
        kiln::detail::profiling::scoped_session session;
        program_objects program(d);
        kiln::queue s = cu::wrap_stream(d, program.stream());
        EXPECT_TRUE(s.options().profiling);
        std::vector<std::uint32_t> keys(1 << 16);
        for (std::size_t i = 0; i < keys.size(); ++i)
            keys[i] = static_cast<std::uint32_t>((i * 2654435761u) % 1000003u);
        const CUdeviceptr key_memory = program.allocate(keys);
        auto k = cu::wrap_vector<std::uint32_t>(s, key_memory, keys.size());
        kiln::sort(k);
        std::sort(keys.begin(), keys.end());
        EXPECT_EQ(program.read<std::uint32_t>(key_memory, keys.size()), keys);

        // C = A B into a 2 x 3 window of a 2 x 64 allocation (leading dimension 64).
        const CUdeviceptr c_memory = program.allocate(std::vector<float>(128, -1.0f));
        auto c = cu::wrap_vector<float>(s, c_memory, 128);
        kiln::matrix<float> A(s, 2, 2, std::vector<float>{1, 2, 3, 4}),
            B(s, 2, 3, std::vector<float>{1, 0, 2, 0, 1, 3});
        kiln::gemm(kiln::matrix_view<float>(c, 2, 3, 64), A, B);
        const auto product = program.read<float>(c_memory, 128);
        EXPECT_EQ(std::vector<float>(product.begin(), product.begin() + 4),
                  (std::vector<float>{1, 2, 8, -1}));
        EXPECT_EQ(std::vector<float>(product.begin() + 64, product.begin() + 68),
                  (std::vector<float>{3, 4, 18, -1}));

        using complex = std::complex<float>;
        const CUdeviceptr signal = program.allocate(std::vector<complex>(16, complex(1.0f, 0.0f)));
        auto x = cu::wrap_vector<complex>(s, signal, 16);
        kiln::fft<float> forward(s, {16});
        forward(x, x);
        const auto spectrum = program.read<complex>(signal, 16);
        EXPECT_NEAR(spectrum[0].real(), 16.0f, 1e-4f);
        for (std::size_t i = 1; i < 16; ++i) EXPECT_NEAR(std::abs(spectrum[i]), 0.0f, 1e-4f);

        const CUdeviceptr values = program.allocate(std::vector<float>(64, 1.0f));
        auto v = cu::wrap_vector<float>(s, values, 64);
        kiln::vector<float> w(s, 64);
        kiln::fused(s, [&] {
            w = v + 1;
            v = w * 2;
        });
        kiln::graph twice = kiln::capture(s, [&] { v = v + 1; });
        twice.launch();
        twice.launch();
        EXPECT_EQ(program.read<float>(values, 64), std::vector<float>(64, 6.0f));
        s.finish();
        EXPECT_NE(session.trace_json().find("\"cat\":\"kernel\""), std::string::npos);
    }
}

TEST(cuda_interop, events_order_kiln_and_the_program_on_the_device) {
    KILN_REQUIRE_CUDA_DEVICES();
    const kiln::device d = cuda_devices().front();
    program_objects program(d), other(d);
    kiln::queue s = cu::wrap_stream(d, program.stream());
    const CUdeviceptr p = program.allocate(std::vector<float>(1 << 20, 0.0f));
    auto v = cu::wrap_vector<float>(s, p, 1 << 20);
    v = 5.0f;
    // The other stream waits on the device for kiln's work, then reads.
    const kiln::event marker = s.marker();
    CUevent done = cu::native(marker);
    ASSERT_NE(done, nullptr);
    ok(api().cuStreamWaitEvent(other.stream(), done, 0));
    const auto seen = other.read<float>(p, 1 << 20);
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](float x) { return x == 5.0f; }));
}

TEST(cuda_interop, the_driver_refuses_what_kiln_cannot_use) {
    KILN_REQUIRE_CUDA_DEVICES();
    const auto devices = cuda_devices();
    const kiln::device d = devices.front();
    program_objects program(d);
    kiln::queue s = cu::wrap_stream(d, program.stream());
    const CUdeviceptr p = program.allocate(4096);
    EXPECT_THROW(cu::wrap_vector<float>(s, p, 1025), invalid_argument_error);
    EXPECT_THROW(cu::wrap_vector<float>(s, p + 2048, 513), invalid_argument_error);
    EXPECT_THROW(cu::wrap_vector<float>(s, p + 2, 4), invalid_argument_error);
    EXPECT_THROW(cu::wrap_vector<float>(s, p + 4, 4), invalid_argument_error);
    EXPECT_THROW(cu::wrap_vector<float>(s, p + 256, 4, kiln::interop::adopt),
                 invalid_argument_error);
    EXPECT_NO_THROW(cu::wrap_vector<float>(s, p + 256, 4));
    void* pinned = nullptr;
    ok(api().cuMemHostAlloc(&pinned, 4096, 0));
    EXPECT_THROW(cu::wrap_vector<float>(s, reinterpret_cast<CUdeviceptr>(pinned), 4),
                 invalid_argument_error);
    api().cuMemFreeHost(pinned);
    void* pageable = std::aligned_alloc(4096, 4096);
    EXPECT_THROW(cu::wrap_vector<float>(s, reinterpret_cast<CUdeviceptr>(pageable), 4),
                 invalid_argument_error);
    std::free(pageable);
    EXPECT_THROW(cu::wrap_stream(d, nullptr), invalid_argument_error);
    if (devices.size() > 1) {
        program_objects elsewhere(devices[1]);
        EXPECT_THROW(cu::wrap_vector<float>(s, elsewhere.allocate(4096), 4),
                     invalid_argument_error);
        EXPECT_THROW(cu::wrap_stream(d, elsewhere.stream()), invalid_argument_error);
    }
}

}  // namespace
