// SPDX-License-Identifier: Apache-2.0
// half and bfloat16 in kernels: `global half*` with vload_half / vstore_half_rte and bfloat16
// bits with kiln's helpers, in string kernels and KILN_KERNEL; KILN_STRUCT fields of both types,
// in kernels and in expressions.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

// [doc:binary16_struct]
KILN_STRUCT(weighted, (kiln::half, weight), (kiln::bfloat16, scale), (float, offset));
// [/doc]

// [doc:binary16_kernel]
KILN_KERNEL(scale_16_bit,
            (kiln::global_ptr<const kiln::half> x, kiln::global_ptr<kiln::half> y,
             kiln::global_ptr<const kiln::bfloat16> b, kiln::global_ptr<kiln::bfloat16> c,
             kiln::global_ptr<const weighted> s, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                const float w = kiln_half_to_float(s[i].weight) * kiln_bf16_to_float(s[i].scale);
                vstore_half_rte(w * vload_half(i, x) * s[i].offset, i, y);
                c[i] = kiln_float_to_bf16(kiln_bf16_to_float(b[i]) * w);
            });
// [/doc]

// [doc:binary16_kernel_values]
KILN_KERNEL(copy_16_bit,
            (kiln::global_ptr<const kiln::bfloat16> b, kiln::global_ptr<kiln::bfloat16> b_out,
             kiln::global_ptr<const weighted> s, kiln::global_ptr<weighted> s_out,
             kiln::global_ptr<kiln::uint> bits, kiln::global_ptr<int> less, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i >= n) return;
                const kiln::bfloat16 kept = b[i];  // the bits, copied
                b_out[i] = kept;
                s_out[i] = s[i];  // a whole struct, through pointers
                const kiln::half weight = s[i].weight;
                s_out[i].weight = weight;
                bits[2 * i] = b[i].bits();
                bits[2 * i + 1] = s[i].weight.bits();
                // Values compare as floats, as kiln::half and kiln::bfloat16 do on the host.
                less[i] = kiln_bf16_to_float(b[i]) < kiln_half_to_float(s[i].weight) ? 1 : 0;
            });
// [/doc]

namespace {

// [doc:binary16_string_kernel]
const std::string scale_source = R"(
kernel void scale_16_bit(global const half* x, global half* y, global const ushort* b,
                         global ushort* c, global const weighted* s, uint n) {
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float w = kiln_half_to_float(s[i].weight) * kiln_bf16_to_float(s[i].scale);
    vstore_half_rte(w * vload_half(i, x) * s[i].offset, i, y);
    c[i] = kiln_float_to_bf16(kiln_bf16_to_float(b[i]) * w);
}
)";
// [/doc]

struct inputs {
    std::vector<kiln::half> x;
    std::vector<kiln::bfloat16> b;
    std::vector<weighted> s;
};

/// Values with NaN, infinities and subnormals among them, for n elements.
inputs make_inputs(std::size_t n) {
    const auto xs = kiln::test::random_values<float>(n, -1000, 1000, 7);
    const auto ws = kiln::test::random_values<float>(n, -3, 3, 8);
    inputs in;
    for (std::size_t i = 0; i < n; ++i) {
        in.x.push_back(kiln::half(xs[i]));
        in.b.push_back(kiln::bfloat16(xs[i] * 1e-3f));
        in.s.push_back({kiln::half(ws[i]), kiln::bfloat16(ws[i] + 1), 0.25f});
    }
    const kiln::half specials[] = {std::numeric_limits<kiln::half>::infinity(),
                                   std::numeric_limits<kiln::half>::quiet_NaN(),
                                   std::numeric_limits<kiln::half>::denorm_min()};
    for (std::size_t k = 0; k < 3 && k < n; ++k) in.x[k] = specials[k];
    if (n > 3) in.b[3] = std::numeric_limits<kiln::bfloat16>::denorm_min();
    return in;
}

