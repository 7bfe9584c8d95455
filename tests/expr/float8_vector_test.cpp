// SPDX-License-Identifier: Apache-2.0
// kiln::vector<kiln::float8_e4m3> and <kiln::float8_e5m2>: the device's conversions give the
// host's bits; transfers, fills, expressions that load float, compute in float and store rounded
// once, and reductions in float, through the element loop, GPUs' 16-byte accesses and CPUs'
// vector form.
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "narrow_float_vectors.hpp"
#include "support/device_param.hpp"
#include "support/float8_types.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::every_float8;
using kiln::test::expect_exact_reductions;
using kiln::test::for_each_float8;
using kiln::test::from_floats;

/// Equal bit for bit: FP8 NaNs are one pattern per sign, whatever the float's payload.
template <class T>
void expect_same_bits(const std::vector<T>& actual, const std::vector<T>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
        ASSERT_EQ(actual[i].bits(), expected[i].bits())
            << "element " << i << ": " << actual[i] << " instead of " << expected[i];
}

/// The launch shapes a statement can take, each forced on every device: the element loop
/// (chunked, no vector form), CPUs' vector form of 16 elements, GPUs' strided loops of 16-byte
/// accesses.
std::vector<kiln::detail::launch_policy> every_loop() {
    using kiln::detail::loop_style;
    return {{loop_style::chunked, 1, 16, 0},
            {loop_style::chunked, 1, 16, 64},
            {loop_style::strided, 64, 4, 0}};
}

class float8_vector : public kiln::test::device_queue_test {};

TEST_P(float8_vector, documented_example) {
    const std::vector<float> host = {1.0f, 2.5f, -3.0f};
    // [doc:float8_vector]
    std::vector<kiln::float8_e4m3> host_x;
    for (float f : host) host_x.push_back(kiln::float8_e4m3(f));  // to nearest even, saturating
    kiln::vector<kiln::float8_e4m3> x(q, host_x), y(q, host_x.size());
    kiln::vector<float> z(q, host);
    y = 2 * x + z;               // loads as float, computes in float, stores rounded once
    float total = kiln::sum(x);  // accumulates in float, returns float
    std::vector<kiln::float8_e4m3> back = y.read();
    // [/doc]
    EXPECT_EQ(total, 0.5f);
    EXPECT_EQ(back,
              (std::vector<kiln::float8_e4m3>{kiln::float8_e4m3(3.0f), kiln::float8_e4m3(7.5f),
                                              kiln::float8_e4m3(-9.0f)}));
}

TEST_P(float8_vector, device_conversions_give_the_hosts_bits) {
    // Float to FP8 over every midpoint and its neighbours, overflow, underflow and NaNs, and
    // FP8 to float for every pattern, in each launch shape (sizes not multiples of 16).
    for_each_float8([&]<class T>() {
        const std::vector<float> floats = kiln::test::float8_conversion_floats<T>();
        kiln::vector<float> x(q, floats), widened(q, 256);
        kiln::vector<T> y(q, floats.size());
        const auto patterns = every_float8<T>();
        kiln::vector<T> all(q, patterns);
        for (const auto& policy : every_loop()) {
            SCOPED_TRACE("vector_bytes " + std::to_string(policy.vector_bytes) + ", strided " +
                         std::to_string(policy.loop == kiln::detail::loop_style::strided));
            const kiln::detail::scoped_launch_policy forcing(policy);
            y = x;
            expect_same_bits(y.read(), from_floats<T>(floats));
            widened = all;
            const std::vector<float> back = widened.read();
            for (std::size_t i = 0; i < patterns.size(); ++i) {
                const float expected = static_cast<float>(patterns[i]);
                if (std::isnan(expected))
                    ASSERT_TRUE(std::isnan(back[i])) << i;
                else
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(back[i]),
                              std::bit_cast<std::uint32_t>(expected))
                        << i;
            }
        }
    });
}

