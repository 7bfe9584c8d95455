// SPDX-License-Identifier: Apache-2.0
// Algorithms inside kiln::capture on every device: sorts and histograms replay like eager calls,
// again with new data in the same vectors, under every strategy the device can run, and so do
// the other algorithms the capture table of docs/runtime.md lists; the calls a graph cannot hold
// (a read-back that decides the work after it, a host library) are refused up front, naming the
// call and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/algo/segmented.hpp>
#include <kiln/algo/segmented_sort.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/fft.hpp>
#include <kiln/kiln.hpp>
#include <kiln/matrix.hpp>
#include <kiln/random.hpp>
#include <kiln/reduce_dimension.hpp>
#include <kiln/sparse.hpp>
#include <kiln/stencil.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "algo/histogram/histogram_plan.hpp"
#include "support/device_param.hpp"

namespace {

class algorithm_capture : public kiln::test::device_queue_test {};

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed, T lo, T hi) {
    std::mt19937 rng(seed);
    std::vector<T> v(n);
    for (T& x : v) {
        if constexpr (std::is_floating_point_v<T>)
            x = std::uniform_real_distribution<T>(lo, hi)(rng);
        else
            x = std::uniform_int_distribution<T>(lo, hi)(rng);
    }
    return v;
}

/// Where the eager call's results are the graph's, bit for bit: float keys compared as bits
/// (NaN and -0 included).
template <class T>
std::vector<std::uint64_t> bits_of(const std::vector<T>& v) {
    std::vector<std::uint64_t> bits(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&bits[i], &v[i], sizeof(T));
    return bits;
}

/// Runs `body` under each radix strategy the device can run: reduce-then-scan over tiles (the
/// GPUs' without progress) and over chunks (the CPUs'), and the single pass where the device
/// promises that work-groups make progress (the GPUs').
template <class Body>
void on_every_radix_strategy(const kiln::device& dev, Body&& body) {
    for (const bool chunks : {false, true}) {
        for (const bool progress : {false, true}) {
            if (progress && (chunks || !kiln::detail::groups_make_progress(dev))) continue;
            SCOPED_TRACE(chunks ? "chunks" : progress ? "single pass" : "tiles");
            auto policy = kiln::detail::radix_sort_tuning_for(dev);
            policy.chunk_bytes = chunks ? 4096 : 0;
            const kiln::detail::scoped_algorithm_policy strategy(policy);
            const kiln::detail::scoped_forward_progress scoped(progress);
            body();
        }
    }
}

/// The graph launched on data written into the captured vectors after the capture: each
/// launch sorts what the vectors hold then, as an eager call on the same data does.
template <class Fill, class Eager, class Check>
void replay_on_new_data(kiln::graph& g, Fill&& fill, Eager&& eager, Check&& check) {
    for (unsigned round = 1; round <= 2; ++round) {
        SCOPED_TRACE("launch " + std::to_string(round));
        fill(round);
        const auto expected = eager(round);
        g.launch().wait();
        check(expected);
    }
}

/// The message of the invalid_argument_error that capturing `block` throws, or "no error".
template <class Block>
std::string capture_error(const kiln::queue& q, Block&& block) {
    try {
        kiln::capture(q, block);
    } catch (const kiln::invalid_argument_error& e) {
        return e.what();
    }
    return "no error";
}

TEST_P(algorithm_capture, sort_replays_like_the_eager_sort) {
    on_every_radix_strategy(device(), [&] {
        const std::size_t n = 5003;
        std::vector<float> first = random_values<float>(n, 1, -1e3f, 1e3f);
        first[7] = std::numeric_limits<float>::quiet_NaN();
        first[8] = -0.0f;
        first[9] = 0.0f;
        kiln::vector<float> keys(q, first);
        if (kiln::detail::plan_radix_sort(device(), 4, true, 0, n).floats_sorted_on_host) {
            // Where the device's float radix sort is not trusted, the host sorts the keys.
            const std::string message =
                capture_error(q, [&] { kiln::sort(keys, kiln::descending); });
            EXPECT_NE(message.find("kiln::sort"), std::string::npos) << message;
            EXPECT_NE(message.find("sorted on the host"), std::string::npos) << message;
            return;
        }
        kiln::graph g = kiln::capture(q, [&] { kiln::sort(keys, kiln::descending); });
        EXPECT_EQ(bits_of(keys.read()), bits_of(first)) << "the block itself sorted";
        replay_on_new_data(
            g,
            [&](unsigned round) {
                keys.write(random_values<float>(n, 10 + round, -1e3f * round, 1e3f));
            },
            [&](unsigned) {
                kiln::vector<float> eager(q, keys.read());
                kiln::sort(eager, kiln::descending);
                return eager.read();
            },
            [&](const std::vector<float>& expected) {
                EXPECT_EQ(bits_of(keys.read()), bits_of(expected));
            });
    });
}

