// SPDX-License-Identifier: Apache-2.0
// The reproducible sum's accumulator for float elements (include/kiln/reproducible_reducers.hpp):
// the same digits as the running bins of exact_sum_device.cpp, computed in float arithmetic and
// 32-bit integers, where the double bins spend a conversion and a dozen double-precision
// operations on each element (docs/reproducibility.md, Speed).
#include <kiln/error.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

// The digits of an element v under top bin t are those of its roundings onto the grids 2^K,
// 2^(K - 32) and 2^(K - 64), K = 32 t - 1074 (exact_sum_device.cpp): q0 = round(v, 2^K), then
// q1 = round(v - q0, 2^(K - 32)) and q2 = round(v - q0 - q1, 2^(K - 64)). A float rounds onto
// 2^k exactly, to nearest and ties to even, as (R + x) - R with R = 1.5 2^(k + 23), while
// |x| <= 2^(k + 22); then as_uint(R + x) - as_uint(R) is that rounding in units of 2^k (R + x
// stays in R's binade but at its ends, where the count still holds), and x less the rounding is
// exact. 22 bits a rounding, the 95 bits from 2^(K + 31) (the top bin's limit) to 2^(K - 64)
// take six, on the grids 2^(K + 9), 2^K, 2^(K - 23), 2^(K - 32), 2^(K - 55) and 2^(K - 64):
// each rounding's remainder is within the next one's reach, and a rounding onto 2^(K + 9) and
// then 2^K is one rounding onto 2^K (the first rounding's whole multiples of 2^(K + 9) are even
// multiples of 2^K, so ties go the same way); likewise for the other two digits. Each grid's
// 32-bit sum of as_uint(R + x) is taken over at most 255 + k elements of steps of k <= 256
// (each within 2^22 units once R is subtracted, so within 2^31 together), then moved into the
// digits: digit 0 is 2^9 times the first sum plus the
// second, and so on.
//
// Only where the six rounders are normal floats (-61 <= K <= 95: maxima from 2^-51 to 2^108)
// does the float form run: every value it meets is then 0, a normal float, or a subnormal below
// half of 2^(K - 64), which rounds to 0 whether or not a device flushes it. A step whose elements
// are not all below the top bin's limit (twice their bits against twice the limit's, which also
// catches NaN and infinities) goes to the double bins, after the float sums have moved into the
// digits so that the bins may rise; so does every element outside that range of K.
constexpr const char* float_accumulator_text = R"(typedef struct {
    long digits0, digits1, digits2;
    int top, flags;
    float rc, re, rf, rh, rm, rn;
    uint limit2, sc, se, sf, sh, sm, sn;
    int count;
} kiln_exact_float_accumulator;
float kiln_exact_float_rounder(int k) {
    return as_float((uint)(k + 150) << 23 | 0x400000u);
}
void kiln_exact_float_set_top(kiln_exact_float_accumulator* f, int top) {
    f->top = top;
    const int k = 32 * top - 1074;
    const int fast = k >= -61 && k <= 95;
    const int g = fast ? k : 0;
    f->limit2 = fast ? (uint)(k + 158) << 24 : 0u;
    f->rc = kiln_exact_float_rounder(g + 9);
    f->re = kiln_exact_float_rounder(g);
    f->rf = kiln_exact_float_rounder(g - 23);
    f->rh = kiln_exact_float_rounder(g - 32);
    f->rm = kiln_exact_float_rounder(g - 55);
    f->rn = kiln_exact_float_rounder(g - 64);
}
kiln_exact_float_accumulator kiln_exact_float_start(void) {
    kiln_exact_float_accumulator f;
    f.digits0 = 0; f.digits1 = 0; f.digits2 = 0;
    f.flags = 0;
    f.sc = 0u; f.se = 0u; f.sf = 0u; f.sh = 0u; f.sm = 0u; f.sn = 0u;
    f.count = 0;
    kiln_exact_float_set_top(&f, 0);
    return f;
}
long kiln_exact_float_units(uint sum, uint count, float rounder) {
    return (long)as_int(sum - count * as_uint(rounder));
}
void kiln_exact_float_flush(kiln_exact_float_accumulator* f) {
    const uint n = (uint)f->count;
    f->digits0 += kiln_exact_float_units(f->sc, n, f->rc) * 512 +
                  kiln_exact_float_units(f->se, n, f->re);
    f->digits1 += kiln_exact_float_units(f->sf, n, f->rf) * 512 +
                  kiln_exact_float_units(f->sh, n, f->rh);
    f->digits2 += kiln_exact_float_units(f->sm, n, f->rm) * 512 +
                  kiln_exact_float_units(f->sn, n, f->rn);
    f->sc = 0u; f->se = 0u; f->sf = 0u; f->sh = 0u; f->sm = 0u; f->sn = 0u;
    f->count = 0;
}
kiln_exact_accumulator kiln_exact_float_bins(kiln_exact_float_accumulator* f) {
    kiln_exact_float_flush(f);
    kiln_exact_accumulator a = kiln_exact_start();
    kiln_exact_set_top(&a, f->top);
    a.digits0 = f->digits0; a.digits1 = f->digits1; a.digits2 = f->digits2;
    a.flags = f->flags;
    return a;
}
void kiln_exact_float_unbin(kiln_exact_float_accumulator* f, kiln_exact_accumulator* a) {
    kiln_exact_flush(a);
    f->digits0 = a->digits0; f->digits1 = a->digits1; f->digits2 = a->digits2;
    f->flags = a->flags;
    if (a->top != f->top) kiln_exact_float_set_top(f, a->top);
}
long4 kiln_exact_float_state(kiln_exact_float_accumulator* f) {
    kiln_exact_float_flush(f);
    return (long4)(f->digits0, f->digits1, f->digits2, (long)(f->top + 1) | (long)f->flags);
}
)";

}  // namespace

