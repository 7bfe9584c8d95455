// SPDX-License-Identifier: Apache-2.0
// kiln::vector<kiln::half> and <kiln::bfloat16>: transfers, copies, fills, views, splits over
// devices, and expressions that load float, compute in float and store rounded once.
#include <cmath>
#include <cstdint>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "narrow_float_vectors.hpp"
#include "support/binary16_types.hpp"
#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::expect_exact_reductions;
using kiln::test::for_each_binary16;
using kiln::test::from_floats;

/// Every 16-bit pattern once: zeros, subnormals, normals, infinities and NaNs of both signs.
template <class T>
std::vector<T> every_bit_pattern() {
    std::vector<T> values(65536);
    for (std::uint32_t bits = 0; bits < values.size(); ++bits)
        values[bits] = T::from_bits(static_cast<std::uint16_t>(bits));
    return values;
}

/// Equal bit for bit, except that a NaN need only be a NaN (stores quiet signalling NaNs).
template <class T>
void expect_same_values(const std::vector<T>& actual, const std::vector<T>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const float want = static_cast<float>(expected[i]);
        if (std::isnan(want))
            ASSERT_TRUE(std::isnan(static_cast<float>(actual[i]))) << "element " << i;
        else
            ASSERT_EQ(actual[i].bits(), expected[i].bits())
                << "element " << i << ": " << actual[i] << " instead of " << expected[i];
    }
}

/// Sizes whose 2-byte elements end halfway through a 4-byte word (odd), or fill whole groups
/// but one element.
const std::vector<std::size_t>& binary16_sizes() {
    static const std::vector<std::size_t> sizes = {0, 1, 2, 3, 7, 255, 1000, 65537};
    return sizes;
}

class binary16_vector : public kiln::test::device_queue_test {};

TEST_P(binary16_vector, documented_example) {
    const std::vector<float> host = {1.0f, 2.5f, -3.0f};
    // [doc:binary16_vector]
    std::vector<kiln::half> host_x;
    for (float f : host) host_x.push_back(kiln::half(f));  // explicit, to nearest even
    kiln::vector<kiln::half> x(q, host_x), y(q, host_x.size());
    kiln::vector<float> z(q, host);
    y = 2 * x + z;               // loads as float, computes in float, stores rounded once
    float total = kiln::sum(x);  // accumulates in float, returns float
    std::vector<kiln::half> back = y.read();
    // [/doc]
    EXPECT_EQ(total, 0.5f);
    EXPECT_EQ(back,
              (std::vector<kiln::half>{kiln::half(3.0f), kiln::half(7.5f), kiln::half(-9.0f)}));
}

TEST_P(binary16_vector, round_trips_every_bit_pattern_through_the_device) {
    for_each_binary16([&]<class T>() {
        const auto host = every_bit_pattern<T>();
        kiln::vector<T> v(q, host);
        const auto back = v.read();
        for (std::size_t i = 0; i < host.size(); ++i)
            ASSERT_EQ(back[i].bits(), host[i].bits()) << i;
        // A copy on the device, and single elements.
        const kiln::vector<T> copy(v);
        const auto copied = copy.read();
        for (std::size_t i = 0; i < host.size(); ++i)
            ASSERT_EQ(copied[i].bits(), host[i].bits()) << i;
        v[3] = T(-2.5f);
        EXPECT_EQ(static_cast<T>(v[3]), T(-2.5f));
        EXPECT_EQ(static_cast<T>(v[4]).bits(), 4);
    });
}

TEST_P(binary16_vector, loads_as_float_and_stores_every_value_back_exactly) {
    // y = x * 1 loads each element as float and stores it rounded: every value, subnormals and
    // infinities included, comes back as it was, and NaNs stay NaN (y = x copies the bytes).
    for_each_binary16([&]<class T>() {
        const auto host = every_bit_pattern<T>();
        kiln::vector<T> x(q, host), y(q, host.size());
        y = x;
        expect_same_values(y.read(), host);
        y = x * 1;
        expect_same_values(y.read(), host);
    });
}