TEST_P(algorithm_capture, sort_by_key_replays_like_the_eager_sort) {
    on_every_radix_strategy(device(), [&] {
        const std::size_t n = 4001;
        // Few distinct keys: the values of equal keys keep their order (the sort is stable).
        kiln::vector<std::uint32_t> keys(q, n), one_keys(q, n);
        kiln::vector<float> values(q, n), first(q, n), second(q, n);
        kiln::graph one = kiln::capture(q, [&] { kiln::sort_by_key(one_keys, values); });
        // Several value vectors take another path: the keys sort their positions, which gather
        // every vector.
        kiln::graph several =
            kiln::capture(q, [&] { kiln::sort_by_key(keys, first, second, kiln::descending); });
        const auto fill = [&](unsigned round) {
            const auto host_keys = random_values<std::uint32_t>(n, 20 + round, 0, 50 * round);
            keys.write(host_keys);
            one_keys.write(host_keys);
            values.write(random_values<float>(n, 30 + round, -1.0f, 1.0f));
            first.write(random_values<float>(n, 40 + round, -1.0f, 1.0f));
            second.write(random_values<float>(n, 50 + round, -1.0f, 1.0f));
        };
        struct sorted {
            std::vector<std::uint32_t> keys, one_keys;
            std::vector<float> values, first, second;
        };
        const auto eager = [&](unsigned) {
            kiln::vector<std::uint32_t> k(q, keys.read()), k1(q, one_keys.read());
            kiln::vector<float> v(q, values.read()), a(q, first.read()), b(q, second.read());
            kiln::sort_by_key(k1, v);
            kiln::sort_by_key(k, a, b, kiln::descending);
            return sorted{k.read(), k1.read(), v.read(), a.read(), b.read()};
        };
        for (unsigned round = 1; round <= 2; ++round) {
            SCOPED_TRACE("launch " + std::to_string(round));
            fill(round);
            const sorted expected = eager(round);
            one.launch();
            several.launch().wait();
            EXPECT_EQ(one_keys.read(), expected.one_keys);
            EXPECT_EQ(values.read(), expected.values);
            EXPECT_EQ(keys.read(), expected.keys);
            EXPECT_EQ(first.read(), expected.first);
            EXPECT_EQ(second.read(), expected.second);
            EXPECT_TRUE(std::is_sorted(expected.keys.rbegin(), expected.keys.rend()));
        }
    });
}

TEST_P(algorithm_capture, histogram_replays_like_the_eager_histogram) {
    using kiln::detail::histogram_strategy;
    for (const histogram_strategy s :
         {histogram_strategy::automatic, histogram_strategy::local_atomics,
          histogram_strategy::global_atomics, histogram_strategy::cpu_chunks}) {
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_histogram_strategy forced(s);
        const std::size_t n = 20011;
        kiln::vector<float> x(q, n);
        kiln::vector<std::int32_t> labels(q, n);
        kiln::vector<std::uint32_t> counts(q, 37), label_counts(q, 11);
        kiln::graph g = kiln::capture(q, [&] {
            kiln::histogram(x * 2.0f, counts, -1.0f, 1.0f);
            kiln::histogram(labels, label_counts);
        });
        for (unsigned round = 1; round <= 2; ++round) {
            SCOPED_TRACE("launch " + std::to_string(round));
            x.write(random_values<float>(n, 60 + round, -0.6f * round, 0.5f));
            labels.write(random_values<std::int32_t>(n, 70 + round, -1, 3 * round + 5));
            kiln::vector<std::uint32_t> eager(q, 37), eager_labels(q, 11);
            kiln::histogram(x * 2.0f, eager, -1.0f, 1.0f);
            kiln::histogram(labels, eager_labels);
            g.launch().wait();
            EXPECT_EQ(counts.read(), eager.read());
            EXPECT_EQ(label_counts.read(), eager_labels.read());
        }
    }
}