/// Checks y and c against the host's float computation, rounded once. The kernels multiply
/// only (offset is a power of two), so that a device fusing a * b + c cannot round differently.
void expect_scaled(const inputs& in, const std::vector<kiln::half>& y,
                   const std::vector<kiln::bfloat16>& c) {
    for (std::size_t i = 0; i < in.x.size(); ++i) {
        const float w = static_cast<float>(in.s[i].weight) * static_cast<float>(in.s[i].scale);
        const kiln::half want_y(w * static_cast<float>(in.x[i]) * in.s[i].offset);
        const kiln::bfloat16 want_c(static_cast<float>(in.b[i]) * w);
        if (std::isnan(static_cast<float>(want_y)))
            ASSERT_TRUE(std::isnan(static_cast<float>(y[i]))) << i;
        else
            ASSERT_EQ(y[i].bits(), want_y.bits()) << i << ": " << y[i] << " instead of " << want_y;
        ASSERT_EQ(c[i].bits(), want_c.bits()) << i << ": " << c[i] << " instead of " << want_c;
    }
}

class binary16_kernel : public kiln::test::device_queue_test {};

TEST_P(binary16_kernel, string_kernels_load_and_store_half_and_bfloat16) {
    kiln::program prog(device(), kiln::declarations<weighted>() + scale_source);
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1001}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const inputs in = make_inputs(n);
        kiln::vector<kiln::half> x(q, in.x), y(q, n);
        kiln::vector<kiln::bfloat16> b(q, in.b), c(q, n);
        kiln::vector<weighted> s(q, in.s);
        const auto count = static_cast<kiln::uint>(n);
        prog.kernel("scale_16_bit")(x.part(0), y.part(0), b.part(0), c.part(0), s.part(0), count)
            .launch(q, {n})
            .wait();
        expect_scaled(in, y.read(), c.read());
    }
}

TEST_P(binary16_kernel, cpp_kernels_take_16_bit_pointers_and_struct_fields) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1001}}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const inputs in = make_inputs(n);
        kiln::vector<kiln::half> x(q, in.x), y(q, n);
        kiln::vector<kiln::bfloat16> b(q, in.b), c(q, n);
        kiln::vector<weighted> s(q, in.s);
        // A range rounded up to whole groups of 64: the kernel's bound check matters.
        const std::size_t groups = (n + 63) / 64 * 64;
        scale_16_bit(q, kiln::range{groups}, x, y, b, c, s, static_cast<kiln::uint>(n)).wait();
        expect_scaled(in, y.read(), c.read());
    }
}

TEST_P(binary16_kernel, cpp_kernels_copy_16_bit_values_and_read_their_bits) {
    // Signed zeros and NaNs among the values: compared as values, -0 equals +0 and NaN is
    // unordered, where their bits would say otherwise.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float firsts[] = {1.0f, -1.0f, -0.0f, 0.0f, nan, nan, 2.5f};
    const float seconds[] = {-1.0f, 1.0f, 0.0f, -0.0f, nan, 1.0f, 2.5f};
    const std::size_t n = std::size(firsts);
    std::vector<kiln::bfloat16> host_b;
    std::vector<weighted> host_s;
    for (std::size_t i = 0; i < n; ++i) {
        host_b.push_back(kiln::bfloat16(firsts[i]));
        host_s.push_back(
            {kiln::half(seconds[i]), kiln::bfloat16(firsts[i] * 3), 0.5f + static_cast<float>(i)});
    }
    kiln::vector<kiln::bfloat16> b(q, host_b), b_out(q, n);
    kiln::vector<weighted> s(q, host_s), s_out(q, n);
    kiln::vector<kiln::uint> bits(q, 2 * n);
    kiln::vector<int> less(q, n);
    copy_16_bit(q, kiln::range{n}, b, b_out, s, s_out, bits, less, static_cast<kiln::uint>(n))
        .wait();
    const auto got_b = b_out.read();
    const auto got_s = s_out.read();
    const auto got_bits = bits.read();
    const auto got_less = less.read();
    for (std::size_t i = 0; i < n; ++i) {
        SCOPED_TRACE("i = " + std::to_string(i));
        EXPECT_EQ(got_b[i].bits(), host_b[i].bits());
        EXPECT_EQ(got_s[i].weight.bits(), host_s[i].weight.bits());
        EXPECT_EQ(got_s[i].scale.bits(), host_s[i].scale.bits());
        EXPECT_EQ(got_s[i].offset, host_s[i].offset);
        EXPECT_EQ(got_bits[2 * i], host_b[i].bits());
        EXPECT_EQ(got_bits[2 * i + 1], host_s[i].weight.bits());
        EXPECT_EQ(got_less[i],
                  static_cast<float>(host_b[i]) < static_cast<float>(host_s[i].weight));
    }
}