TEST_P(float8_vector, round_trips_every_bit_pattern_through_the_device) {
    for_each_float8([&]<class T>() {
        const auto host = every_float8<T>();
        kiln::vector<T> v(q, host);
        expect_same_bits(v.read(), host);
        const kiln::vector<T> copy(v);
        expect_same_bits(copy.read(), host);
        v[3] = T(-2.5f);
        EXPECT_EQ(static_cast<T>(v[3]), T(-2.5f));
        EXPECT_EQ(static_cast<T>(v[4]).bits(), 4);
        // Loaded as float, multiplied and stored back: every value, NaNs as the format's quiet
        // NaN and (E5M2) infinities saturated. The sign of a NaN that arithmetic made is not
        // IEEE 754's to say (NVIDIA's GPUs give their one canonical NaN, positive): NaNs are
        // compared without it.
        kiln::vector<T> all(q, host), y(q, host.size());
        for (const auto& policy : every_loop()) {
            const kiln::detail::scoped_launch_policy forcing(policy);
            y = all * 1;
            const std::vector<T> got = y.read();
            for (std::size_t i = 0; i < host.size(); ++i) {
                const T expected(static_cast<float>(host[i]));
                const bool nan = std::isnan(static_cast<float>(expected));
                ASSERT_EQ(nan ? got[i].bits() & 0x7F : got[i].bits(),
                          nan ? expected.bits() & 0x7F : expected.bits())
                    << "element " << i << ": " << got[i] << " instead of " << expected;
            }
        }
    });
}

TEST_P(float8_vector, computes_in_float_and_rounds_once_per_assignment) {
    for_each_float8([&]<class T>() {
        for (std::size_t n : {0, 1, 2, 15, 16, 17, 255, 1000, 65537}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto xs = from_floats<T>(kiln::test::random_values<float>(n, -100, 100, 1));
            const auto ws = from_floats<T>(kiln::test::random_values<float>(n, -1, 1, 2));
            const auto zs = kiln::test::random_values<float>(n, -1, 1, 3);
            kiln::vector<T> x(q, xs), w(q, ws), y(q, n);
            kiln::vector<float> z(q, zs), in_float(q, n);
            std::vector<T> expected, expected_8_bit;
            for (std::size_t i = 0; i < n; ++i) {
                const float xi = static_cast<float>(xs[i]);
                expected.push_back(T(2 * xi + zs[i]));
                expected_8_bit.push_back(T(2 * xi + static_cast<float>(ws[i])));
            }
            for (const auto& policy : every_loop()) {
                const kiln::detail::scoped_launch_policy forcing(policy);
                y = T(-1.0f);
                y = 2 * x + z;
                expect_same_bits(y.read(), expected);
                y = 2 * x + w;
                expect_same_bits(y.read(), expected_8_bit);
                in_float = x + z;  // a float result: no 8-bit rounding
                const std::vector<float> sums = in_float.read();
                for (std::size_t i = 0; i < n; ++i)
                    ASSERT_EQ(sums[i], static_cast<float>(xs[i]) + zs[i]) << i;
            }
        }
    });
}

TEST_P(float8_vector, statements_take_the_wide_and_vector_forms) {
    // The texts of the forced shapes: CPUs' vector form converts 16 elements per step through
    // kiln's vector helpers, GPUs' loops move 16 elements per 16-byte access.
    for_each_float8([&]<class T>() {
        const std::string name = std::is_same_v<T, kiln::float8_e4m3> ? "e4m3" : "e5m2";
        kiln::vector<T> x(q, 32), y(q, 32);
        const auto source = [&](const kiln::detail::launch_policy& policy) {
            const kiln::detail::scoped_launch_policy forcing(policy);
            return kiln::assignment_source(device(), y, 2 * x + x);
        };
        const auto loops = every_loop();
        EXPECT_EQ(source(loops[0]).find("x16_store("), std::string::npos) << source(loops[0]);
        EXPECT_NE(source(loops[1]).find("kiln_" + name + "x16_store("), std::string::npos)
            << source(loops[1]);
        EXPECT_NE(source(loops[1]).find("kiln_" + name + "x16_to_float("), std::string::npos)
            << source(loops[1]);
        EXPECT_NE(source(loops[2]).find("uchar16"), std::string::npos) << source(loops[2]);
        EXPECT_NE(source(loops[2]).find(".sf"), std::string::npos) << source(loops[2]);
    });
}

