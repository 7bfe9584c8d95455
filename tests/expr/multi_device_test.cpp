// SPDX-License-Identifier: Apache-2.0
// A vector split over several devices: placement, expressions on every part, combined reductions,
// continuous element indices and random streams, and the errors of mixing placements. CTest runs
// it with POCL_DEVICES="pthread pthread" so that PoCL shows its CPU as two devices.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <kiln/reduce_dimension.hpp>
#include <kiln/runtime/cache.hpp>
#include <kiln/vector.hpp>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <thread>

#include "expr/bandwidth_file.hpp"
#include "runtime/device_identity.hpp"
#include "runtime/test_helpers.hpp"
#include "support/device_param.hpp"
#include "support/hang_guard.hpp"

namespace {

class multi_device_test : public kiln::test::two_devices_test {};

TEST_F(multi_device_test, splits_in_proportion_to_speed) {
    // [doc:multi-device]
    kiln::vector<float> x(queues, 1000001);  // std::vector<kiln::queue> queues: one per device
    // [/doc]
    ASSERT_EQ(x.part_count(), 2u);
    const auto& parts = x.layout();
    EXPECT_EQ(parts[0].begin, 0u);
    EXPECT_EQ(parts[1].begin, parts[0].size);
    EXPECT_EQ(parts[0].size + parts[1].size, 1000001u);
    // The two devices are the same CPU: equal speed, equal halves.
    EXPECT_NEAR(static_cast<double>(parts[0].size), 500000.5, 1.0);
}

// PoCL reports no memory bandwidth: kiln measures it, once per device model, so that the two
// equal devices weigh the same.
TEST_F(multi_device_test, measures_bandwidth_once_per_device_model) {
    const double first = kiln::memory_bandwidth(queues[0]);
    EXPECT_GT(first, 1e6);  // bytes/s: any device copies over a megabyte a second
    const std::size_t launches = kiln::expression_cache::stats().launches;
    EXPECT_EQ(kiln::memory_bandwidth(queues[1]), first);
    EXPECT_EQ(kiln::memory_bandwidth(queues[0]), first);
    EXPECT_EQ(kiln::expression_cache::stats().launches, launches);  // nothing measured again
}

// The bandwidths kept in kiln's cache directory for the model of `d` (one file per device model,
// the model on its second line, the value last). Files of other models, left by earlier runs on
// other devices or planted by CTest (expr.multi_device.bandwidth_from_disk), are not counted.
std::vector<double> bandwidths_on_disk(const kiln::device& d) {
    const std::string model = kiln::detail::device_identity(d.properties());
    std::vector<double> values;
    const std::filesystem::path folder = kiln::program_cache::directory() / "bandwidth";
    std::error_code missing;
    for (const auto& entry : std::filesystem::directory_iterator(folder, missing)) {
        std::ifstream in(entry.path());
        std::string format, stored_model;
        double value = 0;
        if (std::getline(in, format) && std::getline(in, stored_model) && stored_model == model &&
            in >> value)
            values.push_back(value);
    }
    return values;
}

TEST_F(multi_device_test, keeps_the_measured_bandwidth_on_disk) {
    if (kiln::program_cache::directory().empty()) GTEST_SKIP() << "the disk cache is off";
    const double bandwidth = kiln::memory_bandwidth(queues[0]);
    EXPECT_EQ(bandwidths_on_disk(queues[0].device()), std::vector<double>{bandwidth});
}

// CTest runs this alone after keeps_the_measured_bandwidth_on_disk, in a second process with the
// same cache directory (expr.multi_device.bandwidth_from_disk): the figure comes from the file,
// and nothing is measured.
TEST_F(multi_device_test, reads_the_measured_bandwidth_from_disk) {
    if (kiln::program_cache::directory().empty()) GTEST_SKIP() << "the disk cache is off";
    const std::size_t launches = kiln::expression_cache::stats().launches;
    const double bandwidth = kiln::memory_bandwidth(queues[0]);
    EXPECT_EQ(kiln::expression_cache::stats().launches, launches);
    EXPECT_EQ(bandwidths_on_disk(queues[0].device()), std::vector<double>{bandwidth});
}

// The bandwidth file is read like a compile-cache entry. A FIFO at its path hung the process,
// and a link to /dev/zero grew its memory until allocation failed (1.1 GB under a 3 GB limit).
TEST(bandwidth_file, only_a_small_regular_file_is_read) {
    const kiln::test::hang_guard guard(std::chrono::seconds(60));
    const kiln::test::temp_dir dir;
    const kiln::test::scoped_env cache("KILN_CACHE_DIR", dir.path().string());
    const std::string model = "opencl|a platform|a device|1.0|8|16";
    const std::filesystem::path file = kiln::detail::bandwidth_file(model);
    ASSERT_EQ(file.parent_path().parent_path(), dir.path());
    std::filesystem::create_directories(file.parent_path());
    const std::filesystem::path kept = dir.path() / "kept";
    std::ofstream(kept) << "kiln-bandwidth 1\n" << model << "\n2.5e10\n";

    std::filesystem::copy_file(kept, file);
    EXPECT_EQ(kiln::detail::read_measured_bandwidth(model), 2.5e10);
    EXPECT_EQ(kiln::detail::read_measured_bandwidth("another model"), std::nullopt);
    const std::map<std::string, std::function<void()>> plants = {
        {"a FIFO", [&] { ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0); }},
        {"a link to /dev/zero", [&] { std::filesystem::create_symlink("/dev/zero", file); }},
        {"a link to a good file", [&] { std::filesystem::create_symlink(kept, file); }},
        {"a folder", [&] { std::filesystem::create_directory(file); }},
        {"a good file grown past 64 KiB",
         [&] {
             std::filesystem::copy_file(kept, file);
             std::filesystem::resize_file(file, std::uintmax_t(1) << 20);
         }},
    };
    for (const auto& [name, plant] : plants) {
        SCOPED_TRACE(name);
        std::filesystem::remove(file);
        plant();
        EXPECT_EQ(kiln::detail::read_measured_bandwidth(model), std::nullopt);
    }
}

