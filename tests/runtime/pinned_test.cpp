// SPDX-License-Identifier: Apache-2.0
// Page-locked host memory (kiln::host_vector) on every device: round trips, edge sizes, offsets,
// mixing with ordinary memory, and allocations outliving everything else of their device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <numeric>
#include <vector>

#include "backend/backend.hpp"
#include "support/device_param.hpp"

namespace {

class pinned : public kiln::test::device_queue_test {
  protected:
    template <class T>
    kiln::host_vector<T> make(std::size_t n) {
        kiln::host_vector<T> v(n, T{}, kiln::pinned_allocator<T>(q));
        std::iota(v.begin(), v.end(), T{1});
        return v;
    }
};

TEST_P(pinned, round_trips_of_every_small_and_odd_size) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1001},
                          std::size_t{(1 << 20) + 7}}) {
        auto host = make<std::uint32_t>(n);
        kiln::buffer<std::uint32_t> b(q, n);
        b.write(q, host);
        kiln::host_vector<std::uint32_t> back(n, 0u, kiln::pinned_allocator<std::uint32_t>(q));
        b.read(q, back);
        EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin())) << n;
        std::fill(back.begin(), back.end(), 0u);
        b.read_async(q, 0, back).wait();
        EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin())) << n;
    }
}

TEST_P(pinned, copies_at_offsets_inside_a_pinned_allocation) {
    auto host = make<std::uint16_t>(4099);
    kiln::buffer<std::uint16_t> b(q, 5000);
    b.fill(q, std::uint16_t{0}).wait();
    // Unaligned ends on both sides: from the middle of the pinned vector to an odd offset.
    b.write_async(q, 17, std::span<const std::uint16_t>(host).subspan(3, 4001)).wait();
    kiln::host_vector<std::uint16_t> back(4001, 0, kiln::pinned_allocator<std::uint16_t>(q));
    b.read_async(q, 17, std::span<std::uint16_t>(back).subspan(1, 3999)).wait();
    EXPECT_EQ(back[0], 0);
    EXPECT_TRUE(std::equal(back.begin() + 1, back.begin() + 4000, host.begin() + 3));
    EXPECT_EQ(back[4000], 0);
    EXPECT_EQ(b.read_element(q, 16), 0);
    EXPECT_EQ(b.read_element(q, 17 + 4001), 0);
}

TEST_P(pinned, mixes_with_ordinary_memory) {
    const std::size_t n =
        3 * 1024 * 1024 + 5;  // more than one of the CUDA backend's staging chunks
    std::vector<float> ordinary(n);
    std::iota(ordinary.begin(), ordinary.end(), 0.5f);
    kiln::buffer<float> b(q, n), c(q, n);
    auto written = b.write_async(q, 0, ordinary);
    kiln::host_vector<float> pinned_copy(n, 0.0f, kiln::pinned_allocator<float>(q));
    auto read = b.read_async(q, 0, pinned_copy, written);
    read.wait();
    EXPECT_TRUE(std::equal(pinned_copy.begin(), pinned_copy.end(), ordinary.begin()));
    c.write(q, pinned_copy);
    std::vector<float> back(n, 0.0f);
    c.read_async(q, 0, back).wait();
    EXPECT_EQ(back, ordinary);
    // A range that starts inside a pinned vector but runs past it is not pinned memory.
    EXPECT_TRUE(kiln::detail::is_kiln_pinned(pinned_copy.data(), n * sizeof(float)));
    EXPECT_FALSE(kiln::detail::is_kiln_pinned(pinned_copy.data() + 1, n * sizeof(float)));
    EXPECT_FALSE(kiln::detail::is_kiln_pinned(ordinary.data(), 4));
}

TEST_P(pinned, kiln_vectors_read_and_write_host_vectors) {
    kiln::vector<int> v(q, std::vector<int>(1000, 3));
    kiln::host_vector<int> host(1000, 0, kiln::pinned_allocator<int>(q));
    v.read(host);
    EXPECT_EQ(std::count(host.begin(), host.end(), 3), 1000);
    std::iota(host.begin(), host.end(), 0);
    v.write(host);
    EXPECT_EQ(v.read()[999], 999);
}

TEST_P(pinned, allocations_outlive_their_queue_and_move_between_vectors) {
    kiln::host_vector<double> survivor;
    {
        kiln::queue own(device());
        kiln::host_vector<double> made(100, 2.5, kiln::pinned_allocator<double>(own));
        survivor = std::move(made);
    }
    // The queue is gone; the memory is still pinned, usable with a new queue, and freed later.
    ASSERT_EQ(survivor.size(), 100u);
    EXPECT_TRUE(kiln::detail::is_kiln_pinned(survivor.data(), 800));
    kiln::buffer<double> b(q, survivor);
    survivor.resize(100000, 1.0);  // reallocates through the same allocator
    EXPECT_TRUE(kiln::detail::is_kiln_pinned(survivor.data(), 800000));
    b.read(q, 0, std::span<double>(survivor).first(100));
    EXPECT_EQ(survivor[99], 2.5);
    EXPECT_EQ(survivor[100], 1.0);
    const double* old = survivor.data();
    kiln::host_vector<double>().swap(survivor);  // frees the memory
    EXPECT_FALSE(kiln::detail::is_kiln_pinned(old, 8));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(pinned);

}  // namespace