TEST_P(algorithm_capture, other_algorithms_replay_like_eager_calls) {
    constexpr std::size_t rows = 37, columns = 41, n = rows * columns;
    kiln::vector<float> x(q, n), v(q, columns);
    kiln::vector<std::complex<float>> signal(q, 64);
    const kiln::stencil<float> second_difference(q, {1.0f, -2.0f, 1.0f}, 1);
    // Row r holds columns r % columns and (3 r) % columns.
    std::vector<std::uint32_t> row_pointers{0}, column_indices;
    for (std::size_t r = 0; r < rows; ++r) {
        column_indices.push_back(std::uint32_t(r % columns));
        column_indices.push_back(std::uint32_t(3 * r % columns));
        row_pointers.push_back(std::uint32_t(column_indices.size()));
    }
    const kiln::sparse_matrix<float> a(q, rows, columns, row_pointers, column_indices,
                                       random_values<float>(2 * rows, 100, -1.0f, 1.0f));
    const kiln::random_uniform<float> uniform;
    const kiln::detail::scoped_fft_strategy kernels(kiln::detail::fft_strategy::kernels);
    const kiln::fft<float> plan(q, {64});
    struct results {
        explicit results(const kiln::queue& q)
            : scanned(q, n), smoothed(q, n), noisy(q, n), product(q, rows), spectrum(q, 64) {}
        kiln::vector<float> scanned, smoothed, noisy, product, row_sums;
        kiln::vector<std::complex<float>> spectrum;
    };
    // The row sums are a new vector: made inside the block, on memory the graph keeps.
    const auto step = [&](results& out) {
        kiln::exclusive_scan(x, out.scanned, 1.0f);
        out.row_sums = kiln::reduce<kiln::reducers::sum>(kiln::extents{rows, columns}, x, 1);
        out.smoothed = x * second_difference;
        out.noisy = x + uniform(kiln::element_index(), 7u);
        out.product = a * v;
        out.spectrum = plan(signal);
    };
    results replayed(q), eager(q);
    kiln::graph g = kiln::capture(q, [&] { step(replayed); });
    for (unsigned round = 1; round <= 2; ++round) {
        SCOPED_TRACE("launch " + std::to_string(round));
        x.write(random_values<float>(n, 110 + round, -1.0f, 1.0f));
        v.write(random_values<float>(columns, 120 + round, -1.0f, 1.0f));
        const auto parts = random_values<float>(128, 130 + round, -1.0f, 1.0f);
        std::vector<std::complex<float>> host_signal(64);
        for (std::size_t i = 0; i < 64; ++i) host_signal[i] = {parts[2 * i], parts[2 * i + 1]};
        signal.write(host_signal);
        g.launch().wait();
        step(eager);
        EXPECT_EQ(bits_of(replayed.scanned.read()), bits_of(eager.scanned.read()));
        EXPECT_EQ(bits_of(replayed.row_sums.read()), bits_of(eager.row_sums.read()));
        EXPECT_EQ(bits_of(replayed.smoothed.read()), bits_of(eager.smoothed.read()));
        EXPECT_EQ(bits_of(replayed.noisy.read()), bits_of(eager.noisy.read()));
        EXPECT_EQ(bits_of(replayed.product.read()), bits_of(eager.product.read()));
        EXPECT_EQ(bits_of(replayed.spectrum.read()), bits_of(eager.spectrum.read()));
    }
}

TEST_P(algorithm_capture, sorts_by_a_comparator_are_refused) {
    KILN_FUNCTION(int, by_magnitude, (float a, float b), return fabs(a) < fabs(b););
    const std::vector<float> host = random_values<float>(3001, 80, -5.0f, 5.0f);
    kiln::vector<float> keys(q, host);
    kiln::vector<std::uint32_t> values(q, 3001);
    const std::string message = capture_error(q, [&] { kiln::sort(keys, by_magnitude); });
    EXPECT_NE(message.find("kiln::sort failed"), std::string::npos) << message;
    EXPECT_NE(message.find("comparator"), std::string::npos) << message;
    const std::string by_key =
        capture_error(q, [&] { kiln::sort_by_key(keys, values, by_magnitude); });
    EXPECT_NE(by_key.find("kiln::sort_by_key failed"), std::string::npos) << by_key;
    EXPECT_EQ(keys.read(), host) << "nothing ran";
}

