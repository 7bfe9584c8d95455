// SPDX-License-Identifier: Apache-2.0
// kiln::gemm with kiln::half and kiln::bfloat16 inputs and a float or 16-bit C, on every device:
// through the SIMT kernel that converts each element, and through the tensor cores where the
// device has them; against a double host reference within the bound docs/linear_algebra.md
// promises.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "algo/gemm/gemm_plan.hpp"
#include "algo/gemm_feeds.hpp"
#include "algo/written_devices.hpp"
#include "support/device_param.hpp"
#include "support/reference_dot.hpp"
#include "support/uniform_values.hpp"

namespace {

using kiln::detail::gemm_element;
using kiln::detail::gemm_strategy;

using kiln::test::uniform_values;

template <class T>
double value_of(T x) {
    return double(float(x));
}

/// A rows x columns matrix stored with leading dimension `leading` in a vector of `columns`
/// rounded up to 8, so that the tensor-core kernel's 16-byte copies take it.
struct padded_layout {
    std::size_t rows, columns, leading;
    bool transposed = false;
    padded_layout(std::size_t r, std::size_t c, bool t)
        : rows(r), columns(c), leading((c + 7) / 8 * 8), transposed(t) {}
};

template <class T>
double op_at(const std::vector<T>& values, const padded_layout& x, std::size_t i, std::size_t p) {
    return x.transposed ? value_of(values[p * x.leading + i]) : value_of(values[i * x.leading + p]);
}

/// The bound docs/linear_algebra.md promises for 16-bit inputs: their products are exact in
/// float (at most 11 + 11 significant bits), so only float accumulation rounds: twice the float
/// bound, 4 (k + 2) eps_float (|alpha| sum |a| |b| + |beta| |c|), for the tensor cores' additions
/// of several products at a time.
double error_bound(std::size_t k, double scale) {
    return 4.0 * double(k + 2) * double(std::numeric_limits<float>::epsilon()) * scale;
}

class gemm_binary16_test : public kiln::test::device_queue_test {
  protected:
    bool tensor_cores() const {
        return kiln::detail::has_nvidia_tensor_cores(device().properties());
    }

    /// `body` with the SIMT strategy forced, then with the tensor cores (mma.sync, and wgmma)
    /// where the device has them.
    template <class Body>
    void on_every_strategy(Body&& body) {
        for (gemm_strategy s :
             {gemm_strategy::simt, gemm_strategy::tensor_cores, gemm_strategy::warpgroup_mma}) {
            if (s == gemm_strategy::tensor_cores && !tensor_cores()) continue;
            if (s == gemm_strategy::warpgroup_mma &&
                !kiln::detail::has_warpgroup_mma(device().properties()))
                continue;
            SCOPED_TRACE(std::string(kiln::detail::to_string(s)));
            const kiln::detail::scoped_gemm_strategy forced(s);
            body();
            // The row's feed above (tile maps); the others too.
            if (s == gemm_strategy::warpgroup_mma)
                kiln::test::with_other_warpgroup_feeds(device(), body);
        }
    }

    /// C (m x n) = alpha op(A) op(B) + beta C, A and B of T in vectors padded as padded_layout,
    /// C of Out (float, or T: rounded once from the float result).
    template <class T, class Out = float>
    void check_product(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb, float alpha,
                       float beta) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     (ta ? " Aᵀ" : "") + (tb ? " Bᵀ" : ""));
        const padded_layout la(ta ? k : m, ta ? m : k, ta), lb(tb ? n : k, tb ? k : n, tb);
        const auto a = uniform_values<T>(la.rows * la.leading, 1),
                   b = uniform_values<T>(lb.rows * lb.leading, 2);
        const auto c = uniform_values<Out>(m * n, 3);
        const kiln::matrix<T> A(q, la.rows, la.leading, a), B(q, lb.rows, lb.leading, b);
        const kiln::matrix<Out> C(q, m, n, c);
        const kiln::matrix_view<T> va(A.data(), la.rows, la.columns, la.leading),
            vb(B.data(), lb.rows, lb.columns, lb.leading);
        const kiln::gemm_options<float> options{.alpha = alpha, .beta = beta};
        if (ta && tb)
            kiln::gemm(C, kiln::transposed(va), kiln::transposed(vb), options);
        else if (ta)
            kiln::gemm(C, kiln::transposed(va), vb, options);
        else if (tb)
            kiln::gemm(C, va, kiln::transposed(vb), options);
        else
            kiln::gemm(C, va, vb, options);
        const std::vector<Out> got = C.read();
        // A 16-bit C adds its rounding: half an ulp of the result, or of the smallest normal.
        double unit_roundoff = 0, smallest = 0;
        if constexpr (!std::is_same_v<Out, float>) {
            unit_roundoff = value_of(std::numeric_limits<Out>::epsilon()) / 2;
            smallest = value_of(std::numeric_limits<Out>::min());
        }
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const auto [sum, magnitude] = kiln::test::reference_dot(
                    k, [&](std::size_t p) { return op_at(a, la, i, p); },
                    [&](std::size_t p) { return op_at(b, lb, p, j); });
                const double old = beta == 0 ? 0.0 : value_of(c[i * n + j]);
                const double want = alpha * sum + beta * old;
                const double bound =
                    error_bound(k, std::abs(alpha) * magnitude + std::abs(beta * old)) *
                        (1 + unit_roundoff) +
                    unit_roundoff * std::max(std::abs(want), smallest);
                if (!(std::abs(value_of(got[i * n + j]) - want) <= bound) && wrong++ < 5)
                    ADD_FAILURE() << "C(" << i << ", " << j << ") = " << value_of(got[i * n + j])
                                  << ", reference " << want << " (bound " << bound << ")";
            }
    }
};

