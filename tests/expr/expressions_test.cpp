// SPDX-License-Identifier: Apache-2.0
// Vector expressions: operators, built-ins, scalars, casts, indices, tie, tags, temporaries,
// complex numbers, special values, fusion into one launch, and misuse.
#include <cmath>
#include <complex>
#include <kiln/vector.hpp>
#include <limits>
#include <optional>
#include <string>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class expression_test : public kiln::test::device_queue_test {};

std::size_t occurrences(const std::string& text, const std::string& word) {
    std::size_t count = 0;
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
    return count;
}

void expect_near_relative(const std::vector<float>& actual, const std::vector<float>& expected,
                          float tolerance) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
        ASSERT_NEAR(actual[i], expected[i], tolerance * std::max(1.0f, std::fabs(expected[i])))
            << "element " << i;
}

TEST_P(expression_test, arithmetic_matches_the_host_on_every_size) {
    for (std::size_t n : kiln::test::edge_sizes()) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto hx = random_values<float>(n, -2, 2, 1), hy = random_values<float>(n, 1, 3, 2);
        kiln::vector<float> x(q, hx), y(q, hy), z(q, n);
        z = 2 * x + y * y - x / (y + 3) - (-x);
        std::vector<float> expected(n);
        for (std::size_t i = 0; i < n; ++i)
            expected[i] = 2 * hx[i] + hy[i] * hy[i] - hx[i] / (hy[i] + 3) - (-hx[i]);
        expect_near_relative(z.read(), expected, 1e-6f);
    }
}

TEST_P(expression_test, one_assignment_is_one_launch_of_one_cached_kernel) {
    const std::size_t n = 4097;
    kiln::vector<float> x(q, random_values<float>(n, 0, 1)), y(q, random_values<float>(n, 0, 1)),
        z(q, n);
    // [doc:fusion]
    // One kernel, with no temporary vectors: every element reads x and y once and writes z once.
    z = x * y + kiln::sin(x) / (1 + y * y);
    // [/doc]
    const auto before = kiln::expression_cache::stats();
    for (int i = 0; i < 10; ++i) z = x * y + kiln::sin(x) / (1 + y * y);
    const auto after = kiln::expression_cache::stats();
    EXPECT_EQ(after.launches - before.launches, 10u);
    EXPECT_EQ(after.sources_generated, before.sources_generated)
        << "steady state must not regenerate";

    const std::string source =
        kiln::assignment_source(device(), z, x * y + kiln::sin(x) / (1 + y * y));
    EXPECT_EQ(occurrences(source, "kernel void"), 1u);
    EXPECT_EQ(occurrences(source, "global float*"), 1u) << "only the target is written:\n"
                                                        << source;
    EXPECT_EQ(occurrences(source, "#pragma OPENCL EXTENSION cl_khr_fp64"), 0u) << source;
    EXPECT_NE(source.find("ulong idx"), std::string::npos) << "64-bit indices:\n" << source;
}

TEST_P(expression_test, comparisons_and_logic_select_elements) {
    const std::size_t n = 1000;
    const auto hx = random_values<float>(n, 0, 1, 3), hy = random_values<float>(n, 0, 1, 4);
    kiln::vector<float> x(q, hx), y(q, hy), z(q, n);
    z = kiln::if_else((x > 0.5f && !(y < 0.2f)) || x == y, x, -y);
    const auto hz = z.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(hz[i], ((hx[i] > 0.5f && !(hy[i] < 0.2f)) || hx[i] == hy[i]) ? hx[i] : -hy[i])
            << i;
    kiln::vector<std::int32_t> flags(q, n);
    flags = (x >= y) + (x <= 0.25f) * 2 + (x != y) * 4;
    const auto hf = flags.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(hf[i], (hx[i] >= hy[i]) + (hx[i] <= 0.25f) * 2 + (hx[i] != hy[i]) * 4) << i;
}

