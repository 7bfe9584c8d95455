// SPDX-License-Identifier: Apache-2.0
// Views on both sides of assignments: permutations (gather, scatter), reverse, 2-D and 3-D slices.
#include <cstdint>
#include <functional>
#include <kiln/vector.hpp>
#include <limits>
#include <numeric>
#include <vector>

#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

class view_test : public kiln::test::device_queue_test {};

std::vector<float> iota_values(std::size_t n) {
    std::vector<float> values(n);
    std::iota(values.begin(), values.end(), 0.0f);
    return values;
}

TEST_P(view_test, permutations_gather_and_scatter) {
    const std::size_t n = 1000;
    kiln::vector<float> x(q, iota_values(n)), y(q, n), z(q, n);
    // [doc:permutation]
    auto reversed = kiln::permutation(n - 1 - kiln::element_index());
    y = reversed(x);  // gather: y[i] = x[n - 1 - i]
    reversed(z) = x;  // scatter: z[n - 1 - i] = x[i]
    // [/doc]
    const auto hy = y.read(), hz = z.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hy[i], static_cast<float>(n - 1 - i));
        ASSERT_EQ(hz[i], static_cast<float>(n - 1 - i));
    }
    // An index vector works too, and the gathered values enter an expression.
    std::vector<std::uint32_t> host_index(n);
    for (std::size_t i = 0; i < n; ++i) host_index[i] = static_cast<std::uint32_t>((i * 7) % n);
    kiln::vector<std::uint32_t> index(q, host_index);
    y = kiln::permutation(index)(x) * 2 + 1;
    const auto gathered = y.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(gathered[i], static_cast<float>(host_index[i]) * 2 + 1);
}

// Indices past the end segfaulted, or wrote into the heap; negative ones read garbage. Now a
// read past the end takes the last element and a store past it is skipped.
TEST_P(view_test, permutation_indices_outside_the_vector_touch_nothing_outside_it) {
    const std::size_t n = 1000;
    kiln::vector<float> x(q, iota_values(n)), y(q, n);
    const std::uint64_t shift = std::uint64_t{1} << 40;
    y = kiln::permutation(kiln::element_index() * 2)(x);  // half the indices past the end
    y = kiln::permutation(kiln::element_index() + shift)(x) + y;
    auto got = y.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], static_cast<float>(2 * i < n ? 2 * i : n - 1) + (n - 1)) << i;
    std::vector<std::int32_t> negative(n);
    for (std::size_t i = 0; i < n; ++i) negative[i] = -1 - 2 * static_cast<std::int32_t>(i);
    const kiln::vector<std::int32_t> offsets(q, negative);
    y = kiln::permutation(offsets)(x);
    EXPECT_EQ(y.read(), std::vector<float>(n, static_cast<float>(n - 1)));

    kiln::vector<float> z(q, std::vector<float>(n, -1.0f));
    kiln::permutation(kiln::element_index() * 2)(z) = x;  // the first half lands, the rest not
    kiln::permutation(kiln::element_index() + shift)(z) = x;
    const auto before_the_front = kiln::permutation(offsets);
    before_the_front(z) = x;
    got = z.read();
    for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], i % 2 == 0 ? static_cast<float>(i / 2) : -1.0f) << i;

    // An empty vector has no index inside it: only a statement of no elements may use it.
    kiln::vector<float> empty(q, 0), none(q, 0);
    EXPECT_THROW(y = kiln::permutation(kiln::element_index())(empty), kiln::invalid_argument_error);
    EXPECT_NO_THROW(none = kiln::permutation(kiln::element_index())(empty));
}

TEST_P(view_test, reverse_reads_and_writes) {
    kiln::vector<std::int32_t> x(q, {1, 2, 3, 4, 5}), y(q, 5);
    y = kiln::reverse(x) * 10;
    EXPECT_EQ(y.read(), (std::vector<std::int32_t>{50, 40, 30, 20, 10}));
    kiln::reverse(y) = x;
    EXPECT_EQ(y.read(), (std::vector<std::int32_t>{5, 4, 3, 2, 1}));
    // A vector read and written through its mirror in one statement: work-items would read
    // elements that others had overwritten (on PoCL x became {5, 4, 3, 4, 5}).
    for (const auto& reversed_into_itself : std::initializer_list<std::function<void()>>{
             [&] { x = kiln::reverse(x); }, [&] { kiln::reverse(x) = x + 1; },
             [&] { x = kiln::reverse(x) + y; }}) {
        try {
            reversed_into_itself();
            ADD_FAILURE() << "no error";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find("written and read through reverse"),
                      std::string::npos)
                << e.what();
        }
        EXPECT_EQ(x.read(), (std::vector<std::int32_t>{1, 2, 3, 4, 5}));
    }
    // A mirror written from other vectors, or read into another, is fine.
    kiln::reverse(x) = y * 2;
    EXPECT_EQ(x.read(), (std::vector<std::int32_t>{2, 4, 6, 8, 10}));
}

