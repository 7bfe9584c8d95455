// SPDX-License-Identifier: Apache-2.0
// The radix sort's single pass per digit (Onesweep, Adinets and Merrill 2022).
//
// One histogram kernel counts the digits of every pass at once; each pass is then one kernel in
// which work-groups take tiles in ticket order, rank them as the classic downsweep does
// (radix_tile.cpp), publish their digit counts and look back over earlier tiles for their digit
// offsets (decoupled look-back). A status word per (tile, digit) packs a flag in its top two bits
// (01: this tile's count, 10: inclusive prefix) and the count in the low 30 bits
// (lookback_state::for_counts), so n must stay below 2^30.
#include <algorithm>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "algo/lookback_state.hpp"
#include "codegen/device_vocabulary.hpp"
#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

/// Where copy `copy` of pass-digit `bin` counts, in kiln_bins of `copies` copies of `bins`
/// counters: one copy after another, or a digit's copies side by side.
std::string histogram_counter(const radix_histogram_tuning& h, unsigned bins,
                              const std::string& copy, const std::string& bin) {
    return h.digit_major ? "(" + bin + ") * " + num(h.copies) + "u + " + copy
                         : copy + " * " + num(bins) + "u + " + bin;
}

void onesweep_histogram(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const radix_tile_names n(s);
    const radix_histogram_tuning& h = s.histogram;
    const unsigned bins = passes * n.r, group = s.histogram_group(), copies = h.copies;
    const std::string G = num(group) + "u";
    if (h.aggregated && s.match_any) use_match_any_vocabulary(b, s.target);
    const kernel_description kernel = radix_sort_kernels(s).single_pass->histogram;
    b.begin_kernel(kernel.name(), group);
    kernel.declare(b);
    b.begin_body();
    b.local_array("uint", "kiln_bins", num(copies * bins));
    if (h.aggregated && !s.match_any) b.local_array("uint", "kiln_lane_digits", num(group));
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint i = t; i < " + num(copies * bins) + "u; i += " + G + ") kiln_bins[i] = 0;");
    b.local_barrier();
    // Fewer work-items contend for one counter where each counts into one of several copies.
    const std::string chosen =
        h.per_sub_group ? "(t / 32u % " + num(copies) + "u)" : "(t % " + num(copies) + "u)";
    b.line("const uint copy = " + (h.digit_major ? chosen : chosen + " * " + num(bins) + "u") +
           ";");
    const auto counter = [&](const std::string& bin) {
        return h.digit_major ? histogram_counter(h, bins, "copy", bin) : "copy + " + bin;
    };
    // Four keys per work-item per step, loaded before they are counted: one load in flight
    // per work-item left the kernel waiting on memory (H100: 0.9 ms for 2^28 keys, 2026-11-22).
    constexpr unsigned unroll = 4;
    b.line("const ulong stride = get_global_size(0);");
    const auto load_keys = [&] {
        for (unsigned u = 0; u < unroll; ++u)
            b.line("const " + n.key + " k" + num(u) + " = i + " + num(u) +
                   " * stride < n ? keys[i + " + num(u) + " * stride] : 0;");
    };
    if (!h.aggregated) {
        b.open("for (ulong i = get_global_id(0); i < n; i += " + num(unroll) + " * stride)");
        load_keys();
        for (unsigned u = 0; u < unroll; ++u) {
            b.open("if (i + " + num(u) + " * stride < n)");
            for (unsigned p = 0; p < passes; ++p)
                b.line("atomic_inc(&kiln_bins[" +
                       counter(num(p * n.r) + "u + kiln_sort_digit(k" + num(u) + ", " +
                               num(p * s.radix_bits) + "u)") +
                       "]);");
            b.close();
        }
    } else {
        // Every work-item of the group takes every step (the peers are found by the whole
        // sub-group, or the whole group through local memory); a key past the end has the digit
        // R, which no key has, and adds nothing. The lowest peer adds its peers' count.
        b.line("const uint lane = t % 32u, lanes_below = (1u << lane) - 1u;");
        b.open("for (ulong i = get_global_id(0); i - t < n; i += " + num(unroll) + " * stride)");
        load_keys();
        for (unsigned u = 0; u < unroll; ++u) {
            const std::string U = num(u);
            for (unsigned p = 0; p < passes; ++p) {
                const std::string P = U + "_" + num(p), digit = "digit" + P, peers = "peers" + P;
                b.line("const uint " + digit + " = i + " + U + " * stride < n ? kiln_sort_digit(k" +
                       U + ", " + num(p * s.radix_bits) + "u) : " + n.R + ";");
                if (s.match_any) {
                    b.line("const uint " + peers + " = kiln_match_any(" + digit + ");");
                } else {
                    b.line("kiln_lane_digits[t] = " + digit + ";");
                    b.local_barrier();
                    b.line("uint " + peers + " = 0;");
                    b.line("for (uint l = 0; l < 32u; ++l) " + peers +
                           " |= (kiln_lane_digits[t - lane + l] == " + digit + " ? 1u : 0u) << l;");
                    b.local_barrier();
                }
                b.line("if (" + digit + " != " + n.R + " && (" + peers +
                       " & lanes_below) == 0) atomic_add(&kiln_bins[" +
                       counter(num(p * n.r) + "u + " + digit) + "], popcount(" + peers + "));");
            }
        }
    }
    b.close();
    b.local_barrier();
    b.open("for (uint i = t; i < " + num(bins) + "u; i += " + G + ")");
    b.line("uint total = 0;");
    b.line("for (uint c = 0; c < " + num(copies) + "u; ++c) total += kiln_bins[" +
           histogram_counter(h, bins, "c", "i") + "];");
    b.line("if (total != 0) atomic_add(&histogram[i], total);");
    b.close();
    b.end_kernel();
}