TEST_P(binary16_vector, computes_in_float_and_rounds_once_per_assignment) {
    for_each_binary16([&]<class T>() {
        for (std::size_t n : binary16_sizes()) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto xs = from_floats<T>(kiln::test::random_values<float>(n, -100, 100, 1));
            const auto zs = from_floats<T>(kiln::test::random_values<float>(n, -1, 1, 2));
            kiln::vector<T> x(q, xs), z(q, zs), y(q, n), ratio(q, n);
            y = 2 * x + z;
            // x / 3 + z / 7 in float, then one rounding: rounding each part to T first would
            // differ in many elements. The float value is the device's own (OpenCL lets a
            // device's division be off by 2.5 ulp, and NVIDIA's is), so the statement must give
            // exactly its rounding.
            ratio = x / 3 + z / 7;
            kiln::vector<float> ratio_in_float(q, n);
            ratio_in_float = x / 3 + z / 7;
            const std::vector<float> device_ratio = ratio_in_float.read();
            std::vector<T> expected(n), expected_ratio(n);
            for (std::size_t i = 0; i < n; ++i) {
                const float xi = static_cast<float>(xs[i]), zi = static_cast<float>(zs[i]);
                expected[i] = T(2 * xi + zi);
                expected_ratio[i] = T(device_ratio[i]);
                ASSERT_NEAR(device_ratio[i], xi / 3 + zi / 7, 1e-5f * (std::abs(xi) + 1)) << i;
            }
            expect_same_values(y.read(), expected);
            expect_same_values(ratio.read(), expected_ratio);
        }
    });
}

TEST_P(binary16_vector, mixes_with_float_vectors_both_ways) {
    for_each_binary16([&]<class T>() {
        const std::size_t n = 1001;
        const auto hs = from_floats<T>(kiln::test::random_values<float>(n, -10, 10, 3));
        const auto fs = kiln::test::random_values<float>(n, -10, 10, 4);
        kiln::vector<T> h(q, hs), stored(q, n);
        kiln::vector<float> f(q, fs), sum(q, n);
        sum = h + f;        // float result: no 16-bit rounding at all
        stored = f * 0.5f;  // 16-bit result: f / 2 rounded once
        const auto hsum = sum.read();
        const auto hstored = stored.read();
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(hsum[i], static_cast<float>(hs[i]) + fs[i]) << i;
            ASSERT_EQ(hstored[i].bits(), T(fs[i] * 0.5f).bits()) << i;
        }
    });
}

TEST_P(binary16_vector, stores_floats_rounded_to_nearest_even_at_every_tie) {
    // Around every 16-bit value: the float halfway to the next one (a tie, to the even one),
    // just below and just above it, through the wide stores and the element loop alike (the
    // size is not a multiple of 8). NaNs of every payload stay NaN.
    for_each_binary16([&]<class T>() {
        std::vector<float> floats;
        for (const T value : every_bit_pattern<T>()) {
            const float f = static_cast<float>(value);
            if (std::isnan(f) || std::isinf(f)) {
                floats.push_back(f);
                continue;
            }
            // The neighbour away from zero; past the largest finite value, overflow's own test.
            const float up =
                static_cast<float>(T::from_bits(static_cast<std::uint16_t>(value.bits() + 1)));
            if (std::isinf(up)) continue;
            const float halfway = f + (up - f) / 2;
            floats.insert(floats.end(),
                          {halfway, std::nextafter(halfway, f), std::nextafter(halfway, up)});
        }
        floats.push_back(0.0f);
        kiln::vector<float> x(q, floats);
        kiln::vector<T> y(q, floats.size());
        y = x;
        expect_same_values(y.read(), from_floats<T>(floats));
    });
}

