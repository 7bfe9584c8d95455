// SPDX-License-Identifier: Apache-2.0
// The single-pass strategy (tile_program.hpp): decoupled look-back in a fixed order. A float
// result's bits must not depend on which earlier states happened to be published when a tile
// looked (the classic look-back, which folds back from the nearest tile to the first inclusive
// prefix it meets, gave a float scan a different result on every call on GPUs), so every
// combination below has a shape fixed by the tile's place:
// - Tiles fall in windows of KILN_ORDER_WINDOW tiles (readers x KILN_DEPTH), aligned at its
//   multiples. Every tile publishes its aggregate A in its tile state.
// - Within a window, tile t's earlier tiles combine as T(t): each reader folds its KILN_DEPTH
//   consecutive tiles, oldest first, and the readers' values combine in a fixed tree
//   (sub-groups) or in order (local memory).
// - A window's aggregate is WA = T(last) + A(last), published by its last tile as soon as it
//   has its own aggregate. Its inclusive prefix is P = P(window before) + WA, the carry
//   before the first: a left fold over the windows' aggregates.
// - Tile t's prefix is P(window before) + T(t). P(window before) comes from a look-back over the
//   window states, nearest first, until one holds its P: the fold then runs left from that P
//   over the aggregates after it, the same additions in the same order as the chain defines.
// The last tile of each window publishes P, so look-backs stay short. The states are
// lookback_state's (tile states and window states apart, scan_scratch_layout).
#include <algorithm>
#include <kiln/detail/group_collectives.hpp>
#include <string>

#include "tile_program.hpp"