// Restores the default weighting and forgets bandwidths set by a test.
class split_weighting_test : public multi_device_test {
  protected:
    void TearDown() override {
        kiln::set_split_weighting(kiln::split_weighting::memory_bandwidth);
        for (const kiln::queue& q : queues) kiln::set_memory_bandwidth(q.device(), 0);
    }
};

TEST_F(split_weighting_test, weighs_devices_by_the_bandwidth_the_user_sets) {
    // [doc:split-bandwidth]
    kiln::set_memory_bandwidth(queues[0].device(), 3e9);  // bytes/s
    kiln::set_memory_bandwidth(queues[1].device(), 1e9);
    kiln::vector<float> x(queues, 1000000);  // three quarters on the first device
    // [/doc]
    EXPECT_EQ(kiln::memory_bandwidth(queues[0]), 3e9);
    EXPECT_EQ(x.layout()[0].size, 750000u);
    EXPECT_EQ(x.layout()[1].size, 250000u);
    kiln::set_memory_bandwidth(queues[0].device(), 0);  // forgotten: measured again, halves
    kiln::set_memory_bandwidth(queues[1].device(), 0);
    kiln::vector<float> y(queues, 1000000);
    EXPECT_EQ(y.layout()[0].size, 500000u);
    EXPECT_THROW(kiln::set_memory_bandwidth(queues[0].device(), -1), kiln::invalid_argument_error);
}

TEST_F(split_weighting_test, equal_weights_split_evenly_whatever_their_value) {
    // n w / 2w is a hair under n / 2 in long double for some w (the first one was measured on
    // PoCL): truncated, the first part lost an element.
    for (const double bandwidth : {27448645500.325577, 3e9, 1.0 / 3}) {
        for (const kiln::queue& q : queues) kiln::set_memory_bandwidth(q.device(), bandwidth);
        const kiln::vector<float> x(queues, 1000000);
        EXPECT_EQ(x.layout()[0].size, 500000u) << bandwidth;
    }
}

// Run alone by CTest with KILN_SPLIT_WEIGHTING=compute
// (expr.multi_device.weighting_from_environment), and in the whole binary without it (the tests
// before it leave the default behind them).
TEST_F(split_weighting_test, weighting_starts_from_the_environment) {
    const char* text = std::getenv("KILN_SPLIT_WEIGHTING");
    EXPECT_EQ(kiln::current_split_weighting(), text != nullptr && std::string(text) == "compute"
                                                   ? kiln::split_weighting::compute
                                                   : kiln::split_weighting::memory_bandwidth);
}

TEST_F(split_weighting_test, compute_weighting_ignores_bandwidth) {
    kiln::set_memory_bandwidth(queues[0].device(), 3e9);
    kiln::set_memory_bandwidth(queues[1].device(), 1e9);
    kiln::set_split_weighting(kiln::split_weighting::compute);
    EXPECT_EQ(kiln::current_split_weighting(), kiln::split_weighting::compute);
    kiln::vector<float> x(queues, 1000000);  // equal devices: equal compute units x clock
    EXPECT_EQ(x.layout()[0].size, 500000u);
}

TEST_F(multi_device_test, expressions_run_on_every_part_with_continuous_indices) {
    const std::size_t n = 100003;
    std::vector<float> host(n);
    std::iota(host.begin(), host.end(), 0.0f);
    kiln::vector<float> x(queues, host), y(queues, n);
    kiln::vector<std::uint64_t> index(queues, n);
    y = 2 * x + 1;
    index = kiln::element_index(10);
    const auto hy = y.read();
    const auto hi = index.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hy[i], 2 * host[i] + 1) << i;
        ASSERT_EQ(hi[i], i + 10) << i;
    }
    EXPECT_EQ(static_cast<float>(y[n - 1]), 2 * host[n - 1] + 1);
    y[n - 1] = -1.0f;
    EXPECT_EQ(static_cast<float>(y[n - 1]), -1.0f);
}

