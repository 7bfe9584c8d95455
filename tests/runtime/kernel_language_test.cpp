// The kernel language on every device: kernels that call kernels, ranges past CUDA's 65535
// work-groups in y and z, float atomics, and printf with its output captured.
#include <gtest/gtest.h>

#include <cstdio>
#include <kiln/kiln.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class kernel_language : public kiln::test::device_test {};

TEST_P(kernel_language, a_kernel_calls_another_kernel_as_a_function) {
    const char* source = R"(
kernel void scale(global float* x, local float* scratch, float by) {
    size_t l = get_local_id(0);
    scratch[l] = x[get_global_id(0)] * by;
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = scratch[l] + (float)get_group_id(0);
}
void twice(global float* x, local float* scratch) { scale(x, scratch, 2.0f); }
kernel void quadruple(global float* x, local float* scratch) {
    twice(x, scratch);
    scale(x, scratch, 2.0f);
}
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const std::size_t n = 64, group = 16;
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 1.0f);
    kiln::buffer<float> x(q, host);
    auto done = prog.kernel("quadruple")(x, kiln::local<float>(group)).launch(q, {n}, {group});
    const auto out = x.read(q, done);
    for (std::size_t i = 0; i < n; ++i) {
        const float g = static_cast<float>(i / group);
        ASSERT_EQ(out[i], (host[i] * 2.0f + g) * 2.0f + g) << i;
    }
}

TEST_P(kernel_language, ranges_past_65535_groups_in_y_and_z_see_their_true_ids) {
    // Under CUDA these become several launches; every work-item must still see the whole
    // range's ids and counts.
    const char* source = R"(
kernel void ids(global uint* out) {
    size_t y = get_global_id(1) - get_global_offset(1), z = get_global_id(2);
    size_t i = 4 * (z * get_global_size(1) + y);
    out[i + 0] = (uint)get_global_id(1);
    out[i + 1] = (uint)get_group_id(1);
    out[i + 2] = (uint)get_num_groups(1) + (uint)get_num_groups(2);
    out[i + 3] = (uint)get_group_id(2) + (uint)get_local_size(1);
}
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const std::size_t height = 70003, depth = 2;
    kiln::buffer<unsigned> out(q, 4 * height * depth);
    if (kiln::test::on_nvidia_opencl(device())) {
        // NVIDIA's OpenCL runs on CUDA's grid of 65535 groups in y and z and kiln does not split
        // OpenCL launches: the range is refused before it reaches the driver.
        EXPECT_THROW(prog.kernel("ids")(out).launch(q, {1, height, depth}, {1, 1, 1}, {0, 5, 0}),
                     kiln::invalid_argument_error);
        return;
    }
    auto done = prog.kernel("ids")(out).launch(q, {1, height, depth}, {1, 1, 1}, {0, 5, 0});
    const auto seen = out.read(q, done);
    for (std::size_t z = 0; z < depth; ++z)
        for (std::size_t y = 0; y < height; ++y) {
            const std::size_t i = 4 * (z * height + y);
            ASSERT_EQ(seen[i + 0], y + 5) << y << "," << z;
            ASSERT_EQ(seen[i + 1], y) << y << "," << z;
            ASSERT_EQ(seen[i + 2], height + depth) << y << "," << z;
            ASSERT_EQ(seen[i + 3], z + 1) << y << "," << z;
        }
}

TEST_P(kernel_language, float_atomics_add_and_take_minimum_and_maximum) {
    const char* source = R"(
kernel void accumulate(global float* sum, global float* low, global float* high,
                       global int* count, local float* group_sum) {
    float v = (float)(get_global_id(0) % 100) - 40.0f;
    if (get_local_id(0) == 0) *group_sum = 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(group_sum, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) atomic_add(sum, *group_sum);
    atomic_min(low, v);
    atomic_max(high, v);
    atomic_add(count, 1);
}
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const std::size_t n = 4096;
    kiln::buffer<float> sum(q, std::vector<float>{0.0f}), low(q, std::vector<float>{1e30f}),
        high(q, std::vector<float>{-1e30f});
    kiln::buffer<int> count(q, std::vector<int>{0});
    auto done = prog.kernel("accumulate")(sum, low, high, count, kiln::local<float>(1))
                    .launch(q, {n}, {64});
    float expected = 0.0f;
    for (std::size_t i = 0; i < n; ++i) expected += static_cast<float>(i % 100) - 40.0f;
    // Integers below 2^24 add exactly in any order.
    EXPECT_EQ(sum.read(q, done)[0], expected);
    EXPECT_EQ(low.read(q, done)[0], -40.0f);
    EXPECT_EQ(high.read(q, done)[0], 59.0f);
    EXPECT_EQ(count.read(q, done)[0], static_cast<int>(n));
}

TEST_P(kernel_language, printf_output_reaches_standard_output) {
    if (kiln::test::on_nvidia_opencl(device()))
        GTEST_SKIP() << kiln::test::nvidia_opencl_vector_printf;
    const char* source = R"(
kernel void report(global const float* v, int tag) {
    if (get_global_id(0) == 1) printf("tag %d: %v4hlf|%s\n", tag, vload4(1, v), "done");
}
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    kiln::buffer<float> v(q, std::vector<float>{0, 0, 0, 0, 1.5f, -2.0f, 3.25f, 0.0f});
    std::fflush(stdout);
    ::testing::internal::CaptureStdout();
    prog.kernel("report")(v, 42).launch(q, {4});
    q.finish();
    std::fflush(stdout);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(printed.find("tag 42: 1.500000,-2.000000,3.250000,0.000000|done\n"),
              std::string::npos)
        << printed;
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(kernel_language);

}  // namespace
