// SPDX-License-Identifier: Apache-2.0
// A work-item's walk of its run's prefixes from an exact state (exact_walk.hpp).
#include "algo/tiles/exact_walk.hpp"

namespace kiln::detail {
namespace {

/// The exact accumulator, behind while the walk ran on its fast path, brought up to the
/// elements [kiln_caught, `added`); the walk goes on exact until step re-enters the fast path.
void catch_up(source_builder& b, const exact_walk_run& run, const std::string& added) {
    b.line("kiln_fast = 0;");
    if (!run.rereadable) return;  // never behind
    b.line("for (" + run.index_type + " i = kiln_caught; i < " + added +
           "; ++i) kiln_exact_add(&kiln_acc, " + run.element("i") + ");");
}

/// The fast path's start from the exact accumulator, which holds the elements before `next`:
/// the double nearest its state, and the grids of its bins. Unless the state holds a NaN, an
/// infinity or a value out of range.
void enter_fast_path(source_builder& b, const std::string& state, const std::string& next) {
    b.line("kiln_fast = kiln_acc.flags == 0;");
    b.line("kiln_hi = kiln_exact_round(" + state + ", 53, -1022);");
    b.line("kiln_lo = 0.0;");
    b.line("kiln_size = fabs(kiln_hi);");
    // Elements above 2^52 times the lowest kept grid are on it.
    b.line("kiln_on_grid = kiln_pow2(32 * kiln_acc.top - 1086);");
    b.line("kiln_caught = " + next + ";");
}

/// Adds kiln_v, on the fast path where it cannot raise the bins: its value on the lowest kept
/// grid into the double-double kiln_hi + kiln_lo. That value is kiln_v itself from 2^52 grids
/// up, one rounder's below 2^51 grids (where the rounder's sum keeps the grid as its ulp), and
/// in the binade between the sum of kiln_exact_add's three digits (exact: the rounded value
/// has no more bits than kiln_v).
void step(source_builder& b, const exact_walk_run& run, bool fast) {
    if (!fast) {
        b.line("kiln_exact_add(&kiln_acc, kiln_v);");
        return;
    }
    b.open("if (kiln_fast && fabs(kiln_v) < kiln_acc.limit)");
    b.line("const double kiln_a = fabs(kiln_v);");
    b.line("double kiln_r = kiln_v;");
    b.open("if (kiln_a < kiln_on_grid / 2)");
    b.line("kiln_r = (kiln_acc.rounder2 + kiln_v) - kiln_acc.rounder2;");
    b.close();
    b.open("else if (kiln_a < kiln_on_grid)");
    b.line("double kiln_q0, kiln_q1, kiln_q2;");
    b.line(
        "kiln_exact_split(kiln_v, kiln_acc.rounder0, kiln_acc.rounder1, kiln_acc.rounder2, "
        "&kiln_q0, &kiln_q1, &kiln_q2);");
    b.line("kiln_r = (kiln_q0 + kiln_q1) + kiln_q2;");
    b.close();
    b.line("const double kiln_s = kiln_hi + kiln_r;");
    b.line("const double kiln_t = kiln_s - kiln_hi;");
    b.line("kiln_lo += (kiln_hi - (kiln_s - kiln_t)) + (kiln_r - kiln_t);");
    b.line("kiln_hi = kiln_s;");
    b.line("kiln_size += fabs(kiln_r);");
    if (!run.rereadable) b.line("kiln_exact_add(&kiln_acc, kiln_v);");
    b.close();
    b.open("else");
    b.open("if (kiln_fast)");
    catch_up(b, run, "j");
    b.close();
    b.line("kiln_exact_add(&kiln_acc, kiln_v);");
    // Back onto the fast path at once: an element that raises the bins (the run's first, from
    // an empty prefix) or a prefix that was not certain costs one exact rounding, not the rest
    // of the run's.
    enter_fast_path(b, "kiln_exact_peek(&kiln_acc)", "j + 1");
    b.close();
}

/// Writes element j's prefix: on the fast path the float nearest kiln_hi + kiln_lo where the
/// prefix, within the margin of its error (the prefix's rounding to double, 2^-53 of it, and
/// the double-double's), lies strictly between that float's midpoints, so that it is the exact
/// prefix rounded once; otherwise (ties, cancellation, zero, overflow) the exact accumulator's
/// rounding, from `added` elements.
void emit(source_builder& b, const exact_walk_run& run, bool double_values, bool fast,
          const std::string& added) {
    const std::string exact = double_values
                                  ? "kiln_exact_round(kiln_exact_peek(&kiln_acc), 53, -1022)"
                                  : "(float)kiln_exact_round(kiln_exact_peek(&kiln_acc), 24, -126)";
    if (!fast) {
        b.line(run.store("j", exact));
        return;
    }
    b.open("");
    b.line("float kiln_f = 0.0f;");
    b.line("int kiln_certain = 0;");
    b.open("if (kiln_fast)");
    b.line("kiln_f = (float)(kiln_hi + kiln_lo);");
    b.line("const double kiln_fd = (double)kiln_f;");
    // The float's neighbours from its bits, one step either way (nextafter is a library call):
    // right for every finite nonzero float, the only ones that can be certain.
    b.line("const uint kiln_bits = as_uint(kiln_f);");
    b.line("const uint kiln_away = kiln_bits + 1u, kiln_toward = kiln_bits - 1u;");
    b.line("const float kiln_down = as_float(kiln_f > 0.0f ? kiln_toward : kiln_away);");
    b.line("const float kiln_up = as_float(kiln_f > 0.0f ? kiln_away : kiln_toward);");
    b.line("const double kiln_below = (kiln_fd + (double)kiln_down) * 0.5;");
    b.line("const double kiln_above = (kiln_fd + (double)kiln_up) * 0.5;");
    b.line("const double kiln_margin = kiln_size * 0x1p-48 + 0x1p-1060;");
    b.line("kiln_certain = kiln_f != 0.0f && fabs(kiln_fd) < 0x1p127 &&");
    b.line("    (kiln_hi - kiln_below) + kiln_lo > kiln_margin &&");
    b.line("    (kiln_above - kiln_hi) - kiln_lo > kiln_margin;");
    b.open("if (!kiln_certain)");
    catch_up(b, run, added);
    b.close();
    b.close();
    b.line("if (!kiln_certain) kiln_f = " + exact + ";");
    b.line(run.store("j", "kiln_f"));
    b.close();
}

}  // namespace

void emit_exact_walk(source_builder& b, const exact_walk_run& run, const std::string& prefix,
                     bool double_values, bool exclusive) {
    b.line("kiln_acc = kiln_exact_resume(" + prefix + ");");
    // Doubles would need more than a double-double, and walk the exact accumulator.
    const bool fast = !double_values;
    if (fast) {
        b.line("int kiln_fast;");
        b.line("double kiln_hi, kiln_lo, kiln_size, kiln_on_grid;");
        b.line(run.index_type + " kiln_caught;");
        enter_fast_path(b, prefix, run.first);
    }
    b.open("for (" + run.index_type + " j = " + run.first + "; j < " + run.last + "; ++j)");
    b.line("const double kiln_v = " + run.element("j") + ";");
    if (exclusive) {
        emit(b, run, double_values, fast, "j");
        step(b, run, fast);
    } else {
        step(b, run, fast);
        emit(b, run, double_values, fast, "j + 1");
    }
    b.close();
}

}  // namespace kiln::detail
