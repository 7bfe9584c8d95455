// SPDX-License-Identifier: Apache-2.0
// Scans and reduce_by_key into kiln::half and kiln::bfloat16 outputs, on every strategy: the
// values combine in float and each output element is the float result rounded once.
#include <cmath>
#include <cstdint>
#include <kiln/algorithm.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <string>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "support/binary16_types.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::for_each_binary16;

/// Equal bit for bit, except that a NaN need only be a NaN.
template <class T>
void expect_same_values(const std::vector<T>& actual, const std::vector<T>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        if (std::isnan(static_cast<float>(expected[i])))
            ASSERT_TRUE(std::isnan(static_cast<float>(actual[i]))) << "element " << i;
        else
            ASSERT_EQ(actual[i].bits(), expected[i].bits())
                << "element " << i << ": " << actual[i] << " instead of " << expected[i];
    }
}

/// Eighths from 1 to 1.5: every running sum below 2^21 is exact in float whatever the order of
/// the additions, and past 16-bit precision from a few hundred elements on, where summing in
/// 16 bits or rounding each partial sum would give other values than rounding the float once.
template <class T>
std::vector<T> eighths(std::size_t n) {
    std::vector<T> values;
    for (std::size_t i = 0; i < n; ++i)
        values.push_back(T(1.0f + static_cast<float>(i % 5) * 0.125f));
    return values;
}

/// Empty, one element, odd sizes, and sizes spanning many tiles and chunks with a partial last.
const std::vector<std::size_t> sizes = {0, 1, 7, 4099};

class binary16_scan : public kiln::test::device_queue_test {};

TEST_P(binary16_scan, scans_round_the_float_result_once_on_every_strategy) {
    kiln::test::on_every_scan_strategy(device(), [&] {
        for_each_binary16([&]<class T>() {
            for (const std::size_t n : sizes) {
                SCOPED_TRACE("n = " + std::to_string(n));
                const std::vector<T> hs = eighths<T>(n);
                kiln::vector<T> x(q, hs), inclusive(q, n), exclusive(q, n);
                kiln::inclusive_scan(x, inclusive);
                kiln::exclusive_scan(2 * x, exclusive, 0.5f);
                std::vector<T> want_inclusive, want_exclusive;
                float running = 0, doubled = 0.5f;
                for (const T& h : hs) {
                    want_exclusive.push_back(T(doubled));
                    running += static_cast<float>(h);
                    doubled += 2 * static_cast<float>(h);
                    want_inclusive.push_back(T(running));
                }
                expect_same_values(inclusive.read(), want_inclusive);
                expect_same_values(exclusive.read(), want_exclusive);
            }
        });
    });
}

TEST_P(binary16_scan, running_extremes_and_special_values) {
    for_each_binary16([&]<class T>() {
        using limits = std::numeric_limits<T>;
        const std::vector<T> hs = {T(2.0f), limits::denorm_min(), T(-3.0f), limits::quiet_NaN(),
                                   T(5.0f), limits::infinity(),   T(1.0f)};
        kiln::vector<T> x(q, hs), lowest(q, hs.size()), sums(q, hs.size());
        kiln::inclusive_scan(x, lowest, kiln::reducers::minimum{});
        expect_same_values(lowest.read(), std::vector<T>{T(2.0f), limits::denorm_min(), T(-3.0f),
                                                         T(-3.0f), T(-3.0f), T(-3.0f), T(-3.0f)});
        kiln::inclusive_scan(x, sums);
        const std::vector<T> got = sums.read();
        EXPECT_EQ(got[1], T(2.0f + static_cast<float>(limits::denorm_min())));
        EXPECT_EQ(got[2], T(-1.0f + static_cast<float>(limits::denorm_min())));
        for (std::size_t i = 3; i < got.size(); ++i)
            EXPECT_TRUE(std::isnan(static_cast<float>(got[i]))) << i;
        // Overflow of the 16-bit type in the running sum: infinity (half) where float holds it.
        kiln::vector<T> big(q, std::vector<T>(3, limits::max()));
        kiln::vector<T> big_sums(q, 3);
        kiln::inclusive_scan(big, big_sums);
        EXPECT_EQ(big_sums.read()[2], T(3 * static_cast<float>(limits::max())));
        // In place: the 16-bit vector holds its own running sum.
        kiln::vector<T> in_place(q, std::vector<T>{T(0.5f), T(0.25f), T(0.125f)});
        kiln::inclusive_scan(in_place, in_place);
        expect_same_values(in_place.read(), std::vector<T>{T(0.5f), T(0.75f), T(0.875f)});
    });
}

