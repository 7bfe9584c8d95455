// kiln::fused: consecutive element-wise statements as one kernel, bit for bit the results of
// the same statements run one kernel each; what ends a group (another size, a view read, a
// reduction, a host read) and a statement that throws inside the block.
#include <bit>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <kiln/reduce.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

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
    using word = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
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

/// The classical Runge-Kutta step of examples/expr/lorenz_ensemble.cpp.
struct lorenz_rk4 {
    explicit lorenz_rk4(const kiln::multivector<double, 3>& like, const kiln::vector<double>& r)
        : k1(like), k2(like), k3(like), k4(like), x(like), R(r) {}
    void system(const kiln::multivector<double, 3>& s, kiln::multivector<double, 3>& dsdt) const {
        const double sigma = 10.0, beta = 8.0 / 3.0;
        dsdt = std::make_tuple(sigma * (s(1) - s(0)), R * s(0) - s(1) - s(0) * s(2),
                               s(0) * s(1) - beta * s(2));
    }
    void step(kiln::multivector<double, 3>& X, double dt) {
        system(X, k1);
        x = X + (dt / 2) * k1;
        system(x, k2);
        x = X + (dt / 2) * k2;
        system(x, k3);
        x = X + dt * k3;
        system(x, k4);
        X = X + (dt / 6) * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    kiln::multivector<double, 3> k1, k2, k3, k4, x;
    const kiln::vector<double>& R;
};

TEST_P(fused_test, a_lorenz_rk4_step_is_one_kernel_with_the_eager_bits) {
    if (!has_double()) GTEST_SKIP() << "no double precision";
    const std::size_t n = 1024;
    std::vector<double> r(n), start(3 * n, 10.0);
    for (std::size_t i = 0; i < n; ++i) r[i] = 0.1 + 49.9 * double(i) / double(n - 1);
    kiln::vector<double> R(q, r);
    kiln::multivector<double, 3> eager(q, start), fused(q, start);
    lorenz_rk4 eager_stepper(eager, R), fused_stepper(fused, R);
    std::size_t eager_launches = 0, fused_launches = 0, generated_after_first_step = 0;
    for (int k = 0; k < 20; ++k) {
        eager_launches += launches_during([&] { eager_stepper.step(eager, 0.01); });
        fused_launches +=
            launches_during([&] { kiln::fused(q, [&] { fused_stepper.step(fused, 0.01); }); });
        if (k == 0) generated_after_first_step = kiln::expression_cache::stats().sources_generated;
    }
    EXPECT_EQ(eager_launches, 20u * 8u);
    EXPECT_EQ(fused_launches, 20u);
    // The group's kernel is generated once, then found again.
    EXPECT_EQ(kiln::expression_cache::stats().sources_generated, generated_after_first_step);
    EXPECT_EQ(bits_of(fused.read()), bits_of(eager.read()));
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

}  // namespace
