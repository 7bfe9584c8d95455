// SPDX-License-Identifier: Apache-2.0
// kiln::capture and kiln::graph on every device: replays match eager runs bit for bit, values
// change between launches, other queues replay, and what a capture cannot hold is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class graphs : public kiln::test::device_queue_test {};

std::vector<float> ramp(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * float(i % 97) - 3.0f;
    return v;
}

/// The bytes of two float vectors compare equal: bit for bit, NaN and -0 included.
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

/// Several expression statements and a scan: one step of work to record.
struct step_state {
    step_state(const kiln::queue& q, std::size_t n)
        : x(q, ramp(n, 0.25f)), y(q, ramp(n, -0.5f)), z(q, ramp(n, 0.125f)), sums(q, n) {}
    void step() {
        y = 2.0f * x + z;
        z = sin(y) * x - z;
        x = x + 0.5f * z;
        kiln::inclusive_scan(y, sums);
    }
    kiln::vector<float> x, y, z, sums;
};

TEST_P(graphs, replays_statements_and_a_scan_bit_for_bit) {
    const std::size_t n = 1000;
    step_state eager(q, n), replayed(q, n);
    kiln::graph g = kiln::capture(q, [&] { replayed.step(); });
    for (int i = 0; i < 3; ++i) {
        eager.step();
        g.launch().wait();
    }
    EXPECT_GE(g.size(), 4u);
    expect_same_bits(replayed.x.read(), eager.x.read());
    expect_same_bits(replayed.y.read(), eager.y.read());
    expect_same_bits(replayed.z.read(), eager.z.read());
    expect_same_bits(replayed.sums.read(), eager.sums.read());
}

// A CUDA graph on CUDA, a command buffer where OpenCL offers cl_khr_command_buffer (kiln takes
// its provisional 0.9 versions and the final 1.x): the one-call replay, not the list.
TEST_P(graphs, replays_natively_where_the_backend_records_work) {
    kiln::vector<float> x(q, ramp(100, 1.0f)), y(q, 100);
    const kiln::graph g = kiln::capture(q, [&] { y = 2.0f * x + y; });
    const auto& extensions = device().properties().extensions;
    const bool command_buffers = std::find(extensions.begin(), extensions.end(),
                                           "cl_khr_command_buffer") != extensions.end();
    if (device().backend() == kiln::backend_kind::cuda || command_buffers)
        EXPECT_TRUE(g.replays_natively());
    else
        EXPECT_FALSE(g.replays_natively());
    EXPECT_FALSE(kiln::graph().replays_natively());
}

// KILN_GRAPH_REPLAY=list: every launch enqueues the bound commands one by one, with the same bits.
TEST_P(graphs, replays_the_bound_list_when_the_environment_asks) {
    const std::size_t n = 1000;
    step_state eager(q, n), replayed(q, n);
    setenv("KILN_GRAPH_REPLAY", "list", 1);
    kiln::graph g = kiln::capture(q, [&] { replayed.step(); });
    setenv("KILN_GRAPH_REPLAY", "natives", 1);
    EXPECT_THROW(kiln::capture(q, [&] { replayed.step(); }), kiln::invalid_argument_error);
    unsetenv("KILN_GRAPH_REPLAY");
    EXPECT_FALSE(g.replays_natively());
    for (int i = 0; i < 2; ++i) {
        eager.step();
        g.launch().wait();
    }
    expect_same_bits(replayed.x.read(), eager.x.read());
    expect_same_bits(replayed.sums.read(), eager.sums.read());
}

// Copies, host writes and fills of 1-, 4- and 16-byte patterns (a CUDA graph's memcpy, memset
// and fill-kernel nodes; a command buffer's copy and fill commands) between kernels.
TEST_P(graphs, replays_copies_and_fills_bit_for_bit) {
    const std::size_t n = 777;
    struct state {
        state(const kiln::queue& q, std::size_t n)
            : x(q, ramp(n, 0.5f)),
              copy(q, n),
              y(q, std::vector<float>(n, 0.0f)),
              bytes(q, std::vector<std::uint8_t>(4 * n, 0)),
              wide(q, n) {}
        void step(const kiln::queue& q, const std::vector<float>& host) {
            y.fill(q, -1.5f, 3, 500);
            bytes.fill(q, std::uint8_t{7}, 1, 1001);
            wide.fill(q, std::array<float, 4>{1.0f, -0.0f, 2.5f, 3.0f});
            copy = x;
            x.write(host);
            x = x * 0.5f + copy;
        }
        kiln::vector<float> x, copy;
        kiln::buffer<float> y;
        kiln::buffer<std::uint8_t> bytes;
        kiln::buffer<std::array<float, 4>> wide;
    };
    const std::vector<float> host = ramp(n, -0.25f);
    state eager(q, n), replayed(q, n);
    const kiln::graph g = kiln::capture(q, [&] { replayed.step(q, host); });
    for (int i = 0; i < 2; ++i) {
        eager.step(q, host);
        g.launch().wait();
    }
    expect_same_bits(replayed.x.read(), eager.x.read());
    expect_same_bits(replayed.copy.read(), eager.copy.read());
    expect_same_bits(replayed.y.read(q), eager.y.read(q));
    EXPECT_EQ(replayed.bytes.read(q), eager.bytes.read(q));
    EXPECT_EQ(replayed.wide.read(q), eager.wide.read(q));
}

