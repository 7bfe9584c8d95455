// SPDX-License-Identifier: Apache-2.0
// Buffers: access modes, shapes, single values, blocking and async transfers, sub-ranges and
// their bounds, size mismatches, allocation failure, empty and huge buffers, inf and NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/detail/tile_map.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "support/device_param.hpp"

namespace {

class buffers : public kiln::test::device_test {};

std::vector<int> iota(std::size_t n, int first = 0) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), first);
    return v;
}

// A 12-byte element: not a power of two, so fills take the host-expansion path.
struct rgb {
    float r, g, b;
    friend bool operator==(const rgb&, const rgb&) = default;
};

static_assert(std::is_nothrow_destructible_v<kiln::buffer<float>>);
static_assert(std::is_nothrow_move_constructible_v<kiln::buffer<float, kiln::in>>);
static_assert(kiln::buffer<float, kiln::out>::mode == kiln::access::out);
static_assert(kiln::device_value<rgb> && !kiln::device_value<int*> &&
              !kiln::device_value<std::vector<int>>);

TEST_P(buffers, round_trip_in_every_access_mode) {
    kiln::queue q(device());
    const auto host = iota(1000, -500);
    kiln::buffer<int, kiln::in> in(q, host);
    kiln::buffer<int, kiln::out> out(q, host.size());
    kiln::buffer<int> both(q, host);  // inout by default
    static_assert(decltype(both)::mode == kiln::access::inout);
    EXPECT_EQ(in.read(q), host);
    EXPECT_EQ(both.read(q), host);
    out.write(q, host);
    EXPECT_EQ(out.read(q), host);
    EXPECT_EQ(in.size(), host.size());
    EXPECT_EQ(in.bytes(), host.size() * sizeof(int));
    EXPECT_EQ(in.device(), device());

    kiln::buffer<double> from_list(q, {1.5, -2.25, 1e300});
    EXPECT_EQ(from_list.read(q), (std::vector<double>{1.5, -2.25, 1e300}));
    std::vector<int> into(host.size());
    both.read(q, into);
    EXPECT_EQ(into, host);
}

TEST_P(buffers, shapes_of_one_to_three_dimensions_are_row_major) {
    kiln::queue q(device());
    kiln::buffer<float> line(q, kiln::shape{7});
    kiln::buffer<float> grid(q, kiln::shape{3, 5});
    kiln::buffer<float> cube(q, kiln::shape{2, 3, 4});
    EXPECT_EQ(line.shape().rank(), 1u);
    EXPECT_EQ(grid.shape().rank(), 2u);
    EXPECT_EQ(cube.shape().rank(), 3u);
    EXPECT_EQ(line.size(), 7u);
    EXPECT_EQ(grid.size(), 15u);
    EXPECT_EQ(cube.size(), 24u);
    EXPECT_EQ(grid.shape()[0], 3u);
    EXPECT_EQ(grid.shape()[1], 5u);
    EXPECT_EQ(cube.shape().to_string(), "{2, 3, 4}");

    // Element (r, c) of a {rows, columns} buffer is at r * columns + c.
    std::vector<int> host(12);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) host[r * 4 + c] = 10 * r + c;
    kiln::buffer<int> matrix(q, host, kiln::shape{3, 4});
    EXPECT_EQ(matrix.read_element(q, 2 * 4 + 1), 21);
    EXPECT_THROW(kiln::buffer<int>(q, host, kiln::shape{5, 5}), kiln::invalid_argument_error);

    EXPECT_THROW((kiln::shape{1, 2, 3, 4}), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::shape(std::initializer_list<std::size_t>{}), kiln::invalid_argument_error);
    EXPECT_EQ(kiln::shape().size(), 0u) << "a default shape is empty";
    const auto huge = std::numeric_limits<std::size_t>::max() / 2;
    EXPECT_THROW((void)kiln::shape({huge, huge}).size(), kiln::invalid_argument_error);
    EXPECT_EQ((kiln::shape{4, 0, 9}.size()), 0u);
}

TEST_P(buffers, single_value_buffers_get_and_set) {
    kiln::queue q(device());
    kiln::single<int> counter(q, 42);
    EXPECT_EQ(counter.size(), 1u);
    EXPECT_EQ(counter.get(q), 42);
    counter.set(q, -7);
    EXPECT_EQ(counter.get(q), -7);
    kiln::single<double> zero(q);
    EXPECT_EQ(zero.get(q), 0.0);
}

