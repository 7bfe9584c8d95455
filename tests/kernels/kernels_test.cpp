// SPDX-License-Identifier: Apache-2.0
// Kernels written in C++ (KILN_KERNEL, KILN_LAMBDA) on every device: a range that is not a
// multiple of the group, local memory with barriers, atomics, a KILN_STRUCT, float4, a
// KILN_FUNCTION, sub-groups, and the generated OpenCL C.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/kiln.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "same_name.hpp"
#include "support/device_param.hpp"

#ifdef KILN_HAVE_CUDA
#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_translation.hpp"
#endif

KILN_STRUCT(particle, (kiln::float4, position), (kiln::float4, velocity), (float, mass));

KILN_FUNCTION(float, squared_norm, (float x, float y), return x * x + y * y;);

// kiln's own spelling of the types, which the device code must see without `kiln::`.
KILN_FUNCTION(kiln::ulong, wide_sum, (kiln::ulong a, kiln::ulong b), return a + b;);

namespace {

// [doc:cpp_saxpy]
KILN_KERNEL(saxpy,
            (float a, kiln::global_ptr<const float> x, kiln::global_ptr<float> y, kiln::uint n), {
                const kiln::uint i = get_global_id(0);
                if (i < n) y[i] = a * x[i] + y[i];
            });
// [/doc]

// [doc:cpp_local_array]
// Each group sums its elements in local memory, halving the active work-items each step.
KILN_KERNEL(group_sums,
            (kiln::global_ptr<const float> x, kiln::global_ptr<float> sums, kiln::uint n), {
                KILN_LOCAL(float, partial, 64);
                const kiln::uint lid = get_local_id(0);
                const kiln::uint i = get_global_id(0);
                partial[lid] = i < n ? x[i] : 0.0f;
                barrier(CLK_LOCAL_MEM_FENCE);
                for (kiln::uint step = get_local_size(0) / 2; step > 0; step /= 2) {
                    if (lid < step) partial[lid] += partial[lid + step];
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                if (lid == 0) sums[get_group_id(0)] = partial[0];
            });
// [/doc]

// [doc:cpp_local_parameter]
// The same reduction with local memory sized at the launch.
KILN_KERNEL(group_sums_sized_at_launch,
            (kiln::global_ptr<const float> x, kiln::global_ptr<float> sums,
             kiln::local_ptr<float> partial, kiln::uint n),
            {
                const kiln::uint lid = get_local_id(0);
                const kiln::uint i = get_global_id(0);
                partial[lid] = i < n ? x[i] : 0.0f;
                barrier(CLK_LOCAL_MEM_FENCE);
                for (kiln::uint step = get_local_size(0) / 2; step > 0; step /= 2) {
                    if (lid < step) partial[lid] += partial[lid + step];
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                if (lid == 0) sums[get_group_id(0)] = partial[0];
            });
// [/doc]

// [doc:cpp_histogram]
KILN_KERNEL(histogram,
            (kiln::global_ptr<const kiln::uint> values, kiln::global_ptr<kiln::uint> bins,
             kiln::uint bin_count, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i < n) atomic_inc(&bins[values[i] % bin_count]);
            });
// [/doc]

KILN_KERNEL(move_particles, (kiln::global_ptr<particle> particles, float dt, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i >= n) return;
    particle p = particles[i];
    p.position = p.position + dt * p.velocity;
    p.mass = p.mass * 2.0f;
    particles[i] = p;
});

KILN_KERNEL(scale_and_shift, (kiln::global_ptr<kiln::float4> v, float scale, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) v[i] = v[i] * scale + kiln::float4{1.0f, 2.0f, 3.0f, 4.0f};
});

// [doc:cpp_kernel_using]
KILN_KERNEL_USING(norms,
                  (kiln::global_ptr<const float> x, kiln::global_ptr<const float> y,
                   kiln::global_ptr<float> r, kiln::uint n),
                  (squared_norm), {
                      const kiln::uint i = get_global_id(0);
                      if (i < n) r[i] = sqrt(squared_norm(x[i], y[i]));
                  });
// [/doc]

KILN_KERNEL(sub_group_sums, (kiln::global_ptr<const int> x, kiln::global_ptr<int> sums), {
    const kiln::uint i = get_global_id(0);
    const int total = sub_group_reduce_add(x[i]);
    if (get_sub_group_local_id() == 0)
        sums[i] = total;
    else
        sums[i] = -1;
});

