// SPDX-License-Identifier: Apache-2.0
// The single-pass strategy (tile_program.hpp): decoupled look-back. Tiles take ids in the order
// their groups start, publish their aggregate, then fold the states of the tiles before them,
// nearest first, until one holds an inclusive prefix, and publish their own. Where sub-groups
// shuffle, the first sub-group reads the states; elsewhere a window of work-items through local
// memory. The states are lookback_state's.
#include <kiln/detail/group_collectives.hpp>
#include <string>

#include "tile_program.hpp"

namespace kiln::detail {
namespace {

bool looks_back_in_sub_group(const scan_policy& policy) {
    return policy.sub_group_size > 0 && policy.sub_group_size <= 32;
}

/// The look-back through local memory: KILN_WINDOW work-items read the states of as many earlier
/// tiles at once (waiting for each to be published), then work-item 0 folds them from the
/// nearest back to the first inclusive prefix; the window moves back until one is found.
void window_lookback(tile_program& p) {
    source_builder& b = p.b;
    b.open("if (tile > 0)");
    b.line("ulong end = tile;");
    b.open("for (;;)");
    b.open("if (lid < KILN_WINDOW)");
    b.line("ulong flag = 0;");
    b.open("if (end > lid)");
    b.line("const ulong k = end - 1 - lid;");
    b.line("ulong word = 0;");
    p.state.poll_until_published(b, "k");
    p.state.read_value(b, "k", "word");
    b.line("kiln_window_value[lid] = value;");
    b.close();
    b.line("kiln_window_flag[lid] = flag;");
    b.close();
    b.local_barrier();
    b.open("if (lid == 0)");
    b.line("int have = kiln_has_prefix;");
    b.line(p.t + " prefix = kiln_prefix;");
    b.line("int done = 0;");
    b.open("for (uint j = 0; j < KILN_WINDOW && !done; ++j)");
    b.line("if (kiln_window_flag[j] == 0) break;");
    b.line("const " + p.t + " value = kiln_window_value[j];");
    b.line("prefix = have ? " + p.combine("value", "prefix") + " : value;");
    b.line("have = 1;");
    b.line("done = kiln_window_flag[j] == 2;");
    b.close();
    b.line("kiln_has_prefix = have;");
    b.line("kiln_prefix = prefix;");
    b.line("kiln_window_done = done || end <= KILN_WINDOW;");
    b.close();
    b.local_barrier();
    b.line("if (kiln_window_done) break;");
    b.line("end -= KILN_WINDOW;");
    b.close();
    b.close();
}

/// The look-back within the first sub-group (warp), with no group barrier inside: each lane
/// reads KILN_DEPTH consecutive earlier states at once (lane 0 the nearest), waits for them to be
/// published and folds them back to the first inclusive prefix it meets; a ballot finds the
/// nearest lane that met one, and a shuffle reduction combines the lanes up to it, older lanes as
/// the earlier operands. The window moves back until some lane met an inclusive prefix (tile 0
/// always publishes one). A fold by one work-item through local memory cost two barriers and a
/// serial loop per window, while later tiles waited.
void sub_group_lookback(tile_program& p) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    group_collectives warp(b, p.policy.sub_group_size, p.policy.target);
    const std::string sg = std::to_string(p.policy.sub_group_size);
    b.open("if (tile > 0 && lid < " + sg + ")");
    b.line("int have = 0;");
    b.line(t + " prefix = carry;");
    b.line("ulong end = tile;");
    b.open("for (;;)");
    b.line("ulong kiln_words[KILN_DEPTH];");
    b.line("#pragma unroll");
    b.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
    b.line("kiln_words[m] = end > back ? " + p.state.load("end - 1 - back") + " : 0;");
    b.close();
    b.line("int lane_have = 0;");
    b.line("int lane_inclusive = 0;");
    b.line(t + " lane_value = carry;");
    b.line("#pragma unroll");
    b.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
    b.open("if (end > back && !lane_inclusive)");
    b.line("const ulong k = end - 1 - back;");
    b.line("ulong word = kiln_words[m];");
    b.line("ulong flag = " + p.state.flag_of("word") + ";");
    p.state.poll_while_unpublished(b, "k");
    p.state.read_value(b, "k", "word");
    b.line("lane_value = lane_have ? " + p.combine("value", "lane_value") + " : value;");
    b.line("lane_have = 1;");
    b.line("lane_inclusive = flag == 2;");
    b.close();
    b.close();
    b.line("const uint stop = " + warp.ballot("lane_inclusive") + ";");
    b.line("const uint nearest = stop != 0 ? popcount((stop & (0u - stop)) - 1u) : " + sg + ";");
    b.line("int take = lane_have && lid <= nearest;");
    b.open("for (uint kiln_d = 1; kiln_d < " + sg + "; kiln_d *= 2)");
    warp.shuffle_down(t, "kiln_older", "lane_value", "kiln_d", p.op.components);
    warp.shuffle_down("int", "kiln_older_taken", "take", "kiln_d");
    b.open("if (lid + kiln_d < " + sg + " && kiln_older_taken)");
    b.line("lane_value = take ? " + p.combine("kiln_older", "lane_value") + " : kiln_older;");
    b.line("take = 1;");
    b.close();
    b.close();
    b.open("if (take)");
    b.line("prefix = have ? " + p.combine("lane_value", "prefix") + " : lane_value;");
    b.line("have = 1;");
    b.close();
    b.line("if (stop != 0 || end <= " + sg + " * KILN_DEPTH) break;");
    b.line("end -= " + sg + " * KILN_DEPTH;");
    b.close();
    b.open("if (lid == 0)");
    b.line("kiln_has_prefix = have;");
    b.line("kiln_prefix = prefix;");
    b.close();
    b.close();
}

}  // namespace