TEST_P(buffers, host_range_of_the_wrong_size_is_an_error_not_a_truncation) {
    kiln::queue q(device());
    const auto host = iota(10);
    kiln::buffer<int> b(q, host);
    const auto shorter = iota(9, 100);
    const auto longer = iota(11, 100);
    EXPECT_THROW(b.write(q, shorter), kiln::invalid_argument_error);
    EXPECT_THROW(b.write(q, longer), kiln::invalid_argument_error);
    std::vector<int> small(9), large(11);
    EXPECT_THROW(b.read(q, std::span<int>(small)), kiln::invalid_argument_error);
    EXPECT_THROW(b.read(q, std::span<int>(large)), kiln::invalid_argument_error);
    EXPECT_EQ(b.read(q), host) << "a rejected write must not have changed anything";
    EXPECT_EQ(small, std::vector<int>(9)) << "a rejected read must not have written the host range";

    kiln::buffer<int> other(q, 11);
    EXPECT_THROW(b.copy_to(q, other), kiln::invalid_argument_error);
    try {
        b.write(q, shorter);
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("9"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("10"), std::string::npos) << e.what();
        EXPECT_EQ(e.call(), "kiln::buffer::write");
    }
}

TEST_P(buffers, sub_ranges_read_write_and_copy_exactly_their_elements) {
    kiln::queue q(device());
    kiln::buffer<int> a(q, iota(100));
    a.write(q, 10, std::vector<int>{-1, -2, -3});
    std::vector<int> window(5);
    a.read(q, 9, window);
    EXPECT_EQ(window, (std::vector<int>{9, -1, -2, -3, 13}));

    kiln::buffer<int> b(q, std::vector<int>(50, 0));
    a.copy_to(q, 95, b, 40, 5).wait();
    auto copied = b.read(q);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(copied[i], i >= 40 && i < 45 ? 95 + (i - 40) : 0) << i;

    a.fill(q, 7, 98, 2).wait();
    EXPECT_EQ(a.read_element(q, 97), 97);
    EXPECT_EQ(a.read_element(q, 98), 7);
    EXPECT_EQ(a.read_element(q, 99), 7);
}

// From 1 MiB, CPU devices of the OpenCL backend copy and fill with kernels of kiln's on every
// core (src/runtime/transfer_kernels.hpp), others with the device's commands: either way exactly
// the bytes asked for, at offsets and sizes that are not multiples of a chunk or a cache line.
TEST_P(buffers, large_copies_move_exactly_their_bytes) {
    kiln::queue q(device());
    const std::size_t n = (std::size_t(1) << 22) + 12345;
    std::vector<std::uint8_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
    // The index of the first byte that differs, n where none does.
    const auto first_difference = [](const auto& got, const auto& want) {
        return static_cast<std::size_t>(std::mismatch(got.begin(), got.end(), want.begin()).first -
                                        got.begin());
    };
    kiln::buffer<std::uint8_t> a(q, host), b(q, std::vector<std::uint8_t>(n, 0));
    a.copy_to(q, b).wait();
    EXPECT_EQ(first_difference(b.read(q), host), n);

    // Within one buffer, apart: from byte 3 to byte n - count - 1.
    const std::size_t count = (std::size_t(1) << 21) + 29, to = n - count - 1;
    b.copy_to(q, 3, b, to, count).wait();
    auto expected = host;
    std::copy_n(host.begin() + 3, count, expected.begin() + static_cast<std::ptrdiff_t>(to));
    EXPECT_EQ(first_difference(b.read(q), expected), n);
}

/// A `Bytes`-byte element whose bytes all differ, for fills of every power-of-two size.
template <std::size_t Bytes>
struct pattern_of {
    std::array<std::uint8_t, Bytes> bytes;
    static pattern_of numbered(std::uint8_t first) {
        pattern_of p;
        for (std::size_t i = 0; i < Bytes; ++i) p.bytes[i] = static_cast<std::uint8_t>(first + i);
        return p;
    }
    friend bool operator==(const pattern_of&, const pattern_of&) = default;
};

template <std::size_t Bytes>
void expect_large_fill(const kiln::queue& q) {
    SCOPED_TRACE(std::to_string(Bytes) + "-byte elements");
    using element = pattern_of<Bytes>;
    const std::size_t n = ((std::size_t(3) << 20) + 4321) / Bytes;
    const std::size_t first = 3, count = n - 5;  // neither end on a 64-byte line
    kiln::buffer<element> b(q, n);
    b.fill(q, element::numbered(0)).wait();
    b.fill(q, element::numbered(100), first, count).wait();
    const auto got = b.read(q);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        wrong += !(got[i] == element::numbered(i >= first && i < first + count ? 100 : 0));
    EXPECT_EQ(wrong, 0u);
}

