// SPDX-License-Identifier: Apache-2.0
// The reproducible sum's bins (include/kiln/reproducible_reducers.hpp): the device text that
// turns an element into digits and adds states, its host twin, and the one rounding at the end.
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/error.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <limits>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

/// The bits of exact_sum_state::w that hold top + 1; the flags lie above them.
constexpr std::int64_t top_mask = 255;

std::string text(std::int64_t value) {
    return std::to_string(value);
}

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

void define_exact_sum(source_builder& source) {
    source.turn_off_contraction();
    // A work-item's running bins. rounder_j = 1.5 2^(a_j + 52) has the ulp 2^a_j, bin j's grid
    // (a_j = 32 (top - j) - 1074): (rounder_j + v) - rounder_j is v rounded onto that grid,
    // exactly and ties to even whatever the bins hold, while |v| < 2^(a_j + 31) (limit, for the
    // top bin). That limit, half the grid of the bin above, is what makes dropping bins safe:
    // an element whose bins are all dropped would round to 0 on the kept grids as well. A bin sums
    // 2^19 such values before it could leave 53 bits; then the flush moves it into 64-bit digits.
    // Below bin 0 nothing is left to round, so rounders there may be subnormal or zero.
    const std::string top = text(top_mask), nan = text(exact_sum_nan),
                      plus_infinity = text(exact_sum_plus_infinity),
                      minus_infinity = text(exact_sum_minus_infinity),
                      out_of_range = text(exact_sum_out_of_range);
    source.define("exact_sum",
                  "typedef struct {\n"
                  "    double bin0, bin1, bin2, rounder0, rounder1, rounder2, limit;\n"
                  "    long digits0, digits1, digits2;\n"
                  "    int top, count, flags;\n"
                  "} kiln_exact_accumulator;\n"
                  "void kiln_exact_set_top(kiln_exact_accumulator* a, int top) {\n"
                  "    a->top = top;\n"
                  "    a->rounder0 = ldexp(1.5, 32 * top - 1022);\n"
                  "    a->rounder1 = ldexp(1.5, 32 * top - 1054);\n"
                  "    a->rounder2 = ldexp(1.5, 32 * top - 1086);\n"
                  "    a->limit = ldexp(1.0, 32 * top - 1043);\n"
                  "}\n"
                  "kiln_exact_accumulator kiln_exact_start(void) {\n"
                  "    kiln_exact_accumulator a;\n"
                  "    a.bin0 = 0.0; a.bin1 = 0.0; a.bin2 = 0.0;\n"
                  "    a.digits0 = 0; a.digits1 = 0; a.digits2 = 0;\n"
                  "    a.count = 0; a.flags = 0;\n"
                  "    kiln_exact_set_top(&a, 0);\n"
                  "    return a;\n"
                  "}\n"
                  "void kiln_exact_flush(kiln_exact_accumulator* a) {\n"
                  "    a->digits0 += (long)ldexp(a->bin0, 1074 - 32 * a->top);\n"
                  "    a->digits1 += (long)ldexp(a->bin1, 1106 - 32 * a->top);\n"
                  "    a->digits2 += (long)ldexp(a->bin2, 1138 - 32 * a->top);\n"
                  "    a->bin0 = 0.0; a->bin1 = 0.0; a->bin2 = 0.0;\n"
                  "    a->count = 0;\n"
                  "}\n"
                  "void kiln_exact_raise(kiln_exact_accumulator* a, double v) {\n"
                  "    if (isnan(v)) { a->flags |= " +
                      nan + "; return; }\n" + "    if (isinf(v)) { a->flags |= v > 0.0 ? " +
                      plus_infinity + " : " + minus_infinity + "; return; }\n" +
                      "    const int top = (ilogb(v) + 1075) / 32;\n"
                      "    if (top > 63) { a->flags |= " +
                      out_of_range + "; return; }\n" +
                      "    kiln_exact_flush(a);\n"
                      "    const int shift = top - a->top;\n"
                      "    a->digits2 = shift == 1 ? a->digits1 : shift == 2 ? a->digits0 : 0;\n"
                      "    a->digits1 = shift == 1 ? a->digits0 : 0;\n"
                      "    a->digits0 = 0;\n"
                      "    kiln_exact_set_top(a, top);\n"
                      "}\n"
                      "void kiln_exact_add(kiln_exact_accumulator* a, double v) {\n"
                      "    if (!(fabs(v) < a->limit)) {\n"
                      "        kiln_exact_raise(a, v);\n"
                      "        if (!(fabs(v) < a->limit)) return;\n"
                      "    }\n"
                      "    const double q0 = (a->rounder0 + v) - a->rounder0;\n"
                      "    const double r0 = v - q0;\n"
                      "    const double q1 = (a->rounder1 + r0) - a->rounder1;\n"
                      "    const double q2 = (a->rounder2 + (r0 - q1)) - a->rounder2;\n"
                      "    a->bin0 += q0; a->bin1 += q1; a->bin2 += q2;\n"
                      "    if (++a->count >= 524288) kiln_exact_flush(a);\n"
                      "}\n"
                      "long4 kiln_exact_state(kiln_exact_accumulator* a) {\n"
                      "    kiln_exact_flush(a);\n"
                      "    return (long4)(a->digits0, a->digits1, a->digits2, (long)(a->top + 1) | "
                      "(long)a->flags);\n"
                      "}\n"
                      "long4 kiln_exact_sum_combine(long4 a, long4 b) {\n"
                      "    const int a_higher = (a.w & " +
                      top + ") >= (b.w & " + top + ");\n" +
                      "    const long4 high = a_higher ? a : b;\n"
                      "    const long4 low = a_higher ? b : a;\n"
                      "    const long shift = (high.w & " +
                      top + ") - (low.w & " + top + ");\n" +
                      "    long4 s = high;\n"
                      "    if (shift == 0) { s.x += low.x; s.y += low.y; s.z += low.z; }\n"
                      "    else if (shift == 1) { s.y += low.x; s.z += low.y; }\n"
                      "    else if (shift == 2) { s.z += low.x; }\n"
                      "    s.w = (high.w & " +
                      top + ") | ((a.w | b.w) & ~" + top + "L);\n" +
                      "    return s;\n"
                      "}\n");
}

