// SPDX-License-Identifier: Apache-2.0
// Several threads sharing one device at once: building the same program, launching one kernel,
// and evaluating and reducing vector expressions, each thread with its own queue (a queue is
// used by one thread at a time). Run under ThreadSanitizer by scripts/test.sh (preset tsan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/test_helpers.hpp"
#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

class threads : public kiln::test::device_test {};

constexpr int thread_count = 4;

/// Runs body(t) on thread_count threads at once and reports each thread's exception as a
/// failure: an exception escaping a thread would end the whole test program.
template <class Body>
void on_threads(Body body) {
    std::vector<std::string> errors(thread_count);
    std::vector<std::thread> workers;
    for (int t = 0; t < thread_count; ++t) {
        workers.emplace_back([&, t] {
            try {
                body(t);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (auto& w : workers) w.join();
    for (int t = 0; t < thread_count; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

TEST_P(threads, build_the_same_program_and_launch_its_kernel) {
    // Unique, so that every thread misses the caches and they race on building and storing it.
    const std::string source = "// " + kiln::test::unique_token() + R"(
kernel void add(global int* data, int amount, uint n) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += amount;
}
)";
    const std::size_t n = 1000;
    std::vector<std::vector<int>> results(thread_count);
    on_threads([&](int t) {
        kiln::queue q(device());
        auto add = kiln::program(device(), source).kernel("add");
        kiln::buffer<int> data(q, std::vector<int>(n, t));
        kiln::event last;
        for (int round = 0; round < 10; ++round)
            last = add(data, t, static_cast<unsigned>(n)).launch(q, {n}, {}, {}, last);
        results[t] = data.read(q, last);
    });
    for (int t = 0; t < thread_count; ++t)
        EXPECT_EQ(results[t], std::vector<int>(n, 11 * t)) << "thread " << t;
}

TEST_P(threads, evaluate_and_reduce_the_same_expressions) {
    const std::size_t n = 10007;
    const auto hx = kiln::test::random_values<float>(n, -1, 1, 31);
    std::vector<std::vector<float>> results(thread_count);
    std::vector<float> sums(thread_count), largest(thread_count);
    std::vector<std::uint64_t> positives(thread_count);
    on_threads([&](int t) {
        kiln::queue q(device());
        kiln::vector<float> x(q, hx), y(q, n);
        // The same expressions on every thread: their kernels are generated, built and cached
        // once for the device while the threads race for them.
        y = 2 * x + static_cast<float>(t);
        results[t] = y.read();
        sums[t] = kiln::sum(y);
        largest[t] = kiln::maximum(kiln::fabs(x));
        positives[t] = kiln::count(x > 0);
    });
    std::uint64_t expected_positives = 0;
    float expected_largest = 0;
    for (float v : hx) {
        expected_positives += v > 0;
        expected_largest = std::max(expected_largest, std::abs(v));
    }
    for (int t = 0; t < thread_count; ++t) {
        SCOPED_TRACE("thread " + std::to_string(t));
        ASSERT_EQ(results[t].size(), n);
        double expected_sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(results[t][i], 2 * hx[i] + static_cast<float>(t)) << "element " << i;
            expected_sum += results[t][i];
        }
        EXPECT_NEAR(sums[t], expected_sum, 1e-3 * n);
        EXPECT_EQ(largest[t], expected_largest);
        EXPECT_EQ(positives[t], expected_positives);
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(threads);

}  // namespace
