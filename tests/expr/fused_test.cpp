// SPDX-License-Identifier: Apache-2.0
// kiln::fused: consecutive element-wise statements as one kernel, bit for bit the results of
// the same statements run one kernel each, also captured and replayed; what ends a group (another
// size, a view read, a reduction, a host read) and a statement that throws inside the block.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/algo/scan.hpp>
#include <kiln/expr/fused.hpp>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <kiln/reduce.hpp>
#include <kiln/stencil.hpp>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lorenz_rk4.hpp"
#include "support/device_param.hpp"
#include "test_data.hpp"

namespace {

using kiln::test::random_values;

class fused_test : public kiln::test::device_queue_test {};

/// Launches of generated kernels during f().
template <class F>
std::size_t launches_during(const F& f) {
    const std::size_t before = kiln::expression_cache::stats().launches;
    f();
    return kiln::expression_cache::stats().launches - before;
}

/// The bits of each element, so that equal means identical (signed zeros and NaNs included).
template <class T>
auto bits_of(const std::vector<T>& values) {
    using word =
        std::conditional_t<sizeof(T) == 2, std::uint16_t,
                           std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
    std::vector<word> bits;
    for (T v : values) bits.push_back(std::bit_cast<word>(v));
    return bits;
}

/// Statements where one's product meets the next's sum (a contraction across statements would
/// change the bits), a vector written twice, and a tie: run eagerly and fused.
template <class T>
void check_fused_matches_eager(const kiln::queue& q, std::size_t n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto hx = random_values<T>(n, -2, 2, 1), hz = random_values<T>(n, -2, 2, 2);
    kiln::vector<T> x(q, hx), z(q, hz), y(q, n), w(q, n), u(q, n);
    const T a = T(1) / T(3);
    const auto block = [&] {
        y = a * x * z;
        w = y + z * x;
        y = w * y - a;
        kiln::tie(u, w) = std::make_tuple(w * z + y, y * x - w);
        z = sqrt(fabs(u)) * y + w;
    };
    block();
    const auto eager = std::make_tuple(x.read(), y.read(), z.read(), w.read(), u.read());
    x.write(hx);
    z.write(hz);
    const std::size_t launches = launches_during([&] { kiln::fused(q, block); });
    EXPECT_EQ(launches, n == 0 ? 0u : 1u);
    EXPECT_EQ(bits_of(y.read()), bits_of(std::get<1>(eager)));
    EXPECT_EQ(bits_of(z.read()), bits_of(std::get<2>(eager)));
    EXPECT_EQ(bits_of(w.read()), bits_of(std::get<3>(eager)));
    EXPECT_EQ(bits_of(u.read()), bits_of(std::get<4>(eager)));
}

TEST_P(fused_test, float_statements_are_one_kernel_with_the_eager_bits) {
    for (std::size_t n : kiln::test::edge_sizes()) check_fused_matches_eager<float>(q, n);
}

TEST_P(fused_test, double_statements_are_one_kernel_with_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    for (std::size_t n : kiln::test::edge_sizes()) check_fused_matches_eager<double>(q, n);
}

TEST_P(fused_test, a_lorenz_rk4_step_is_one_kernel_with_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    kiln::examples::lorenz_ensemble eager(q, 1024), fused(q, 1024);
    std::size_t eager_launches = 0, fused_launches = 0, generated_after_first_step = 0;
    for (int k = 0; k < 20; ++k) {
        eager_launches += launches_during([&] { eager.step(0.01); });
        fused_launches += launches_during([&] { kiln::fused(q, [&] { fused.step(0.01); }); });
        if (k == 0) generated_after_first_step = kiln::expression_cache::stats().sources_generated;
    }
    EXPECT_EQ(eager_launches, 20u * 8u);
    EXPECT_EQ(fused_launches, 20u);
    // The group's kernel is generated once, then found again.
    EXPECT_EQ(kiln::expression_cache::stats().sources_generated, generated_after_first_step);
    EXPECT_EQ(bits_of(fused.X.read()), bits_of(eager.X.read()));
}

/// Runs `block` from the values `start()` writes, eagerly and then fused, and compares the bits
/// of every vector `results()` reads (a tuple of host vectors) element by element.
template <class Start, class Block, class Results>
void expect_fused_gives_the_eager_bits(const kiln::queue& q, const Start& start, const Block& block,
                                       const Results& results) {
    start();
    block();
    const auto eager = results();
    start();
    EXPECT_EQ(launches_during([&] { kiln::fused(q, block); }), 1u);
    const auto fused = results();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto expect_same = [](const auto& got, const auto& expected, std::size_t vector) {
            const auto got_bits = bits_of(got), expected_bits = bits_of(expected);
            std::size_t differing = 0, first = got.size();
            for (std::size_t i = 0; i < got.size(); ++i)
                if (got_bits[i] != expected_bits[i]) {
                    first = std::min(first, i);
                    ++differing;
                }
            EXPECT_EQ(differing, 0u) << "vector " << vector << ": " << differing << " of "
                                     << got.size() << " elements differ, the first at " << first;
        };
        (expect_same(std::get<I>(fused), std::get<I>(eager), I), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(eager)>>{});
}

/// Maths built-ins whose scalar and vector forms round differently on PoCL (exp, log: 1 ulp),
/// alone in a block as in issue 66 and with others: the fused kernel gives each element what the
/// statement's own kernel gave, whether there the element fell in a vector step or in the
/// element loop after them.
template <class T>
void check_builtins_fused_match_eager(const kiln::queue& q) {
    const std::size_t n = 100003;  // odd: every kernel has elements after its vector steps
    const auto ha = random_values<T>(n, 0.01, 2, 21), hb = random_values<T>(n, 0.01, 2, 22);
    kiln::vector<T> a(q, n), b(q, n);
    const auto start = [&] {
        a.write(ha);
        b.write(hb);
    };
    const auto results = [&] { return std::make_tuple(a.read(), b.read()); };
    {
        SCOPED_TRACE("a = exp(a)");
        expect_fused_gives_the_eager_bits(
            q, start, [&] { a = kiln::exp(a); }, results);
    }
    {
        SCOPED_TRACE("a = log(a)");
        expect_fused_gives_the_eager_bits(
            q, start, [&] { a = kiln::log(a); }, results);
    }
    {
        SCOPED_TRACE("exp, log, atan and pow together");
        expect_fused_gives_the_eager_bits(
            q, start,
            [&] {
                a = kiln::exp(a) * b;
                b = kiln::log(a + b) - kiln::atan(b);
                a = kiln::pow(b * b, a) + kiln::exp(-a);
            },
            results);
    }
}

TEST_P(fused_test, float_builtins_give_the_eager_bits) {
    check_builtins_fused_match_eager<float>(q);
}

TEST_P(fused_test, double_builtins_give_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    check_builtins_fused_match_eager<double>(q);
}

// Issue 66's block of float, double and half statements: on CUDA the element loop after a
// statement's 16-byte steps contracted `sin(x) * y - x / d` into no fma, its steps and the fused
// kernel into one (NVRTC leaving the pair to ptxas, which joined it only where no division's
// branch came between).
TEST_P(fused_test, a_block_of_float_double_and_half_statements_gives_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::size_t n = 100003;
    const auto hx = random_values<float>(n, 0.01, 2, 23), hy = random_values<float>(n, 0.01, 2, 24);
    const auto ha = random_values<double>(n, 0.01, 2, 25);
    const auto hb = random_values<double>(n, 0.01, 2, 26);
    std::vector<kiln::half> hh;
    for (float v : random_values<float>(n, 0.01, 2, 27)) hh.push_back(kiln::half(v));
    kiln::vector<float> x(q, n), y(q, n);
    kiln::vector<double> a(q, n), b(q, n);
    kiln::vector<kiln::half> h(q, n);
    const float s = 0.75f;
    const auto start = [&] {
        x.write(hx);
        y.write(hy);
        a.write(ha);
        b.write(hb);
        h.write(hh);
    };
    expect_fused_gives_the_eager_bits(
        q, start,
        [&] {
            y = s * x + y;
            x = kiln::sin(x) * y - x / (y * y + 1.0f);
            a = a * b + kiln::sin(-a * a);
            b = kiln::sqrt(kiln::fabs(a)) + b;
            h = h * 0.5f + x;
            y = y + h;
        },
        [&] { return std::make_tuple(x.read(), y.read(), a.read(), b.read(), h.read()); });
}

/// The statements of check_fused_matches_eager, fused and captured: each block's one kernel is
/// the graph's one command, and two launches leave the bits of the block run twice eagerly.
template <class T>
void check_captured_fused_matches_eager(const kiln::queue& q, std::size_t n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto hx = random_values<T>(n, -2, 2, 6), hz = random_values<T>(n, -2, 2, 7);
    kiln::vector<T> x(q, hx), z(q, hz), y(q, n), w(q, n);
    const auto block = [&] {
        y = x * z - T(0.25);
        w = y + z * x;
        z = w * y + z;
        x = sqrt(fabs(z)) - w;
    };
    block();
    block();
    const auto eager = std::make_tuple(x.read(), y.read(), z.read(), w.read());
    x.write(hx);
    z.write(hz);
    const kiln::graph g = kiln::capture(q, [&] { kiln::fused(q, block); });
    EXPECT_EQ(g.size(), n == 0 ? 0u : 1u);
    g.launch();
    g.launch();
    EXPECT_EQ(bits_of(x.read()), bits_of(std::get<0>(eager)));
    EXPECT_EQ(bits_of(y.read()), bits_of(std::get<1>(eager)));
    EXPECT_EQ(bits_of(z.read()), bits_of(std::get<2>(eager)));
    EXPECT_EQ(bits_of(w.read()), bits_of(std::get<3>(eager)));
}

TEST_P(fused_test, a_captured_block_replays_its_one_kernel_with_the_eager_bits) {
    for (std::size_t n : kiln::test::edge_sizes()) check_captured_fused_matches_eager<float>(q, n);
    if (has_double())
        for (std::size_t n : {std::size_t{1}, std::size_t{1000}})
            check_captured_fused_matches_eager<double>(q, n);
}

TEST_P(fused_test, captured_lorenz_rk4_steps_replay_one_kernel_a_step_with_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::size_t n = 1000;  // no multiple of a work-group
    kiln::examples::lorenz_ensemble eager(q, n), replayed(q, n);
    constexpr std::size_t steps_per_graph = 10, launches = 3;
    // [doc:fused_steps_captured]
    const kiln::graph ten_steps = kiln::capture(q, [&] {
        for (std::size_t k = 0; k < steps_per_graph; ++k)
            kiln::fused(q, [&] { replayed.step(0.01); });
    });
    // [/doc]
    EXPECT_EQ(ten_steps.size(), steps_per_graph);
    EXPECT_EQ(bits_of(replayed.X.read()), bits_of(kiln::examples::lorenz_start(n)));
    for (std::size_t k = 0; k < launches * steps_per_graph; ++k) eager.step(0.01);
    for (std::size_t k = 0; k < launches; ++k) ten_steps.launch();
    EXPECT_EQ(bits_of(replayed.X.read()), bits_of(eager.X.read()));
    // On another queue of the device too, after the launches on the first.
    const kiln::queue other(q.device());
    ten_steps.launch(other);
    other.finish();
    for (std::size_t k = 0; k < steps_per_graph; ++k) eager.step(0.01);
    EXPECT_EQ(bits_of(replayed.X.read()), bits_of(eager.X.read()));
}

// A block that repeats the one before it on its thread takes that block's launch without working
// out its kernel again; a block that reads other vectors where the one before read a register,
// or holds fewer or more statements, gets the kernel of what it holds.
TEST_P(fused_test, a_block_unlike_the_one_before_gets_its_own_kernel) {
    const std::size_t n = 100;
    const auto hx = random_values<float>(n, -1, 1, 7), hw = random_values<float>(n, -1, 1, 8);
    kiln::vector<float> x(q, hx), w(q, hw), y(q, n), z(q, n);
    const auto run = [&](const kiln::vector<float>& read, bool both, const char* what) {
        SCOPED_TRACE(what);
        z = 0.0f;
        const std::size_t launches = launches_during([&] {
            kiln::fused(q, [&] {
                y = x + 1.0f;
                if (both) z = read * 2.0f;
            });
        });
        EXPECT_EQ(launches, 1u);
        const std::vector<float> hz = z.read();
        for (std::size_t i = 0; i < n; ++i) {
            const float expected = !both ? 0.0f : (&read == &y ? hx[i] + 1.0f : hw[i]) * 2.0f;
            ASSERT_EQ(hz[i], expected) << "element " << i;
        }
    };
    run(y, true, "z from y's register");
    run(y, true, "the same again");
    run(w, true, "z from w, where the block before read y's register");
    run(y, true, "y's register again");
    run(y, false, "the first statement alone");
    run(y, true, "both again");
}

TEST_P(fused_test, another_size_or_a_view_read_starts_a_new_kernel) {
    const std::size_t n = 1000;
    const auto hx = random_values<float>(n, -1, 1, 3);
    kiln::vector<float> x(q, hx), y(q, n), z(q, n), short_y(q, n / 2), short_x(q, n / 2);
    y = 0.0f;
    short_x = 1.0f;
    const std::size_t launches = launches_during([&] {
        kiln::fused(q, [&] {
            y = x + 1.0f;
            short_y = short_x * 2.0f;  // another size: a kernel of its own
            z = kiln::reverse(y);      // y read at other elements: only after y was stored
            y = y * 2.0f;
        });
    });
    EXPECT_EQ(launches, 4u);
    const std::vector<float> hy = y.read(), hz = z.read(), hs = short_y.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hz[i], hx[n - 1 - i] + 1.0f) << "element " << i;
        ASSERT_EQ(hy[i], (hx[i] + 1.0f) * 2.0f) << "element " << i;
    }
    for (float s : hs) ASSERT_EQ(s, 2.0f);
}

