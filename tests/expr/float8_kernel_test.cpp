// SPDX-License-Identifier: Apache-2.0
// float8_e4m3 and float8_e5m2 in kernels: uchar bits with kiln's helpers, in string kernels,
// KILN_KERNEL and KILN_LAMBDA; KILN_STRUCT fields of both types, in kernels and in expressions;
// the helpers give the host's bits for every float the host tests check.
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "support/device_param.hpp"
#include "support/float8_types.hpp"
#include "test_data.hpp"

// [doc:float8_struct]
KILN_STRUCT(quantized, (kiln::float8_e4m3, value), (kiln::float8_e5m2, gradient), (float, scale));
// [/doc]

// [doc:float8_kernel]
KILN_KERNEL(scale_fp8,
            (kiln::global_ptr<const kiln::float8_e4m3> x, kiln::global_ptr<kiln::float8_e5m2> y,
             kiln::global_ptr<const quantized> s, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                const float w = kiln_e4m3_to_float(s[i].value) * s[i].scale;
                y[i] = kiln_float_to_e5m2(kiln_e4m3_to_float(x[i]) * w);
            });
// [/doc]

KILN_KERNEL(copy_fp8,
            (kiln::global_ptr<const kiln::float8_e4m3> a, kiln::global_ptr<kiln::float8_e4m3> a_out,
             kiln::global_ptr<const quantized> s, kiln::global_ptr<quantized> s_out,
             kiln::global_ptr<kiln::uint> bits, kiln::global_ptr<int> less, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                const kiln::float8_e4m3 kept = a[i];  // the bits, copied
                a_out[i] = kept;
                s_out[i] = s[i];
                const kiln::float8_e5m2 gradient = s[i].gradient;
                s_out[i].gradient = gradient;
                bits[2 * i] = a[i].bits();
                bits[2 * i + 1] = s[i].gradient.bits();
                less[i] = kiln_e4m3_to_float(a[i]) < kiln_e5m2_to_float(s[i].gradient) ? 1 : 0;
            });

KILN_KERNEL(round_to_fp8,
            (kiln::global_ptr<const float> x, kiln::global_ptr<kiln::float8_e4m3> e4m3,
             kiln::global_ptr<kiln::float8_e5m2> e5m2, kiln::global_ptr<float> widened,
             kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                e4m3[i] = kiln_float_to_e4m3(x[i]);
                e5m2[i] = kiln_float_to_e5m2(x[i]);
                widened[2 * i] = kiln_e4m3_to_float(e4m3[i]);
                widened[2 * i + 1] = kiln_e5m2_to_float(e5m2[i]);
            });

namespace {

const std::string scale_source = R"(
kernel void scale_fp8(global const uchar* x, global uchar* y, global const quantized* s, uint n) {
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float w = kiln_e4m3_to_float(s[i].value) * s[i].scale;
    y[i] = kiln_float_to_e5m2(kiln_e4m3_to_float(x[i]) * w);
}
)";

struct inputs {
    std::vector<kiln::float8_e4m3> x;
    std::vector<quantized> s;
};

/// n values with a NaN, a subnormal and the largest value among them, whose products overflow.
inputs make_inputs(std::size_t n) {
    const auto xs = kiln::test::random_values<float>(n, -400, 400, 7);
    const auto ws = kiln::test::random_values<float>(n, -3, 3, 8);
    inputs in;
    for (std::size_t i = 0; i < n; ++i) {
        in.x.push_back(kiln::float8_e4m3(xs[i]));
        in.s.push_back({kiln::float8_e4m3(ws[i]), kiln::float8_e5m2(ws[i] + 1), 64.0f});
    }
    const kiln::float8_e4m3 specials[] = {std::numeric_limits<kiln::float8_e4m3>::quiet_NaN(),
                                          std::numeric_limits<kiln::float8_e4m3>::denorm_min(),
                                          std::numeric_limits<kiln::float8_e4m3>::max()};
    for (std::size_t k = 0; k < 3 && k < n; ++k) in.x[k] = specials[k];
    return in;
}

/// y against the host's float computation, rounded once (products of powers of two and 4-bit
/// significands, exact in float, so that no device's contraction changes them).
void expect_scaled(const inputs& in, const std::vector<kiln::float8_e5m2>& y) {
    for (std::size_t i = 0; i < in.x.size(); ++i) {
        const float w = static_cast<float>(in.s[i].value) * in.s[i].scale;
        const kiln::float8_e5m2 want(static_cast<float>(in.x[i]) * w);
        ASSERT_EQ(y[i].bits(), want.bits()) << i << ": " << y[i] << " instead of " << want;
    }
}

class float8_kernel : public kiln::test::device_queue_test {};