TEST_P(view_test, two_dimensional_slices_select_rows_columns_and_ranges) {
    const std::size_t rows = 30, columns = 40;
    kiln::vector<float> matrix(q, iota_values(rows * columns));
    kiln::vector<float> row(q, columns), column(q, rows), block(q, 15 * 4);
    // clang-format off
    // [doc:slices]
    kiln::slicer<2> grid({rows, columns});
    row = grid(matrix, 3, kiln::every);                     // row 3
    column = grid(matrix, kiln::every, 7);                  // column 7
    block = grid(matrix, kiln::index_range{0, rows, 2},     // every other row,
                 kiln::index_range{10, 18, 2});             // columns 10, 12, 14, 16
    grid(matrix, kiln::every, 0) = -column;                 // slices are writable
    // [/doc]
    // clang-format on
    const auto hr = row.read(), hc = column.read(), hb = block.read();
    for (std::size_t c = 0; c < columns; ++c) ASSERT_EQ(hr[c], static_cast<float>(3 * columns + c));
    for (std::size_t r = 0; r < rows; ++r) ASSERT_EQ(hc[r], static_cast<float>(r * columns + 7));
    for (std::size_t r = 0; r < 15; ++r)
        for (std::size_t c = 0; c < 4; ++c)
            ASSERT_EQ(hb[r * 4 + c], static_cast<float>(2 * r * columns + 10 + 2 * c))
                << r << "," << c;
    const auto hm = matrix.read();
    for (std::size_t r = 0; r < rows; ++r) {
        ASSERT_EQ(hm[r * columns], -static_cast<float>(r * columns + 7));
        ASSERT_EQ(hm[r * columns + 1], static_cast<float>(r * columns + 1));
    }
}

TEST_P(view_test, three_dimensional_slices) {
    const std::size_t nx = 5, ny = 6, nz = 7;
    kiln::vector<float> cube(q, iota_values(nx * ny * nz)), plane(q, nx * nz), line(q, 3),
        one(q, 1);
    kiln::slicer<3> volume({nx, ny, nz});
    plane = volume(cube, kiln::every, 2, kiln::every);
    line = volume(cube, 4, kiln::index_range{1, 6, 2}, 6);
    one = volume(cube, 1, 2, 3);
    const auto hp = plane.read(), hl = line.read();
    for (std::size_t x = 0; x < nx; ++x)
        for (std::size_t z = 0; z < nz; ++z)
            ASSERT_EQ(hp[x * nz + z], static_cast<float>((x * ny + 2) * nz + z));
    for (std::size_t k = 0; k < 3; ++k)
        ASSERT_EQ(hl[k], static_cast<float>((4 * ny + 1 + 2 * k) * nz + 6));
    EXPECT_EQ(one.read(), (std::vector<float>{static_cast<float>((1 * ny + 2) * nz + 3)}));
    volume(cube, kiln::every, kiln::every, 0) = 0;
    EXPECT_EQ(static_cast<float>(cube[nz]), 0.0f);
}

TEST_P(view_test, bad_slices_and_view_sizes_are_errors) {
    kiln::vector<float> x(q, 12), y(q, 5);
    kiln::slicer<2> wrong({5, 5});
    EXPECT_THROW(static_cast<void>(wrong(x, 0, kiln::every)), kiln::invalid_argument_error);
    kiln::slicer<2> grid({3, 4});
    EXPECT_THROW(static_cast<void>(grid(x, 3, kiln::every)), kiln::invalid_argument_error);
    EXPECT_THROW(static_cast<void>(grid(x, kiln::index_range{2, 1}, 0)),
                 kiln::invalid_argument_error);
    EXPECT_THROW(y = grid(x, 0, kiln::every), kiln::invalid_argument_error);  // 4 elements into 5
    EXPECT_THROW(y = kiln::reverse(x), kiln::invalid_argument_error);
}

// The element count wrapped: 2^62 + 1 rows of 4 made a slicer of 4 elements, which a vector of
// 4 then passed; and a step near 2^64 counted a range's one element as none.
TEST_P(view_test, slicer_sizes_and_steps_past_64_bits_are_handled) {
    const std::size_t tall = (std::size_t{1} << 62) + 1;
    EXPECT_THROW(kiln::slicer<2>({tall, 4}), kiln::invalid_argument_error);
    kiln::vector<float> x(q, iota_values(10)), one(q, 1);
    kiln::slicer<1> line({10});
    one = line(x, kiln::index_range{3, 10, std::numeric_limits<std::size_t>::max()});
    EXPECT_EQ(one.read(), std::vector<float>{3.0f});
}

// A view of a const vector can be read but not written.
template <class View, class Value>
concept writable = requires(const View& v, const Value& value) {
    v = value;
};
static_assert(writable<decltype(kiln::reverse(std::declval<kiln::vector<float>&>())), float>);
static_assert(
    !writable<decltype(kiln::reverse(std::declval<const kiln::vector<float>&>())), float>);

KILN_INSTANTIATE_FOR_EVERY_DEVICE(view_test);

}  // namespace