TEST_P(fused_test, a_reduction_or_a_host_read_sees_the_statements_before_it) {
    const std::size_t n = 1001;
    const auto hx = random_values<float>(n, 0, 1, 4);
    kiln::vector<float> x(q, hx), y(q, n), z(q, n);
    y = 0.0f;
    float total = 0;
    std::vector<float> read_back;
    kiln::fused(q, [&] {
        // [doc:fused_group_ends]
        y = x + 1.0f;
        total = kiln::sum(y);
        z = y * 2.0f;
        read_back = z.read();
        z = z + y;
        // [/doc]
    });
    float expected_total = 0;
    for (float v : hx) expected_total += v + 1.0f;
    EXPECT_NEAR(total, expected_total, 1e-3f * expected_total);
    const std::vector<float> hz = z.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(read_back[i], (hx[i] + 1.0f) * 2.0f) << "element " << i;
        ASSERT_EQ(hz[i], (hx[i] + 1.0f) * 3.0f) << "element " << i;
    }
}

/// Each kind of command after a held statement, in a block of its own, sees what the statement
/// stored: every path to the queue enqueues the group first (command_target_for).
TEST_P(fused_test, every_kind_of_command_sees_the_statements_before_it) {
    const std::size_t n = 1000;
    const auto hx = random_values<float>(n, -1, 1, 8);
    std::vector<float> plus_one(n), times_two(n);
    for (std::size_t i = 0; i < n; ++i) {
        plus_one[i] = hx[i] + 1.0f;
        times_two[i] = plus_one[i] * 2.0f;
    }
    kiln::vector<float> x(q, hx), y(q, n), z(q, n);
    const auto fused_after_y = [&](const char* what, const auto& command) {
        SCOPED_TRACE(what);
        y = 0.0f;
        z = 0.0f;
        kiln::fused(q, [&] {
            y = x + 1.0f;
            command();
        });
    };

    std::vector<float> read_back;
    fused_after_y("a host read", [&] { read_back = y.read(); });
    EXPECT_EQ(read_back, plus_one) << "a host read";

    float total = 0;
    fused_after_y("a reduction", [&] { total = kiln::sum(y); });
    float expected_total = 0;
    for (float v : plus_one) expected_total += v;
    EXPECT_NEAR(total, expected_total, 1e-3f * std::abs(expected_total) + 1e-3f) << "a reduction";

    const kiln::stencil<float> identity(q, {0.0f, 1.0f, 0.0f}, 1);
    fused_after_y("a stencil", [&] { z = y * identity; });
    EXPECT_EQ(z.read(), plus_one) << "a stencil";

    fused_after_y("an algorithm", [&] { kiln::inclusive_scan(y, z); });
    EXPECT_NEAR(z.read().back(), expected_total, 1e-3f * std::abs(expected_total) + 1e-3f)
        << "an algorithm";

    kiln::program twice(device(),
                        "kernel void twice(global const float* y, global float* z) {\n"
                        "    z[get_global_id(0)] = 2.0f * y[get_global_id(0)];\n"
                        "}\n");
    fused_after_y("a kernel launch",
                  [&] { twice.kernel("twice")(y.part(0), z.part(0)).launch(q, {n}); });
    EXPECT_EQ(z.read(), times_two) << "a kernel launch";

    const kiln::graph doubles = kiln::capture(q, [&] { z = y * 2.0f; });
    fused_after_y("a graph launch", [&] { doubles.launch(); });
    EXPECT_EQ(z.read(), times_two) << "a graph launch";

    // A capture inside the block: the statement before it runs, the one inside is the graph's.
    kiln::graph inner;
    fused_after_y("a capture", [&] { inner = kiln::capture(q, [&] { z = y * 2.0f; }); });
    EXPECT_EQ(inner.size(), 1u) << "a capture";
    EXPECT_EQ(y.read(), plus_one) << "a capture";
    EXPECT_EQ(z.read(), std::vector<float>(n, 0.0f)) << "a capture";
    inner.launch();
    EXPECT_EQ(z.read(), times_two) << "a capture";
}