TEST_P(expression_test, integer_operators_match_the_host) {
    const std::size_t n = 777;
    std::vector<std::int32_t> ha(n), hb(n);
    for (std::size_t i = 0; i < n; ++i) {
        ha[i] = static_cast<std::int32_t>(i * 7919 % 1000) - 500;
        hb[i] = static_cast<std::int32_t>(i % 13) + 1;
    }
    kiln::vector<std::int32_t> a(q, ha), b(q, hb), c(q, n);
    c = ((a % b) ^ (b << 2)) | ((~a & 0xff) + (a >> 1) - a / b);
    const auto hc = c.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(hc[i], ((ha[i] % hb[i]) ^ (hb[i] << 2)) |
                             ((~ha[i] & 0xff) + (ha[i] >> 1) - ha[i] / hb[i]))
            << i;
}

TEST_P(expression_test, every_element_type_computes) {
    auto check = [&]<class T>(T) {
        std::vector<T> host(300);
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<T>(i);
        kiln::vector<T> x(q, host), y(q, host.size());
        y = x * 3 + 1;
        const auto result = y.read();
        for (std::size_t i = 0; i < host.size(); ++i)
            ASSERT_EQ(result[i], static_cast<T>(host[i] * 3 + 1));
    };
    check(std::int32_t{});
    check(std::uint32_t{});
    check(std::int64_t{});
    check(std::uint64_t{});
    if (has_double()) check(double{});
}

TEST_P(expression_test, math_built_ins_match_the_host) {
    const std::size_t n = 1000;
    const auto hx = random_values<float>(n, 0.1f, 2, 5), hy = random_values<float>(n, -1, 1, 6);
    kiln::vector<float> x(q, hx), y(q, hy), z(q, n);
    z = kiln::sin(x) + kiln::cos(y) + kiln::tan(y) + kiln::exp(-x) + kiln::log(x) + kiln::sqrt(x) +
        kiln::rsqrt(x) + kiln::pow(x, 2.5f) + kiln::fabs(y) + kiln::fmin(x, y) + kiln::fmax(x, y) +
        kiln::floor(y * 3) + kiln::ceil(y * 3) + kiln::round(y * 3) + kiln::erf(y) +
        kiln::atan2(y, x) + kiln::hypot(x, y) + kiln::tanh(y) + kiln::log10(x) + kiln::exp2(y) +
        kiln::cbrt(y);
    std::vector<float> expected(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float a = hx[i], b = hy[i];
        expected[i] = std::sin(a) + std::cos(b) + std::tan(b) + std::exp(-a) + std::log(a) +
                      std::sqrt(a) + 1 / std::sqrt(a) + std::pow(a, 2.5f) + std::fabs(b) +
                      std::fmin(a, b) + std::fmax(a, b) + std::floor(b * 3) + std::ceil(b * 3) +
                      std::round(b * 3) + std::erf(b) + std::atan2(b, a) + std::hypot(a, b) +
                      std::tanh(b) + std::log10(a) + std::exp2(b) + std::cbrt(b);
    }
    expect_near_relative(z.read(), expected, 2e-5f);
}

TEST_P(expression_test, host_scalars_take_the_vector_type) {
    kiln::vector<float> x(q, {1.0f, 2.0f}), y(q, 2);
    // [doc:scalars]
    // 2.0 is a double, but next to a float vector it is passed as a float: no double
    // arithmetic, and no need for the device to support doubles.
    y = 2.0 * x + 0.5;
    // [/doc]
    static_assert(std::is_same_v<kiln::expression_value_t<decltype(2.0 * x + 0.5)>, float>);
    static_assert(
        std::is_same_v<kiln::expression_value_t<decltype(kiln::element_index() * 0.5)>, double>);
    EXPECT_EQ(y.read(), (std::vector<float>{2.5f, 4.5f}));
    EXPECT_EQ(occurrences(kiln::assignment_source(device(), y, 2.0 * x + 0.5), "double"), 0u);
}

TEST_P(expression_test, casts_convert_like_c) {
    kiln::vector<float> x(q, {1.75f, -1.75f, 3.5f});
    kiln::vector<std::int32_t> truncated(q, 3);
    truncated = kiln::cast<std::int32_t>(x * 2);
    EXPECT_EQ(truncated.read(), (std::vector<std::int32_t>{3, -3, 7}));
}