TEST_P(binary16_vector, follows_ieee_rules_for_overflow_infinity_and_nan) {
    for_each_binary16([&]<class T>() {
        using limits = std::numeric_limits<T>;
        const float big = static_cast<float>(limits::max());
        const std::vector<T> hs = {limits::max(), limits::infinity(), limits::quiet_NaN(),
                                   limits::denorm_min(), T(-0.0f)};
        kiln::vector<T> x(q, hs), y(q, hs.size());
        y = x * 2;
        const auto back = y.read();
        // Beyond the largest finite value: infinity (half); bfloat16 has float's range, so
        // twice its largest value overflows float itself, also infinity.
        EXPECT_EQ(static_cast<float>(back[0]), static_cast<float>(T(2 * big)));
        EXPECT_EQ(static_cast<float>(back[1]), std::numeric_limits<float>::infinity());
        EXPECT_TRUE(std::isnan(static_cast<float>(back[2])));
        EXPECT_EQ(back[3].bits(), 2);  // twice the smallest subnormal, exactly
        EXPECT_EQ(back[4].bits(), T(-0.0f).bits());
        // Half of the smallest subnormal is a tie: to even, zero.
        y = x * 0.5f;
        EXPECT_EQ(y.read()[3].bits(), 0);
    });
}

TEST_P(binary16_vector, statements_take_the_cpu_vector_form) {
    // CPU devices' chunked loops step over 16 elements at a time: vload_half16 and
    // vstore_half16_rte for half, ushort16 loads and stores through kiln_bf16x16_to_float and
    // kiln_bf16x16_store for bfloat16. Forced here on every device, with and without the
    // vector form.
    const auto chunked = [](std::size_t vector_bytes) {
        return kiln::detail::launch_policy{kiln::detail::loop_style::chunked, 1, 16, vector_bytes};
    };
    for_each_binary16([&]<class T>() {
        const std::string vector_store =
            std::is_same_v<T, kiln::half> ? "vstore_half16_rte(" : "kiln_bf16x16_store(";
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{1001},
                              std::size_t{20011}}) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto xs = from_floats<T>(kiln::test::random_values<float>(n, -100, 100, 9));
            const auto zs = kiln::test::random_values<float>(n, -1, 1, 10);
            const auto ws = from_floats<T>(kiln::test::random_values<float>(n, -1, 1, 15));
            kiln::vector<T> x(q, xs), w(q, ws), y(q, n);
            kiln::vector<float> z(q, zs);
            std::vector<T> expected, expected_16_bit;
            for (std::size_t i = 0; i < n; ++i) {
                expected.push_back(T(2 * static_cast<float>(xs[i]) + zs[i]));
                expected_16_bit.push_back(
                    T(2 * static_cast<float>(xs[i]) + static_cast<float>(ws[i])));
            }
            for (const std::size_t vector_bytes : {std::size_t{0}, std::size_t{64}}) {
                const kiln::detail::scoped_launch_policy forcing(chunked(vector_bytes));
                y = T(-1.0f);
                y = 2 * x + z;
                expect_same_values(y.read(), expected);
                y = 2 * x + w;
                expect_same_values(y.read(), expected_16_bit);
                const std::string source = kiln::assignment_source(device(), y, 2 * x + w);
                EXPECT_EQ(source.find(vector_store) != std::string::npos, vector_bytes != 0)
                    << source;
            }
        }
        // Every value, NaNs, infinities and subnormals included, through the vector form.
        const auto host = every_bit_pattern<T>();
        kiln::vector<T> all(q, host), back(q, host.size());
        const kiln::detail::scoped_launch_policy forcing(chunked(64));
        back = all * 1;
        expect_same_values(back.read(), host);
    });
}

/// GPUs' launch shape (strided loops, in which 16-bit statements and reductions read and write
/// eight elements per 16-byte access), forced on every device.
kiln::detail::launch_policy strided_policy() {
    return kiln::detail::launch_policy{kiln::detail::loop_style::strided, 64, 4, 0};
}

/// Sizes around the eight elements of a 16-byte access: none, the tail alone, one access and a
/// tail, tails ending halfway through a 4-byte word, and more elements than the work-items.
const std::vector<std::size_t>& wide_access_sizes() {
    static const std::vector<std::size_t> sizes = {0, 1, 7, 8, 9, 15, 17, 1001, 65537};
    return sizes;
}

