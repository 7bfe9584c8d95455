// SPDX-License-Identifier: Apache-2.0
// The reproducible sum's powers of two built from bits (src/algo/reduce/exact_sum_device.cpp)
// against the device's own ldexp, which they replace: every rounder, limit and grid of the 64
// tops, the digits of bins holding whole multiples of their grids, and the exact rounding's last
// scaling over every exponent it reaches, equal on every device.
#include <gtest/gtest.h>

#include <kiln/detail/source_builder.hpp>
#include <kiln/kiln.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class reproducible_bins_test : public kiln::test::device_queue_test {};

/// Exponents of the exact rounding's scaling, from the lowest grid's (32 (0 - 2) - 1074) to
/// past the largest double's.
constexpr int lowest_scale = -1138, scales = 2200;

/// Work-item i checks, for k = lowest_scale + i, kiln_scale(m, k) against ldexp(m, k) where the
/// result is exact (k >= -1074 for whole m below 2^53) or overflows; the first 64 also check
/// top i's rounders, limit, lowest grid and digits. Each writes the mask of what differed.
std::string checks_source() {
    kiln::detail::source_builder b;
    kiln::detail::define_exact_rounding(b);
    b.begin_kernel("kiln_bins_check");
    b.parameter("global int* wrong");
    b.begin_body();
    b.line("const int i = (int)get_global_id(0);");
    b.line("int mask = 0;");
    b.line("const int k = " + std::to_string(lowest_scale) + " + i;");
    b.open("if (k >= -1074)");
    b.line("const double whole[3] = {1.0, 3.0, 9007199254740991.0};");
    b.line(
        "for (int m = 0; m < 3; ++m) if (kiln_scale(whole[m], k) != ldexp(whole[m], k)) mask |= "
        "1;");
    b.close();
    b.open("if (i < 64)");
    b.line("const int top = i;");
    b.line("if (kiln_exact_rounder(32 * top - 1022) != ldexp(1.5, 32 * top - 1022)) mask |= 2;");
    b.line("if (kiln_exact_rounder(32 * top - 1054) != ldexp(1.5, 32 * top - 1054)) mask |= 4;");
    b.line("if (kiln_exact_rounder(32 * top - 1086) != ldexp(1.5, 32 * top - 1086)) mask |= 8;");
    b.line("if (kiln_pow2(32 * top - 1043) != ldexp(1.0, 32 * top - 1043)) mask |= 16;");
    b.line("if (kiln_pow2(32 * top - 1086) != ldexp(1.0, 32 * top - 1086)) mask |= 32;");
    // Bins j = 0, 1, 2 below the top, where their grids are on doubles' (top - j >= 0).
    b.line("const double above[3] = {1.0, 0x1p32, 0x1p64};");
    b.line("const long counts[4] = {1L, -3L, 4503599627370497L, -9007199254740991L};");
    b.open("for (int j = 0; j < 3 && j <= top; ++j)");
    b.open("for (int c = 0; c < 4; ++c)");
    b.line("const double bin = ldexp((double)counts[c], 32 * (top - j) - 1074);");
    b.line("if (kiln_exact_digits(bin, top, above[j]) != counts[c]) mask |= 64;");
    b.close();
    b.close();
    b.close();
    b.line("wrong[i] = mask;");
    b.end_kernel();
    return b.str();
}

TEST_P(reproducible_bins_test, powers_of_two_from_bits_equal_ldexp) {
    if (!has_double()) GTEST_SKIP() << "the bins are doubles";
    const kiln::program program(device(), checks_source());
    kiln::buffer<int> wrong(q, std::vector<int>(scales, -1));
    const std::vector<int> got =
        wrong.read(q, program.kernel("kiln_bins_check")(wrong).launch(q, {scales}));
    for (int i = 0; i < scales; ++i)
        EXPECT_EQ(got[i], 0) << "work-item " << i << " (scale 2^" << lowest_scale + i
                             << (i < 64 ? ", top " + std::to_string(i) : std::string()) << ")";
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reproducible_bins_test);

}  // namespace