// Sizes around the tensor cores' 128 x 128 x 32 blocks and 16 x 8 x 16 instructions, and the
// SIMT tiles; 1 and primes; k past several stages.
TEST_P(gemm_binary16_test, edge_tiles_of_every_size) {
    const std::vector<std::array<std::size_t, 3>> shapes{
        {1, 1, 1},     {5, 3, 1},      {17, 9, 15},    {65, 63, 9},
        {131, 37, 67}, {128, 128, 32}, {129, 130, 33}, {256, 136, 200}};
    on_every_strategy([&] {
        for (const auto& [m, n, k] : shapes) {
            check_product<kiln::bfloat16>(m, n, k, false, false, 1.0f, 0.0f);
            check_product<kiln::half>(m, n, k, false, false, 1.0f, 0.0f);
        }
    });
}

TEST_P(gemm_binary16_test, transposes_with_alpha_and_beta) {
    on_every_strategy([&] {
        for (const bool ta : {false, true})
            for (const bool tb : {false, true}) {
                check_product<kiln::bfloat16>(67, 45, 33, ta, tb, 2.0f, 1.0f);
                check_product<kiln::half>(160, 136, 48, ta, tb, -0.5f, 0.25f);
            }
    });
}

// 16-bit outputs: the float result rounded once to C's type, alpha and beta in float.
TEST_P(gemm_binary16_test, outputs_of_the_inputs_type) {
    on_every_strategy([&] {
        for (const auto& [m, n, k] :
             std::vector<std::array<std::size_t, 3>>{{1, 1, 1}, {65, 63, 9}, {129, 130, 33}}) {
            check_product<kiln::bfloat16, kiln::bfloat16>(m, n, k, false, false, 1.0f, 0.0f);
            check_product<kiln::half, kiln::half>(m, n, k, false, false, 1.0f, 0.0f);
        }
        check_product<kiln::half, kiln::half>(67, 45, 33, true, false, 2.0f, -1.0f);
        check_product<kiln::bfloat16, kiln::bfloat16>(160, 136, 48, false, true, -0.5f, 0.25f);
    });
}

// Past half's largest finite value, C is infinity; NaN in C with beta != 0 stays NaN.
TEST_P(gemm_binary16_test, half_outputs_overflow_to_infinity) {
    on_every_strategy([&] {
        const kiln::matrix<kiln::half> A(
            q, 1, 2, std::vector<kiln::half>{kiln::half(60000.0f), kiln::half(60000.0f)}),
            B(q, 2, 2, std::vector<kiln::half>(4, kiln::half(1.0f)));
        const kiln::matrix<kiln::half> C(
            q, 1, 2,
            std::vector<kiln::half>{kiln::half(0.0f),
                                    kiln::half(std::numeric_limits<float>::quiet_NaN())});
        kiln::gemm(C, A, B, {.alpha = 1.0f, .beta = 1.0f});
        const std::vector<kiln::half> got = C.read();
        EXPECT_EQ(value_of(got[0]), std::numeric_limits<double>::infinity());
        EXPECT_TRUE(std::isnan(value_of(got[1])));
    });
}