/// graph_value::set writes the device at once: the statements held before it read the value it
/// replaces, as they would one kernel each (in the block's middle, and as its last statement).
TEST_P(fused_test, a_graph_value_set_comes_after_the_statements_before_it) {
    const std::size_t n = 500;
    const auto hx = random_values<float>(n, -1, 1, 9);
    kiln::vector<float> x(q, hx), y(q, n), z(q, n);
    kiln::graph_value<float> a(q, 2.0f);
    kiln::fused(q, [&] {
        y = a * x;
        a.set(5.0f);
        z = a * x;
    });
    std::vector<float> hy = y.read(), hz = z.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hy[i], 2.0f * hx[i]) << "element " << i;
        ASSERT_EQ(hz[i], 5.0f * hx[i]) << "element " << i;
    }
    kiln::fused(q, [&] {
        y = a * x;
        a.set(7.0f);
    });
    hy = y.read();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hy[i], 5.0f * hx[i]) << "element " << i;
}

TEST_P(fused_test, a_throw_leaves_the_statements_before_it_done_and_the_queue_usable) {
    const std::size_t n = 777;
    const auto hx = random_values<float>(n, -1, 1, 5);
    kiln::vector<float> x(q, hx), y(q, n), z(q, n), other(q, n + 1);
    y = 0.0f;
    z = 0.0f;
    EXPECT_THROW(kiln::fused(q,
                             [&] {
                                 y = x + 1.0f;
                                 z = y * y;
                                 z = other + x;  // sizes differ: throws before enqueueing
                                 y = 5.0f;
                             }),
                 kiln::invalid_argument_error);
    const std::vector<float> hy = y.read(), hz = z.read();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(hy[i], hx[i] + 1.0f) << "element " << i;
        ASSERT_EQ(hz[i], hy[i] * hy[i]) << "element " << i;
    }
    // Nothing is left held: eager statements and a new block run as usual.
    y = x * 3.0f;
    kiln::fused(q, [&] { z = y - x; });
    const std::vector<float> after = z.read();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(after[i], hx[i] * 3.0f - hx[i]);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(fused_test);

// The room of held statements: aligned, apart from each other, a statement larger than a block
// in one of its own, and the same room again once every statement has given its room back.
TEST(statement_arena, gives_aligned_separate_room_and_takes_it_again_once_all_is_back) {
    kiln::detail::statement_arena arena;
    const std::vector<std::pair<std::size_t, std::size_t>> asked = {
        {24, 8}, {1, 1}, {100, 64}, {40000, 16}, {8, 8}, {5000, 32}, {16000, 8}};
    std::vector<std::pair<std::uintptr_t, std::size_t>> given;
    for (const auto& [bytes, alignment] : asked) {
        const auto at = reinterpret_cast<std::uintptr_t>(arena.take(bytes, alignment));
        EXPECT_EQ(at % alignment, 0u) << bytes << " bytes";
        for (const auto& [other, other_bytes] : given)
            EXPECT_TRUE(at + bytes <= other || other + other_bytes <= at) << bytes << " bytes";
        given.emplace_back(at, bytes);
    }
    for (std::size_t i = 0; i < asked.size(); ++i) arena.take_back();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.take(24, 8)), given[0].first);
    arena.take_back();
}

}  // namespace
