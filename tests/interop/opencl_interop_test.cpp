// SPDX-License-Identifier: Apache-2.0
// kiln on a program's own OpenCL objects (kiln/interop/opencl.hpp), on every OpenCL device: its
// context, queue and buffers used in place, what kiln releases and what it never does, and the
// bad handles refused before any device work.
// The OpenCL version kiln's interop header is used against here (the program's choice).
#define CL_TARGET_OPENCL_VERSION 300
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <kiln/detail/profiling.hpp>
#include <kiln/interop/opencl.hpp>
#include <kiln/kiln.hpp>
#include <numeric>
#include <thread>
#include <vector>

#include "support/device_param.hpp"

namespace {

namespace cl = kiln::interop::opencl;

template <class Object, class Getter>
cl_uint reference_count(Getter getter, Object object, cl_uint name) {
    cl_uint count = 0;
    EXPECT_EQ(getter(object, name, sizeof count, &count, nullptr), CL_SUCCESS);
    return count;
}
cl_uint references(cl_mem m) {
    return reference_count(clGetMemObjectInfo, m, CL_MEM_REFERENCE_COUNT);
}
cl_uint references(cl_command_queue q) {
    return reference_count(clGetCommandQueueInfo, q, CL_QUEUE_REFERENCE_COUNT);
}
cl_uint references(cl_context c) {
    return reference_count(clGetContextInfo, c, CL_CONTEXT_REFERENCE_COUNT);
}

/// A program's own OpenCL objects on the device: a context and an in-order queue of its own.
class opencl_interop : public kiln::test::device_test {
  protected:
    void SetUp() override {
        id = cl::native(device()).device;
        cl_int status = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
        ASSERT_EQ(status, CL_SUCCESS);
        const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        own_queue = clCreateCommandQueueWithProperties(context, id, profiled, &status);
        ASSERT_EQ(status, CL_SUCCESS);
    }
    void TearDown() override {
        for (cl_mem m : buffers) clReleaseMemObject(m);
        if (own_queue) clReleaseCommandQueue(own_queue);
        if (context) clReleaseContext(context);
    }

    cl_mem buffer_of(std::size_t bytes) {
        cl_int status = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
        EXPECT_EQ(status, CL_SUCCESS);
        buffers.push_back(m);
        return m;
    }
    template <class T>
    cl_mem buffer_of(const std::vector<T>& host) {
        cl_mem m = buffer_of(host.size() * sizeof(T));
        EXPECT_EQ(clEnqueueWriteBuffer(own_queue, m, CL_TRUE, 0, host.size() * sizeof(T),
                                       host.data(), 0, nullptr, nullptr),
                  CL_SUCCESS);
        return m;
    }
    /// Read through the program's own queue, after what it holds (kiln's commands included).
    template <class T>
    std::vector<T> read_back(cl_mem m, std::size_t n, std::size_t offset = 0) {
        std::vector<T> host(n);
        EXPECT_EQ(clEnqueueReadBuffer(own_queue, m, CL_TRUE, offset * sizeof(T), n * sizeof(T),
                                      host.data(), 0, nullptr, nullptr),
                  CL_SUCCESS);
        return host;
    }
    /// Elements of T in one step of the device's base address alignment.
    template <class T>
    std::size_t aligned_step() const {
        return std::max<std::size_t>(device().properties().memory_base_alignment_bytes / sizeof(T),
                                     1);
    }

    cl_device_id id = nullptr;
    cl_context context = nullptr;
    cl_command_queue own_queue = nullptr;
    std::vector<cl_mem> buffers;
};

TEST_P(opencl_interop, a_wrapped_vector_is_the_buffer_itself) {
    const std::size_t n = 1000;
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 0.0f);
    cl_mem m = buffer_of(host);
    kiln::device d = cl::wrap_device(id, context);
    kiln::queue q = cl::wrap_queue(d, own_queue);
    EXPECT_TRUE(q.options().profiling) << "the options the queue was made with";
    {
        auto v = cl::wrap_vector<float>(q, m, n);
        EXPECT_EQ(cl::native(v), m);
        EXPECT_EQ(cl::native(q), own_queue);
        EXPECT_EQ(cl::native(d).context, context);
        // What the program wrote, kiln reads; what kiln writes, the program reads.
        EXPECT_EQ(v.read(), host);
        v = 2 * v + 1;
        const auto written = read_back<float>(m, n);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(written[i], 2 * host[i] + 1) << i;
        const float one = 1.0f;
        ASSERT_EQ(clEnqueueFillBuffer(own_queue, m, &one, sizeof one, 0, n * sizeof(float), 0,
                                      nullptr, nullptr),
                  CL_SUCCESS);
        EXPECT_EQ(kiln::sum(v), static_cast<float>(n));
    }
}