// Rows that no 16-byte copy can take (the plan's SIMT kernel, whichever strategy is forced), and
// batches.
TEST_P(gemm_binary16_test, unaligned_views_and_batches) {
    const std::size_t m = 37, n = 29, k = 43, batch = 3;
    const auto a = uniform_values<kiln::half>(m * (k + 3) + 5, 4),
               b = uniform_values<kiln::half>(k * n, 5);
    const auto as = uniform_values<kiln::bfloat16>(batch * m * 48, 6),
               bs = uniform_values<kiln::bfloat16>(batch * 48 * n, 7);
    on_every_strategy([&] {
        const kiln::matrix<kiln::half> A(q, 1, a.size(), a), B(q, k, n, b);
        const kiln::matrix<float> C(q, m, n);
        kiln::gemm(C, kiln::matrix_view<kiln::half>(A.data(), m, k, k + 3, 5), B);
        const std::vector<float> got = C.read();
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const auto [sum, magnitude] = kiln::test::reference_dot(
                    k, [&](std::size_t p) { return value_of(a[5 + i * (k + 3) + p]); },
                    [&](std::size_t p) { return value_of(b[p * n + j]); });
                EXPECT_LE(std::abs(got[i * n + j] - sum), error_bound(k, magnitude)) << i << j;
            }
        const kiln::matrix<kiln::bfloat16> As(q, m, 48, batch, as), Bs(q, 48, n, batch, bs);
        const kiln::matrix<float> Cs(q, m, n, batch);
        kiln::gemm_batched(Cs, As, Bs);
        const std::vector<float> cs = Cs.read();
        for (std::size_t e = 0; e < batch; ++e)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    const auto [sum, magnitude] = kiln::test::reference_dot(
                        48, [&](std::size_t p) { return value_of(as[e * m * 48 + i * 48 + p]); },
                        [&](std::size_t p) { return value_of(bs[e * 48 * n + p * n + j]); });
                    EXPECT_LE(std::abs(cs[e * m * n + i * n + j] - sum), error_bound(48, magnitude))
                        << e << " " << i << " " << j;
                }
    });
}

// k = 0: C = beta C.
TEST_P(gemm_binary16_test, empty_inner_dimension) {
    on_every_strategy([&] {
        const kiln::matrix<kiln::bfloat16> A(q, 2, 0), B(q, 0, 3);
        const kiln::matrix<float> C(q, 2, 3, std::vector<float>{1, 2, 3, 4, 5, 6});
        kiln::gemm(C, A, B, {.alpha = 2.0f, .beta = 3.0f});
        EXPECT_EQ(C.read(), (std::vector<float>{3, 6, 9, 12, 15, 18}));
    });
}

// More blocks than the device has multiprocessors, over batch entries of 2 x 2 blocks (edge
// blocks mostly) and 6 k tiles, so that a persistent work-group takes several blocks, its
// stages' phases running on from block to block, and bands end short; under both schedules.
TEST_P(gemm_binary16_test, tile_maps_take_more_blocks_than_multiprocessors) {
    if (!kiln::detail::has_warpgroup_mma(device().properties()))
        GTEST_SKIP() << device().name() << " has no wgmma through CUDA";
    const std::size_t m = 260, n = 130, k = 330,
                      batch = device().properties().compute_units / 2 + 1;
    const auto as = uniform_values<kiln::bfloat16>(batch * m * k, 14),
               bs = uniform_values<kiln::bfloat16>(batch * k * n, 15);
    const kiln::matrix<kiln::bfloat16> As(q, m, k, batch, as), Bs(q, k, n, batch, bs);
    const auto products = [&] {
        const kiln::matrix<float> Cs(q, m, n, batch);
        kiln::gemm_batched(Cs, As, Bs);
        const std::vector<float> cs = Cs.read();
        std::size_t wrong = 0;
        for (std::size_t e = 0; e < batch; ++e)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    const auto [sum, magnitude] = kiln::test::reference_dot(
                        k, [&](std::size_t p) { return value_of(as[(e * m + i) * k + p]); },
                        [&](std::size_t p) { return value_of(bs[(e * k + p) * n + j]); });
                    if (!(std::abs(cs[(e * m + i) * n + j] - sum) <= error_bound(k, magnitude)) &&
                        wrong++ < 5)
                        ADD_FAILURE() << "C(" << e << ", " << i << ", " << j << ")";
                }
    };
    const kiln::detail::scoped_gemm_strategy forced(gemm_strategy::warpgroup_mma);
    products();
    kiln::test::with_other_warpgroup_feeds(device(), products);
}