TEST_P(buffers, large_fills_repeat_elements_of_every_power_of_two_size) {
    kiln::queue q(device());
    expect_large_fill<1>(q);
    expect_large_fill<2>(q);
    expect_large_fill<4>(q);
    expect_large_fill<8>(q);
    expect_large_fill<16>(q);
    expect_large_fill<32>(q);
    expect_large_fill<64>(q);
    expect_large_fill<128>(q);
}

TEST_P(buffers, sub_ranges_outside_the_buffer_are_rejected) {
    kiln::queue q(device());
    const auto host = iota(16);
    kiln::buffer<int> a(q, host);
    kiln::buffer<int> b(q, 8);
    std::vector<int> four(4, -1);
    const auto max = std::numeric_limits<std::size_t>::max();
    EXPECT_THROW(a.read(q, 13, four), kiln::invalid_argument_error);
    EXPECT_THROW(a.read(q, 17, std::span<int>()), kiln::invalid_argument_error);
    EXPECT_THROW(a.write(q, 13, four), kiln::invalid_argument_error);
    EXPECT_THROW((void)a.read_async(q, max, four), kiln::invalid_argument_error);
    // offset + count overflows size_t: must not wrap around into range.
    EXPECT_THROW((void)a.write_async(q, 1, std::span<const int>(four.data(), max / sizeof(int))),
                 kiln::invalid_argument_error);
    EXPECT_THROW((void)a.copy_to(q, 10, b, 0, 7), kiln::invalid_argument_error)
        << "source too short";
    EXPECT_THROW((void)a.copy_to(q, 0, b, 4, 5), kiln::invalid_argument_error)
        << "destination too short";
    EXPECT_THROW((void)a.fill(q, 0, 15, 2), kiln::invalid_argument_error);
    EXPECT_THROW((void)a.read_element(q, 16), kiln::invalid_argument_error);
    EXPECT_EQ(four, std::vector<int>(4, -1));
    EXPECT_EQ(a.read(q), host);

    // The edges themselves are fine.
    a.read(q, 12, four);
    EXPECT_EQ(four, (std::vector<int>{12, 13, 14, 15}));
    a.read(q, 16, std::span<int>());
    a.copy_to(q, 8, b, 0, 8).wait();
    EXPECT_EQ(b.read(q), iota(8, 8));
    try {
        a.read(q, 13, four);
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_EQ(e.code(), 0);
        EXPECT_EQ(e.code_name(), "KILN_INVALID_ARGUMENT");
        EXPECT_NE(std::string(e.what()).find("[13, 13 + 4)"), std::string::npos) << e.what();
    }
}

TEST_P(buffers, async_transfers_return_events_and_honour_wait_lists) {
    // Out of order: only the wait lists order these commands.
    kiln::queue q(device(), kiln::out_of_order);
    const std::size_t n = 1 << 16;
    const auto host = iota(n, 3);
    kiln::buffer<int> a(q, n), b(q, n);
    auto written = a.write_async(q, 0, host);
    auto copied = a.copy_to(q, b, written);
    auto filled = b.fill(q, -9, 100, 50, copied);
    std::vector<int> result(n);
    auto read = b.read_async(q, 0, result, filled);
    read.wait();
    EXPECT_EQ(read.status(), kiln::event_status::complete);
    for (auto e : {written, copied, filled}) EXPECT_TRUE(e.done());
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(result[i], i >= 100 && i < 150 ? -9 : host[i]) << "at " << i;

    // Blocking forms take wait lists too; several events at once.
    auto first_half = a.fill(q, 1, 0, n / 2);
    auto second_half = a.fill(q, 2, n / 2, n / 2);
    auto whole = a.read(q, {first_half, second_half});
    EXPECT_EQ(whole[n / 2 - 1], 1);
    EXPECT_EQ(whole[n / 2], 2);
    EXPECT_EQ(std::count(whole.begin(), whole.end(), 1), static_cast<long>(n / 2));
}