TEST_P(opencl_interop, a_range_at_an_offset_is_a_sub_buffer_of_the_buffer) {
    const std::size_t step = aligned_step<int>(), n = 4 * step;
    cl_mem m = buffer_of(std::vector<int>(n, -1));
    kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), own_queue);
    auto middle = cl::wrap_vector<int>(q, m, 2 * step, step);
    cl_mem range = cl::native(middle);
    cl_mem parent = nullptr;
    ASSERT_EQ(
        clGetMemObjectInfo(range, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(parent, m);
    middle = kiln::element_index() * 3;
    const auto all = read_back<int>(m, n);
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(all[i], i >= step && i < 3 * step ? static_cast<int>(i - step) * 3 : -1) << i;
    // A range of the range is cut from the buffer too.
    auto second_half = cl::wrap_vector<int>(q, range, 1, step);
    EXPECT_EQ(second_half.read(), std::vector<int>{static_cast<int>(step) * 3});
}

TEST_P(opencl_interop, algorithms_gemm_and_fft_run_on_wrapped_memory) {
    kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), own_queue);
    // Sort and scan, in place.
    std::vector<std::uint32_t> keys{9, 3, 7, 1, 8, 2, 6, 4, 5, 0};
    cl_mem key_memory = buffer_of(keys);
    auto k = cl::wrap_vector<std::uint32_t>(q, key_memory, keys.size());
    kiln::sort(k);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(read_back<std::uint32_t>(key_memory, keys.size()), keys);

    // C = A B into a 2 x 3 window of a 2 x 5 buffer (leading dimension 5).
    const std::vector<float> a{1, 2, 3, 4}, b{1, 0, 2, 0, 1, 3};  // 2 x 2, 2 x 3
    cl_mem c_memory = buffer_of(std::vector<float>(10, -1.0f));
    auto c = cl::wrap_vector<float>(q, c_memory, 10);
    kiln::matrix<float> A(q, 2, 2, a), B(q, 2, 3, b);
    kiln::gemm(kiln::matrix_view<float>(c, 2, 3, 5), A, B);
    EXPECT_EQ(read_back<float>(c_memory, 10),
              (std::vector<float>{1, 2, 8, -1, -1, 3, 4, 18, -1, -1}));

    // A forward transform of a constant: all of it in the first bin.
    using complex = std::complex<float>;
    cl_mem signal = buffer_of(std::vector<complex>(8, complex(1.0f, 0.0f)));
    auto x = cl::wrap_vector<complex>(q, signal, 8);
    kiln::fft<float> forward(q, {8});
    forward(x, x);
    const auto spectrum = read_back<complex>(signal, 8);
    EXPECT_NEAR(spectrum[0].real(), 8.0f, 1e-5f);
    for (std::size_t i = 1; i < 8; ++i) EXPECT_NEAR(std::abs(spectrum[i]), 0.0f, 1e-5f) << i;
}

TEST_P(opencl_interop, fused_blocks_captures_and_profiles_take_a_wrapped_queue) {
    kiln::detail::profiling::scoped_session session;
    kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), own_queue);
    cl_mem m = buffer_of(std::vector<float>(64, 1.0f));
    auto v = cl::wrap_vector<float>(q, m, 64);
    kiln::vector<float> w(q, 64);
    kiln::fused(q, [&] {
        w = v + 1;
        v = w * 2;
    });
    kiln::graph twice = kiln::capture(q, [&] { v = v + 1; });
    twice.launch();
    twice.launch();
    q.finish();
    EXPECT_EQ(read_back<float>(m, 64), std::vector<float>(64, 6.0f));
    const std::string trace = session.trace_json();
    EXPECT_NE(trace.find("\"cat\":\"kernel\""), std::string::npos)
        << "the wrapped queue's kernels, with their device times, are on the timeline";
}

