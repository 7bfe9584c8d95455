// SPDX-License-Identifier: Apache-2.0
// kiln::vector itself: construction, host transfers, element access, resize, copies and moves.
#include <complex>
#include <kiln/vector.hpp>
#include <list>
#include <span>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

class vector_test : public kiln::test::device_queue_test {};

TEST_P(vector_test, is_built_from_host_ranges_of_every_kind) {
    const std::vector<float> host = {1, 2, 3, 4};
    const std::list<int> integers = {1, 2, 3, 4};
    kiln::vector<float> from_vector(q, host);
    kiln::vector<float> from_span(q, std::span<const float>(host));
    kiln::vector<float> from_list(q, {1.0f, 2.0f, 3.0f, 4.0f});
    kiln::vector<float> from_iterators(q, integers.begin(), integers.end());
    EXPECT_EQ(from_vector.read(), host);
    EXPECT_EQ(from_span.read(), host);
    EXPECT_EQ(from_list.read(), host);
    EXPECT_EQ(from_iterators.read(), host);
}

TEST_P(vector_test, has_the_size_it_was_given) {
    for (std::size_t n : kiln::test::edge_sizes()) {
        kiln::vector<float> v(q, n);
        EXPECT_EQ(v.size(), n);
        EXPECT_EQ(v.empty(), n == 0);
        EXPECT_EQ(v.read().size(), n);
    }
}

TEST_P(vector_test, round_trips_every_element_type) {
    auto round_trip = [&]<class T>(std::vector<T> host) {
        kiln::vector<T> v(q, host);
        EXPECT_EQ(v.read(), host);
    };
    round_trip(std::vector<float>{1.5f, -2.0f, 3.25f});
    round_trip(std::vector<std::int32_t>{-1, 0, 2147483647});
    round_trip(std::vector<std::uint32_t>{0, 1, 4294967295u});
    round_trip(std::vector<std::int64_t>{-1, 0, 9223372036854775807ll});
    round_trip(std::vector<std::uint64_t>{0, 1, 18446744073709551615ull});
    round_trip(std::vector<std::complex<float>>{{1, 2}, {-3, 4}});
    if (has_double()) {
        round_trip(std::vector<double>{1e300, -1e-300, 0.1});
        round_trip(std::vector<std::complex<double>>{{1e300, -1}, {0.5, 0.25}});
    }
}

TEST_P(vector_test, async_copies_complete_with_their_events) {
    const auto host = kiln::test::random_values<float>(10007, -1, 1);
    kiln::vector<float> v(q, host.size());
    auto written = v.write_async(host);
    std::vector<float> back(host.size());
    auto read = v.read_async(back, written);
    kiln::wait_for_all(read);
    EXPECT_EQ(back, host);
}

TEST_P(vector_test, reads_and_writes_single_elements) {
    kiln::vector<float> v(q, {1.0f, 2.0f, 3.0f});
    v[1] = 20.0f;
    EXPECT_EQ(static_cast<float>(v[1]), 20.0f);
    const kiln::vector<float>& view = v;
    EXPECT_EQ(view[2], 3.0f);
    v[0] = v[2];
    EXPECT_EQ(v.read(), (std::vector<float>{3, 20, 3}));
    EXPECT_THROW(static_cast<void>(view[3]), kiln::invalid_argument_error);
    EXPECT_THROW(v[7] = 1.0f, kiln::invalid_argument_error);
}

TEST_P(vector_test, resize_keeps_the_leading_elements) {
    kiln::vector<std::int32_t> v(q, {1, 2, 3, 4});
    v.resize(6);
    ASSERT_EQ(v.size(), 6u);
    const auto grown = v.read();
    EXPECT_EQ(std::vector<std::int32_t>(grown.begin(), grown.begin() + 4),
              (std::vector<std::int32_t>{1, 2, 3, 4}));
    v.resize(2);
    EXPECT_EQ(v.read(), (std::vector<std::int32_t>{1, 2}));
    v.resize(0);
    EXPECT_TRUE(v.empty());
    kiln::vector<float> nowhere;
    EXPECT_THROW(nowhere.resize(3), kiln::invalid_argument_error);
}

TEST_P(vector_test, moves_leave_the_source_empty_and_swap_exchanges) {
    kiln::vector<float> a(q, {1.0f, 2.0f});
    kiln::vector<float> b(std::move(a));
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(b.read(), (std::vector<float>{1, 2}));
    kiln::vector<float> c(q, {5.0f});
    swap(b, c);
    EXPECT_EQ(b.read(), (std::vector<float>{5}));
    EXPECT_EQ(c.read(), (std::vector<float>{1, 2}));
    c = std::move(b);
    EXPECT_EQ(c.read(), (std::vector<float>{5}));
}

TEST_P(vector_test, copies_are_deep) {
    kiln::vector<float> a(q, {1.0f, 2.0f, 3.0f});
    kiln::vector<float> copy(a);
    a = 0.0f;
    EXPECT_EQ(copy.read(), (std::vector<float>{1, 2, 3}));
    kiln::vector<float> same_size(q, 3), other_size(q, 5), empty;
    same_size = copy;
    other_size = copy;
    empty = copy;
    copy = 7.0f;
    for (const auto* v : {&same_size, &other_size, &empty})
        EXPECT_EQ(v->read(), (std::vector<float>{1, 2, 3}));
}

TEST_P(vector_test, assigning_a_scalar_fills) {
    kiln::vector<std::uint64_t> v(q, 1000);
    v = 42;
    EXPECT_EQ(v.read(), std::vector<std::uint64_t>(1000, 42));
}

TEST_P(vector_test, host_ranges_of_the_wrong_size_are_rejected) {
    kiln::vector<float> v(q, 4);
    std::vector<float> three(3);
    EXPECT_THROW(v.write(three), kiln::invalid_argument_error);
    EXPECT_THROW(v.read(three), kiln::invalid_argument_error);
    EXPECT_THROW(static_cast<void>(v.read_async(three)), kiln::invalid_argument_error);
}

TEST_P(vector_test, a_default_constructed_vector_has_no_device) {
    kiln::vector<float> v;
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(v.part_count(), 0u);
    EXPECT_TRUE(v.read().empty());
    EXPECT_THROW(static_cast<void>(v.queue()), kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(vector_test);

}  // namespace
