// SPDX-License-Identifier: Apache-2.0
// The reproducible sum's host side (include/kiln/reproducible_reducers.hpp): the combination of
// states, twin of the device's (exact_sum_device.cpp), and the one rounding at the end.
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/error.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <limits>

namespace kiln::detail {
namespace {

constexpr std::int64_t top_mask = exact_sum_top_mask;

/// The top bin of the larger state, the other's digits added where its bins are among the
/// three kept: a grouping changes nothing, since the digits dropped are the same in any.
exact_sum_state combine(const exact_sum_state& a, const exact_sum_state& b) {
    const bool a_higher = (a.w & top_mask) >= (b.w & top_mask);
    const exact_sum_state& high = a_higher ? a : b;
    const exact_sum_state& low = a_higher ? b : a;
    exact_sum_state sum = high;
    const std::int64_t shift = (high.w & top_mask) - (low.w & top_mask);
    if (shift == 0) {
        sum.x += low.x;
        sum.y += low.y;
        sum.z += low.z;
    } else if (shift == 1) {
        sum.y += low.x;
        sum.z += low.y;
    } else if (shift == 2) {
        sum.z += low.x;
    }
    sum.w = (high.w & top_mask) | ((a.w | b.w) & ~top_mask);
    return sum;
}

__extension__ typedef unsigned __int128 wide;

/// The digits as one signed integer, in two's complement over 128 bits: the weights of bins
/// top, top - 1 and top - 2 are 2^64, 2^32 and 1 (the 2^31 elements a state may hold keep it
/// within 2^127).
wide digits_value(const exact_sum_state& s) {
    return (static_cast<wide>(s.x) << 64) + (static_cast<wide>(s.y) << 32) + static_cast<wide>(s.z);
}

int highest_bit(wide m) {
    const auto high = static_cast<std::uint64_t>(m >> 64);
    if (high != 0) return 127 - std::countl_zero(high);
    return 63 - std::countl_zero(static_cast<std::uint64_t>(m));
}

/// m 2^scale rounded once to T, to nearest and ties to even, subnormals and overflow included.
template <class T>
T round_once(wide m, int scale) {
    if (m == 0) return T(0);
    constexpr int precision = std::numeric_limits<T>::digits;
    constexpr int lowest_normal = std::numeric_limits<T>::min_exponent - 1;
    const int h = highest_bit(m);
    const int exponent = h + scale;
    const int kept = exponent >= lowest_normal ? precision : precision - (lowest_normal - exponent);
    const int dropped = h + 1 - kept;
    if (dropped <= 0) return std::ldexp(static_cast<T>(m), scale);
    wide mantissa = 0;
    if (dropped <= 128) {
        const wide half = wide(1) << (dropped - 1);
        const wide rest = dropped == 128 ? m : m & ((wide(1) << dropped) - 1);
        mantissa = dropped == 128 ? 0 : m >> dropped;
        if (rest > half || (rest == half && (mantissa & 1) != 0)) ++mantissa;
    }
    // At most 2^precision: the conversion is exact, and so is the scaling, but to infinity.
    return std::ldexp(static_cast<T>(mantissa), scale + dropped);
}

template <class T>
T round_exact_sum(const exact_sum_state& s) {
    const std::int64_t flags = s.w & ~top_mask;
    if ((flags & exact_sum_out_of_range) != 0)
        throw invalid_argument_error(
            "kiln::sum (reproducible)",
            "an element's magnitude reaches 2^973, beyond the reproducible sum's range of "
            "doubles");
    constexpr T infinity = std::numeric_limits<T>::infinity();
    if ((flags & exact_sum_nan) != 0 ||
        ((flags & exact_sum_plus_infinity) != 0 && (flags & exact_sum_minus_infinity) != 0))
        return std::numeric_limits<T>::quiet_NaN();
    if ((flags & exact_sum_plus_infinity) != 0) return infinity;
    if ((flags & exact_sum_minus_infinity) != 0) return -infinity;
    const int top = static_cast<int>(s.w & top_mask) - 1;
    if (top < 0) return T(0);
    const wide value = digits_value(s);
    const bool negative = (value >> 127) != 0;
    const T magnitude = round_once<T>(negative ? wide(0) - value : value, 32 * (top - 2) - 1074);
    return negative ? -magnitude : magnitude;
}

}  // namespace

exact_sum_state combine_exact_sums(const exact_sum_state& a, const exact_sum_state& b) {
    return combine(a, b);
}

float round_exact_sum_to_float(const exact_sum_state& s) {
    return round_exact_sum<float>(s);
}

double round_exact_sum_to_double(const exact_sum_state& s) {
    return round_exact_sum<double>(s);
}

}  // namespace kiln::detail