/// Turns each pass's digit counts into exclusive offsets, marks the passes whose keys all share
/// their digit, and records where the data ends (for kiln_radix_finish).
void onesweep_offsets(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const radix_tile_names n(s);
    const kernel_description kernel = radix_sort_kernels(s).single_pass->offsets;
    b.begin_kernel(kernel.name(), n.g);
    kernel.declare(b);
    b.begin_body();
    b.local_array("uint", "kiln_skip", num(passes));
    b.local_array("uint", "kiln_counts", num(passes * n.r));
    b.line("global uint* state = control;");
    b.line("global uint* skip = control + 2;");
    b.line("const uint t = (uint)get_local_id(0);");
    // The counts come into local memory by the whole group first: each pass's serial walk over
    // global memory waited on every load (30 us a sort on an H100, 2026-11-27).
    b.line("for (uint i = t; i < " + num(passes * n.r) + "u; i += " + n.G +
           ") kiln_counts[i] = histogram[i];");
    b.local_barrier();
    b.open("for (uint p = t; p < " + num(passes) + "u; p += " + n.G + ")");
    b.line("uint run = 0, same = 0;");
    b.open("for (uint d = 0; d < " + n.R + "; ++d)");
    b.line("const uint c = kiln_counts[p * " + n.R + " + d];");
    b.line("histogram[p * " + n.R + " + d] = run;");
    b.line("run += c;");
    b.line("if (c == n && (p > 0u || first_skippable)) same = 1;");
    b.close();
    b.line("skip[p] = same;");
    b.line("kiln_skip[p] = same;");
    b.close();
    b.local_barrier();
    b.open("if (t == 0)");
    b.line("uint in_b = 0;");
    b.line("for (uint p = 0; p < " + num(passes) + "u; ++p) in_b ^= kiln_skip[p] ? 0u : 1u;");
    b.line("state[0] = in_b;");
    b.line("state[1] = 0;");
    b.close();
    b.end_kernel();
}