TEST_P(expression_test, element_index_counts_from_its_offset_in_64_bits) {
    kiln::vector<std::uint64_t> indices(q, 1000);
    // Offsets past 2^32: indices are 64-bit all the way through.
    const std::uint64_t offset = 3ull << 32;
    indices = kiln::element_index(offset) * 2;
    const auto host = indices.read();
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], (offset + i) * 2);
    EXPECT_THROW(indices = kiln::element_index(0, 999), kiln::invalid_argument_error);
}

TEST_P(expression_test, tie_computes_several_results_in_one_kernel) {
    const std::size_t n = 513;
    const auto hx = random_values<float>(n, -1, 1, 7), hy = random_values<float>(n, -1, 1, 8);
    kiln::vector<float> x(q, hx), y(q, hy), sum(q, n), difference(q, n);
    const auto before = kiln::expression_cache::stats().launches;
    // [doc:tie]
    kiln::tie(sum, difference) = std::make_tuple(x + y, x - y);
    // [/doc]
    EXPECT_EQ(kiln::expression_cache::stats().launches - before, 1u);
    const auto hs = sum.read(), hd = difference.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hs[i], hx[i] + hy[i]);
        ASSERT_EQ(hd[i], hx[i] - hy[i]);
    }
    // Every value is computed before any target is stored: this swaps.
    kiln::tie(sum, difference) = std::make_tuple(difference, sum);
    EXPECT_EQ(sum.read(), hd);
    EXPECT_EQ(difference.read(), hs);
}

// tie(a, a) kept one of the two values of each element with no error.
TEST_P(expression_test, tie_refuses_one_vector_named_as_two_targets) {
    kiln::vector<float> a(q, {1.0f, 2.0f, 3.0f}), b(q, 3);
    EXPECT_THROW(kiln::tie(a, a) = std::make_tuple(a + 1, a * 100), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::tie(a, b, a) = std::make_tuple(a + 1, a, a * 100),
                 kiln::invalid_argument_error);
    EXPECT_THROW(kiln::tie(kiln::reverse(a), a) = std::make_tuple(b, b),
                 kiln::invalid_argument_error);
    EXPECT_EQ(a.read(), (std::vector<float>{1.0f, 2.0f, 3.0f})) << "nothing ran";
    // Two members of one vector are two targets; a member beside its whole element is not.
    kiln::vector<kiln::float2> pairs(q, 3);
    kiln::tie(kiln::component<0>(pairs), kiln::component<1>(pairs)) = std::make_tuple(a, a * 2);
    const auto got = pairs.read();
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(got[i].x, static_cast<float>(i + 1));
        EXPECT_EQ(got[i].y, static_cast<float>(2 * (i + 1)));
    }
    EXPECT_THROW(kiln::tie(kiln::component<0>(pairs), pairs) = std::make_tuple(a, pairs),
                 kiln::invalid_argument_error);
}

TEST_P(expression_test, tagged_terminals_are_passed_once) {
    kiln::vector<float> x(q, {3.0f, 0.0f}), y(q, {4.0f, 1.0f}), z(q, 2);
    // [doc:tags]
    auto tx = kiln::tag<1>(x);
    auto ty = kiln::tag<2>(y);
    z = kiln::sqrt(tx * tx + ty * ty);  // x and y are each one kernel parameter
    // [/doc]
    EXPECT_EQ(z.read(), (std::vector<float>{5, 1}));
    const auto source = kiln::assignment_source(device(), z, kiln::sqrt(tx * tx + ty * ty));
    EXPECT_EQ(occurrences(source, "global const float*"), 2u) << source;
}