TEST_P(buffers, fills_repeat_elements_of_any_size) {
    kiln::queue q(device());
    kiln::buffer<rgb> colours(q, 33);
    colours.fill(q, rgb{0.25f, 0.5f, 1.0f}).wait();
    colours.fill(q, rgb{-1.0f, 0.0f, 2.0f}, 30, 3).wait();
    auto result = colours.read(q);
    for (std::size_t i = 0; i < result.size(); ++i)
        EXPECT_EQ(result[i], i < 30 ? (rgb{0.25f, 0.5f, 1.0f}) : (rgb{-1.0f, 0.0f, 2.0f})) << i;

    kiln::buffer<std::uint8_t> bytes(q, 17);
    bytes.fill(q, 0xab).wait();
    EXPECT_EQ(bytes.read(q), std::vector<std::uint8_t>(17, 0xab));
    kiln::buffer<double> doubles(q, 5);
    doubles.fill(q, -0.125).wait();
    EXPECT_EQ(doubles.read(q), std::vector<double>(5, -0.125));
}

TEST_P(buffers, empty_buffers_work_everywhere) {
    kiln::queue q(device());
    kiln::buffer<float> empty(q, 0);
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.bytes(), 0u);
    EXPECT_TRUE(empty.read(q).empty());
    empty.write(q, std::vector<float>{});
    EXPECT_THROW(empty.write(q, std::vector<float>{1.0f}), kiln::invalid_argument_error);
    auto filled = empty.fill(q, 1.0f);
    filled.wait();
    EXPECT_TRUE(filled.done());
    kiln::buffer<float> other(q, 0);
    empty.copy_to(q, other).wait();
    empty.read_async(q, 0, std::span<float>(), filled).wait();
    EXPECT_THROW((void)empty.read_element(q, 0), kiln::invalid_argument_error);
    EXPECT_EQ(kiln::buffer<float>(q, std::vector<float>{}).size(), 0u);
}

TEST_P(buffers, size_one_buffers) {
    kiln::queue q(device());
    kiln::buffer<std::int64_t> one(q, std::vector<std::int64_t>{-1234567890123LL});
    EXPECT_EQ(one.read(q), std::vector<std::int64_t>{-1234567890123LL});
    one.fill(q, 5).wait();
    EXPECT_EQ(one.read_element(q, 0), 5);
    kiln::buffer<std::int64_t> copy(q, 1);
    one.copy_to(q, copy).wait();
    EXPECT_EQ(copy.read_element(q, 0), 5);
}

TEST_P(buffers, absurd_allocations_raise_out_of_memory_naming_the_size_and_limits) {
    kiln::queue q(device());
    const std::uint64_t pebibyte = 1ull << 50;
    const auto& p = device().properties();
    try {
        kiln::buffer<std::uint8_t> huge(q, pebibyte);
        FAIL() << "allocated a pebibyte";
    } catch (const kiln::out_of_memory_error& e) {
        EXPECT_EQ(e.requested_bytes(), pebibyte);
        EXPECT_EQ(e.max_allocation_bytes(), p.max_allocation_bytes);
        EXPECT_EQ(e.global_memory_bytes(), p.global_memory_bytes);
        const std::string message = e.what();
        EXPECT_NE(message.find(std::to_string(pebibyte)), std::string::npos) << message;
        EXPECT_NE(message.find("1.0 PiB"), std::string::npos) << message;
        EXPECT_NE(message.find(std::to_string(p.max_allocation_bytes)), std::string::npos)
            << message;
        EXPECT_NE(message.find(std::to_string(p.global_memory_bytes)), std::string::npos)
            << message;
        EXPECT_NE(message.find(p.name), std::string::npos) << message;
    }
    // Just past the device's largest allocation fails the same way.
    EXPECT_THROW(kiln::buffer<std::uint8_t>(q, p.max_allocation_bytes + 1),
                 kiln::out_of_memory_error);
    // A count whose byte size overflows is a bad argument, not a device limit.
    EXPECT_THROW(kiln::buffer<double>(q, std::numeric_limits<std::size_t>::max() / 4),
                 kiln::invalid_argument_error);
}

TEST_P(buffers, device_sizeof_reports_bytes_on_the_device) {
    kiln::queue q(device());
    kiln::buffer<double> b(q, 13);
    EXPECT_EQ(kiln::device_sizeof(b), 13 * sizeof(double));
    EXPECT_EQ(kiln::device_sizeof(1.0f), 4u);
    EXPECT_EQ(kiln::device_sizeof(std::uint16_t{}), 2u);
    EXPECT_EQ(kiln::device_sizeof(kiln::buffer<double>(q, 0)), 0u);
    EXPECT_EQ(kiln::device_sizeof_size_t(device()), device().properties().address_bits / 8);
}