TEST_P(binary16_vector, gpu_statements_move_eight_elements_per_16_byte_access) {
    const kiln::detail::scoped_launch_policy forcing(strided_policy());
    for_each_binary16([&]<class T>() {
        for (std::size_t n : wide_access_sizes()) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const auto xs = from_floats<T>(kiln::test::random_values<float>(n, -100, 100, 11));
            const auto zs = from_floats<T>(kiln::test::random_values<float>(n, -1, 1, 12));
            kiln::vector<T> x(q, xs), z(q, zs), y(q, n);
            y = T(-1.0f);
            y = 2 * x + z;
            std::vector<T> expected(n);
            for (std::size_t i = 0; i < n; ++i)
                expected[i] = T(2 * static_cast<float>(xs[i]) + static_cast<float>(zs[i]));
            expect_same_values(y.read(), expected);
        }
        kiln::vector<T> x(q, 16), y(q, 16);
        const std::string source = kiln::assignment_source(device(), y, 2 * x + x);
        EXPECT_NE(source.find("ushort8"), std::string::npos) << source;
        EXPECT_NE(source.find(".s7"), std::string::npos) << source;
        // Every value, subnormals, infinities and NaNs included, through the wide loads and
        // stores: 65536 elements fill whole accesses, 65535 leave a tail.
        for (const std::size_t n : {std::size_t{65536}, std::size_t{65535}}) {
            auto host = every_bit_pattern<T>();
            host.resize(n);
            kiln::vector<T> all(q, host), back(q, n);
            back = all * 1;
            expect_same_values(back.read(), host);
        }
    });
}

TEST_P(binary16_vector, gpu_statements_with_slices_and_mixed_widths_keep_the_element_loop) {
    // Slices at odd offsets start halfway through a 4-byte word, and float operands have other
    // lanes than 16-bit ones: such statements go element by element, with the same results.
    const kiln::detail::scoped_launch_policy forcing(strided_policy());
    for_each_binary16([&]<class T>() {
        const std::size_t n = 1003;
        const auto xs = from_floats<T>(kiln::test::random_values<float>(n, -100, 100, 13));
        const auto fs = kiln::test::random_values<float>(n, -1, 1, 14);
        kiln::vector<T> x(q, xs), y(q, n);
        kiln::vector<float> f(q, fs);
        y = 2 * x + f;
        std::vector<T> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = T(2 * static_cast<float>(xs[i]) + fs[i]);
        expect_same_values(y.read(), expected);
        // Elements 1 .. n - 2 of y = 3 * elements 0 .. n - 3 of x: both slices unaligned.
        kiln::slicer<1> line({n});
        line(y, kiln::index_range{1, n - 1}) = 3 * line(x, kiln::index_range{0, n - 2});
        for (std::size_t i = 1; i + 1 < n; ++i) expected[i] = T(3 * static_cast<float>(xs[i - 1]));
        expect_same_values(y.read(), expected);
    });
}

/// The GPU rows' reduction shape (strided loops of 16-byte loads), in groups of 64.
kiln::detail::reduce_tuning strided_reduction(std::size_t wide_loads) {
    return {.loop = kiln::detail::loop_style::strided,
            .work_group_size = 64,
            .groups_per_compute_unit = 4,
            .accumulators = 4,
            .wide_loads = wide_loads};
}