void write_single_pass_kernel(tile_program& p, tile_algorithm& algorithm) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    p.begin(scan_kernel::lookback, &algorithm);
    algorithm.declare_arrays();
    b.line("local uint kiln_tile_number;");
    b.line("local int kiln_has_prefix;");
    b.line("local " + t + " kiln_prefix;");
    const bool in_sub_group = looks_back_in_sub_group(p.policy);
    if (!in_sub_group) {
        b.line("local ulong kiln_window_flag[KILN_WINDOW];");
        b.line("local " + t + " kiln_window_value[KILN_WINDOW];");
        b.line("local int kiln_window_done;");
    }
    // Ticket order: a tile's id is taken when its group starts, so every tile it waits for
    // belongs to a group that started earlier.
    static_assert(scan_scratch_layout<>::ticket_offset() == 0);
    b.line("if (lid == 0) kiln_tile_number = atomic_inc((volatile global uint*)kiln_temp);");
    b.local_barrier();
    b.line("const ulong tile = kiln_tile_number;");
    algorithm.load_and_scan();
    b.open("if (lid == 0)");
    b.line("if (tile > 0) {");
    p.state.publish(b, "tile", "aggregate", 1);
    b.line("}");
    b.line("kiln_has_prefix = tile == 0 ? has_carry : 0;");
    b.line("kiln_prefix = carry;");
    b.close();
    if (in_sub_group)
        sub_group_lookback(p);
    else
        window_lookback(p);
    b.open("if (lid == 0)");
    b.line("const " + t + " inclusive = kiln_has_prefix ? " +
           p.combine("kiln_prefix", "aggregate") + " : aggregate;");
    p.state.publish(b, "tile", "inclusive", 2);
    b.line("if (tile == tiles - 1) *kiln_total = inclusive;");
    b.close();
    b.local_barrier();
    b.line("const int tile_has_prefix = kiln_has_prefix;");
    b.line("const " + t + " tile_prefix = kiln_prefix;");
    algorithm.store();
    b.end_kernel();
}

}  // namespace kiln::detail
