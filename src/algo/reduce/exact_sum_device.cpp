// SPDX-License-Identifier: Apache-2.0
// The reproducible sum's device text (include/kiln/reproducible_reducers.hpp): a work-item's
// running bins, the combination of states, one value's state and the one rounding on the device,
// twins of the host's in exact_sum.cpp. The text names the state's layout by placeholders ($TOP,
// $NAN, ...), which with_layout fills from exact_sum_flags, so host and device share one
// definition of it.
#include <cstdint>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail {
namespace {

/// `text` with every placeholder of the state's layout replaced by its value.
std::string with_layout(std::string text) {
    const std::pair<const char*, std::int64_t> values[] = {
        {"$TOP", exact_sum_top_mask},
        {"$NAN", exact_sum_nan},
        {"$PLUS_INFINITY", exact_sum_plus_infinity},
        {"$MINUS_INFINITY", exact_sum_minus_infinity},
        {"$OUT_OF_RANGE", exact_sum_out_of_range}};
    for (const auto& [name, value] : values) {
        const std::string placeholder(name), number = std::to_string(value);
        for (std::size_t at = text.find(placeholder); at != std::string::npos;
             at = text.find(placeholder, at + number.size()))
            text.replace(at, placeholder.size(), number);
    }
    return text;
}

// A work-item's running bins. rounder_j = 1.5 2^(a_j + 52) has the ulp 2^a_j, bin j's grid
// (a_j = 32 (top - j) - 1074): (rounder_j + v) - rounder_j is v rounded onto that grid, exactly
// and ties to even whatever the bins hold, while |v| < 2^(a_j + 31) (limit, for the top bin).
// That limit, half the grid of the bin above, is what makes dropping bins safe: an element whose
// bins are all dropped would round to 0 on the kept grids as well. A bin sums 2^19 such values
// before it could leave 53 bits; then the flush moves it into 64-bit digits. Below bin 0 nothing
// is left to round, so rounders there may be subnormal or zero. kiln_exact_split is the one
// rounding of a value onto the three grids, which every adder shares.
//
// Grids, rounders and scales are built from their bits (kiln_pow2 for 2^e, kiln_exact_rounder
// for 1.5 2^e, exact as ldexp gives them: the exponents of rounders are 2 mod 32, and below
// 2^-1073 only -1086's, which ldexp rounds to 0 too), where ldexp is a library call of a dozen
// instructions and branches on GPUs and a work-item of a scan's tile sets its bins up and
// flushes them once every 8 elements. Rounders take no multiply, which a compiler free to
// contract could fuse with the add that uses them. A bin's digits, its value over its grid
// 2^(32 (top - j) - 1074), take a scale up to 2^1138, beyond a double: kiln_exact_digits
// multiplies twice by the root of 2^(1074 - 32 top), each product exact (the first is a normal
// double, the second a whole number below 2^53), and converts.
constexpr const char* accumulator_text = R"(double kiln_pow2(int e) {
    return e >= -1022 ? as_double((ulong)(e + 1023) << 52)
                      : e >= -1074 ? as_double(1UL << (e + 1074)) : 0.0;
}
double kiln_exact_rounder(int e) {
    return e >= -1022 ? as_double((ulong)(e + 1023) << 52 | 0x0008000000000000UL)
                      : e >= -1073 ? as_double(3UL << (e + 1073)) : 0.0;
}
long kiln_exact_digits(double bin, int top, double above) {
    const double root = kiln_pow2(537 - 16 * top);
    return (long)((bin * root) * (root * above));
}
typedef struct {
    double bin0, bin1, bin2, rounder0, rounder1, rounder2, limit;
    long digits0, digits1, digits2;
    int top, count, flags;
} kiln_exact_accumulator;
void kiln_exact_split(double v, double rounder0, double rounder1, double rounder2,
                      double* q0, double* q1, double* q2) {
    *q0 = (rounder0 + v) - rounder0;
    const double r0 = v - *q0;
    *q1 = (rounder1 + r0) - rounder1;
    *q2 = (rounder2 + (r0 - *q1)) - rounder2;
}
void kiln_exact_set_top(kiln_exact_accumulator* a, int top) {
    a->top = top;
    a->rounder0 = kiln_exact_rounder(32 * top - 1022);
    a->rounder1 = kiln_exact_rounder(32 * top - 1054);
    a->rounder2 = kiln_exact_rounder(32 * top - 1086);
    a->limit = kiln_pow2(32 * top - 1043);
}
kiln_exact_accumulator kiln_exact_start(void) {
    kiln_exact_accumulator a;
    a.bin0 = 0.0; a.bin1 = 0.0; a.bin2 = 0.0;
    a.digits0 = 0; a.digits1 = 0; a.digits2 = 0;
    a.count = 0; a.flags = 0;
    kiln_exact_set_top(&a, 0);
    return a;
}
void kiln_exact_flush(kiln_exact_accumulator* a) {
    a->digits0 += kiln_exact_digits(a->bin0, a->top, 1.0);
    a->digits1 += kiln_exact_digits(a->bin1, a->top, 0x1p32);
    a->digits2 += kiln_exact_digits(a->bin2, a->top, 0x1p64);
    a->bin0 = 0.0; a->bin1 = 0.0; a->bin2 = 0.0;
    a->count = 0;
}
void kiln_exact_raise(kiln_exact_accumulator* a, double v) {
    if (isnan(v)) { a->flags |= $NAN; return; }
    if (isinf(v)) { a->flags |= v > 0.0 ? $PLUS_INFINITY : $MINUS_INFINITY; return; }
    const int top = (ilogb(v) + 1075) / 32;
    if (top > 63) { a->flags |= $OUT_OF_RANGE; return; }
    kiln_exact_flush(a);
    const int shift = top - a->top;
    a->digits2 = shift == 1 ? a->digits1 : shift == 2 ? a->digits0 : 0;
    a->digits1 = shift == 1 ? a->digits0 : 0;
    a->digits0 = 0;
    kiln_exact_set_top(a, top);
}
void kiln_exact_add(kiln_exact_accumulator* a, double v) {
    if (!(fabs(v) < a->limit)) {
        kiln_exact_raise(a, v);
        if (!(fabs(v) < a->limit)) return;
    }
    double q0, q1, q2;
    kiln_exact_split(v, a->rounder0, a->rounder1, a->rounder2, &q0, &q1, &q2);
    a->bin0 += q0; a->bin1 += q1; a->bin2 += q2;
    if (++a->count >= 524288) kiln_exact_flush(a);
}
long4 kiln_exact_state(kiln_exact_accumulator* a) {
    kiln_exact_flush(a);
    return (long4)(a->digits0, a->digits1, a->digits2, (long)(a->top + 1) | (long)a->flags);
}
long4 kiln_exact_sum_combine(long4 a, long4 b) {
    const int a_higher = (a.w & $TOP) >= (b.w & $TOP);
    const long4 high = a_higher ? a : b;
    const long4 low = a_higher ? b : a;
    const long shift = (high.w & $TOP) - (low.w & $TOP);
    long4 s = high;
    if (shift == 0) { s.x += low.x; s.y += low.y; s.z += low.z; }
    else if (shift == 1) { s.y += low.x; s.z += low.y; }
    else if (shift == 2) { s.z += low.x; }
    s.w = (high.w & $TOP) | ((a.w | b.w) & ~$TOPL);
    return s;
}
)";