TEST_P(gemm_binary16_test, the_plan_takes_the_tensor_cores_where_the_device_has_them) {
    if (!tensor_cores())
        GTEST_SKIP() << device().name()
                     << " has no NVIDIA tensor cores of compute capability 8.0 or later";
    kiln::detail::gemm_plan_input input{.element = gemm_element::f32};
    input.inputs = gemm_element::bf16;
    input.tensor_core_layout = true;
    // wgmma on Hopper through CUDA, mma.sync elsewhere.
    EXPECT_EQ(kiln::detail::plan_gemm(device().properties(), input).strategy,
              kiln::detail::has_warpgroup_mma(device().properties()) ? gemm_strategy::warpgroup_mma
                                                                     : gemm_strategy::tensor_cores);
}

TEST_P(gemm_binary16_test, bad_input_is_rejected_before_any_device_work) {
    const kiln::matrix<kiln::half> A(q, 4, 5, uniform_values<kiln::half>(20, 8)),
        B(q, 6, 3, uniform_values<kiln::half>(18, 9));
    const kiln::matrix<float> C(q, 4, 3, std::vector<float>(12, 7.0f));
    try {
        kiln::gemm(C, A, B);
        ADD_FAILURE() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("inner dimensions differ: op(A) is 4x5, op(B) 6x3"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(C.read(), std::vector<float>(12, 7.0f));
    EXPECT_THROW(kiln::matrix<kiln::half>(q, 2, 2, uniform_values<kiln::half>(3, 10)),
                 kiln::invalid_argument_error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_binary16_test);

// Inputs of two types, 16-bit outputs of other inputs and double outputs of 16-bit inputs do
// not compile.
template <class C, class A, class B>
concept multipliable = requires(const C& c, const A& a, const B& b) {
    kiln::gemm(c, a, b);
};
using half_matrix = kiln::matrix<kiln::half>;
using bf16_matrix = kiln::matrix<kiln::bfloat16>;
static_assert(multipliable<kiln::matrix<float>, half_matrix, half_matrix>);
static_assert(
    multipliable<kiln::matrix<float>, bf16_matrix, kiln::transposed_matrix<kiln::bfloat16>>);
static_assert(!multipliable<kiln::matrix<float>, half_matrix, bf16_matrix>);
static_assert(multipliable<half_matrix, half_matrix, half_matrix>);
static_assert(multipliable<bf16_matrix, bf16_matrix, kiln::transposed_matrix<kiln::bfloat16>>);
static_assert(!multipliable<half_matrix, bf16_matrix, bf16_matrix>);
static_assert(!multipliable<bf16_matrix, kiln::matrix<float>, kiln::matrix<float>>);
static_assert(!multipliable<kiln::matrix<double>, bf16_matrix, bf16_matrix>);

kiln::device_properties gpu(std::string vendor, int major, int minor) {
    kiln::device_properties props =
        kiln::test::written_by_hand(kiln::device_type::gpu, std::move(vendor));
    props.compute_capability_major = major;
    props.compute_capability_minor = minor;
    return props;
}

kiln::detail::gemm_plan_input binary16(gemm_element inputs, bool aligned,
                                       gemm_strategy forced = gemm_strategy::automatic) {
    kiln::detail::gemm_plan_input input{.element = gemm_element::f32, .forced = forced};
    input.inputs = inputs;
    input.tensor_core_layout = aligned;
    return input;
}

TEST(gemm_binary16_plan, tensor_cores_on_nvidia_from_compute_capability_8_through_both_backends) {
    using kiln::detail::plan_gemm;
    const auto a100 = gpu("NVIDIA Corporation", 8, 0), turing = gpu("NVIDIA Corporation", 7, 5),
               amd = gpu("Advanced Micro Devices, Inc.", 0, 0);
    auto cuda = gpu("NVIDIA Corporation", 9, 0);
    cuda.backend = kiln::backend_kind::cuda;
    EXPECT_EQ(plan_gemm(a100, binary16(gemm_element::bf16, true)).strategy,
              gemm_strategy::tensor_cores);
    EXPECT_EQ(plan_gemm(cuda, binary16(gemm_element::f16, true)).strategy,
              gemm_strategy::tensor_cores);
    EXPECT_EQ(plan_gemm(cuda, binary16(gemm_element::f16, true)).tensor.work_group_size(), 256u);
    // Rows no 16-byte copy takes, older NVIDIA devices, other vendors, float inputs and a forced
    // SIMT strategy: the SIMT kernel.
    EXPECT_EQ(plan_gemm(a100, binary16(gemm_element::bf16, false)).strategy, gemm_strategy::simt);
    EXPECT_EQ(plan_gemm(turing, binary16(gemm_element::bf16, true)).strategy, gemm_strategy::simt);
    EXPECT_EQ(plan_gemm(amd, binary16(gemm_element::f16, true)).strategy, gemm_strategy::simt);
    EXPECT_EQ(plan_gemm(a100, binary16(gemm_element::bf16, true, gemm_strategy::simt)).strategy,
              gemm_strategy::simt);
    EXPECT_EQ(plan_gemm(cuda, binary16(gemm_element::f32, true)).strategy, gemm_strategy::simt);
    EXPECT_EQ(
        plan_gemm(cuda, binary16(gemm_element::f32, true, gemm_strategy::tensor_cores)).strategy,
        gemm_strategy::simt);
    // CPU devices have no kernel of their own for 16-bit inputs: the SIMT one converts them.
    kiln::device_properties cpu = gpu("pocl", 0, 0);
    cpu.type = kiln::device_type::cpu;
    cpu.unified_memory = true;
    EXPECT_EQ(plan_gemm(cpu, binary16(gemm_element::f16, true)).strategy, gemm_strategy::simt);
    EXPECT_EQ(plan_gemm(cpu, binary16(gemm_element::f16, true, gemm_strategy::cpu_tiles)).strategy,
              gemm_strategy::simt);
}

// wgmma through CUDA on compute capability 9.0 where the tiles' local memory fits; mma.sync on
// NVIDIA's OpenCL, where it is forced, and where the local memory is short.
TEST(gemm_binary16_plan, warpgroup_mma_on_hopper_through_cuda) {
    using kiln::detail::plan_gemm;
    auto hopper_cuda = gpu("NVIDIA Corporation", 9, 0);
    hopper_cuda.backend = kiln::backend_kind::cuda;
    hopper_cuda.shared_memory_per_block_bytes = 227 * 1024;
    auto hopper_opencl = hopper_cuda;
    hopper_opencl.backend = kiln::backend_kind::opencl;
    const auto plan = plan_gemm(hopper_cuda, binary16(gemm_element::bf16, true));
    EXPECT_EQ(plan.strategy, gemm_strategy::warpgroup_mma);
    EXPECT_TRUE(plan.warpgroup.tile_maps);
    EXPECT_EQ(plan.warpgroup.work_group_size(), 384u);
    EXPECT_LE(plan.warpgroup.local_bytes(), hopper_cuda.shared_memory_per_block_bytes);
    EXPECT_EQ(plan_gemm(hopper_opencl, binary16(gemm_element::bf16, true)).strategy,
              gemm_strategy::tensor_cores);
    EXPECT_EQ(plan_gemm(hopper_cuda, binary16(gemm_element::f16, true, gemm_strategy::tensor_cores))
                  .strategy,
              gemm_strategy::tensor_cores);
    EXPECT_EQ(plan_gemm(hopper_cuda, binary16(gemm_element::f16, false)).strategy,
              gemm_strategy::simt);
    auto small = hopper_cuda;
    small.shared_memory_per_block_bytes = 48 * 1024;
    EXPECT_EQ(plan_gemm(small, binary16(gemm_element::f16, true)).strategy,
              gemm_strategy::tensor_cores);
    // Forced where it cannot run: an error naming it; forced for doubles: mma.sync's kernel.
    EXPECT_THROW(
        plan_gemm(hopper_opencl, binary16(gemm_element::bf16, true, gemm_strategy::warpgroup_mma)),
        kiln::invalid_argument_error);
    auto doubles = binary16(gemm_element::f64, true, gemm_strategy::warpgroup_mma);
    doubles.element = gemm_element::f64;
    EXPECT_EQ(plan_gemm(hopper_cuda, doubles).strategy, gemm_strategy::tensor_cores);
    const kiln::detail::gemm_warpgroup_tiles odd{
        .block_rows = 96, .block_columns = 256, .stages = 4};
    auto forced_tiles = binary16(gemm_element::bf16, true);
    forced_tiles.tuning = kiln::detail::gemm_tuning_with({}, odd);
    EXPECT_THROW(plan_gemm(hopper_cuda, forced_tiles), kiln::invalid_argument_error);
}

}  // namespace