// Launches queued back to back, none waited for: a command buffer enqueued while still pending.
TEST_P(graphs, launches_queue_up_without_waiting) {
    kiln::vector<float> y(q, std::vector<float>(4096, 0.0f));
    const kiln::graph g = kiln::capture(q, [&] {
        y = y + 1.0f;
        y = y * 1.0f;
    });
    for (int i = 0; i < 50; ++i) g.launch();
    q.finish();
    EXPECT_EQ(y.read(), std::vector<float>(4096, 50.0f));
}

TEST_P(graphs, the_block_itself_runs_nothing) {
    kiln::vector<float> y(q, std::vector<float>(10, 1.0f));
    const kiln::graph g = kiln::capture(q, [&] { y = y + 1.0f; });
    EXPECT_EQ(y.read(), std::vector<float>(10, 1.0f));
    g.launch();
    g.launch().wait();
    EXPECT_EQ(y.read(), std::vector<float>(10, 3.0f));
}

TEST_P(graphs, reads_graph_values_set_before_each_launch) {
    kiln::vector<float> x(q, ramp(300, 1.0f)), y(q, 300);
    kiln::graph_value<float> a(q, 2.0f);
    const kiln::graph g = kiln::capture(q, [&] { y = a * x + 1.0f; });
    kiln::vector<float> expected(q, 300);
    for (float value : {2.0f, -3.5f, 0.0f}) {
        a.set(value);
        g.launch().wait();
        expected = value * x + 1.0f;
        expect_same_bits(y.read(), expected.read());
    }
}

// The value in every loop shape: the GPUs' wide lanes and the CPUs' vector chunks, in double.
TEST_P(graphs, reads_graph_values_in_every_loop_shape) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    for (const auto loop : {kiln::detail::loop_style::strided, kiln::detail::loop_style::chunked}) {
        const kiln::detail::scoped_launch_policy shape(
            kiln::detail::launch_policy{loop, 64, 2, 64});
        std::vector<double> host(1003);
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = 0.5 * double(i) - 7.0;
        kiln::vector<double> x(q, host), y(q, host.size()), expected(q, host.size());
        kiln::graph_value<double> a(q, 1.0);
        const kiln::graph g = kiln::capture(q, [&] { y = a * x + a; });
        a.set(-2.25);
        g.launch().wait();
        expected = -2.25 * x + -2.25;
        EXPECT_EQ(y.read(), expected.read());
    }
}

TEST_P(graphs, host_writes_inside_the_block_replay_their_bytes_as_they_were) {
    kiln::vector<int> v(q, 4);
    std::vector<int> host{1, 2, 3, 4};
    const kiln::graph g = kiln::capture(q, [&] {
        v.write(host);
        v = v * 10;
    });
    host = {9, 9, 9, 9};
    g.launch().wait();
    EXPECT_EQ(v.read(), (std::vector<int>{10, 20, 30, 40}));
}

TEST_P(graphs, replays_on_another_queue_of_the_device) {
    kiln::vector<float> x(q, ramp(200, 1.0f)), y(q, 200);
    const kiln::graph g = kiln::capture(q, [&] { y = x * x; });
    kiln::vector<float> expected(q, 200);
    expected = x * x;
    const kiln::queue other(device());
    g.launch(other).wait();
    expect_same_bits(y.read(), expected.read());
    const kiln::queue unordered(device(), kiln::out_of_order);
    y = 0.0f * x;
    q.finish();  // work on two queues is ordered by the host, as without graphs
    g.launch(unordered).wait();
    expect_same_bits(y.read(), expected.read());
}

