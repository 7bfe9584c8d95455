// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's pinned staging of non-blocking writes from pageable memory, forced on CPU
// devices so that CI's PoCL runs it: edge sizes, chunk reuse, the caller's memory reusable at
// once, waits, out-of-order queues, threads, and which writes are staged at all.
#define CL_TARGET_OPENCL_VERSION 300
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <kiln/interop/opencl.hpp>
#include <kiln/kiln.hpp>
#include <thread>
#include <vector>

#include "backend/opencl/opencl_objects.hpp"
#include "support/device_param.hpp"

namespace {

namespace opencl = kiln::detail::opencl;
constexpr std::size_t chunk = opencl::staging_pool::chunk_bytes;
constexpr std::uint8_t untouched = 0xee;

/// Bytes whose period is no power of two, so that a piece landing at another chunk's place, or
/// a chunk's stale contents, show.
std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed) {
    std::vector<std::uint8_t> host(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
        host[i] = static_cast<std::uint8_t>((i * 2654435761u + seed) >> 13);
    return host;
}

/// Whether `device_bytes` holds `written` at `offset` and `untouched` everywhere else.
::testing::AssertionResult holds(const std::vector<std::uint8_t>& device_bytes, std::size_t offset,
                                 const std::vector<std::uint8_t>& written) {
    for (std::size_t i = 0; i < device_bytes.size(); ++i) {
        const bool inside = i >= offset && i - offset < written.size();
        const std::uint8_t expected = inside ? written[i - offset] : untouched;
        if (device_bytes[i] != expected)
            return ::testing::AssertionFailure()
                   << "byte " << i << " is " << int{device_bytes[i]} << ", not " << int{expected};
    }
    return ::testing::AssertionSuccess();
}

/// An OpenCL user event in the device's context, set complete by open(): a gate that the writes
/// under test wait for, so that nothing has been transferred while it is closed.
class gate {
  public:
    explicit gate(const kiln::queue& q) {
        cl_int status = CL_SUCCESS;
        raw_ = clCreateUserEvent(kiln::interop::opencl::native(q.device()).context, &status);
        EXPECT_EQ(status, CL_SUCCESS);
        event_ = kiln::interop::opencl::wrap_event(q, raw_);
    }
    ~gate() {
        open();
        clReleaseEvent(raw_);
    }
    gate(const gate&) = delete;
    gate& operator=(const gate&) = delete;
    const kiln::event& event() const { return event_; }
    void open() {
        if (opened_) return;
        EXPECT_EQ(clSetUserEventStatus(raw_, CL_COMPLETE), CL_SUCCESS);
        opened_ = true;
    }

  private:
    cl_event raw_ = nullptr;
    kiln::event event_;
    bool opened_ = false;
};

cl_command_type command_type(const kiln::event& e) {
    cl_command_type type = 0;
    EXPECT_EQ(clGetEventInfo(kiln::interop::opencl::native(e), CL_EVENT_COMMAND_TYPE, sizeof type,
                             &type, nullptr),
              CL_SUCCESS);
    return type;
}

class opencl_staging : public kiln::test::device_queue_test {
  protected:
    void SetUp() override {
        if (device().backend() != kiln::backend_kind::opencl)
            GTEST_SKIP() << "the OpenCL backend's staging";
        opencl::stage_writes_on_cpu_devices(true);
    }
    void TearDown() override { opencl::stage_writes_on_cpu_devices(false); }

    kiln::buffer<std::uint8_t> untouched_buffer(const kiln::queue& on, std::size_t bytes) {
        kiln::buffer<std::uint8_t> b(on, bytes);
        b.fill(on, untouched).wait();
        return b;
    }
    opencl::staging_pool& pool() {
        return dynamic_cast<opencl::opencl_device&>(device().impl()).staging();
    }
};

TEST_P(opencl_staging, writes_every_edge_size_at_an_odd_offset) {
    constexpr std::size_t offset = 3;
    for (std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, chunk - 1, chunk, chunk + 1, 3 * chunk + 5}) {
        auto b = untouched_buffer(q, offset + bytes + 2);
        const auto host = pattern(bytes, 7);
        const auto staged_before = opencl::staged_chunk_count();
        b.write_async(q, offset, std::span<const std::uint8_t>(host)).wait();
        EXPECT_EQ(opencl::staged_chunk_count() - staged_before, (bytes + chunk - 1) / chunk)
            << bytes << " bytes";
        EXPECT_TRUE(holds(b.read(q), offset, host)) << bytes << " bytes";
    }
}