TEST_P(binary16_kernel, parallel_for_converts_half_to_bfloat16_through_float) {
    const std::size_t n = 1001;
    const inputs in = make_inputs(n);
    kiln::vector<kiln::half> din(q, in.x);
    kiln::vector<kiln::bfloat16> dout(q, n);
    // [doc:binary16_lambda]
    kiln::parallel_for(q, n, KILN_LAMBDA((kiln::uint i), (din, dout), {
                           dout[i] = kiln_float_to_bf16(vload_half(i, din) * 3.0f);
                       }));
    // [/doc]
    const auto got = dout.read();
    for (std::size_t i = 0; i < n; ++i) {
        const kiln::bfloat16 want(static_cast<float>(in.x[i]) * 3.0f);
        if (std::isnan(static_cast<float>(want)))
            ASSERT_TRUE(std::isnan(static_cast<float>(got[i]))) << i;
        else
            ASSERT_EQ(got[i].bits(), want.bits()) << i << ": " << got[i] << " instead of " << want;
    }
}

TEST_P(binary16_kernel, struct_fields_of_16_bit_types_take_part_in_expressions_as_float) {
    const std::size_t n = 9;
    const inputs in = make_inputs(n);
    kiln::vector<weighted> s(q, in.s);
    kiln::vector<float> product(q, n);
    product = kiln::field<&weighted::weight>(s) * kiln::field<&weighted::scale>(s);
    kiln::field<&weighted::weight>(s) = kiln::field<&weighted::scale>(s) / 3;
    const auto hp = product.read();
    const auto hs = s.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hp[i], static_cast<float>(in.s[i].weight) * static_cast<float>(in.s[i].scale));
        ASSERT_EQ(hs[i].weight.bits(), kiln::half(static_cast<float>(in.s[i].scale) / 3).bits());
        ASSERT_EQ(hs[i].scale.bits(), in.s[i].scale.bits());
        ASSERT_EQ(hs[i].offset, 0.25f);
    }
}

TEST_P(binary16_kernel, buffers_of_16_bit_types_bind_only_to_their_pointers) {
    kiln::program prog(device(), R"(
kernel void widen(global const half* x, global float* y) { y[0] = vload_half(0, x); }
)");
    kiln::buffer<kiln::half> halves(q, std::vector<kiln::half>{kiln::half(1.5f)});
    kiln::buffer<kiln::bfloat16> bf16(q, 1);
    kiln::buffer<float> out(q, 1);
    prog.kernel("widen")(halves, out).launch(q, {1}).wait();
    EXPECT_EQ(out.read(q), std::vector<float>{1.5f});
    EXPECT_THROW(prog.kernel("widen")(bf16, out), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(binary16_kernel);

TEST(binary16_kernel_source, holds_16_bit_values_as_ushort_and_their_bits_as_themselves) {
    const std::string source = copy_16_bit.source();
    for (const char* line : {"const ushort kept = b[i];", "const ushort weight = s[i].weight;",
                             "bits[2 * i] = b[i];", "bits[2 * i + 1] = s[i].weight;"})
        EXPECT_NE(source.find(line), std::string::npos) << line << " in\n" << source;
}

}  // namespace