TEST_P(float8_kernel, helpers_give_the_hosts_bits) {
    // Every midpoint, its neighbours, overflow, underflow and NaNs, through both formats, and
    // back to float exactly.
    std::vector<float> floats = kiln::test::float8_conversion_floats<kiln::float8_e4m3>();
    const auto more = kiln::test::float8_conversion_floats<kiln::float8_e5m2>();
    floats.insert(floats.end(), more.begin(), more.end());
    const std::size_t n = floats.size();
    kiln::vector<float> x(q, floats), widened(q, 2 * n);
    kiln::vector<kiln::float8_e4m3> e4m3(q, n);
    kiln::vector<kiln::float8_e5m2> e5m2(q, n);
    round_to_fp8(q, kiln::range{n}, x, e4m3, e5m2, widened, static_cast<kiln::uint>(n)).wait();
    const auto got_e4m3 = e4m3.read();
    const auto got_e5m2 = e5m2.read();
    const auto got_widened = widened.read();
    for (std::size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(testing::Message() << "float " << floats[i]);
        ASSERT_EQ(got_e4m3[i].bits(), kiln::float8_e4m3(floats[i]).bits());
        ASSERT_EQ(got_e5m2[i].bits(), kiln::float8_e5m2(floats[i]).bits());
        const float e4m3_value = static_cast<float>(got_e4m3[i]);
        const float e5m2_value = static_cast<float>(got_e5m2[i]);
        if (std::isnan(e4m3_value))
            ASSERT_TRUE(std::isnan(got_widened[2 * i]));
        else
            ASSERT_EQ(got_widened[2 * i], e4m3_value);
        if (std::isnan(e5m2_value))
            ASSERT_TRUE(std::isnan(got_widened[2 * i + 1]));
        else
            ASSERT_EQ(got_widened[2 * i + 1], e5m2_value);
    }
}

TEST_P(float8_kernel, string_and_cpp_kernels_take_fp8_bits_and_struct_fields) {
    kiln::program prog(device(), kiln::declarations<quantized>() + scale_source);
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1001}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const inputs in = make_inputs(n);
        kiln::vector<kiln::float8_e4m3> x(q, in.x);
        kiln::vector<kiln::float8_e5m2> from_string(q, n), from_cpp(q, n);
        kiln::vector<quantized> s(q, in.s);
        prog.kernel("scale_fp8")(x.part(0), from_string.part(0), s.part(0),
                                 static_cast<kiln::uint>(n))
            .launch(q, {n})
            .wait();
        expect_scaled(in, from_string.read());
        // A range rounded up to whole groups of 64: the kernel's bound check matters.
        const std::size_t groups = (n + 63) / 64 * 64;
        scale_fp8(q, kiln::range{groups}, x, from_cpp, s, static_cast<kiln::uint>(n)).wait();
        expect_scaled(in, from_cpp.read());
    }
}

TEST_P(float8_kernel, cpp_kernels_copy_fp8_values_and_read_their_bits) {
    // Signed zeros and NaNs among the values: compared as values, -0 equals +0 and NaN is
    // unordered, where their bits would say otherwise.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> firsts = {1.0f, -1.0f, -0.0f, 0.0f, nan, nan, 2.5f};
    const std::vector<float> seconds = {-1.0f, 1.0f, 0.0f, -0.0f, nan, 1.0f, 2.5f};
    const std::size_t n = firsts.size();
    std::vector<kiln::float8_e4m3> host_a;
    std::vector<quantized> host_s;
    for (std::size_t i = 0; i < n; ++i) {
        host_a.push_back(kiln::float8_e4m3(firsts[i]));
        host_s.push_back({kiln::float8_e4m3(firsts[i] * 3), kiln::float8_e5m2(seconds[i]),
                          0.5f + static_cast<float>(i)});
    }
    kiln::vector<kiln::float8_e4m3> a(q, host_a), a_out(q, n);
    kiln::vector<quantized> s(q, host_s), s_out(q, n);
    kiln::vector<kiln::uint> bits(q, 2 * n);
    kiln::vector<int> less(q, n);
    copy_fp8(q, kiln::range{n}, a, a_out, s, s_out, bits, less, static_cast<kiln::uint>(n)).wait();
    const auto got_a = a_out.read();
    const auto got_s = s_out.read();
    const auto got_bits = bits.read();
    const auto got_less = less.read();
    for (std::size_t i = 0; i < n; ++i) {
        SCOPED_TRACE("i = " + std::to_string(i));
        EXPECT_EQ(got_a[i].bits(), host_a[i].bits());
        EXPECT_EQ(got_s[i].value.bits(), host_s[i].value.bits());
        EXPECT_EQ(got_s[i].gradient.bits(), host_s[i].gradient.bits());
        EXPECT_EQ(got_s[i].scale, host_s[i].scale);
        EXPECT_EQ(got_bits[2 * i], host_a[i].bits());
        EXPECT_EQ(got_bits[2 * i + 1], host_s[i].gradient.bits());
        EXPECT_EQ(got_less[i],
                  static_cast<float>(host_a[i]) < static_cast<float>(host_s[i].gradient));
    }
}