TEST_P(float8_vector, fills_with_numbers_and_8_bit_values) {
    for_each_float8([&]<class T>() {
        for (std::size_t n : {0, 1, 7, 1000}) {
            kiln::vector<T> v(q, n);
            v = 0.1f;  // rounded once to T
            expect_same_bits(v.read(), std::vector<T>(n, T(0.1f)));
            v = 1e6f;  // saturated
            expect_same_bits(v.read(), std::vector<T>(n, std::numeric_limits<T>::max()));
            v = std::numeric_limits<T>::quiet_NaN();
            expect_same_bits(v.read(), std::vector<T>(n, std::numeric_limits<T>::quiet_NaN()));
        }
    });
}

TEST_P(float8_vector, reductions_accumulate_and_return_float) {
    using kiln::detail::loop_style;
    // The devices' own tuning, GPUs' 16-byte loads (one and three per step), and CPUs' chunks
    // element by element and 16 elements per step.
    const std::vector<kiln::detail::reduce_tuning> tunings = {
        {.loop = loop_style::strided, .work_group_size = 64, .wide_loads = 1},
        {.loop = loop_style::strided, .work_group_size = 64, .wide_loads = 3},
        {.loop = loop_style::chunked, .work_group_size = 1, .wide_loads = 0, .vector_lanes = 0},
        {.loop = loop_style::chunked, .work_group_size = 1, .wide_loads = 0, .vector_lanes = 16}};
    for_each_float8([&]<class T>() {
        for (std::size_t n : {0, 1, 15, 16, 17, 1001, 65537}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            expect_exact_reductions<T>(q, n);
            for (const auto& tuning : tunings) {
                const kiln::detail::scoped_algorithm_policy forcing(tuning);
                expect_exact_reductions<T>(q, n);
            }
        }
        // 100000 ones: an 8-bit accumulator would stop at 16 (E4M3) or 8 (E5M2).
        kiln::vector<T> ones(q, 100000);
        ones = 1;
        static_assert(std::is_same_v<decltype(kiln::sum(ones)), float>);
        EXPECT_EQ(kiln::sum(ones), 100000.0f);
        kiln::vector<T> with_nan(q, {T(1.0f), std::numeric_limits<T>::quiet_NaN()});
        EXPECT_TRUE(std::isnan(kiln::sum(with_nan)));
        EXPECT_EQ(kiln::maximum(with_nan), 1.0f);  // NaNs ignored
        kiln::vector<T> subnormal(q, {std::numeric_limits<T>::denorm_min(), T(1.0f)});
        EXPECT_EQ(kiln::minimum(subnormal),
                  static_cast<float>(std::numeric_limits<T>::denorm_min()));
    });
}

TEST_P(float8_vector, views_gather_and_slice) {
    for_each_float8([&]<class T>() {
        const std::size_t n = 9;
        std::vector<T> hs;
        for (std::size_t i = 0; i < n; ++i) hs.push_back(T(static_cast<float>(i) + 0.5f));
        kiln::vector<T> x(q, hs), y(q, n);
        y = kiln::reverse(x) * 2;
        const auto reversed = y.read();
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(reversed[i], T(2 * static_cast<float>(hs[n - 1 - i]))) << i;
        kiln::slicer<1> line({n});
        line(y, kiln::index_range{1, n - 1}) = 3 * line(x, kiln::index_range{0, n - 2});
        const auto sliced = y.read();
        for (std::size_t i = 1; i + 1 < n; ++i)
            ASSERT_EQ(sliced[i], T(3 * static_cast<float>(hs[i - 1]))) << i;
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(float8_vector);

// A vector split over two parts (two devices, or two queues on one).
class float8_split : public kiln::test::two_parts_test {};

TEST_F(float8_split, splits_transfers_and_expressions_over_parts) {
    for_each_float8([&]<class T>() {
        for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{10001}})
            kiln::test::expect_split_statement<T>(queues, n);
    });
}

}  // namespace