/// The references a buffer and a queue of the program's hold once kiln has used them, wrapped
/// as `owner` says, and dropped every object it made of them. Each starts with two: the
/// program's, and the one it may hand kiln.
struct references_left {
    cl_uint memory = 0, queue = 0;
};
references_left after_kiln_used(cl_context context, cl_device_id id,
                                kiln::interop::ownership owner) {
    cl_int status = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4 * sizeof(float), nullptr, &status);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, id, nullptr, &status);
    clRetainMemObject(m);
    clRetainCommandQueue(queue);
    {
        kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), queue, owner);
        auto v = cl::wrap_vector<float>(q, m, 4, 0, owner);
        v = 3.0f;
        v = v * 2;
        EXPECT_EQ(v.read(), std::vector<float>(4, 6.0f));
        auto copy = v;  // a deep copy, in kiln's own memory
        EXPECT_NE(cl::native(copy), m);
    }
    clFinish(queue);
    // PoCL drops a finished command's own references to its buffer on its worker threads, at
    // times after clFinish has returned (seen once under AddressSanitizer: an adopted buffer
    // still at 2). Wait, a bounded time, for the counts to reach what the program and kiln
    // should hold; a reference kiln keeps stays and fails the checks.
    const cl_uint held = owner == kiln::interop::borrow ? 2 : 1;
    for (int wait = 0; wait < 2000 && (references(m) > held || references(queue) > held); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const references_left left{references(m), references(queue)};
    // The program's own: both, or the one it kept.
    for (int i = owner == kiln::interop::borrow ? 2 : 1; i > 0; --i) {
        clReleaseMemObject(m);
        clReleaseCommandQueue(queue);
    }
    return left;
}

TEST_P(opencl_interop, kiln_releases_what_it_adopts_and_nothing_it_borrows) {
    const references_left borrowed = after_kiln_used(context, id, kiln::interop::borrow);
    const references_left adopted = after_kiln_used(context, id, kiln::interop::adopt);
    EXPECT_GE(borrowed.memory, 2u) << "a borrowed buffer keeps the program's references";
    EXPECT_GE(borrowed.queue, 2u);
    EXPECT_EQ(adopted.memory, borrowed.memory - 1) << "kiln released the reference it adopted";
    EXPECT_EQ(adopted.queue, borrowed.queue - 1);
}

TEST_P(opencl_interop, one_device_per_context_which_kiln_keeps_a_reference_to) {
    EXPECT_EQ(cl::wrap_device(id, context), cl::wrap_device(id, context));
    cl_int status = CL_SUCCESS;
    cl_context adopted = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
    cl_context borrowed = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    clRetainContext(adopted);  // the reference kiln adopts
    kiln::device d = cl::wrap_device(id, adopted, kiln::interop::adopt);
    EXPECT_NE(d, cl::wrap_device(id, context));
    EXPECT_EQ(references(adopted), 2u) << "kiln keeps the reference it adopted";
    clRetainContext(adopted);
    EXPECT_EQ(cl::wrap_device(id, adopted, kiln::interop::adopt), d);
    EXPECT_EQ(references(adopted), 2u) << "a second one adopted is released: kiln holds one";
    EXPECT_EQ(cl::wrap_device(id, borrowed), cl::wrap_device(id, borrowed));
    EXPECT_EQ(references(borrowed), 2u) << "kiln takes one reference of its own when it borrows";
    clReleaseContext(adopted);
    clReleaseContext(borrowed);
}