TEST_F(multi_device_test, multivectors_update_every_part_in_one_kernel_each) {
    const std::size_t n = 10007;
    std::vector<float> host(3 * n);
    std::iota(host.begin(), host.end(), 0.0f);
    kiln::multivector<float, 3> X(queues, host), Y(queues, n);
    ASSERT_EQ(X(2).part_count(), 2u);
    const std::size_t before = kiln::expression_cache::stats().launches;
    Y = 2 * X + X(0);
    EXPECT_EQ(kiln::expression_cache::stats().launches - before, 2u);  // one per device
    const auto y = Y.read();
    for (std::size_t k = 0; k < 3 * n; ++k) ASSERT_EQ(y[k], 2 * host[k] + host[k % n]) << k;
    // Reductions along a dimension need the expression on one device.
    EXPECT_THROW(kiln::reduce<kiln::reducers::sum>(kiln::extents{n, 1}, X(0) + 0, 1),
                 kiln::invalid_argument_error);
}

TEST_F(multi_device_test, reductions_combine_the_parts) {
    const std::size_t n = 200001;
    std::vector<float> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(std::sin(0.001 * i));
    kiln::vector<float> x(queues, host);
    double expected = 0;
    for (float v : host) expected += v;
    EXPECT_NEAR(kiln::sum(x), expected, 1e-2);
    EXPECT_NEAR(kiln::kahan_sum(x), expected, std::abs(expected) * 1.2e-7 + 1e-6);
    const auto [low, high] = kiln::minmax(x);
    EXPECT_EQ(low, *std::min_element(host.begin(), host.end()));
    EXPECT_EQ(high, *std::max_element(host.begin(), host.end()));
    EXPECT_EQ(kiln::count(x > 0), static_cast<std::uint64_t>(std::count_if(
                                      host.begin(), host.end(), [](float v) { return v > 0; })));
}

// A split reduction wanted at once reads every part's partials into the thread's pinned
// scratch before waiting: results stay exact for lengths that grow and shrink the scratch, for
// states of other sizes (minmax, kahan) in between, with a reduce_async still pending, and from
// two threads at once.
TEST_F(multi_device_test, split_reductions_read_every_part_before_one_wait) {
    const auto check_sums = [&] {
        for (const std::size_t n : {std::size_t{3}, std::size_t{100000}, std::size_t{17},
                                    std::size_t{400001}, std::size_t{2}}) {
            std::vector<std::int32_t> host(n);
            std::iota(host.begin(), host.end(), -7);
            kiln::vector<std::int32_t> x(queues, host);
            auto pending = kiln::reduce_async<kiln::reducers::sum>(x * 2);
            const std::int64_t expected =
                std::accumulate(host.begin(), host.end(), std::int64_t{0});
            ASSERT_EQ(static_cast<std::int64_t>(kiln::sum(x)), expected) << n;
            const auto [low, high] = kiln::minmax(x);
            ASSERT_EQ(low, host.front()) << n;
            ASSERT_EQ(high, host.back()) << n;
            ASSERT_EQ(static_cast<std::int64_t>(pending.get()), 2 * expected) << n;
        }
    };
    check_sums();
    std::thread other(check_sums);
    check_sums();
    other.join();
}

TEST_F(multi_device_test, random_streams_do_not_depend_on_the_split) {
    const std::size_t n = 5000;
    kiln::random_uniform<float> uniform;
    kiln::vector<float> split(queues, n), single(queues[0], n);
    split = uniform(kiln::element_index(), 7);
    single = uniform(kiln::element_index(), 7);
    EXPECT_EQ(split.read(), single.read());
}

TEST_F(multi_device_test, resize_and_copy_keep_the_split) {
    kiln::vector<std::int32_t> v(queues, std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
    v.resize(9);
    EXPECT_EQ(v.part_count(), 2u);
    const auto grown = v.read();
    EXPECT_EQ(std::vector<std::int32_t>(grown.begin(), grown.begin() + 6),
              (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}));
    kiln::vector<std::int32_t> copy(v);
    EXPECT_EQ(copy.read(), grown);
}

TEST_F(multi_device_test, mixing_placements_is_a_clear_error) {
    kiln::vector<float> split(queues, 100), on_first(queues[0], 100), on_second(queues[1], 100);
    EXPECT_THROW(split = on_first + 1, kiln::invalid_argument_error);
    try {
        on_first = on_second * 2;
        FAIL() << "expected kiln::invalid_argument_error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("same device"), std::string::npos) << e.what();
    }
    EXPECT_THROW(split = kiln::reverse(split), kiln::invalid_argument_error);
    EXPECT_THROW(on_first = kiln::raw_pointer(split)[kiln::element_index()],
                 kiln::invalid_argument_error);
    EXPECT_THROW(static_cast<void>(kiln::sum(queues[1], on_first)), kiln::invalid_argument_error);
}

}  // namespace
