// SPDX-License-Identifier: Apache-2.0
// Queues and events: in-order, out-of-order and profiled queues, finish(), markers, waiting,
// status, wait lists across queues, and profiling times.
#include <gtest/gtest.h>

#include <kiln/kiln.hpp>
#include <vector>

#include "support/device_param.hpp"

namespace {

class queues : public kiln::test::device_test {};

// `busy` keeps the device occupied long enough that a command which ignored its wait list
// would run before the data it needs is written; `plus_one` reads what `busy` wrote.
const char* source = R"(
kernel void busy(global uint* out, uint rounds) {
    size_t i = get_global_id(0);
    uint x = (uint)i;
    for (uint r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
    out[i] = (x & 1u) + 2u;  // 2 or 3: never the initial 0
}
kernel void plus_one(global const uint* in, global uint* out) {
    size_t i = get_global_id(0);
    out[i] = in[i] + 1u;
}
)";

constexpr unsigned busy_rounds = 20000;
constexpr std::size_t items = 1 << 13;

TEST_P(queues, options_are_kept) {
    kiln::queue plain(device());
    EXPECT_FALSE(plain.options().out_of_order);
    EXPECT_FALSE(plain.options().profiling);
    EXPECT_EQ(plain.device(), device());
    kiln::queue timed(device(), kiln::profiled);
    EXPECT_TRUE(timed.options().profiling);
    kiln::queue unordered(device(), kiln::out_of_order);
    EXPECT_TRUE(unordered.options().out_of_order);
    kiln::queue both(device(), {.out_of_order = true, .profiling = true});
    EXPECT_TRUE(both.options().out_of_order && both.options().profiling);
}

TEST_P(queues, finish_waits_for_everything_enqueued) {
    kiln::queue q(device());
    kiln::buffer<unsigned> out(q, std::vector<unsigned>(items, 0));
    auto busy = kiln::program(device(), source).kernel("busy");
    std::vector<kiln::event> launched;
    for (int i = 0; i < 3; ++i) launched.push_back(busy(out, busy_rounds).launch(q, {items}));
    q.flush();
    q.finish();
    for (const auto& e : launched) EXPECT_EQ(e.status(), kiln::event_status::complete);
    // Read without any wait list: finish() alone must have made the results visible.
    std::vector<unsigned> result(items);
    out.read_async(q, 0, result).wait();
    for (unsigned v : result) ASSERT_TRUE(v == 2 || v == 3) << v;
}

TEST_P(queues, a_read_on_another_queue_waits_for_the_events_it_is_given) {
    kiln::queue producer(device()), consumer(device());
    kiln::buffer<unsigned> data(producer, std::vector<unsigned>(items, 0));
    auto busy = kiln::program(device(), source).kernel("busy");
    auto produced = busy(data, busy_rounds).launch(producer, {items});
    producer.flush();
    auto result = data.read(consumer, produced);
    for (unsigned v : result)
        ASSERT_TRUE(v == 2 || v == 3) << "read before the kernel finished: " << v;

    // A buffer the kernel never touches: only the wait list can hold its read back (drivers
    // such as PoCL order commands on the same buffer by themselves).
    kiln::buffer<int> unrelated(consumer, {1, 2, 3});
    auto again = busy(data, busy_rounds).launch(producer, {items});
    producer.flush();
    EXPECT_EQ(unrelated.read(consumer, again), (std::vector<int>{1, 2, 3}));
    EXPECT_TRUE(again.done()) << "the blocking read returned before the event it had to wait for";
    std::vector<int> into(3);
    auto third = busy(data, busy_rounds).launch(producer, {items});
    producer.flush();
    unrelated.read_async(consumer, 0, into, third).wait();
    EXPECT_TRUE(third.done()) << "the async read completed before the event it had to wait for";
}

TEST_P(queues, out_of_order_queues_follow_wait_lists) {
    kiln::queue q(device(), kiln::out_of_order);
    kiln::buffer<unsigned> first(q, std::vector<unsigned>(items, 0)), second(q, items);
    kiln::program prog(device(), source);
    auto produced = prog.kernel("busy")(first, busy_rounds).launch(q, {items});
    auto consumed = prog.kernel("plus_one")(first, second).launch(q, {items}, {}, {}, produced);
    auto result = second.read(q, consumed);
    for (unsigned v : result) ASSERT_TRUE(v == 3 || v == 4) << v;

    kiln::buffer<int> unrelated(q, 4);
    auto slow = prog.kernel("busy")(first, busy_rounds).launch(q, {items});
    unrelated.fill(q, 5, slow).wait();
    EXPECT_TRUE(slow.done()) << "a fill ran before the event in its wait list";
    EXPECT_EQ(unrelated.read(q), std::vector<int>(4, 5));
}

TEST_P(queues, markers_complete_after_what_they_follow) {
    kiln::queue q(device(), kiln::out_of_order);
    kiln::buffer<unsigned> a(q, std::vector<unsigned>(items, 0)),
        b(q, std::vector<unsigned>(items, 0));
    auto busy = kiln::program(device(), source).kernel("busy");
    auto ea = busy(a, busy_rounds).launch(q, {items});
    auto eb = busy(b, busy_rounds).launch(q, {items});
    auto both = q.marker({ea, eb});
    both.wait();
    EXPECT_TRUE(ea.done());
    EXPECT_TRUE(eb.done());
    auto everything = q.marker();
    everything.wait();
    EXPECT_TRUE(everything.done());
}

TEST_P(queues, events_report_status_and_wait_for_all) {
    kiln::queue q(device());
    kiln::event nothing;
    EXPECT_FALSE(nothing);
    EXPECT_TRUE(nothing.done()) << "an empty event counts as complete";
    nothing.wait();

    kiln::buffer<unsigned> out(q, items);
    auto busy = kiln::program(device(), source).kernel("busy");
    std::vector<kiln::event> events;
    for (int i = 0; i < 4; ++i) events.push_back(busy(out, 100u).launch(q, {items}));
    events.push_back(nothing);
    for (const auto& e : events) {
        auto s = e.status();
        EXPECT_TRUE(s == kiln::event_status::queued || s == kiln::event_status::submitted ||
                    s == kiln::event_status::running || s == kiln::event_status::complete);
    }
    kiln::wait_for_all(events);
    for (const auto& e : events) EXPECT_EQ(e.status(), kiln::event_status::complete);
    kiln::wait_for_all({events[0], events[1]});
    kiln::wait_for_all(std::vector<kiln::event>{});
}

TEST_P(queues, profiling_times_are_ordered_and_give_the_duration) {
    kiln::queue q(device(), kiln::profiled);
    kiln::buffer<unsigned> out(q, items);
    auto busy = kiln::program(device(), source).kernel("busy");
    auto done = busy(out, busy_rounds).launch(q, {items});
    auto t = done.times();  // waits first
    EXPECT_TRUE(done.done());
    EXPECT_GT(t.queued_ns, 0u);
    EXPECT_LE(t.queued_ns, t.submitted_ns);
    EXPECT_LE(t.submitted_ns, t.started_ns);
    EXPECT_LE(t.started_ns, t.ended_ns);
    EXPECT_EQ(done.duration().count(), static_cast<long long>(t.ended_ns - t.started_ns));
    EXPECT_GT(done.duration().count(), 0)
        << busy_rounds << " rounds over " << items << " items took no time";

    // A copy's times are ordered after the kernel it waited for on this in-order queue.
    kiln::buffer<unsigned> copy(q, items);
    auto copied = out.copy_to(q, copy);
    auto c = copied.times();
    EXPECT_GE(c.started_ns, t.ended_ns);
    EXPECT_LE(c.started_ns, c.ended_ns);
}

TEST_P(queues, profiling_times_need_a_profiling_queue) {
    kiln::queue q(device());
    kiln::buffer<int> b(q, 16);
    auto filled = b.fill(q, 1);
    EXPECT_THROW((void)filled.times(), kiln::invalid_argument_error);
    EXPECT_THROW((void)filled.duration(), kiln::invalid_argument_error);
    EXPECT_THROW((void)kiln::event().times(), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(queues);

}  // namespace