KILN_KERNEL(program_settings,
            (float a, kiln::global_ptr<const float> x, kiln::global_ptr<float> y, kiln::uint n), {
                KILN_PRAGMA(OPENCL FP_CONTRACT OFF);
                KILN_BUILD_OPTIONS("-cl-fp32-correctly-rounded-divide-sqrt");
                KILN_BUILD_OPTIONS("-DUNUSED=1");
                const kiln::uint i = get_global_id(0);
                if (i < n) y[i] = a * x[i] + y[i];
            });

KILN_KERNEL(work_group_sums, (kiln::global_ptr<const int> x, kiln::global_ptr<int> sums), {
    const int total = work_group_reduce_add(x[get_global_id(0)]);
    if (get_local_id(0) == 0) sums[get_group_id(0)] = total;
});

KILN_KERNEL_USING(wide_sums,
                  (kiln::global_ptr<const kiln::ulong> a, kiln::global_ptr<kiln::ulong> r,
                   kiln::uint n),
                  (wide_sum), {
                      const kiln::uint i = get_global_id(0);
                      if (i < n) r[i] = wide_sum(a[i], a[i]);
                  });

// A vector built from one value, as a literal and as a functional cast: the host's
// kiln::float4{x} and the device's must agree.
KILN_KERNEL(one_value_vectors, (kiln::global_ptr<kiln::float4> v, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) v[i] = kiln::float4{float(i)} + float4(0.5f);
});

// [doc:cpp_swizzles]
KILN_KERNEL(swizzle_and_compare,
            (kiln::global_ptr<kiln::float4> v, kiln::global_ptr<kiln::int4> masks, kiln::uint n), {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                const kiln::float4 a = v[i];
                kiln::float4 r = a.wzyx;
                r.lo = r.lo + a.s01;
                masks[i] = a > 1.5f;  // -1 where true, 0 where false
                r = select(r, -r, a.zwxy < a);
                if (all(masks[i]))
                    r.s3 = 100.0f;
                else if (any(masks[i]))
                    r.s3 = -1.0f;
                v[i] = r;
            });
// [/doc]

class cpp_kernels : public kiln::test::device_queue_test {};

std::vector<float> iota_floats(std::size_t n, float first) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), first);
    return v;
}

TEST_P(cpp_kernels, saxpy_over_a_range_that_is_not_a_multiple_of_the_group) {
    const kiln::uint n = 1000;
    kiln::vector<float> x(q, iota_floats(n, 0.0f));
    kiln::vector<float> y(q, std::vector<float>(n, 1.0f));
    // [doc:cpp_saxpy_launch]
    // 1024 work-items in groups of 64: the last 24 find i >= n and write nothing.
    saxpy.bind(2.0f, x, y, n).launch(q, kiln::range{1024}, kiln::range{64}).wait();
    saxpy(q, kiln::range{n}, 1.0f, x, y, n).wait();
    // [/doc]
    const auto result = y.read();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 3.0f * float(i) + 1.0f) << i;
}

TEST_P(cpp_kernels, binds_buffers_by_their_access) {
    const kiln::uint n = 100;
    kiln::buffer<float, kiln::access::in> x(q, iota_floats(n, 0.0f));
    kiln::buffer<float> y(q, std::vector<float>(n, 1.0f));
    saxpy(q, kiln::range{n}, 3.0f, x, y, n).wait();
    std::vector<float> result(n);
    y.read(q, result);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 3.0f * float(i) + 1.0f) << i;
}

TEST_P(cpp_kernels, reduces_a_group_in_local_memory_with_barriers) {
    const kiln::uint n = 1000, group = 64, groups = (n + group - 1) / group;
    kiln::vector<float> x(q, iota_floats(n, 1.0f));
    kiln::vector<float> sums(q, groups);
    kiln::vector<float> sized_sums(q, groups);
    group_sums.bind(x, sums, n).launch(q, kiln::range{groups * group}, kiln::range{group});
    // [doc:cpp_local_launch]
    group_sums_sized_at_launch.bind(x, sized_sums, kiln::local<float>(group), n)
        .launch(q, kiln::range{groups * group}, kiln::range{group});
    // [/doc]
    const auto result = sums.read();
    const auto sized_result = sized_sums.read();
    for (kiln::uint g = 0; g < groups; ++g) {
        float expected = 0.0f;
        for (kiln::uint i = g * group; i < std::min(n, (g + 1) * group); ++i)
            expected += float(i) + 1.0f;
        EXPECT_EQ(result[g], expected) << g;
        EXPECT_EQ(sized_result[g], expected) << g;
    }
}