namespace kiln::detail {
namespace {

bool looks_back_in_sub_group(const scan_policy& policy) {
    return policy.sub_group_size > 0 && policy.sub_group_size <= 32;
}

/// Work-items reading earlier tiles' states: the first sub-group, or KILN_WINDOW work-items.
std::size_t lookback_readers(const scan_policy& policy) {
    return looks_back_in_sub_group(policy) ? policy.sub_group_size
                                           : std::min<std::size_t>(32, policy.work_group_size);
}

/// In a reader (work-item `lid`), with `kiln_start` (the window's first tile) declared: declares
/// `lane_have` and `lane_value`, the fold of the reader's KILN_DEPTH tiles that come before
/// `tile`, oldest first, each once its aggregate is published. Every read is issued before the
/// first wait.
void fold_reader_tiles(tile_program& p) {
    source_builder& b = p.b;
    b.line("int lane_have = 0;");
    b.line(p.t + " lane_value = carry;");
    b.line("ulong kiln_words[KILN_DEPTH];");
    b.line("#pragma unroll");
    b.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b.line("const ulong k = kiln_start + (ulong)lid * KILN_DEPTH + m;");
    b.line("kiln_words[m] = k < tile ? " + p.state.load("k") + " : 0;");
    b.close();
    b.line("#pragma unroll");
    b.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b.line("const ulong k = kiln_start + (ulong)lid * KILN_DEPTH + m;");
    b.open("if (k < tile)");
    p.state.read_once_published(b, "k", "kiln_words[m]");
    b.line("lane_value = lane_have ? " + p.combine("lane_value", "value") + " : value;");
    b.line("lane_have = 1;");
    b.close();
    b.close();
}

/// Declares `kiln_last` (whether the tile is its window's last) and `kiln_window_aggregate`, which
/// work-item 0, holding T(tile) in `in_have`/`in_value`, publishes where kiln_last.
void publish_window_aggregate(tile_program& p, const std::string& in_have,
                              const std::string& in_value) {
    source_builder& b = p.b;
    b.line("const int kiln_last = tile - kiln_start == KILN_ORDER_WINDOW - 1;");
    b.line("const " + p.t + " kiln_window_aggregate = " + in_have + " ? " +
           p.combine(in_value, "aggregate") + " : aggregate;");
    b.open("if (lid == 0 && kiln_last)");
    p.windows.publish(b, "kiln_window", "kiln_window_aggregate", 1);
    b.close();
}

/// In the work-item that finishes the look-back, with `have`/`prefix` holding P(window before)
/// (or the carry) and T(tile) in `in_have`/`in_value`: the tile's prefix into kiln_has_prefix and
/// kiln_prefix, and a window's last tile publishes the window's P.
void finish_lookback(tile_program& p, const std::string& in_have, const std::string& in_value) {
    source_builder& b = p.b;
    b.open("if (kiln_last)");
    b.line("const " + p.t + " kiln_window_prefix = have ? " +
           p.combine("prefix", "kiln_window_aggregate") + " : kiln_window_aggregate;");
    p.windows.publish(b, "kiln_window", "kiln_window_prefix", 2);
    b.close();
    b.open("if (" + in_have + ")");
    b.line("prefix = have ? " + p.combine("prefix", in_value) + " : " + in_value + ";");
    b.line("have = 1;");
    b.close();
    b.line("kiln_has_prefix = have;");
    b.line("kiln_prefix = prefix;");
}

/// In a reader of the windows before `kiln_window`: declares `kiln_read_flag` and
/// `kiln_read_value`, the state of window `kiln_window - 1 - lid` once published (0 and the carry
/// where there is no such window).
void read_window_before(tile_program& p) {
    source_builder& b = p.b;
    b.line("ulong kiln_read_flag = 0;");
    b.line(p.t + " kiln_read_value = carry;");
    b.open("if (lid < kiln_window)");
    b.line("const ulong w = kiln_window - 1 - lid;");
    p.windows.read_once_published(b, "w", p.windows.load("w"));
    b.line("kiln_read_flag = flag;");
    b.line("kiln_read_value = value;");
    b.close();
}

/// The look-back through local memory: KILN_WINDOW work-items each fold their tiles and, in
/// rounds until one has met a P, read a window before; work-item 0 combines. Every tile runs it,
/// tile 0 too, with no barrier inside a branch: with the barrier inside `if (tile > 0)`, PoCL
/// 3.1's optimizer lost the look-back's result (tiles after the first got no prefix; right at
/// -cl-opt-disable).
void local_memory_lookback(tile_program& p) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    b.line("const ulong kiln_start = tile - tile % KILN_ORDER_WINDOW;");
    b.line("const ulong kiln_window = tile / KILN_ORDER_WINDOW;");
    b.open("if (lid < KILN_WINDOW)");
    fold_reader_tiles(p);
    b.line("kiln_window_value[lid] = lane_value;");
    b.line("kiln_window_flag[lid] = lane_have;");
    b.close();
    b.local_barrier();
    // Work-item 0 keeps T(tile) and the window's aggregate in registers across the rounds.
    b.line("int in_have = 0;");
    b.line(t + " in_value = carry;");
    b.open("if (lid == 0)");
    b.open("for (uint j = 0; j < KILN_WINDOW && kiln_window_flag[j]; ++j)");
    b.line("in_value = in_have ? " + p.combine("in_value", "kiln_window_value[j]") +
           " : kiln_window_value[j];");
    b.line("in_have = 1;");
    b.close();
    b.line("kiln_window_done = kiln_window == 0;");
    b.close();
    publish_window_aggregate(p, "in_have", "in_value");
    b.local_barrier();
    b.open("for (;;)");
    b.line("if (kiln_window_done) break;");
    b.open("if (lid < KILN_WINDOW)");
    read_window_before(p);
    b.line("kiln_window_flag[lid] = kiln_read_flag == 2;");
    b.line("kiln_window_value[lid] = kiln_read_value;");
    b.close();
    b.local_barrier();
    b.open("if (lid == 0)");
    b.line("uint nearest = 0;");
    b.line("while (nearest < KILN_WINDOW && !kiln_window_flag[nearest]) ++nearest;");
    b.open("if (nearest < KILN_WINDOW)");
    b.line(t + " before = kiln_window_value[nearest];");
    b.line("for (uint j = nearest; j-- > 0;) before = " +
           p.combine("before", "kiln_window_value[j]") + ";");
    b.line("kiln_windows_before = before;");
    b.line("kiln_window_done = 1;");
    b.close();
    b.close();
    b.local_barrier();
    b.close();
    b.open("if (lid == 0)");
    b.line("int have = kiln_window > 0 ? 1 : has_carry;");
    b.line(t + " prefix = kiln_window > 0 ? kiln_windows_before : carry;");
    finish_lookback(p, "in_have", "in_value");
    b.close();
}

/// The look-back within the first sub-group (warp), with no group barrier inside: each lane folds
/// its tiles, a shuffle tree of fixed shape combines the lanes (lane 0 ends with T(tile), older
/// lanes as the earlier operands); then each lane reads a window before, a ballot finds the
/// nearest that holds its P, and lane 0 folds from it to the nearest window by shuffles. (A fold
/// by one work-item through local memory cost two barriers and a serial loop, while later tiles
/// waited.)
void sub_group_lookback(tile_program& p) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    group_collectives warp(b, p.policy.sub_group_size, p.policy.target);
    const std::string sg = std::to_string(p.policy.sub_group_size);
    b.open("if (lid < " + sg + ")");
    b.line("const ulong kiln_start = tile - tile % KILN_ORDER_WINDOW;");
    b.line("const ulong kiln_window = tile / KILN_ORDER_WINDOW;");
    fold_reader_tiles(p);
    // Lanes holding tiles come first: where a later lane has some, this one has.
    b.open("for (uint kiln_d = 1; kiln_d < " + sg + "; kiln_d *= 2)");
    warp.shuffle_down(t, "kiln_later", "lane_value", "kiln_d", p.op.components);
    warp.shuffle_down("int", "kiln_later_have", "lane_have", "kiln_d");
    b.open("if ((lid & (2 * kiln_d - 1)) == 0 && lid + kiln_d < " + sg + " && kiln_later_have)");
    b.line("lane_value = " + p.combine("lane_value", "kiln_later") + ";");
    b.close();
    b.close();
    publish_window_aggregate(p, "lane_have", "lane_value");
    b.line("int have = has_carry;");
    b.line(t + " prefix = carry;");
    // Every lane runs the rounds (the ballot and shuffles are the sub-group's), until one lane
    // has met a P; windows before the window 32 back wait until a nearer one publishes its P.
    b.open("while (kiln_window > 0)");
    read_window_before(p);
    b.line("const uint stop = " + warp.ballot("kiln_read_flag == 2") + ";");
    b.line("if (stop == 0) continue;");
    b.line("const uint nearest = popcount((stop & (0u - stop)) - 1u);");
    b.open("for (uint kiln_i = nearest + 1; kiln_i-- > 0;)");
    warp.shuffle_down(t, "kiln_window_value", "kiln_read_value", "kiln_i", p.op.components);
    b.line("prefix = kiln_i == nearest ? kiln_window_value : " +
           p.combine("prefix", "kiln_window_value") + ";");
    b.close();
    b.line("have = 1;");
    b.line("break;");
    b.close();
    b.open("if (lid == 0)");
    finish_lookback(p, "lane_have", "lane_value");
    b.close();
    b.close();
}

}  // namespace