/// Sums, minima and maxima of 19 elements holding a subnormal (at 3) and infinity (at 18),
/// then a NaN (at 5) in place of the infinity: inside a 16-byte load's or a chunk's vectors, and
/// in the tail. Returns the elements with the NaN.
template <class T>
std::vector<T> expect_special_reductions(const kiln::queue& q) {
    using limits = std::numeric_limits<T>;
    std::vector<T> special(19, T(1.0f));
    special[3] = limits::denorm_min();
    special[18] = limits::infinity();
    kiln::vector<T> with_infinity(q, special);
    EXPECT_EQ(kiln::sum(with_infinity), std::numeric_limits<float>::infinity());
    EXPECT_EQ(kiln::minimum(with_infinity), static_cast<float>(limits::denorm_min()));
    special[18] = T(1.0f);
    special[5] = limits::quiet_NaN();
    kiln::vector<T> with_nan(q, special);
    EXPECT_TRUE(std::isnan(kiln::sum(with_nan)));
    EXPECT_EQ(kiln::maximum(with_nan), 1.0f);  // NaNs ignored
    return special;
}

TEST_P(binary16_vector, gpu_reductions_read_eight_elements_per_16_byte_load) {
    // One load a step (the GPU rows') and three, whose tail of whole loads takes the loop of one.
    for (const std::size_t wide_loads : {std::size_t{1}, std::size_t{3}}) {
        SCOPED_TRACE("wide_loads = " + std::to_string(wide_loads));
        const kiln::detail::scoped_algorithm_policy forcing(strided_reduction(wide_loads));
        for_each_binary16([&]<class T>() {
            for (std::size_t n : wide_access_sizes()) {
                SCOPED_TRACE("n = " + std::to_string(n));
                expect_exact_reductions<T>(q, n);
            }
            kiln::vector<T> any(q, 16);
            const std::string source = kiln::detail::reduce_program_source(
                kiln::detail::reduce_input_of<kiln::reducers::sum>(
                    kiln::detail::vector_terminal<T>(any)),
                strided_reduction(wide_loads));
            EXPECT_NE(source.find("ushort8"), std::string::npos) << source;
            // NaN, infinity and subnormals inside whole loads and in the tail.
            expect_special_reductions<T>(q);
        });
    }
}

/// CPU devices' reduction shape (a chunk per work-item, groups of one), stepping `vector_lanes`
/// elements at a time (0: element by element).
kiln::detail::reduce_tuning chunked_reduction(std::size_t vector_lanes) {
    return {.loop = kiln::detail::loop_style::chunked,
            .work_group_size = 1,
            .groups_per_compute_unit = 4,
            .accumulators = 4,
            .wide_loads = 0,
            .vector_lanes = vector_lanes};
}

TEST_P(binary16_vector, cpu_reductions_convert_a_vector_of_elements_per_step) {
    // Sums, minima, maxima and dot products of 16-bit vectors in the CPU row's chunks, which
    // convert 16 elements per step (vload_half16, or ushort16 through kiln_bf16x16_to_float),
    // in steps of 4, and element by element; forced on every device.
    for (const std::size_t lanes : {std::size_t{0}, std::size_t{4}, std::size_t{16}}) {
        SCOPED_TRACE("vector_lanes = " + std::to_string(lanes));
        const kiln::detail::scoped_algorithm_policy forcing(chunked_reduction(lanes));
        for_each_binary16([&]<class T>() {
            for (std::size_t n :
                 {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17},
                  std::size_t{64}, std::size_t{1001}, std::size_t{65537}}) {
                SCOPED_TRACE("n = " + std::to_string(n));
                expect_exact_reductions<T>(q, n);
            }
            // Rounded sums against a double reference: the float accumulation's error bound
            // (docs/vector.md, ## Reductions), here far inside 1e-5 of the sum of magnitudes.
            const std::size_t n = 100003;
            const auto hs = from_floats<T>(kiln::test::random_values<float>(n, -1, 1, 21));
            double exact = 0, magnitudes = 0;
            for (const T& h : hs) {
                exact += static_cast<float>(h);
                magnitudes += std::fabs(static_cast<float>(h));
            }
            kiln::vector<T> x(q, hs);
            EXPECT_NEAR(kiln::sum(x), exact, 1e-5 * magnitudes);
            // NaN, infinity and subnormals inside a chunk's vectors and in its tail (19 elements:
            // the first chunk's 16, then 3).
            using limits = std::numeric_limits<T>;
            std::vector<T> special = expect_special_reductions<T>(q);
            special[5] = T(-std::numeric_limits<float>::infinity());
            special[12] = limits::infinity();
            kiln::vector<T> both_infinities(q, special);
            EXPECT_TRUE(std::isnan(kiln::sum(both_infinities)));
        });
        // The vector form's text: 16-bit inputs only; float, double and integer programs are
        // the same with or without it.
        kiln::vector<kiln::half> h(q, 16);
        kiln::vector<kiln::bfloat16> b(q, 16);
        kiln::vector<float> f(q, 16);
        kiln::vector<double> d(q, 16);
        kiln::vector<std::int32_t> k(q, 16);
        const auto source = [&](const auto& vector, std::size_t vector_lanes) {
            return kiln::detail::reduce_program_source(
                kiln::detail::reduce_input_of<kiln::reducers::sum>(kiln::detail::as_node(vector)),
                chunked_reduction(vector_lanes));
        };
        const std::string w = std::to_string(lanes);
        EXPECT_EQ(source(h, lanes).find("vload_half" + w + "(") != std::string::npos, lanes != 0)
            << source(h, lanes);
        EXPECT_EQ(source(b, lanes).find("kiln_bf16x" + w + "_to_float(") != std::string::npos,
                  lanes != 0)
            << source(b, lanes);
        EXPECT_EQ(source(f, lanes), source(f, 0));
        EXPECT_EQ(source(d, lanes), source(d, 0));
        EXPECT_EQ(source(k, lanes), source(k, 0));
    }
}