// Launches share the graph's temporaries (the scan's look-back state): one on another queue
// waits for the one before it, as CUDA orders the launches of a CUDA graph.
TEST_P(graphs, launches_on_two_queues_run_one_after_another) {
    const std::size_t n = 100000;
    kiln::vector<float> y(q, std::vector<float>(n, 0.0f)), sums(q, n);
    const kiln::graph g = kiln::capture(q, [&] {
        y = y + 1.0f;
        kiln::inclusive_scan(y, sums);
    });
    const kiln::queue other(device()), unordered(device(), kiln::out_of_order);
    g.launch();
    g.launch(other);
    g.launch(unordered);
    g.launch().wait();
    EXPECT_EQ(y.read(), std::vector<float>(n, 4.0f));
    kiln::vector<float> expected(q, n);
    kiln::inclusive_scan(y, expected);
    expect_same_bits(sums.read(), expected.read());
}

TEST_P(graphs, temporaries_of_captured_algorithms_stay_out_of_the_pool) {
    kiln::detail::temporary_pool::trim(device());
    kiln::vector<float> x(q, ramp(5000, 1.0f)), sums(q, 5000);
    const kiln::graph g = kiln::capture(q, [&] { kiln::inclusive_scan(x, sums); });
    // The scan's scratch is the graph's: no later algorithm may be handed it.
    EXPECT_EQ(kiln::detail::temporary_pool::idle_bytes(device()), 0u);
    kiln::vector<float> eager(q, 5000), other(q, 5000);
    kiln::inclusive_scan(x, eager);
    g.launch();
    kiln::inclusive_scan(x * 2.0f, other);
    g.launch().wait();
    expect_same_bits(sums.read(), eager.read());
}

TEST_P(graphs, refuses_host_reads_and_waits_inside_the_block) {
    kiln::vector<float> x(q, ramp(64, 1.0f)), y(q, 64);
    const auto message_of = [&](auto&& block) {
        try {
            kiln::capture(q, block);
        } catch (const kiln::invalid_argument_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message_of([&] { (void)x.read(); }).find("inside kiln::capture"), std::string::npos);
    EXPECT_NE(message_of([&] { (void)kiln::sum(x); }).find("kiln::buffer::read"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  kiln::vector<int> keys(q, std::vector<int>{1, 1, 2});
                  (void)kiln::unique(keys);
              }).find("inside kiln::capture"),
              std::string::npos);
    EXPECT_NE(message_of([&] { q.finish(); }).find("kiln::queue::finish"), std::string::npos);
    EXPECT_NE(message_of([&] { q.marker().wait(); }).find("runs only when the graph is launched"),
              std::string::npos);
    EXPECT_NE(message_of([&] { kiln::capture(q, [] {}); }).find("do not nest"), std::string::npos);
    // The queue still works, and nothing stays recorded.
    y = x + 1.0f;
    EXPECT_EQ(y.read()[1], x.read()[1] + 1.0f);
}

TEST_P(graphs, refuses_a_launch_after_a_vector_it_uses_is_destroyed_or_resized) {
    auto x = std::make_unique<kiln::vector<float>>(q, ramp(32, 1.0f));
    kiln::vector<float> y(q, 32);
    const kiln::graph g = kiln::capture(q, [&] { y = *x + 1.0f; });
    g.launch().wait();
    x.reset();
    q.finish();
    // A new vector may take the freed memory's place: the graph must not write into it.
    kiln::vector<float> newcomer(q, std::vector<float>(32, 5.0f));
    try {
        g.launch();
        ADD_FAILURE() << "launched after a vector it uses was destroyed";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("destroyed or resized"), std::string::npos);
    }
    EXPECT_EQ(newcomer.read(), std::vector<float>(32, 5.0f));

    kiln::vector<float> z(q, ramp(32, 1.0f));
    const kiln::graph h = kiln::capture(q, [&] { z = z * 2.0f; });
    z.resize(64);
    q.finish();
    EXPECT_THROW(h.launch(), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::graph().launch(), kiln::invalid_argument_error);
    // The queue and new captures still work.
    const kiln::graph again = kiln::capture(q, [&] { z = z * 2.0f; });
    again.launch().wait();
    EXPECT_EQ(z.read()[1], 2.0f * ramp(32, 1.0f)[1]);
}

TEST_P(graphs, refuses_queues_of_another_device) {
    if (kiln::devices().size() < 2) GTEST_SKIP() << "needs two devices";
    const kiln::device other_device = kiln::devices()[kiln::devices()[0] == device() ? 1 : 0];
    const kiln::queue elsewhere(other_device);
    kiln::vector<float> y(q, 16);
    const kiln::graph g = kiln::capture(q, [&] { y = y + 1.0f; });
    EXPECT_THROW(g.launch(elsewhere), kiln::invalid_argument_error);
    kiln::vector<float> there(elsewhere, 16);
    EXPECT_THROW(kiln::capture(q, [&] { there = there + 1.0f; }), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(graphs);

}  // namespace
