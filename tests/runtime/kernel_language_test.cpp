// SPDX-License-Identifier: Apache-2.0
// The kernel language on every device: kernels that call kernels, ranges past CUDA's 65535
// work-groups in y and z, float atomics, printf with its output captured, program-scope
// constants written by the host, and constant parameters.
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
    // Scalars and strings on every device; vector conversions (%v) where the driver formats them:
    // NVIDIA's OpenCL drops the text before a %v, so only its scalar line is checked.
    const bool vectors = !kiln::test::on_nvidia_opencl(device());
    const char* source = R"(
kernel void report(global const float* v, int tag) {
    if (get_global_id(0) == 1) printf("tag %d: %.2f %u|%s\n", tag, v[5], 7u, "scalars");
}
kernel void report_vector(global const float* v, int tag) {
    if (get_global_id(0) == 1) printf("tag %d: %v4hlf|%s\n", tag, vload4(1, v), "done");
}
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    kiln::buffer<float> v(q, std::vector<float>{0, 0, 0, 0, 1.5f, -2.0f, 3.25f, 0.0f});
    std::fflush(stdout);
    ::testing::internal::CaptureStdout();
    prog.kernel("report")(v, 41).launch(q, {4});
    if (vectors) prog.kernel("report_vector")(v, 42).launch(q, {4});
    q.finish();
    std::fflush(stdout);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(printed.find("tag 41: -2.00 7|scalars\n"), std::string::npos) << printed;
    if (vectors) {
        EXPECT_NE(printed.find("tag 42: 1.500000,-2.000000,3.250000,0.000000|done\n"),
                  std::string::npos)
            << printed;
    }
}

TEST_P(kernel_language, the_host_writes_program_scope_constants_before_launches) {
    const char* source = R"(
constant float weights[4] = {0};
kernel void weigh(global float* out) {
    size_t i = get_global_id(0);
    out[i] = weights[i] * 2.0f;
}
)";
    kiln::program prog(device(), source);
    const std::vector<float> first{1, 2, 3, 4};
    if (device().properties().backend == kiln::backend_kind::opencl) {
        // OpenCL C fixes a built program's constants: the refusal is named, not silent.
        try {
            prog.set_constant("weights", first);
            FAIL() << "set_constant succeeded on an OpenCL device";
        } catch (const kiln::error& e) {
            EXPECT_EQ(e.code_name(), "KILN_FEATURE_UNSUPPORTED");
        }
        return;
    }
    kiln::queue q(device());
    kiln::buffer<float> out(q, std::size_t{4});
    prog.set_constant("weights", first);
    EXPECT_EQ(out.read(q, prog.kernel("weigh")(out).launch(q, {4})),
              (std::vector<float>{2, 4, 6, 8}));
    // A second write reaches the next launch: the values are not folded into the kernel.
    prog.set_constant("weights", std::vector<float>{-1, 0, 0.5f, 8});
    EXPECT_EQ(out.read(q, prog.kernel("weigh")(out).launch(q, {4})),
              (std::vector<float>{-2, 0, 1, 16}));
    EXPECT_THROW(prog.set_constant("weights", std::vector<float>{1, 2, 3}),
                 kiln::invalid_argument_error);
    EXPECT_THROW(prog.set_constant("bias", first), kiln::invalid_argument_error);
}

TEST_P(kernel_language, constant_parameter_tables_are_read_by_launches_on_two_queues) {
    // Under CUDA both launches read the kernel's one __constant__ area: the second queue's copy
    // must wait until the first launch has read its table.
    const char* source = R"(
kernel void weigh(constant float* table, global const uint* index, global float* out) {
    size_t i = get_global_id(0);
    float sum = 0.0f;
    for (uint k = 0; k < 64; ++k) sum += table[(index[i] + k) % 1024];
    out[i] = sum;
}
)";
    kiln::program prog(device(), source);
    kiln::queue first_queue(device()), second_queue(device());
    const std::size_t n = 1 << 14, table_size = 1024;
    std::vector<float> first_table(table_size), second_table(table_size);
    std::iota(first_table.begin(), first_table.end(), 0.0f);
    for (std::size_t i = 0; i < table_size; ++i)
        second_table[i] = -2.0f * static_cast<float>(i % 16);
    std::vector<unsigned> host_index(n);
    for (std::size_t i = 0; i < n; ++i) host_index[i] = static_cast<unsigned>(i * 7 % table_size);
    kiln::buffer<float> first(first_queue, first_table), second(first_queue, second_table);
    kiln::buffer<unsigned> index(first_queue, host_index);
    kiln::buffer<float> first_out(first_queue, n), second_out(first_queue, n);
    first_queue.finish();
    auto kernel = prog.kernel("weigh");
    auto first_done = kernel(first, index, first_out).launch(first_queue, {n});
    auto second_done = kernel(second, index, second_out).launch(second_queue, {n});
    const auto expected = [&](const std::vector<float>& table, std::size_t i) {
        float sum = 0.0f;
        for (unsigned k = 0; k < 64; ++k) sum += table[(host_index[i] + k) % table_size];
        return sum;
    };
    const auto got_first = first_out.read(first_queue, first_done);
    const auto got_second = second_out.read(second_queue, second_done);
    for (std::size_t i = 0; i < n; ++i) {
        // Small integers: exact in any order of addition.
        ASSERT_EQ(got_first[i], expected(first_table, i)) << i;
        ASSERT_EQ(got_second[i], expected(second_table, i)) << i;
    }
}

TEST_P(kernel_language, constant_buffers_past_the_parameters_constant_memory) {
    const char* source = R"(
kernel void pick(constant float* table, uint index, global float* out) { out[0] = table[index]; }
)";
    const std::size_t limit = device().properties().constant_memory_bytes;
    if (limit > (std::size_t{64} << 20)) GTEST_SKIP() << "constant memory too large to exceed";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const std::size_t n = limit / sizeof(float) + 1;
    kiln::buffer<float> table(q, std::vector<float>(n, 1.0f));
    kiln::buffer<float> out(q, std::size_t{1});
    // Named when the arguments are bound, on every backend, rather than a driver's
    // CL_OUT_OF_RESOURCES or a copy past CUDA's constant area; CUDA's parameters get a share of
    // the 64 KiB bank (docs/cuda.md), less than the device's constant memory.
    try {
        prog.kernel("pick")(table, 0u, out);
        FAIL() << "a " << n * sizeof(float) << "-byte constant buffer was accepted";
    } catch (const kiln::invalid_argument_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("kernel 'pick'"), std::string::npos) << what;
        EXPECT_NE(what.find("parameter 0 'table'"), std::string::npos) << what;
        EXPECT_NE(what.find("a buffer of " + std::to_string(n * sizeof(float)) + " bytes"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("bytes of constant memory the parameter can have"), std::string::npos)
            << what;
    }
    // A small table in the same kernel works.
    kiln::buffer<float> small(q, std::vector<float>{3.0f, 4.5f});
    EXPECT_EQ(out.read(q, prog.kernel("pick")(small, 1u, out).launch(q, {1})),
              std::vector<float>{4.5f});
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(kernel_language);

}  // namespace