TEST_P(binary16_vector, fills_with_numbers_and_16_bit_values) {
    for_each_binary16([&]<class T>() {
        for (std::size_t n : binary16_sizes()) {
            kiln::vector<T> v(q, n);
            v = 0.1f;  // rounded once to T
            expect_same_values(v.read(), std::vector<T>(n, T(0.1f)));
            v = T(-3.0f);
            expect_same_values(v.read(), std::vector<T>(n, T(-3.0f)));
            v = std::numeric_limits<T>::infinity();
            expect_same_values(v.read(), std::vector<T>(n, std::numeric_limits<T>::infinity()));
        }
    });
}

TEST_P(binary16_vector, views_gather_scatter_and_slice) {
    for_each_binary16([&]<class T>() {
        const std::size_t n = 9;  // odd: the last element is half of a 4-byte word
        std::vector<T> hs;
        for (std::size_t i = 0; i < n; ++i) hs.push_back(T(static_cast<float>(i) + 0.5f));
        kiln::vector<T> x(q, hs), y(q, n), z(q, n);
        y = kiln::reverse(x);
        kiln::reverse(z) = x * 2;
        const auto hy = y.read(), hz = z.read();
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(hy[i], hs[n - 1 - i]) << i;
            ASSERT_EQ(hz[n - 1 - i], T(2 * static_cast<float>(hs[i]))) << i;
        }
        kiln::vector<std::int32_t> index(q, {8, 0, 7, 1, 6, 2, 5, 3, 4});
        y = kiln::permutation(index)(x);
        const auto gathered = y.read();
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(gathered[i], hs[static_cast<std::size_t>(index[i])]) << i;
        // Through the raw pointer: loads as float too.
        y = kiln::raw_pointer(x)[n - 1 - kiln::element_index()] * 3;
        const auto through_pointer = y.read();
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(through_pointer[i], T(3 * static_cast<float>(hs[n - 1 - i]))) << i;
        // A 3 x 3 matrix: its middle column, and writing a row.
        kiln::slicer<2> grid({3, 3});
        kiln::vector<T> column(q, 3);
        column = grid(x, kiln::every, 1);
        EXPECT_EQ(column.read(), (std::vector<T>{hs[1], hs[4], hs[7]}));
        grid(x, 2, kiln::every) = -column;
        const auto hx = x.read();
        EXPECT_EQ(hx[8], T(-static_cast<float>(hs[7])));
        EXPECT_EQ(hx[5], hs[5]);
    });
}