void define_exact_rounding(source_builder& source) {
    define_exact_sum(source);
    const std::string top = text(top_mask), nan = text(exact_sum_nan),
                      plus_infinity = text(exact_sum_plus_infinity),
                      minus_infinity = text(exact_sum_minus_infinity),
                      out_of_range = text(exact_sum_out_of_range);
    // kiln_exact_round is round_exact_sum's twin: the digits as one 128-bit integer in two's
    // complement (hi, lo), its magnitude cut to the bits the type keeps at that exponent, then
    // rounded to nearest, ties to even, by the first bit dropped and those below it. Its NaN has
    // the host's bits (devices' NAN macros differ: PoCL's is 0x7fffffff).
    // One value's state, its digits as a fresh accumulator's after adding it (whose bins are
    // raised to the value's top), in units of their grids.
    std::string state_of = "long4 kiln_exact_state_of(double v) {\n";
    state_of += "    if (v == 0.0) return (long4)(0);\n";
    state_of += "    if (isnan(v)) return (long4)(0, 0, 0, " + nan + ");\n";
    state_of += "    if (isinf(v)) return (long4)(0, 0, 0, v > 0.0 ? " + plus_infinity + " : " +
                minus_infinity + ");\n";
    state_of += "    const int top = (ilogb(v) + 1075) / 32;\n";
    state_of += "    if (top > 63) return (long4)(0, 0, 0, " + out_of_range + ");\n";
    state_of +=
        "    const double rounder0 = ldexp(1.5, 32 * top - 1022);\n"
        "    const double rounder1 = ldexp(1.5, 32 * top - 1054);\n"
        "    const double rounder2 = ldexp(1.5, 32 * top - 1086);\n"
        "    const double q0 = (rounder0 + v) - rounder0;\n"
        "    const double r0 = v - q0;\n"
        "    const double q1 = (rounder1 + r0) - rounder1;\n"
        "    const double q2 = (rounder2 + (r0 - q1)) - rounder2;\n"
        "    return (long4)((long)ldexp(q0, 1074 - 32 * top), (long)ldexp(q1, 1106 - 32 * top),\n"
        "                   (long)ldexp(q2, 1138 - 32 * top), (long)(top + 1));\n"
        "}\n";
    source.define("exact_state_of", state_of);
    source.define(
        "exact_rounding",
        "long4 kiln_exact_peek(const kiln_exact_accumulator* a) {\n"
        "    return (long4)(a->digits0 + (long)ldexp(a->bin0, 1074 - 32 * a->top),\n"
        "                   a->digits1 + (long)ldexp(a->bin1, 1106 - 32 * a->top),\n"
        "                   a->digits2 + (long)ldexp(a->bin2, 1138 - 32 * a->top),\n"
        "                   (long)(a->top + 1) | (long)a->flags);\n"
        "}\n"
        "kiln_exact_accumulator kiln_exact_resume(long4 s) {\n"
        "    kiln_exact_accumulator a = kiln_exact_start();\n"
        "    const int top = (int)(s.w & " +
            top + ") - 1;\n" +
            "    if (top > 0) kiln_exact_set_top(&a, top);\n"
            "    a.digits0 = s.x; a.digits1 = s.y; a.digits2 = s.z;\n"
            "    a.flags = (int)(s.w & ~" +
            top + "L);\n" +
            "    return a;\n"
            "}\n"
            "int kiln_bit128(ulong hi, ulong lo, int k) {\n"
            "    return (int)((k < 64 ? lo >> k : hi >> (k - 64)) & 1UL);\n"
            "}\n"
            "int kiln_any_below128(ulong hi, ulong lo, int k) {\n"
            "    if (k <= 0) return 0;\n"
            "    if (k < 64) return (lo & ((1UL << k) - 1UL)) != 0UL;\n"
            "    if (lo != 0UL) return 1;\n"
            "    return k > 64 && (hi & ((1UL << (k - 64)) - 1UL)) != 0UL;\n"
            "}\n"
            "double kiln_exact_round(long4 s, int precision, int lowest_normal) {\n"
            "    const long flags = s.w & ~" +
            top + "L;\n" + "    if ((flags & (" + nan + " | " + out_of_range + ")) != 0 ||\n" +
            "        ((flags & " + plus_infinity + ") != 0 && (flags & " + minus_infinity +
            ") != 0))\n" +
            "        return as_double(0x7ff8000000000000UL);\n"
            "    if ((flags & " +
            plus_infinity + ") != 0) return (double)INFINITY;\n" + "    if ((flags & " +
            minus_infinity + ") != 0) return -(double)INFINITY;\n" +
            "    const int top = (int)(s.w & " + top + ") - 1;\n" +
            "    if (top < 0) return 0.0;\n"
            "    ulong lo = (ulong)s.z;\n"
            "    long hi = s.z >> 63;\n"
            "    const ulong middle = (ulong)s.y << 32;\n"
            "    lo += middle;\n"
            "    hi += (s.y >> 32) + (lo < middle ? 1L : 0L) + s.x;\n"
            "    const int negative = hi < 0;\n"
            "    if (negative) {\n"
            "        lo = ~lo + 1UL;\n"
            "        hi = ~hi + (lo == 0UL ? 1L : 0L);\n"
            "    }\n"
            "    const ulong mhi = (ulong)hi;\n"
            "    if (mhi == 0UL && lo == 0UL) return 0.0;\n"
            "    const int h = mhi != 0UL ? 127 - (int)clz(mhi) : 63 - (int)clz(lo);\n"
            "    const int scale = 32 * (top - 2) - 1074;\n"
            "    const int exponent = h + scale;\n"
            "    const int kept = exponent >= lowest_normal ? precision\n"
            "                                               : precision - (lowest_normal - "
            "exponent);\n"
            "    const int dropped = h + 1 - kept;\n"
            "    double magnitude = 0.0;\n"
            "    if (dropped <= 0) {\n"
            "        magnitude = ldexp((double)lo, scale);\n"
            "    } else if (dropped <= 128) {\n"
            "        ulong mantissa = dropped >= 128 ? 0UL\n"
            "                         : dropped >= 64 ? mhi >> (dropped - 64)\n"
            "                         : (lo >> dropped) | (mhi << (64 - dropped));\n"
            "        if (kiln_bit128(mhi, lo, dropped - 1) &&\n"
            "            (kiln_any_below128(mhi, lo, dropped - 1) || (mantissa & 1UL) != 0UL))\n"
            "            ++mantissa;\n"
            "        magnitude = ldexp((double)mantissa, scale + dropped);\n"
            "    }\n"
            "    return negative ? -magnitude : magnitude;\n"
            "}\n");
}