TEST_P(expression_test, temporaries_are_computed_once_per_element) {
    const auto hx = random_values<float>(100, 1, 2, 9), hy = random_values<float>(100, 0, 1, 10);
    kiln::vector<float> x(q, hx), y(q, hy), z(q, 100);
    // [doc:temporary]
    auto log_x = kiln::temporary<1>(kiln::log(x));
    z = log_x * (log_x + y);  // log(x) is evaluated once per element
    // [/doc]
    const auto source = kiln::assignment_source(device(), z, log_x * (log_x + y));
    // One definition per element body (GPU kernels have one per lane of a wide access, CPU
    // kernels one per loop, float16 in the vector form's), each with one log, and the value
    // reads it twice.
    EXPECT_GE(occurrences(source, "const float temp1 = log("), 1u) << source;
    EXPECT_EQ(occurrences(source, "log("), occurrences(source, " temp1 = log(")) << source;
    // (CUDA writes the product and the sum as rounded operations: kiln_mul_rn, kiln_add_rn.)
    EXPECT_TRUE(source.find("(temp1 * (temp1 + ") != std::string::npos ||
                source.find("kiln_mul_rn(temp1, kiln_add_rn(temp1, ") != std::string::npos)
        << source;
    std::vector<float> expected(100);
    for (std::size_t i = 0; i < 100; ++i) expected[i] = std::log(hx[i]) * (std::log(hx[i]) + hy[i]);
    expect_near_relative(z.read(), expected, 1e-6f);
}

TEST_P(expression_test, complex_numbers_follow_complex_arithmetic) {
    using complex = std::complex<float>;
    const std::vector<complex> ha = {{1, 2}, {-3, 0.5f}, {0, -1}},
                               hb = {{0.5f, -1}, {2, 2}, {-1, 0}};
    kiln::vector<complex> a(q, ha), b(q, hb), c(q, 3);
    c = a * b + kiln::conj(a) / b - 2 * a + std::complex<float>(0, 1);
    kiln::vector<float> modulus(q, 3), parts(q, 3);
    modulus = kiln::abs(a);
    parts = kiln::real(b) * 10 + kiln::imag(b) + kiln::arg(a);
    const auto hc = c.read();
    const auto hm = modulus.read(), hp = parts.read();
    for (std::size_t i = 0; i < 3; ++i) {
        const complex expected =
            ha[i] * hb[i] + std::conj(ha[i]) / hb[i] - 2.0f * ha[i] + complex(0, 1);
        EXPECT_NEAR(hc[i].real(), expected.real(), 1e-5f);
        EXPECT_NEAR(hc[i].imag(), expected.imag(), 1e-5f);
        EXPECT_NEAR(hm[i], std::abs(ha[i]), 1e-6f);
        EXPECT_NEAR(hp[i], hb[i].real() * 10 + hb[i].imag() + std::arg(ha[i]), 1e-5f);
    }
}

TEST_P(expression_test, infinities_and_nans_flow_through) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    kiln::vector<float> x(q, {inf, -inf, nan, 1.0f}), y(q, 4), low(q, 4);
    y = x * 2 + 1;
    low = kiln::fmin(x, 0.0f);  // IEEE fmin: a NaN argument is ignored
    const auto hy = y.read(), hl = low.read();
    EXPECT_EQ(hy[0], inf);
    EXPECT_EQ(hy[1], -inf);
    EXPECT_TRUE(std::isnan(hy[2]));
    EXPECT_EQ(hy[3], 3.0f);
    EXPECT_EQ(hl, (std::vector<float>{0.0f, -inf, 0.0f, 0.0f}));
}

TEST_P(expression_test, compound_assignments_update_in_place) {
    kiln::vector<std::int32_t> x(q, {1, 2, 3}), y(q, {10, 20, 30});
    x += y;
    x *= 2;
    x -= 1;
    x <<= 1;
    EXPECT_EQ(x.read(), (std::vector<std::int32_t>{42, 86, 130}));
}

TEST_P(expression_test, mismatched_sizes_are_a_clear_error) {
    kiln::vector<float> x(q, 10), y(q, 12), z(q, 10);
    try {
        z = x + y;
        FAIL() << "expected kiln::invalid_argument_error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("sizes differ"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("kiln::vector assignment"), std::string::npos)
            << e.what();
    }
    kiln::vector<float> empty;
    EXPECT_THROW(z = empty + x, kiln::invalid_argument_error);
    EXPECT_NO_THROW(empty = empty * 2);  // empty to empty: nothing to do
}