TEST_P(buffers, moves_empty_the_source_and_copies_share_memory) {
    kiln::queue q(device());
    kiln::buffer<int> original(q, iota(8));
    kiln::buffer<int> moved(std::move(original));
    EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): that is the point
    EXPECT_EQ(original.storage().memory(), nullptr);
    EXPECT_EQ(original.shape().size(), 0u);
    EXPECT_EQ(moved.read(q), iota(8));

    kiln::buffer<int> assigned;
    assigned = std::move(moved);
    EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(assigned.size(), 8u);
    int one = 0;
    EXPECT_THROW(moved.read(q, 0, std::span<int>(&one, 1)), kiln::invalid_argument_error);

    kiln::buffer<int> shared = assigned;
    shared.fill(q, 3).wait();
    EXPECT_EQ(assigned.read(q), std::vector<int>(8, 3));
    EXPECT_EQ(shared.storage().memory(), assigned.storage().memory());
}

TEST_P(buffers, infinities_and_nans_round_trip_bit_for_bit) {
    kiln::queue q(device());
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> specials = {inf,
                                         -inf,
                                         std::numeric_limits<float>::quiet_NaN(),
                                         -std::numeric_limits<float>::quiet_NaN(),
                                         std::numeric_limits<float>::denorm_min(),
                                         -0.0f,
                                         std::numeric_limits<float>::max(),
                                         std::numeric_limits<float>::lowest()};
    kiln::buffer<float> a(q, specials), b(q, specials.size());
    a.copy_to(q, b).wait();
    auto back = b.read(q);
    ASSERT_EQ(back.size(), specials.size());
    for (std::size_t i = 0; i < specials.size(); ++i)
        EXPECT_EQ(std::bit_cast<std::uint32_t>(back[i]), std::bit_cast<std::uint32_t>(specials[i]))
            << i;

    kiln::buffer<double> nans(q, 4);
    nans.fill(q, std::numeric_limits<double>::quiet_NaN()).wait();
    for (double x : nans.read(q)) EXPECT_TRUE(std::isnan(x));
    nans.fill(q, -std::numeric_limits<double>::infinity(), 1, 2).wait();
    auto mixed = nans.read(q);
    EXPECT_TRUE(std::isnan(mixed[0]) && std::isnan(mixed[3]));
    EXPECT_TRUE(std::isinf(mixed[1]) && mixed[1] < 0 && std::isinf(mixed[2]));
}

TEST_P(buffers, a_buffer_and_a_queue_on_different_devices_are_rejected) {
    if (kiln::devices().size() < 2) GTEST_SKIP() << "needs two devices";
    const auto& other = kiln::devices()[device().index() == 0 ? 1 : 0];
    kiln::queue here(device()), there(other);
    kiln::buffer<int> b(here, iota(4));
    EXPECT_THROW((void)b.read(there), kiln::invalid_argument_error);
    EXPECT_THROW(b.write(there, iota(4)), kiln::invalid_argument_error);
}

// Tile maps (the tensor memory accelerator's descriptors) are CUDA's: encoded over a buffer
// there, a clear error elsewhere, and a request the driver cannot take is an error too.
TEST_P(buffers, tile_maps_are_encoded_on_cuda_and_refused_elsewhere) {
    kiln::queue q(device());
    const kiln::buffer<std::uint16_t> matrix(q, 64 * 72);
    kiln::detail::tile_map_request request;
    request.extents = {64, 72, 1};
    request.strides_bytes = {128, 128 * 72};
    request.box = {64, 64, 1};
    if (device().backend() != kiln::backend_kind::cuda) {
        try {
            (void)kiln::detail::encode_tile_map(matrix.storage(), request);
            ADD_FAILURE() << "a tile map was encoded on " << device().name();
        } catch (const kiln::error& e) {
            EXPECT_EQ(e.code_name(), "KILN_FEATURE_UNSUPPORTED") << e.what();
        }
        return;
    }
    const kiln::detail::tile_map map = kiln::detail::encode_tile_map(matrix.storage(), request);
    EXPECT_TRUE(std::ranges::any_of(map.bits, [](std::uint64_t word) { return word != 0; }));
    request.swizzle_bytes = 96;
    EXPECT_THROW((void)kiln::detail::encode_tile_map(matrix.storage(), request),
                 kiln::invalid_argument_error);
    request.swizzle_bytes = 128;
    request.offset_bytes = matrix.bytes();
    EXPECT_THROW((void)kiln::detail::encode_tile_map(matrix.storage(), request),
                 kiln::invalid_argument_error);
    request.offset_bytes = 0;
    request.box = {64, 512, 1};  // past the 256 elements a box may span
    EXPECT_THROW((void)kiln::detail::encode_tile_map(matrix.storage(), request), kiln::error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(buffers);

}  // namespace