// One value's state: its digits as a fresh accumulator's after adding it (whose bins are raised
// to the value's top), in units of their grids.
constexpr const char* state_of_text = R"(long4 kiln_exact_state_of(double v) {
    if (v == 0.0) return (long4)(0);
    if (isnan(v)) return (long4)(0, 0, 0, $NAN);
    if (isinf(v)) return (long4)(0, 0, 0, v > 0.0 ? $PLUS_INFINITY : $MINUS_INFINITY);
    const int top = (ilogb(v) + 1075) / 32;
    if (top > 63) return (long4)(0, 0, 0, $OUT_OF_RANGE);
    double q0, q1, q2;
    kiln_exact_split(v, kiln_exact_rounder(32 * top - 1022), kiln_exact_rounder(32 * top - 1054),
                     kiln_exact_rounder(32 * top - 1086), &q0, &q1, &q2);
    return (long4)(kiln_exact_digits(q0, top, 1.0), kiln_exact_digits(q1, top, 0x1p32),
                   kiln_exact_digits(q2, top, 0x1p64), (long)(top + 1));
}
)";

// kiln_exact_round is round_exact_sum's twin: the digits as one 128-bit integer in two's
// complement (hi, lo), its magnitude cut to the bits the type keeps at that exponent, then
// rounded to nearest, ties to even, by the first bit dropped and those below it; the kept bits
// are then scaled by 2^k (kiln_scale: k from -1138, two factors, the first product a normal
// double and the second the result, exact by construction, or an overflow to infinity as ldexp
// gives it). Its NaN has the host's bits (devices' NAN macros differ: PoCL's is 0x7fffffff).
constexpr const char* rounding_text = R"(long4 kiln_exact_peek(const kiln_exact_accumulator* a) {
    return (long4)(a->digits0 + kiln_exact_digits(a->bin0, a->top, 1.0),
                   a->digits1 + kiln_exact_digits(a->bin1, a->top, 0x1p32),
                   a->digits2 + kiln_exact_digits(a->bin2, a->top, 0x1p64),
                   (long)(a->top + 1) | (long)a->flags);
}
kiln_exact_accumulator kiln_exact_resume(long4 s) {
    kiln_exact_accumulator a = kiln_exact_start();
    const int top = (int)(s.w & $TOP) - 1;
    if (top > 0) kiln_exact_set_top(&a, top);
    a.digits0 = s.x; a.digits1 = s.y; a.digits2 = s.z;
    a.flags = (int)(s.w & ~$TOPL);
    return a;
}
double kiln_scale(double m, int k) {
    const int h = k / 2;
    return (m * kiln_pow2(h)) * kiln_pow2(k - h);
}
int kiln_bit128(ulong hi, ulong lo, int k) {
    return (int)((k < 64 ? lo >> k : hi >> (k - 64)) & 1UL);
}
int kiln_any_below128(ulong hi, ulong lo, int k) {
    if (k <= 0) return 0;
    if (k < 64) return (lo & ((1UL << k) - 1UL)) != 0UL;
    if (lo != 0UL) return 1;
    return k > 64 && (hi & ((1UL << (k - 64)) - 1UL)) != 0UL;
}
double kiln_exact_round(long4 s, int precision, int lowest_normal) {
    const long flags = s.w & ~$TOPL;
    if ((flags & ($NAN | $OUT_OF_RANGE)) != 0 ||
        ((flags & $PLUS_INFINITY) != 0 && (flags & $MINUS_INFINITY) != 0))
        return as_double(0x7ff8000000000000UL);
    if ((flags & $PLUS_INFINITY) != 0) return (double)INFINITY;
    if ((flags & $MINUS_INFINITY) != 0) return -(double)INFINITY;
    const int top = (int)(s.w & $TOP) - 1;
    if (top < 0) return 0.0;
    ulong lo = (ulong)s.z;
    long hi = s.z >> 63;
    const ulong middle = (ulong)s.y << 32;
    lo += middle;
    hi += (s.y >> 32) + (lo < middle ? 1L : 0L) + s.x;
    const int negative = hi < 0;
    if (negative) {
        lo = ~lo + 1UL;
        hi = ~hi + (lo == 0UL ? 1L : 0L);
    }
    const ulong mhi = (ulong)hi;
    if (mhi == 0UL && lo == 0UL) return 0.0;
    const int h = mhi != 0UL ? 127 - (int)clz(mhi) : 63 - (int)clz(lo);
    const int scale = 32 * (top - 2) - 1074;
    const int exponent = h + scale;
    const int kept = exponent >= lowest_normal ? precision
                                               : precision - (lowest_normal - exponent);
    const int dropped = h + 1 - kept;
    double magnitude = 0.0;
    if (dropped <= 0) {
        magnitude = kiln_scale((double)lo, scale);
    } else if (dropped <= 128) {
        ulong mantissa = dropped >= 128 ? 0UL
                         : dropped >= 64 ? mhi >> (dropped - 64)
                         : (lo >> dropped) | (mhi << (64 - dropped));
        if (kiln_bit128(mhi, lo, dropped - 1) &&
            (kiln_any_below128(mhi, lo, dropped - 1) || (mantissa & 1UL) != 0UL))
            ++mantissa;
        magnitude = kiln_scale((double)mantissa, scale + dropped);
    }
    return negative ? -magnitude : magnitude;
}
)";

}  // namespace

void define_exact_sum(source_builder& source) {
    source.turn_off_contraction();
    source.define("exact_sum", with_layout(accumulator_text));
}

void define_exact_rounding(source_builder& source) {
    define_exact_sum(source);
    source.define("exact_state_of", with_layout(state_of_text));
    source.define("exact_rounding", with_layout(rounding_text));
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
        const std::string n = std::to_string(i);
        text += "    double q0_" + n + ", q1_" + n + ", q2_" + n + ";\n" +
                "    kiln_exact_split(v" + n + ", a->rounder0, a->rounder1, a->rounder2, &q0_" + n +
                ", &q1_" + n + ", &q2_" + n + ");\n";
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

}  // namespace kiln::detail
