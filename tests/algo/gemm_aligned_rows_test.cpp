// SPDX-License-Identifier: Apache-2.0
// kiln::gemm through the plan's copy of operands into aligned rows (gemm_aligned_rows.hpp), on
// every device: a product large enough for the plan to copy A and B (2^32 multiply-adds, n and
// m of 1024) whose rows vectors cannot read, under SIMT tiles that load by vectors, gives the
// host's result. The copies are kept in a vector while the product runs: what it reads must be
// the copies' scratch wherever they have moved.
#include <gtest/gtest.h>

#include <cstddef>
#include <kiln/kiln.hpp>
#include <random>
#include <string>
#include <vector>

#include "algo/gemm/gemm_plan.hpp"
#include "support/device_param.hpp"

namespace {

class gemm_aligned_rows_test : public kiln::test::device_queue_test {};

TEST_P(gemm_aligned_rows_test, copied_operands_multiply_as_the_host_does) {
    const std::size_t m = 1024, n = 1024, k = 4096, lda = k + 1, ldb = n + 3;
    // Small integers: every sum is exact in float, whatever the order.
    std::vector<float> a(m * lda), b(k * ldb);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
    const kiln::vector<float> va(q, a), vb(q, b);
    const kiln::matrix<float> C(q, m, n);
    const auto tiles = kiln::detail::parse_gemm_simt_tiles("64x64x8 t4x4 v4");
    ASSERT_TRUE(tiles);
    if (tiles->work_group_size() > device().properties().max_work_group_size)
        GTEST_SKIP() << "groups of " << tiles->work_group_size() << " work-items";
    const kiln::detail::scoped_gemm_strategy simt(kiln::detail::gemm_strategy::simt);
    const kiln::detail::scoped_algorithm_policy forced(
        kiln::detail::algorithm::gemm,
        kiln::detail::gemm_tuning_with(
            kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
                device().properties(), std::nullopt),
            *tiles));
    const kiln::detail::gemm_plan plan = kiln::detail::plan_gemm(
        device().properties(), {.forced = kiln::detail::gemm_strategy::simt,
                                .tuning = kiln::detail::gemm_tuning_with({}, *tiles),
                                .rows = m,
                                .columns = n,
                                .depth = k,
                                .a_copy_aligns = true,
                                .b_copy_aligns = true});
    ASSERT_TRUE(plan.align_a && plan.align_b) << "the plan no longer copies this product";
    kiln::gemm(C, kiln::matrix_view<float>(va, m, k, lda), kiln::matrix_view<float>(vb, k, n, ldb));
    const std::vector<float> got = C.read();
    // A sample of elements: the whole reference would take the host 4 10^9 multiply-adds.
    std::mt19937 generator(1);
    for (int sample = 0; sample < 300; ++sample) {
        const std::size_t i = generator() % m, j = generator() % n;
        double want = 0;
        for (std::size_t p = 0; p < k; ++p) want += double(a[i * lda + p]) * double(b[p * ldb + j]);
        ASSERT_EQ(got[i * n + j], want) << "C(" << i << ", " << j << ")";
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_aligned_rows_test);

}  // namespace