std::string exact_sum_add_several(source_builder& source, const std::string& acc,
                                  const std::vector<std::string>& values) {
    define_exact_sum(source);
    const std::size_t k = values.size();
    const std::string name = "kiln_exact_add" + std::to_string(k);
    std::string parameters, all_within, one_by_one;
    for (std::size_t i = 0; i < k; ++i) {
        const std::string v = "v" + std::to_string(i);
        parameters += ", double " + v;
        all_within += std::string(i > 0 ? " && " : "") + "fabs(" + v + ") < a->limit";
        one_by_one += "kiln_exact_add(a, " + v + "); ";
    }
    // Each value's roundings as kiln_exact_add's, independent of the others'; the digits of a
    // bin summed pairwise first, exactly (k values' digits, below 2^(a_j + 33) each, fit 53 bits),
    // then added to the bin once.
    std::string text = "void " + name + "(kiln_exact_accumulator* a" + parameters + ") {\n" +
                       "    if (!(" + all_within + ")) { " + one_by_one + "return; }\n";
    std::vector<std::string> digits[3];
    for (std::size_t i = 0; i < k; ++i) {
        const std::string v = "v" + std::to_string(i), n = std::to_string(i);
        text += "    const double q0_" + n + " = (a->rounder0 + " + v + ") - a->rounder0;\n" +
                "    const double r0_" + n + " = " + v + " - q0_" + n + ";\n" +
                "    const double q1_" + n + " = (a->rounder1 + r0_" + n + ") - a->rounder1;\n" +
                "    const double q2_" + n + " = (a->rounder2 + (r0_" + n + " - q1_" + n +
                ")) - a->rounder2;\n";
        for (int bin = 0; bin < 3; ++bin)
            digits[bin].push_back("q" + std::to_string(bin) + "_" + n);
    }
    for (int bin = 0; bin < 3; ++bin) {
        std::vector<std::string> level = digits[bin];
        while (level.size() > 1) {
            std::vector<std::string> next;
            for (std::size_t i = 0; i + 1 < level.size(); i += 2)
                next.push_back("(" + level[i] + " + " + level[i + 1] + ")");
            if (level.size() % 2 == 1) next.push_back(level.back());
            level = std::move(next);
        }
        text += "    a->bin" + std::to_string(bin) + " += " + level.front() + ";\n";
    }
    text += "    a->count += " + std::to_string(k) + ";\n" +
            "    if (a->count >= 524288) kiln_exact_flush(a);\n}\n";
    source.define(name, text);
    std::string call = name + "(&" + acc;
    for (const std::string& value : values) call += ", " + value;
    return call + ")";
}

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