TEST_P(algorithm_capture, calls_that_read_a_result_back_are_refused_by_name) {
    kiln::vector<float> x(q, random_values<float>(100, 90, -1.0f, 1.0f)), out(q, 3), y(q, 100);
    kiln::vector<std::uint32_t> offsets(q, std::vector<std::uint32_t>{0, 10, 60, 100});
    kiln::vector<std::int32_t> keys(q, random_values<std::int32_t>(100, 91, 0, 3)), runs(q, 100);
    const struct {
        const char* call;
        const char* reason;
        std::function<void()> block;
    } calls[] = {
        {"kiln::segmented_reduce", "offsets", [&] { kiln::segmented_reduce(x, offsets, out); }},
        {"kiln::segmented_inclusive_scan", "offsets",
         [&] { kiln::segmented_inclusive_scan(x, offsets, y); }},
        {"kiln::segmented_sort", "longest segment", [&] { kiln::segmented_sort(x, offsets); }},
        {"kiln::copy_if", "count", [&] { (void)kiln::copy_if(x, x > 0.0f, y); }},
        {"kiln::unique", "count", [&] { (void)kiln::unique(keys); }},
        {"kiln::reduce_by_key", "count", [&] { (void)kiln::reduce_by_key(keys, x, runs, y); }},
    };
    for (const auto& call : calls) {
        const std::string message = capture_error(q, call.block);
        EXPECT_NE(message.find(std::string(call.call) + " failed"), std::string::npos) << message;
        EXPECT_NE(message.find(call.reason), std::string::npos) << message;
    }
}

TEST_P(algorithm_capture, gemm_on_the_host_library_is_refused_and_its_kernels_replay) {
    using kiln::detail::gemm_strategy;
    const auto strategies = kiln::detail::gemm_strategies_for(device());
    if (std::find(strategies.begin(), strategies.end(), gemm_strategy::host_blas) !=
        strategies.end()) {
        const kiln::detail::scoped_gemm_strategy forced(gemm_strategy::host_blas);
        kiln::matrix<float> a(q, 3, 4, std::vector<float>(12, 1.0f)),
            b(q, 4, 2, std::vector<float>(8, 2.0f)), c(q, 3, 2);
        const std::string message = capture_error(q, [&] { kiln::gemm(c, a, b); });
        EXPECT_NE(message.find("kiln::gemm"), std::string::npos) << message;
        EXPECT_NE(message.find("host_blas"), std::string::npos) << message;
    }
    // The kernels' strategies capture, on the same device.
    for (const gemm_strategy s : strategies) {
        if (s == gemm_strategy::host_blas) continue;
        SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
        const kiln::detail::scoped_gemm_strategy forced(s);
        kiln::matrix<float> a(q, 3, 4, random_values<float>(12, 91, -1.0f, 1.0f)),
            b(q, 4, 2, random_values<float>(8, 92, -1.0f, 1.0f)), c(q, 3, 2), eager(q, 3, 2);
        kiln::graph g = kiln::capture(q, [&] { kiln::gemm(c, a, b); });
        kiln::gemm(eager, a, b);
        g.launch().wait();
        EXPECT_EQ(bits_of(c.read()), bits_of(eager.read()));
    }
}

TEST_P(algorithm_capture, fft_on_the_host_library_is_refused) {
    const kiln::detail::scoped_fft_strategy forced(kiln::detail::fft_strategy::host_library);
    const kiln::fft<float> plan(q, {64});
    if (plan.plan().on_host_library()) {
        kiln::vector<std::complex<float>> x(q, 64), y(q, 64);
        const std::string message = capture_error(q, [&] { y = plan(x); });
        EXPECT_NE(message.find("kiln::fft"), std::string::npos) << message;
        EXPECT_NE(message.find("FFTW"), std::string::npos) << message;
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(algorithm_capture);

/// Vectors split over two devices: a graph records one device's work.
class algorithm_capture_split : public kiln::test::two_devices_test {};

TEST_F(algorithm_capture_split, sorting_split_keys_is_refused) {
    const std::vector<std::int32_t> host = random_values<std::int32_t>(1001, 95, -50, 50);
    kiln::vector<std::int32_t> keys(queues, host);
    ASSERT_EQ(keys.part_count(), 2u);
    const std::string message = capture_error(queues[0], [&] { kiln::sort(keys); });
    EXPECT_NE(message.find("kiln::sort failed"), std::string::npos) << message;
    EXPECT_NE(message.find("split over 2 devices"), std::string::npos) << message;
    EXPECT_EQ(keys.read(), host) << "nothing ran";
}

}  // namespace