void onesweep_pass(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const radix_tile_names n(s);
    const std::string tile = num(s.tile()) + "u", R = n.R, G = n.G;
    const kernel_description kernel = radix_sort_kernels(s).single_pass->pass;
    b.begin_kernel(kernel.name(), n.g);
    kernel.declare(b);
    b.begin_body();
    b.local_array("uint", "kiln_tile", "1");
    radix_tile_setup(b, s, true);
    b.line("global const uint* skip = control + 2;");
    b.line("global uint* ticket = control + 2 + " + num(passes) + "u;");
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (skip[pass]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    // The data moved once per pass that was not skipped.
    b.line("uint from_b = 0;");
    b.line("for (uint p = 0; p < pass; ++p) from_b ^= skip[p] ? 0u : 1u;");
    if (radix_keys_convert(s)) {
        // The keys stay in their stored form from the first pass that moves them to the last:
        // the passes between take their digits without converting them.
        b.line("uint stored_in = 0, stored_out = 0;");
        b.line("for (uint p = 0; p < pass; ++p) stored_in |= skip[p] ? 0u : 1u;");
        b.line("for (uint p = pass + 1u; p < " + num(passes) +
               "u; ++p) stored_out |= skip[p] ? 0u : 1u;");
    }
    radix_tile_pointers(b, s);
    b.open("for (uint d = t; d < " + R + "; d += " + G + ")");
    b.line("kiln_start[d] = 0;");
    b.line("kiln_end[d] = 0;");
    b.close();
    // Tiles in the order work-groups start, not by group id: a group waits only for groups
    // that started before it, which the device keeps running (groups_make_progress).
    b.line("if (t == 0) kiln_tile[0] = atomic_inc(ticket + pass);");
    b.local_barrier();
    b.line("const uint tile_id = kiln_tile[0];");
    b.line("const ulong base = (ulong)tile_id * " + tile + ";");
    b.line("const uint valid = n - base < " + tile + " ? (uint)(n - base) : " + tile + ";");
    if (s.multi_split) {
        multi_split_count(b, s, true);
    } else {
        radix_tile_load(b, s, true);
        radix_tile_rank(b, s);
    }
    // This pass's status words: one per (tile, digit). Every digit's count is published before
    // any look-back, so a group that handles several digits never waits on itself.
    b.line("global uint* words = status + (ulong)pass * ((n + " + tile + " - 1) / " + tile +
           ") * " + R + ";");
    b.line("global uint* mine = words + (ulong)tile_id * " + R + ";");
    const lookback_state earlier = lookback_state::for_counts("words"),
                         own = lookback_state::for_counts("mine");
    b.open("for (uint d = t; d < " + R + "; d += " + G + ")");
    own.publish_prefix_if(b, "tile_id == 0", "d", "kiln_end[d] - kiln_start[d]");
    b.close();
    // The multi-split knows the counts before the keys move: published first, the move
    // overlaps with the earlier tiles' work.
    if (s.multi_split) multi_split_place(b, s);
    // Sum the earlier tiles' counts of digit d back to an inclusive prefix (tile 0 always
    // publishes one).
    b.open("for (uint d = t; d < " + R + "; d += " + G + ")");
    b.line("uint exclusive = 0;");
    const auto tile_digit = [&](const std::string& j) {
        return "(ulong)(" + j + ") * " + R + " + d";
    };
    earlier.walk_back(b, {"uint", "j", "tile_id", tile_digit},
                      [&](const std::string& count) { b.line("exclusive += " + count + ";"); });
    b.open("if (tile_id != 0)");
    own.publish(b, "d", "exclusive + kiln_end[d] - kiln_start[d]", 2);
    b.close();
    // Wraps (mod 2^32) where the digit's global start is below its tile start; position adds
    // the tile index back.
    b.line("kiln_run[d] = offsets[pass * " + R + " + d] + exclusive - kiln_start[d];");
    b.close();
    b.local_barrier();
    radix_tile_scatter(b, s, true);
    b.end_kernel();
}

}  // namespace

void radix_onesweep_kernels(source_builder& b, const radix_sort_shape& shape) {
    const unsigned passes = shape.passes();
    onesweep_histogram(b, shape, passes);
    onesweep_offsets(b, shape, passes);
    onesweep_pass(b, shape, passes);
}

void radix_onesweep_histogram_kernel(source_builder& b, const radix_sort_shape& shape) {
    onesweep_histogram(b, shape, shape.passes());
}

}  // namespace kiln::detail