TEST_P(binary16_vector, reductions_accumulate_and_return_float) {
    for_each_binary16([&]<class T>() {
        // 100000 ones: a 16-bit accumulator would stop at 2048 (half) or 256 (bfloat16), where
        // adding one no longer changes it; float counts them exactly.
        const std::size_t n = 100000;
        kiln::vector<T> ones(q, n);
        ones = 1;
        static_assert(std::is_same_v<decltype(kiln::sum(ones)), float>);
        EXPECT_EQ(kiln::sum(ones), 100000.0f);
        EXPECT_EQ(kiln::sum(ones * ones), 100000.0f);  // a dot product
        const std::vector<T> hs = {T(3.0f), std::numeric_limits<T>::denorm_min(), T(-7.5f), T(2.0f),
                                   T(-0.0f)};
        kiln::vector<T> x(q, hs);
        EXPECT_EQ(kiln::maximum(x), 3.0f);
        EXPECT_EQ(kiln::minimum(x), -7.5f);
        EXPECT_EQ(kiln::sum(x), 3.0f + static_cast<float>(hs[1]) - 7.5f + 2.0f);
        kiln::vector<T> empty(q, 0);
        EXPECT_EQ(kiln::sum(empty), 0.0f);
        kiln::vector<T> with_infinity(q, {T(1.0f), std::numeric_limits<T>::infinity()});
        EXPECT_EQ(kiln::sum(with_infinity), std::numeric_limits<float>::infinity());
        kiln::vector<T> with_nan(q, {T(1.0f), std::numeric_limits<T>::quiet_NaN()});
        EXPECT_TRUE(std::isnan(kiln::sum(with_nan)));
    });
}

TEST_P(binary16_vector, scans_and_reductions_by_key_accumulate_in_float) {
    for_each_binary16([&]<class T>() {
        for (std::size_t n : binary16_sizes()) {
            SCOPED_TRACE("n = " + std::to_string(n));
            // Quarters of small integers: every partial sum is exact in float, whatever the
            // order of the additions, and far past 16-bit precision for large n.
            std::vector<T> hs;
            std::vector<std::int32_t> keys;
            for (std::size_t i = 0; i < n; ++i) {
                hs.push_back(T(static_cast<float>(static_cast<int>(i % 7) - 2) * 0.25f));
                keys.push_back(static_cast<std::int32_t>(i / 100));
            }
            kiln::vector<T> x(q, hs);
            kiln::vector<float> inclusive(q, n), exclusive(q, n);
            kiln::inclusive_scan(x, inclusive);
            kiln::exclusive_scan(x, exclusive, 0.0f);
            std::vector<float> want_inclusive(n), want_exclusive(n);
            float running = 0;
            for (std::size_t i = 0; i < n; ++i) {
                want_exclusive[i] = running;
                running += static_cast<float>(hs[i]);
                want_inclusive[i] = running;
            }
            EXPECT_EQ(inclusive.read(), want_inclusive);
            EXPECT_EQ(exclusive.read(), want_exclusive);

            const std::size_t runs = n == 0 ? 0 : (n - 1) / 100 + 1;
            kiln::vector<std::int32_t> k(q, keys), unique_keys(q, runs);
            kiln::vector<float> sums(q, runs);
            ASSERT_EQ(kiln::reduce_by_key(k, x, unique_keys, sums), runs);
            std::vector<float> want_sums(runs, 0.0f);
            for (std::size_t i = 0; i < n; ++i) want_sums[i / 100] += static_cast<float>(hs[i]);
            EXPECT_EQ(sums.read(), want_sums);
        }
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(binary16_vector);

// A vector split over two parts (two devices, or two queues on one).
class binary16_split : public kiln::test::two_parts_test {};

TEST_F(binary16_split, splits_transfers_and_expressions_over_parts) {
    for_each_binary16([&]<class T>() {
        for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{10001}})
            kiln::test::expect_split_statement<T>(queues, n);
    });
}

}  // namespace