TEST_P(opencl_interop, kiln_own_objects_come_out_as_opencl_ones) {
    const auto own = cl::native(device());
    EXPECT_EQ(own.device, id);
    EXPECT_EQ(cl::wrap_device(own.device, own.context), device())
        << "kiln's own context gives kiln's own device back";
    kiln::queue q(device());
    kiln::vector<int> v(q, std::vector<int>{1, 2, 3});
    int host[3] = {};
    cl_mem m = cl::native(v);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(
        clEnqueueReadBuffer(cl::native(q), m, CL_TRUE, 0, sizeof host, host, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(std::vector<int>(host, host + 3), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(cl::native(kiln::vector<int>(q, 0)), nullptr) << "an empty vector holds no memory";
    EXPECT_EQ(cl::native(kiln::event()), nullptr) << "a default event stands for no command";
}

TEST_P(opencl_interop, events_cross_both_ways) {
    kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), own_queue);
    cl_int status = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(context, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    // kiln's marker waits for the program's event, and the program waits for kiln's.
    kiln::event after_gate = q.marker(cl::wrap_event(q, gate));
    cl_event out = cl::native(after_gate);
    ASSERT_NE(out, nullptr);
    EXPECT_FALSE(after_gate.done());
    ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    EXPECT_EQ(clWaitForEvents(1, &out), CL_SUCCESS);
    EXPECT_TRUE(after_gate.done());
    clReleaseEvent(gate);
}

TEST_P(opencl_interop, bad_handles_are_refused_before_any_device_work) {
    using kiln::invalid_argument_error;
    cl_mem m = buffer_of(64 * sizeof(float));
    EXPECT_THROW(cl::wrap_device(nullptr, context), invalid_argument_error);
    EXPECT_THROW(cl::wrap_device(id, nullptr), invalid_argument_error);
    kiln::device d = cl::wrap_device(id, context);
    EXPECT_THROW(cl::wrap_queue(d, nullptr), invalid_argument_error);
    kiln::queue q = cl::wrap_queue(d, own_queue);
    EXPECT_THROW(cl::wrap_vector<float>(q, nullptr, 4), invalid_argument_error);
    EXPECT_THROW(cl::wrap_event(q, nullptr), invalid_argument_error);
    // Past the end of the allocation (CL_MEM_SIZE), by size and by offset.
    EXPECT_THROW(cl::wrap_vector<float>(q, m, 65), invalid_argument_error);
    EXPECT_THROW(cl::wrap_vector<float>(q, m, 1, 64), invalid_argument_error);
    // An offset where no allocation of the device begins.
    if (aligned_step<float>() > 1) {
        EXPECT_THROW(cl::wrap_vector<float>(q, m, 4, 1), invalid_argument_error);
    }
    // kiln's own device is another context: its queue takes neither the program's buffer nor
    // its queue, and adopted references stay the caller's when a call is refused.
    kiln::queue kilns(device());
    clRetainMemObject(m);
    EXPECT_THROW(cl::wrap_vector<float>(kilns, m, 4, 0, kiln::interop::adopt),
                 invalid_argument_error);
    EXPECT_EQ(references(m), 2u);
    clReleaseMemObject(m);
    EXPECT_THROW(cl::wrap_queue(device(), own_queue), invalid_argument_error);
}

TEST_P(opencl_interop, objects_of_another_device_are_refused) {
    // Another device of the platform (CTest shows PoCL's CPU twice), in one context with this one.
    cl_platform_id platform = nullptr;
    ASSERT_EQ(clGetDeviceInfo(id, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr),
              CL_SUCCESS);
    cl_uint count = 0;
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
    std::vector<cl_device_id> ids(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    const auto other =
        std::find_if(ids.begin(), ids.end(), [&](cl_device_id d) { return d != id; });
    if (other == ids.end()) GTEST_SKIP() << "needs a second device of the platform";
    cl_device_id both[] = {id, *other};
    cl_int status = CL_SUCCESS;
    cl_context shared = clCreateContext(nullptr, 2, both, nullptr, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    cl_command_queue theirs = clCreateCommandQueueWithProperties(shared, *other, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    kiln::device d = cl::wrap_device(id, shared);
    EXPECT_THROW(cl::wrap_queue(d, theirs), kiln::invalid_argument_error)
        << "a queue of the context's other device";
    EXPECT_THROW(cl::wrap_device(*other, context), kiln::invalid_argument_error)
        << "a device the context does not hold";
    clReleaseCommandQueue(theirs);
    clReleaseContext(shared);
}

INSTANTIATE_TEST_SUITE_P(
    devices, opencl_interop,
    ::testing::ValuesIn(kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl))),
    kiln::test::device_test_name);

}  // namespace