TEST_P(expression_test, gpu_shaped_kernels_give_the_same_results) {
    // The kernels GPUs get (strided loops, 16-byte accesses, then a loop over the n % lanes
    // elements left), run on this device whatever it is, on sizes around the lane counts.
    const kiln::detail::scoped_launch_policy gpu_shapes(
        kiln::detail::launch_policy{kiln::detail::loop_style::strided, 64, 2});
    kiln::vector<float> probe(q, 4);
    const auto source = kiln::assignment_source(device(), probe, 2 * probe + 1);
    EXPECT_NE(source.find("const float4 p2_in = ((global const float4*)p2)[kiln_j];"),
              std::string::npos)
        << source;

    for (std::size_t n : {0, 1, 3, 4, 5, 7, 1000, 65537}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto hx = random_values<float>(n, -1, 1, 15), hy = random_values<float>(n, -1, 1, 16);
        kiln::vector<float> x(q, hx), y(q, hy), z(q, n), product(q, n);
        z = 2 * x + 3 * y - kiln::sin(x);
        kiln::tie(y, product) = std::make_tuple(x + y, x * y);
        x = x * 2 + 1;
        std::vector<std::int32_t> hi(n);
        for (std::size_t i = 0; i < n; ++i) hi[i] = static_cast<std::int32_t>(i % 100) - 50;
        kiln::vector<std::int32_t> integers(q, hi);
        integers = integers * 3 + kiln::cast<std::int32_t>(kiln::element_index());
        const auto hz = z.read(), hs = y.read(), hp = product.read(), h2 = x.read();
        const auto hint = integers.read();
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_NEAR(hz[i], 2 * hx[i] + 3 * hy[i] - std::sin(hx[i]), 1e-5f) << i;
            ASSERT_EQ(hs[i], hx[i] + hy[i]) << i;
            ASSERT_EQ(hp[i], hx[i] * hy[i]) << i;
            ASSERT_EQ(h2[i], hx[i] * 2 + 1) << i;
            ASSERT_EQ(hint[i], hi[i] * 3 + static_cast<std::int32_t>(i)) << i;
        }
        double expected_sum = 0;
        for (float v : hx) expected_sum += v;
        kiln::vector<float> original(q, hx);
        EXPECT_NEAR(kiln::sum(original), expected_sum, 1e-3);
        if (has_double()) {
            kiln::vector<double> d(q, random_values<double>(n, -1, 1, 17)), e(q, n);
            const auto hd = d.read();
            e = d * 2 + 1;  // two lanes of 8 bytes
            const auto he = e.read();
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(he[i], hd[i] * 2 + 1) << i;
        }
    }
}

// Misuse is rejected by concepts at compile time, with short errors.
template <class A, class B>
concept addable = requires(const A& a, const B& b) {
    a + b;
};
template <class A, class B>
concept remainder_defined = requires(const A& a, const B& b) {
    a % b;
};
template <class Target, class Value>
concept assignable = requires(Target& t, const Value& v) {
    t = v;
};
template <class A, class B>
concept comparable = requires(const A& a, const B& b) {
    a < b;
};

static_assert(addable<kiln::vector<float>, float>);
static_assert(addable<int, kiln::vector<double>>);
static_assert(!addable<kiln::vector<float>, std::string>);
static_assert(!remainder_defined<kiln::vector<float>, int>, "% needs integers; use fmod");
static_assert(remainder_defined<kiln::vector<std::int32_t>, int>);
static_assert(!assignable<kiln::vector<float>, kiln::vector<std::complex<float>>>,
              "complex to real needs real()");
static_assert(assignable<kiln::vector<std::complex<float>>, kiln::vector<float>>);
static_assert(!comparable<kiln::vector<std::complex<float>>, float>);
static_assert(
    !addable<decltype(kiln::raw_pointer(std::declval<const kiln::vector<float>&>())), int>,
    "no pointer arithmetic");

KILN_INSTANTIATE_FOR_EVERY_DEVICE(expression_test);

}  // namespace