TEST_P(cpp_kernels, counts_a_histogram_with_atomics) {
    const kiln::uint n = 5000, bin_count = 7;
    std::vector<kiln::uint> values(n);
    for (kiln::uint i = 0; i < n; ++i) values[i] = (i * 37u + 11u) % 101u;
    kiln::vector<kiln::uint> device_values(q, values);
    kiln::vector<kiln::uint> bins(q, std::vector<kiln::uint>(bin_count, 0));
    histogram(q, kiln::range{n}, device_values, bins, bin_count, n).wait();
    std::vector<kiln::uint> expected(bin_count, 0);
    for (kiln::uint v : values) ++expected[v % bin_count];
    EXPECT_EQ(bins.read(), expected);
}

TEST_P(cpp_kernels, moves_kiln_structs) {
    std::vector<particle> host(10);
    for (std::size_t i = 0; i < host.size(); ++i)
        host[i] = {{float(i), 0, 0, 0}, {1, 2, 3, 0}, 1.5f};
    kiln::vector<particle> particles(q, host);
    move_particles(q, kiln::range{host.size()}, particles, 0.5f, kiln::uint(host.size())).wait();
    const auto result = particles.read();
    for (std::size_t i = 0; i < host.size(); ++i) {
        EXPECT_EQ(result[i].position, (kiln::float4{float(i) + 0.5f, 1.0f, 1.5f, 0.0f})) << i;
        EXPECT_EQ(result[i].mass, 3.0f) << i;
    }
}

TEST_P(cpp_kernels, computes_with_float4) {
    std::vector<kiln::float4> host(33);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = {float(i), 1, 2, 3};
    kiln::vector<kiln::float4> v(q, host);
    scale_and_shift(q, kiln::range{host.size()}, v, 2.0f, kiln::uint(host.size())).wait();
    const auto result = v.read();
    for (std::size_t i = 0; i < host.size(); ++i)
        EXPECT_EQ(result[i], (kiln::float4{2.0f * float(i) + 1.0f, 4.0f, 7.0f, 10.0f})) << i;
}

TEST_P(cpp_kernels, swizzles_compares_and_selects_vectors) {
    const kiln::uint n = 61;
    std::vector<kiln::float4> host(n);
    for (kiln::uint i = 0; i < n; ++i) host[i] = {float(i % 4), float(i % 5), 2.0f, float(i % 3)};
    kiln::vector<kiln::float4> v(q, host);
    kiln::vector<kiln::int4> masks(q, n);
    swizzle_and_compare(q, kiln::range{n}, v, masks, n).wait();
    const auto result = v.read();
    const auto result_masks = masks.read();
    int all_set = 0, some_set = 0;
    for (kiln::uint i = 0; i < n; ++i) {
        const kiln::float4 a = host[i];
        kiln::float4 r{a.w + a.x, a.z + a.y, a.y, a.x};
        const float rotated[4] = {a.z, a.w, a.x, a.y};
        kiln::int4 mask{};
        int set = 0;
        for (int k = 0; k < 4; ++k) {
            if (rotated[k] < a[k]) r[k] = -r[k];
            mask[k] = a[k] > 1.5f ? -1 : 0;
            set += a[k] > 1.5f;
        }
        if (set == 4) r.w = 100.0f, ++all_set;
        if (set > 0 && set < 4) r.w = -1.0f, ++some_set;
        EXPECT_EQ(result[i], r) << i;
        EXPECT_EQ(result_masks[i], mask) << i;
    }
    EXPECT_GT(all_set, 0);  // both of all's and any's branches were taken
    EXPECT_GT(some_set, 0);
}

TEST_P(cpp_kernels, calls_kiln_functions) {
    kiln::vector<float> x(q, {3.0f, 5.0f, 0.0f});
    kiln::vector<float> y(q, {4.0f, 12.0f, 2.0f});
    kiln::vector<float> r(q, 3);
    norms(q, kiln::range{3}, x, y, r, kiln::uint(3)).wait();
    EXPECT_EQ(r.read(), (std::vector<float>{5.0f, 13.0f, 2.0f}));
}