void define_exact_float_sum(source_builder& source) {
    define_exact_sum(source);
    source.define("exact_float_sum", float_accumulator_text);
}

std::string exact_float_sum_add_several(source_builder& source, const std::string& acc,
                                        const std::vector<std::string>& values) {
    define_exact_float_sum(source);
    const std::size_t k = values.size();
    if (k == 0 || k > 256)
        throw invalid_argument_error("kiln::sum (reproducible)",
                                     "a step adds 1 to 256 floats to an accumulator");
    const std::string name = "kiln_exact_float_add" + std::to_string(k);
    std::string parameters, twice;
    std::vector<std::string> doubles;
    for (std::size_t i = 0; i < k; ++i) {
        const std::string v = "v" + std::to_string(i);
        parameters += ", float " + v;
        doubles.push_back("(double)" + v);
        const std::string bits = "as_uint(" + v + ") + as_uint(" + v + ")";
        twice = i == 0 ? bits : "max(" + twice + ", " + bits + ")";
    }
    // The rest go through double bins made from the digits, whose rise the float sums must not
    // straddle: they move into the digits first.
    std::string text = "void " + name + "(kiln_exact_float_accumulator* f" + parameters +
                       ") {\n    if (" + twice + " >= f->limit2) {\n" +
                       "        kiln_exact_accumulator a = kiln_exact_float_bins(f);\n        " +
                       exact_sum_add_several(source, "a", doubles) + ";\n" +
                       "        kiln_exact_float_unbin(f, &a);\n        return;\n    }\n";
    // Each grid's rounder and sum; the value each rounding leaves goes on to the next grid.
    const char* grids[][2] = {{"rc", "sc"}, {"re", "se"}, {"rf", "sf"},
                              {"rh", "sh"}, {"rm", "sm"}, {"rn", "sn"}};
    std::vector<std::string> sums(6);
    for (std::size_t i = 0; i < k; ++i) {
        const std::string n = std::to_string(i);
        std::string rest = "v" + n;
        for (int g = 0; g < 6; ++g) {
            const std::string r = std::string("f->") + grids[g][0];
            const std::string t = "t" + std::to_string(g) + "_" + n;
            text += "    const float " + t + " = " + r + " + " + rest + ";\n";
            sums[g] += (i > 0 ? " + " : "") + ("as_uint(" + t + ")");
            if (g == 5) break;
            const std::string next = "x" + std::to_string(g) + "_" + n;
            text += "    const float " + next + " = " + rest + " - (" + t + " - " + r + ");\n";
            rest = next;
        }
    }
    for (int g = 0; g < 6; ++g)
        text += std::string("    f->") + grids[g][1] + " += " + sums[g] + ";\n";
    text += "    f->count += " + std::to_string(k) + ";\n" +
            "    if (f->count >= 256) kiln_exact_float_flush(f);\n}\n";
    source.define(name, text);
    std::string call = name + "(&" + acc;
    for (const std::string& value : values) call += ", " + value;
    return call + ")";
}

}  // namespace kiln::detail