TEST_P(binary16_scan, reduce_by_key_rounds_each_run_once_on_every_strategy) {
    kiln::test::on_every_run_tile(device(), [&] {
        for_each_binary16([&]<class T>() {
            for (const std::size_t n : sizes) {
                SCOPED_TRACE("n = " + std::to_string(n));
                const std::vector<T> hs = eighths<T>(n);
                // Runs of 1 to 600 elements: long ones sum far past 16-bit precision.
                std::vector<std::int32_t> keys;
                for (std::size_t i = 0, run = 0, left = 1; i < n; ++i) {
                    keys.push_back(static_cast<std::int32_t>(run));
                    if (--left == 0) left = (++run * 97) % 600 + 1;
                }
                std::vector<std::int32_t> want_keys;
                std::vector<float> sums;
                for (std::size_t i = 0; i < n; ++i) {
                    if (i == 0 || keys[i] != keys[i - 1]) {
                        want_keys.push_back(keys[i]);
                        sums.push_back(0.0f);
                    }
                    sums.back() += static_cast<float>(hs[i]);
                }
                std::vector<T> want_values;
                for (float s : sums) want_values.push_back(T(s));
                // One more slot than runs: reduce_by_key leaves it as it was.
                const T untouched = T::from_bits(0x7c01);
                kiln::vector<T> x(q, hs),
                    out_values(q, std::vector<T>(want_keys.size() + 1, untouched));
                kiln::vector<std::int32_t> k(q, keys), out_keys(q, want_keys.size() + 1);
                ASSERT_EQ(kiln::reduce_by_key(k, x, out_keys, out_values), want_keys.size());
                std::vector<std::int32_t> got_keys = out_keys.read();
                std::vector<T> got_values = out_values.read();
                EXPECT_EQ(got_values.back().bits(), untouched.bits());
                got_keys.pop_back();
                got_values.pop_back();
                EXPECT_EQ(got_keys, want_keys);
                expect_same_values(got_values, want_values);
            }
        });
    });
}

TEST_P(binary16_scan, reduce_by_key_into_small_outputs_keeps_the_first_runs) {
    for_each_binary16([&]<class T>() {
        kiln::vector<std::int32_t> keys(q, {1, 1, 2, 3, 3, 3}), out_keys(q, 2);
        kiln::vector<T> values(q, std::vector<T>(6, T(0.75f))), out_values(q, 2);
        EXPECT_THROW(kiln::reduce_by_key(keys, values, out_keys, out_values),
                     kiln::invalid_argument_error);
        EXPECT_EQ(out_keys.read(), (std::vector<std::int32_t>{1, 2}));
        expect_same_values(out_values.read(), std::vector<T>{T(1.5f), T(0.75f)});
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(binary16_scan);

// Split over two parts (two devices, or two queues on one): the parts' runs meet on the host.
class binary16_scan_split : public kiln::test::two_parts_test {};

TEST_F(binary16_scan_split, scans_and_runs_over_parts) {
    for_each_binary16([&]<class T>() {
        const std::size_t n = 3001;
        const std::vector<T> hs = eighths<T>(n);
        std::vector<std::int32_t> keys;
        for (std::size_t i = 0; i < n; ++i) keys.push_back(static_cast<std::int32_t>(i / 700));
        kiln::vector<T> x(queues, hs), y(queues, n);
        kiln::inclusive_scan(x, y);
        std::vector<T> want;
        float running = 0;
        for (const T& h : hs) want.push_back(T(running += static_cast<float>(h)));
        expect_same_values(y.read(), want);
        const std::size_t runs = (n - 1) / 700 + 1;
        kiln::vector<std::int32_t> k(queues, keys), out_keys(queues, runs);
        kiln::vector<T> out_values(queues, runs);
        ASSERT_EQ(kiln::reduce_by_key(k, x, out_keys, out_values), runs);
        std::vector<float> sums(runs, 0.0f);
        for (std::size_t i = 0; i < n; ++i) sums[i / 700] += static_cast<float>(hs[i]);
        std::vector<T> want_values;
        for (float s : sums) want_values.push_back(T(s));
        expect_same_values(out_values.read(), want_values);
    });
}

}  // namespace