TEST_P(cpp_kernels, reduces_over_sub_groups) {
    if (!kiln::detail::subgroup_support(device()).core)
        GTEST_SKIP() << "the device has no sub-group functions";
    const std::size_t n = 256, group = 64;
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = int(i % 9);
    kiln::vector<int> x(q, host);
    kiln::vector<int> sums(q, n);
    sub_group_sums.bind(x, sums).launch(q, kiln::range{n}, kiln::range{group});
    const auto result = sums.read();
    // Each sub-group's first work-item holds its sum; the sums together are the whole sum.
    long total = 0;
    for (int s : result)
        if (s >= 0) total += s;
    EXPECT_EQ(total, std::accumulate(host.begin(), host.end(), 0L));
    EXPECT_GE(result[0], 0);
}

TEST_P(cpp_kernels, reduces_over_work_groups) {
    const std::size_t n = 256, group = 64;
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = int(i % 9);
    kiln::vector<int> x(q, host);
    kiln::vector<int> sums(q, n / group);
    work_group_sums.bind(x, sums).launch(q, kiln::range{n}, kiln::range{group});
    const auto result = sums.read();
    for (std::size_t g = 0; g < n / group; ++g)
        EXPECT_EQ(result[g], std::accumulate(host.begin() + long(g * group),
                                             host.begin() + long((g + 1) * group), 0))
            << g;
}

TEST_P(cpp_kernels, runs_parallel_for_over_every_index) {
    const std::size_t n = 1001;
    kiln::vector<float> x(q, iota_floats(n, 0.0f));
    kiln::vector<float> y(q, std::vector<float>(n, 1.0f));
    // [doc:cpp_parallel_for]
    const float a = 2.0f;
    kiln::parallel_for(q, n, KILN_LAMBDA((kiln::uint i), (x, y, a), { y[i] = a * x[i] + y[i]; }))
        .wait();
    // [/doc]
    const auto result = y.read();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 2.0f * float(i) + 1.0f) << i;
}

TEST_P(cpp_kernels, calls_kiln_functions_spelt_with_kiln_types) {
    const std::vector<kiln::ulong> host = {1, (kiln::ulong(1) << 40) + 3, 7};
    kiln::vector<kiln::ulong> a(q, host);
    kiln::vector<kiln::ulong> sums(q, host.size());
    sums = wide_sum(a, a);
    kiln::vector<kiln::ulong> kernel_sums(q, host.size());
    wide_sums(q, kiln::range{host.size()}, a, kernel_sums, kiln::uint(host.size())).wait();
    const std::vector<kiln::ulong> expected = {2, (kiln::ulong(1) << 41) + 6, 14};
    EXPECT_EQ(sums.read(), expected);
    EXPECT_EQ(kernel_sums.read(), expected);
}

// kiln::float4{x} is every component x on both sides: in a kernel body (OpenCL C's (float4)(x)),
// in host code and in a host fill.
TEST_P(cpp_kernels, a_vector_of_one_value_means_the_same_on_host_and_device) {
    const kiln::uint n = 37;
    kiln::vector<kiln::float4> v(q, n);
    one_value_vectors(q, kiln::range{n}, v, n).wait();
    const auto result = v.read();
    for (kiln::uint i = 0; i < n; ++i) {
        const float x = float(i) + 0.5f;
        ASSERT_EQ(result[i], (kiln::float4{x, x, x, x})) << i;
        ASSERT_EQ(result[i], kiln::float4{x}) << i;
    }
    kiln::vector<kiln::float4> filled(q, n);
    filled = kiln::float4{2.0f};
    EXPECT_EQ(filled.read(), std::vector<kiln::float4>(n, kiln::float4{2.0f, 2.0f, 2.0f, 2.0f}));
}