TEST_P(opencl_staging, the_callers_memory_is_free_to_reuse_when_the_write_returns) {
    auto b = untouched_buffer(q, 2 * chunk + 1);
    auto host = pattern(b.size(), 11);
    const auto written = host;
    gate closed(q);
    auto done = b.write_async(q, 0, std::span<const std::uint8_t>(host), {closed.event()});
    // Nothing has been transferred yet: the staged chunks hold the bytes the buffer gets.
    std::fill(host.begin(), host.end(), std::uint8_t{0});
    EXPECT_TRUE(holds(b.read(kiln::queue(device())), 0, {})) << "the write ran before its wait";
    closed.open();
    done.wait();
    EXPECT_TRUE(holds(b.read(q), 0, written));
}

TEST_P(opencl_staging, writes_of_more_than_the_pool_reuse_its_chunks) {
    const std::size_t bytes = (opencl::staging_pool::max_chunks + 4) * chunk + 3;
    auto b = untouched_buffer(q, bytes + 1);
    const auto host = pattern(bytes, 13);
    gate closed(q);
    const auto start = std::chrono::steady_clock::now();
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        closed.open();
    });
    auto done = b.write_async(q, 1, std::span<const std::uint8_t>(host), {closed.event()});
    const auto returned = std::chrono::steady_clock::now();
    opener.join();
    done.wait();
    // Every chunk was in flight behind the gate: the seventeenth piece waited on the host for the
    // first chunk's transfer, which the gate held back.
    EXPECT_EQ(pool().size(), opencl::staging_pool::max_chunks);
    EXPECT_GE(returned - start, std::chrono::milliseconds(300));
    EXPECT_TRUE(holds(b.read(q), 1, host));
}

TEST_P(opencl_staging, out_of_order_queues_wait_for_every_piece) {
    const kiln::queue unordered(device(), kiln::out_of_order);
    auto b = untouched_buffer(unordered, 5 * chunk + 9);
    const auto host = pattern(b.size() - 2, 17);
    gate closed(unordered);
    auto done = b.write_async(unordered, 2, std::span<const std::uint8_t>(host), {closed.event()});
    // Every piece waits for the gate, not only the first: an out-of-order queue orders no other.
    EXPECT_TRUE(holds(b.read(kiln::queue(device())), 0, {})) << "a piece ran before its wait";
    // The event must follow every piece; on PoCL the last piece's event alone happens to as well,
    // so what it is is checked: not a piece's write but a marker waiting for all of them (PoCL
    // reports CL_COMMAND_MARKER, NVIDIA's OpenCL a command type of its own, 0x4003).
    EXPECT_NE(command_type(done), cl_command_type{CL_COMMAND_WRITE_BUFFER});
    closed.open();
    done.wait();
    EXPECT_TRUE(holds(b.read(kiln::queue(device())), 2, host));
}

TEST_P(opencl_staging, two_threads_write_two_buffers_at_once) {
    auto write_and_check = [&](std::uint32_t seed) {
        const kiln::queue mine(device());
        for (int round = 0; round < 3; ++round) {
            const auto host = pattern(10 * chunk + 7, seed + round);
            auto b = untouched_buffer(mine, host.size() + 1);
            b.write_async(mine, 1, std::span<const std::uint8_t>(host)).wait();
            EXPECT_TRUE(holds(b.read(mine), 1, host)) << "seed " << seed << ", round " << round;
        }
    };
    std::thread other(write_and_check, 100);
    write_and_check(200);
    other.join();
}

TEST_P(opencl_staging, stages_only_non_blocking_writes_of_pageable_memory) {
    auto b = untouched_buffer(q, chunk + 1);
    const auto host = pattern(b.size(), 19);
    kiln::host_vector<std::uint8_t> pinned(host.begin(), host.end(),
                                           kiln::pinned_allocator<std::uint8_t>(q));
    auto staged_by = [&](auto write) {
        const auto before = opencl::staged_chunk_count();
        write();
        EXPECT_TRUE(holds(b.read(q), 0, host));
        return opencl::staged_chunk_count() - before;
    };
    EXPECT_EQ(staged_by([&] { b.write_async(q, 0, std::span<const std::uint8_t>(host)).wait(); }),
              2u);
    EXPECT_EQ(staged_by([&] { b.write(q, host); }), 0u) << "a blocking write";
    EXPECT_EQ(staged_by([&] { b.write_async(q, 0, std::span<const std::uint8_t>(pinned)).wait(); }),
              0u)
        << "kiln's pinned memory";
    // Without the switch a CPU device's buffers take the caller's memory directly.
    opencl::stage_writes_on_cpu_devices(false);
    const bool cpu = device().properties().type == kiln::device_type::cpu;
    EXPECT_EQ(staged_by([&] { b.write_async(q, 0, std::span<const std::uint8_t>(host)).wait(); }),
              cpu ? 0u : 2u);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(opencl_staging);

}  // namespace