TEST_P(float8_kernel, parallel_for_converts_e4m3_to_e5m2_through_float) {
    const std::size_t n = 1001;
    const inputs in = make_inputs(n);
    kiln::vector<kiln::float8_e4m3> din(q, in.x);
    kiln::vector<kiln::float8_e5m2> dout(q, n);
    // [doc:float8_lambda]
    kiln::parallel_for(q, n, KILN_LAMBDA((kiln::uint i), (din, dout), {
                           dout[i] = kiln_float_to_e5m2(kiln_e4m3_to_float(din[i]) * 3.0f);
                       }));
    // [/doc]
    const auto got = dout.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i].bits(), kiln::float8_e5m2(static_cast<float>(in.x[i]) * 3.0f).bits()) << i;
}

TEST_P(float8_kernel, struct_fields_of_fp8_types_take_part_in_expressions_as_float) {
    const std::size_t n = 9;
    const inputs in = make_inputs(n);
    kiln::vector<quantized> s(q, in.s);
    kiln::vector<float> product(q, n);
    product = kiln::field<&quantized::value>(s) * kiln::field<&quantized::gradient>(s);
    kiln::field<&quantized::gradient>(s) = kiln::field<&quantized::value>(s) / 3;
    const auto hp = product.read();
    const auto hs = s.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hp[i], static_cast<float>(in.s[i].value) * static_cast<float>(in.s[i].gradient));
        ASSERT_EQ(hs[i].gradient.bits(),
                  kiln::float8_e5m2(static_cast<float>(in.s[i].value) / 3).bits());
        ASSERT_EQ(hs[i].value.bits(), in.s[i].value.bits());
        ASSERT_EQ(hs[i].scale, 64.0f);
    }
}

// NVIDIA's conversion instructions (compute capability 8.9 on) against kiln's helpers, for every
// float that is not a NaN: kiln's rule is cvt.rn.satfinite's, so that a product that converts
// with the instruction stores kiln's bits. NaNs, whose sign the instruction may drop, are the
// helpers' own (checked on the host). NVIDIA's OpenCL takes the inline PTX; the CUDA
// translation reserves `asm`, and its prelude's helpers give the host's bits (above).
// (H200, NVIDIA OpenCL, 2026-11-29: no difference for any float but the NaNs, either format.)
const std::string cvt_source = R"(
kernel void count_differences(global uint* differences) {
    const uint high = get_global_id(0);
    uint e4m3 = 0, e5m2 = 0;
    for (uint low = 0; low < 65536u; ++low) {
        const float x = as_float(high << 16 | low);
        if (isnan(x)) continue;
        ushort pair;
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(x));
        if ((uchar)pair != kiln_float_to_e4m3(x)) ++e4m3;
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(x));
        if ((uchar)pair != kiln_float_to_e5m2(x)) ++e5m2;
    }
    atomic_add(&differences[0], e4m3);
    atomic_add(&differences[1], e5m2);
}
)";

TEST_P(float8_kernel, nvidias_conversion_instructions_give_the_helpers_bits) {
    const auto& props = device().properties();
    if (device().backend() != kiln::backend_kind::opencl ||
        props.vendor.find("NVIDIA") == std::string::npos ||
        props.compute_capability_major * 10 + props.compute_capability_minor < 89)
        GTEST_SKIP() << "NVIDIA's OpenCL with FP8 conversion instructions (compute capability "
                        "8.9 on) only";
    kiln::vector<kiln::uint> differences(q, std::vector<kiln::uint>{0, 0});
    kiln::program(device(), cvt_source)
        .kernel("count_differences")(differences.part(0))
        .launch(q, {65536})
        .wait();
    EXPECT_EQ(differences.read(), (std::vector<kiln::uint>{0, 0})) << "e4m3, e5m2 differences";
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(float8_kernel);

TEST(float8_kernel_source, holds_fp8_values_as_uchar_and_their_bits_as_themselves) {
    const std::string source = copy_fp8.source();
    for (const char* line : {"const uchar kept = a[i];", "const uchar gradient = s[i].gradient;",
                             "bits[2 * i] = a[i];", "bits[2 * i + 1] = s[i].gradient;"})
        EXPECT_NE(source.find(line), std::string::npos) << line << " in\n" << source;
}

}  // namespace