// An index type narrower than the range would wrap on the device (a ushort over 70,000 indices
// ran 4,464 of them twice and 4,464 never; a char over 300 wrote before the buffer).
TEST_P(cpp_kernels, parallel_for_refuses_a_range_its_index_type_cannot_count) {
    kiln::vector<int> counts(q, std::vector<int>(70'000, 0));
    EXPECT_THROW(
        kiln::parallel_for(q, 70'000, KILN_LAMBDA((kiln::ushort i), (counts), { counts[i] += 1; })),
        kiln::invalid_argument_error);
    EXPECT_THROW(kiln::parallel_for(q, 300, KILN_LAMBDA((char i), (counts), { counts[i] += 1; })),
                 kiln::invalid_argument_error);
    try {
        kiln::parallel_for(q, 65'537, KILN_LAMBDA((kiln::ushort i), (counts), { counts[i] += 1; }));
        ADD_FAILURE() << "65,537 indices ran with a ushort index";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("ushort, whose largest value is 65535"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(counts.read(), std::vector<int>(70'000, 0)) << "a refused loop ran";
    // The largest ranges each type counts run every index once.
    kiln::parallel_for(q, 65'536, KILN_LAMBDA((kiln::ushort i), (counts), { counts[i] += 1; }))
        .wait();
    kiln::parallel_for(q, 128, KILN_LAMBDA((char i), (counts), { counts[i] += 1; })).wait();
    const auto result = counts.read();
    for (std::size_t i = 0; i < result.size(); ++i)
        ASSERT_EQ(result[i], int(i < 128) + int(i < 65'536)) << i;
}

// Past 2^32 indices: PoCL counts work-groups in 32 bits, so the launch must not leave the
// group size to the driver, and no index may be truncated on the way.
TEST_P(cpp_kernels, parallel_for_runs_past_four_gibi_indices) {
    const kiln::ulong n = (kiln::ulong(1) << 32) + 6;
    const kiln::ulong stride = kiln::ulong(1) << 31;
    const kiln::ulong within_stride = stride - 1;  // a mask: 2^32 divisions would take seconds
    kiln::vector<kiln::ulong> seen(q, std::vector<kiln::ulong>(4, 0));
    kiln::parallel_for(q, n,
                       KILN_LAMBDA((kiln::ulong i), (seen, within_stride, n),
                                   {
                                       if ((i & within_stride) == 5) seen[i >> 31] = i;
                                       if (i == n - 1) seen[3] = i;
                                   }))
        .wait();
    EXPECT_EQ(seen.read(), (std::vector<kiln::ulong>{5, stride + 5, 2 * stride + 5, n - 1}));
}

// A vector on no device is reported as that, not as split over several devices.
TEST_P(cpp_kernels, a_vector_on_no_device_is_named_as_such) {
    kiln::vector<float> none;
    kiln::vector<float> y(q, std::vector<float>(4, 1.0f));
    try {
        saxpy(q, kiln::range{4}, 2.0f, none, y, kiln::uint(4));
        ADD_FAILURE() << "launched with a vector on no device";
    } catch (const kiln::invalid_argument_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("no device"), std::string::npos) << what;
        EXPECT_EQ(what.find("split"), std::string::npos) << what;
    }
    // An empty vector on a queue is an argument: a null pointer that no work-item reads.
    kiln::vector<float> empty(q, 0);
    saxpy(q, kiln::range{4}, 2.0f, empty, y, kiln::uint(0)).wait();
    EXPECT_EQ(y.read(), std::vector<float>(4, 1.0f));
}

// Two files each with a kernel named `stamp`: each file's launch runs its own body.
TEST_P(cpp_kernels, kernels_of_one_name_in_two_files_keep_their_bodies) {
    kiln::vector<int> first(q, 5), second(q, 5);
    kiln::test::stamp_from_first_file(q, first).wait();
    kiln::test::stamp_from_second_file(q, second).wait();
    EXPECT_EQ(first.read(), std::vector<int>(5, 1));
    EXPECT_EQ(second.read(), std::vector<int>(5, 2));
}

// Two files each with a KILN_FUNCTION named `marked`: each file's expressions and kernels call
// its own body (one cached program per statement type would otherwise serve both files).
TEST_P(cpp_kernels, functions_of_one_name_in_two_files_keep_their_bodies) {
    const kiln::vector<int> in(q, std::vector<int>{0, 1, 2, 3, 4});
    kiln::vector<int> first(q, 5), second(q, 5);
    kiln::test::mark_in_first_file(first, in);
    kiln::test::mark_in_second_file(second, in);
    EXPECT_EQ(first.read(), (std::vector<int>{10, 11, 12, 13, 14}));
    EXPECT_EQ(second.read(), (std::vector<int>{20, 21, 22, 23, 24}));
    kiln::test::mark_by_kernel_in_second_file(q, second, in).wait();
    kiln::test::mark_by_kernel_in_first_file(q, first, in).wait();
    EXPECT_EQ(first.read(), (std::vector<int>{10, 11, 12, 13, 14}));
    EXPECT_EQ(second.read(), (std::vector<int>{20, 21, 22, 23, 24}));
}

TEST_P(cpp_kernels, builds_with_its_pragmas_and_build_options) {
    kiln::vector<float> x(q, iota_floats(10, 0.0f));
    kiln::vector<float> y(q, std::vector<float>(10, 1.0f));
    program_settings(q, kiln::range{10}, 3.0f, x, y, kiln::uint(10)).wait();
    const auto result = y.read();
    for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(result[i], 3.0f * float(i) + 1.0f) << i;
}

TEST_P(cpp_kernels, builds_the_program_once_per_device) {
    const kiln::kernel first = saxpy.on(device());
    const kiln::kernel second = saxpy.on(device());
    EXPECT_EQ(first.name(), "saxpy");
    EXPECT_EQ(second.parameter_count(), 4u);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(cpp_kernels);

// The OpenCL C text, as KILN_SHOW_KERNELS=1 prints it.
TEST(cpp_kernel_source, is_the_body_with_opencl_c_parameter_types) {
    EXPECT_EQ(saxpy.source(),
              "kernel void saxpy(\n"
              "    float a,\n"
              "    global const float* x,\n"
              "    global float* y,\n"
              "    uint n\n"
              ") {\n"
              "    const uint i = get_global_id(0);\n"
              "    if (i < n) y[i] = a * x[i] + y[i];\n"
              "}\n\n");
}

TEST(cpp_kernel_source, declares_local_arrays_structs_and_functions) {
    const std::string reduction = group_sums.source();
    EXPECT_NE(reduction.find("    local float partial[64];\n"), std::string::npos) << reduction;
    EXPECT_NE(group_sums_sized_at_launch.source().find("local float* partial"), std::string::npos);
    const std::string particles = move_particles.source();
    EXPECT_LT(particles.find("typedef struct"), particles.find("kernel void move_particles"))
        << particles;
    EXPECT_NE(particles.find("global particle* particles"), std::string::npos) << particles;
    const std::string vectors = scale_and_shift.source();
    EXPECT_NE(vectors.find("v[i] * scale + (float4)(1.0f, 2.0f, 3.0f, 4.0f);"), std::string::npos)
        << vectors;
    const std::string functions = norms.source();
    EXPECT_LT(functions.find("float squared_norm(float x, float y)"),
              functions.find("kernel void norms"))
        << functions;
    const std::string wide = wide_sums.source();
    EXPECT_NE(wide.find("ulong wide_sum(ulong a, ulong b)"), std::string::npos) << wide;
    const std::string one_value = one_value_vectors.source();
    EXPECT_NE(one_value.find("(float4)((float)(i)) + (float4)(0.5f)"), std::string::npos)
        << one_value;
}

TEST(cpp_kernel_source, puts_pragmas_at_the_head_and_passes_build_options) {
    const std::string source = program_settings.source();
    EXPECT_EQ(source.find("#pragma OPENCL FP_CONTRACT OFF\n"), 0u) << source;
    EXPECT_EQ(source.find("KILN_"), std::string::npos) << source;
    EXPECT_NE(source.find(") {\n    const uint i = get_global_id(0);\n"), std::string::npos)
        << source;
    EXPECT_EQ(kiln::detail::kernel_build_options(program_settings_kiln_kernel::body_text()),
              "-cl-fp32-correctly-rounded-divide-sqrt -DUNUSED=1");
}

#ifdef KILN_HAVE_CUDA
// The same text runs under CUDA through kiln's translation: here translated and compiled with
// NVRTC for sm_90, which needs no GPU.
TEST(cpp_kernel_source, translates_for_cuda) {
    using namespace kiln::detail::cuda;
    if (nvrtc() == nullptr) GTEST_SKIP() << nvrtc_load_failure();
    const auto options = parse_build_options("");
    for (const std::string& source :
         {saxpy.source(), group_sums.source(), group_sums_sized_at_launch.source(),
          histogram.source(), move_particles.source(), scale_and_shift.source(), norms.source(),
          sub_group_sums.source(), work_group_sums.source(), swizzle_and_compare.source(),
          program_settings.source(), wide_sums.source(), one_value_vectors.source()}) {
        const std::vector<std::string> sources{source};
        const auto translated = translate_opencl_c(sources, options.translation);
        EXPECT_TRUE(compile_with_nvrtc(translated.source, options, {90, true}).is_cubin) << source;
    }
}
#endif

}  // namespace
