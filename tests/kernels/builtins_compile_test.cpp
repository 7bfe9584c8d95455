// SPDX-License-Identifier: Apache-2.0
// Every family of built-ins in C++ kernels (work-items, barriers, atomics, math, integers,
// conversions, vectors with their swizzles, comparisons and select, work-group and sub-group
// collectives, local arrays): the C++ compiler accepts each body, and each device's
// OpenCL C compiler accepts the same tokens (the programs are built on every device).
#include <gtest/gtest.h>

#include <kiln/detail/subgroup_support.hpp>
#include <kiln/kiln.hpp>

#include "support/device_param.hpp"

namespace {

KILN_KERNEL(work_items_and_barriers, (kiln::global_ptr<kiln::ulong> out), {
    const kiln::ulong i = get_global_id(0);
    out[i] = get_work_dim() + get_global_size(0) + get_local_id(0) + get_local_size(0) +
             get_group_id(0) + get_num_groups(0) + get_global_offset(0);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    write_mem_fence(CLK_LOCAL_MEM_FENCE);
});

KILN_KERNEL(atomics,
            (kiln::global_ptr<int> counts, kiln::global_ptr<kiln::uint> flags,
             kiln::local_ptr<int> scratch),
            {
                KILN_LOCAL(kiln::uint, local_flags, 4);
                atomic_add(counts, 1);
                atomic_sub(&counts[1], 2);
                atomic_inc(counts + 2);
                atomic_dec(&counts[3]);
                atomic_min(&counts[4], -1);
                atomic_max(&counts[5], 7);
                atomic_xchg(&counts[6], 3);
                atomic_cmpxchg(&counts[7], 0, 1);
                atomic_and(&flags[0], 1u);
                atomic_or(&flags[1], 2u);
                atomic_xor(&flags[2], 4u);
                atomic_add(scratch, 1);
                atomic_inc(&local_flags[0]);
            });

KILN_KERNEL(math, (kiln::global_ptr<float> f, kiln::global_ptr<kiln::float4> v), {
    const kiln::uint i = get_global_id(0);
    const float x = f[i];
    f[i] = sqrt(x) + rsqrt(x) + cbrt(x) + exp(x) + exp2(x) + expm1(x) + log(x) + log2(x) +
           log10(x) + log1p(x) + sin(x) + cos(x) + tan(x) + asin(x) + acos(x) + atan(x) + sinh(x) +
           cosh(x) + tanh(x) + fabs(x) + floor(x) + ceil(x) + round(x) + trunc(x) + erf(x) +
           pow(x, 2.0f) + atan2(x, 1.0f) + hypot(x, 1.0f) + fmod(x, 3.0f) + fmin(x, 1.0f) +
           fmax(x, 0.0f) + mad(x, 2.0f, 1.0f) + fma(x, 2.0f, 1.0f) + clamp(x, 0.0f, 1.0f) +
           min(x, 2.0f) + max(x, 2.0f) + mix(x, 1.0f, 0.5f) + native_sqrt(x) + native_exp(x) +
           native_log(x) + native_sin(x) + native_cos(x) + native_recip(x) +
           native_divide(x, 3.0f) + copysign(x, -1.0f);
    const kiln::float4 a = v[i];
    v[i] = sqrt(a) + fmin(a, 1.0f) + clamp(a, 0.0f, 1.0f) + normalize(a) +
           kiln::float4{dot(a, a), length(a), distance(a, a), 0.0f} + cross(a, a);
});

KILN_KERNEL(integers_and_conversions, (kiln::global_ptr<int> n, kiln::global_ptr<float> f), {
    const kiln::uint i = get_global_id(0);
    const int k = n[i];
    const kiln::uint u = abs(k) + popcount(kiln::uint(k)) + clz(k) + rotate(k, 3) + mul24(k, 2) +
                         mad24(k, 2, 1) + min(k, 4) + max(k, 0) + clamp(k, -3, 3) + as_uint(f[i]);
    n[i] = convert_int(f[i]) + isnan(f[i]) + isinf(f[i]) + isfinite(f[i]) + signbit(f[i]) +
           select(1, 2, k) + int(u);
    f[i] = convert_float(k) + as_float(u);
    const kiln::int4 rounded = convert_int4(kiln::float4{f[i], 1.0f, 2.0f, 3.0f});
    f[i] += convert_float4(rounded).w;
});

KILN_KERNEL(vectors,
            (kiln::global_ptr<kiln::float4> f, kiln::global_ptr<kiln::int4> masks,
             kiln::global_ptr<kiln::uint4> bits, kiln::global_ptr<kiln::double2> d),
            {
                const kiln::uint i = get_global_id(0);
                kiln::float4 a = f[i];
                const kiln::float3 xyz = a.xyz;
                const kiln::float2 pair = a.s13 + a.lo * a.hi - a.even / a.odd;
                a.zw = pair;
                a.s0 = a.w + length(xyz) + a.s2;
                a.s102 = a.zxy;
                masks[i] = (a < a.wzyx) | (a >= 0.5f) | isequal(a, a.yxwz) | isnan(a);
                const kiln::int4 m = masks[i] & (masks[i] ^ kiln::int4{1, 2, 3, 4});
                if (any(m) && !all(m < 0)) f[i] = select(a, -a, m);
                bits[i] = (bits[i] << 2u) >> 1u | ~bits[i] % 7u;
                bits[i].xy = select(bits[i].yx, bits[i].xy, isgreater(a.xy, a.yx));
                d[i] = select(d[i], d[i].yx, d[i] > 1.0) +
                       double(any(isless(d[i], d[i].yx)) + all(d[i] <= 2.0));
            });

KILN_KERNEL(work_group_collectives, (kiln::global_ptr<int> n, kiln::global_ptr<float> f), {
    const kiln::ulong i = get_global_id(0);
    n[i] = work_group_reduce_add(n[i]) + work_group_reduce_min(n[i]) + work_group_reduce_max(n[i]) +
           work_group_scan_inclusive_add(n[i]) + work_group_scan_exclusive_max(n[i]) +
           work_group_broadcast(n[i], 0) + work_group_any(n[i] > 0) + work_group_all(n[i] > 0);
    f[i] = work_group_reduce_add(f[i]);
});

KILN_KERNEL(sub_group_collectives, (kiln::global_ptr<int> n, kiln::global_ptr<float> f), {
    const kiln::ulong i = get_global_id(0);
    n[i] = int(get_sub_group_size() + get_max_sub_group_size() + get_num_sub_groups() +
               get_sub_group_id() + get_sub_group_local_id()) +
           sub_group_reduce_add(n[i]) + sub_group_reduce_min(n[i]) + sub_group_reduce_max(n[i]) +
           sub_group_scan_inclusive_add(n[i]) + sub_group_scan_exclusive_add(n[i]) +
           sub_group_broadcast(n[i], 0) + sub_group_any(n[i] > 0) + sub_group_all(n[i] > 0);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    f[i] = sub_group_reduce_max(f[i]);
});

class cpp_kernel_builtins : public kiln::test::device_test {};

TEST_P(cpp_kernel_builtins, build_on_the_device) {
    EXPECT_EQ(work_items_and_barriers.on(device()).name(), "work_items_and_barriers");
    EXPECT_EQ(atomics.on(device()).name(), "atomics");
    EXPECT_EQ(math.on(device()).name(), "math");
    EXPECT_EQ(integers_and_conversions.on(device()).name(), "integers_and_conversions");
    EXPECT_EQ(work_group_collectives.on(device()).name(), "work_group_collectives");
}

TEST_P(cpp_kernel_builtins, build_vector_functions_on_devices_with_doubles) {
    if (!has_double()) GTEST_SKIP() << "the device has no doubles";
    EXPECT_EQ(vectors.on(device()).name(), "vectors");
}

TEST_P(cpp_kernel_builtins, build_sub_group_functions_on_devices_that_have_them) {
    if (!kiln::detail::subgroup_support(device()).core)
        GTEST_SKIP() << "the device has no sub-group functions";
    EXPECT_EQ(sub_group_collectives.on(device()).name(), "sub_group_collectives");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(cpp_kernel_builtins);

}  // namespace