void write_single_pass_kernel(tile_program& p, tile_algorithm& algorithm) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    p.begin(scan_kernel::lookback, &algorithm);
    const scan_scratch_layout<ulong_text> layout{std::string("tiles"), p.op.value_bytes};
    p.windows.declare_pointers(
        b, {layout.window_states_offset().text, layout.window_aggregates_offset().text,
            layout.window_prefixes_offset().text});
    algorithm.declare_arrays();
    b.line("local uint kiln_tile_number;");
    b.line("local int kiln_has_prefix;");
    b.line("local " + t + " kiln_prefix;");
    const bool in_sub_group = looks_back_in_sub_group(p.policy);
    if (!in_sub_group) {
        b.line("local int kiln_window_flag[KILN_WINDOW];");
        b.line("local " + t + " kiln_window_value[KILN_WINDOW];");
        b.line("local int kiln_window_done;");
        b.line("local " + t + " kiln_windows_before;");
    }
    b.constant("KILN_ORDER_WINDOW",
               lookback_readers(p.policy) * std::max<std::size_t>(1, p.policy.lookback_depth));
    // Ticket order: a tile's id is taken when its group starts, so every tile it waits for
    // belongs to a group that started earlier.
    static_assert(scan_scratch_layout<>::ticket_offset() == 0);
    b.line("if (lid == 0) kiln_tile_number = atomic_inc((volatile global uint*)kiln_temp);");
    b.local_barrier();
    b.line("const ulong tile = kiln_tile_number;");
    algorithm.load_and_scan();
    // Every tile's aggregate: the later tiles of its window read it.
    b.open("if (lid == 0)");
    p.state.publish(b, "tile", "aggregate", 1);
    b.close();
    if (in_sub_group)
        sub_group_lookback(p);
    else
        local_memory_lookback(p);
    b.open("if (lid == 0 && tile == tiles - 1)");
    b.line("*kiln_total = kiln_has_prefix ? " + p.combine("kiln_prefix", "aggregate") +
           " : aggregate;");
    b.close();
    b.local_barrier();
    b.line("const int tile_has_prefix = kiln_has_prefix;");
    b.line("const " + t + " tile_prefix = kiln_prefix;");
    algorithm.store();
    b.end_kernel();
}

}  // namespace kiln::detail
