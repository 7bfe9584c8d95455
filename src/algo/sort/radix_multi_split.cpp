// SPDX-License-Identifier: Apache-2.0
// Radix tile ranking by a sub-group multi-split (as in Onesweep, Adinets and Merrill 2022).
//
// Sub-group w of 32 work-items owns the tile's items [w * 32K, (w + 1) * 32K); its lane l holds
// items w * 32K + j * 32 + l (j < K) in registers, loaded straight from global memory (each j
// one coalesced row). For j = 0, 1, ... every lane finds its peers, the lanes of its sub-group
// whose key has the same digit, and ranks its key after the peers below it and after all the
// sub-group's earlier keys of that digit (a counter per sub-group and digit, kept by the highest
// peer). That order (sub-group, j, lane) is the tile's order, so the ranking is stable. Then a
// scan over (digit, sub-group) counters gives every key its place in the tile sorted by digit.
//
// Peers are found by one ballot per digit bit (the device vocabulary's kiln_ballot_agree) where the
// target has sub-groups of 32 (or by one match.any, kiln_match_any, where the row asks for it on
// NVIDIA GPUs: CUB's sm_90 Onesweep ranks so); otherwise each lane writes its digit to local memory
// and reads its sub-group's 32, with work-group barriers instead of sub-group ones: slower, but the
// same ranking on every device, which is how PoCL tests it.
//
// The sorted tile goes through one local array: keys first, then (sort_by_key) the values in a
// second round through the same array, as Onesweep does, so that a tile of pairs is as long as a
// tile of keys (the values stay in global memory until the keys have left). With
// values_beside_keys the values have an array of their own instead: loaded as the keys take
// their places, ranked beside them, and written with them (NVIDIA's OpenCL: 2^28 pairs in 10.8
// ms instead of 12.7 on an H100, one barrier and one pass over the tile fewer per tile).
#include <algorithm>
#include <kiln/detail/group_collectives.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "algo/tiles/tile_load.hpp"
#include "codegen/device_vocabulary.hpp"
#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr unsigned lanes = 32;

/// Local memory writes visible to the work-items that find peers together.
std::string peer_barrier(const radix_sort_shape& s) {
    return s.ballots ? "kiln_sub_group_sync();" : "barrier(CLK_LOCAL_MEM_FENCE);";
}

/// Declares peersJ: the lanes of the sub-group whose digitJ equals this lane's.
void find_peers(source_builder& b, const radix_sort_shape& s, const std::string& J) {
    const std::string d = "digit" + J, peers = "peers" + J;
    if (s.ballots && s.match_any) {
        b.line("const uint " + peers + " = kiln_match_any(" + d + ");");
    } else if (s.ballots) {
        // Lanes that agree with this one on every bit.
        b.line("uint " + peers + " = kiln_ballot_agree(" + d + ", 1u);");
        for (unsigned bit = 1; bit < s.radix_bits; ++bit)
            b.line(peers + " &= kiln_ballot_agree(" + d + ", " + num(1u << bit) + "u);");
    } else {
        b.line("kiln_lane_digits[t] = " + d + ";");
        b.local_barrier();
        b.line("uint " + peers + " = 0;");
        b.line("for (uint l = 0; l < " + num(lanes) + "u; ++l) " + peers +
               " |= (kiln_lane_digits[t - lane + l] == " + d + " ? 1u : 0u) << l;");
    }
}

/// Declares `name`J of `type`: this lane's items of the tile, warp-striped (item j at
/// `items`[32 j]), all loads in flight together (items past the end read as 0).
void load_lane_items(source_builder& b, const radix_sort_shape& s, const std::string& type,
                     const std::string& name, const std::string& items) {
    tile_loader(tile_frame{b}).warp_striped(type, name, items, s.items_per_work_item, lanes);
}

/// Declares valueJ: this lane's values of the tile (items past the end have no value and no
/// place).
void load_values(source_builder& b, const radix_sort_shape& s) {
    const std::string value = radix_bits_type(s.value_bytes);
    b.line("global const " + value + "* tile_values = value_src + base + first;");
    load_lane_items(b, s, value, "value", "tile_values");
}

/// Moves valueJ to place atJ of kiln_values.
void place_values(source_builder& b, const radix_sort_shape& s) {
    for (unsigned j = 0; j < s.items_per_work_item; ++j) {
        const std::string J = num(j);
        b.line("if (" + num(j * lanes) + " < left) kiln_values[at" + J + "] = value" + J + ";");
    }
}

/// kiln_tile_memory: the bytes of its elements and their count.
struct tile_memory {
    std::size_t element_bytes, elements;
};

tile_memory multi_split_tile_memory(const radix_sort_shape& s) {
    // The counters are done with before the keys move (every place is in registers first), and
    // the keys before the values move: one array serves all three in turn, declared with the
    // widest type for its alignment. Local memory then holds the tiles of 384 x 20 keys that
    // CUB runs on an H100 within CUDA's 48 KB. At least uint: the counters are uints, and 16-bit
    // keys (whose tiles plan_radix_sort sizes as 4-byte keys') would not align them.
    const unsigned sub_groups = s.work_group_size / lanes;
    const std::size_t wide = std::max<std::size_t>(
        4, s.values_beside_keys ? s.keys.bytes : std::max(s.keys.bytes, s.value_bytes));
    const std::size_t counter_words = (std::size_t{sub_groups} * s.radix() * 4 + wide - 1) / wide;
    return {wide, std::max<std::size_t>(s.tile(), counter_words)};
}

}  // namespace

std::size_t multi_split_local_bytes(const radix_sort_shape& s) {
    const tile_memory memory = multi_split_tile_memory(s);
    return (s.ballots ? 0 : s.work_group_size * 4) + memory.element_bytes * memory.elements +
           (s.values_beside_keys && s.value_bytes != 0 ? s.tile() * s.value_bytes : 0);
}

void multi_split_setup(source_builder& b, const radix_sort_shape& s) {
    const tile_memory memory = multi_split_tile_memory(s);
    const std::string type = radix_bits_type(memory.element_bytes);
    if (!s.ballots) b.local_array("uint", "kiln_lane_digits", num(s.work_group_size));
    b.local_array(type, "kiln_tile_memory", num(memory.elements));
    b.line("local uint* kiln_sub_counts = (local uint*)kiln_tile_memory;");
    const std::string key = radix_bits_type(s.keys.bytes);
    b.line("local " + key + "* kiln_keys = (local " + key + "*)kiln_tile_memory;");
    if (s.value_bytes == 0) return;
    const std::string value = radix_bits_type(s.value_bytes);
    if (s.values_beside_keys)
        b.local_array(value, "kiln_values", num(s.tile()));
    else
        b.line("local " + value + "* kiln_values = (local " + value + "*)kiln_tile_memory;");
}

void multi_split_count(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    if (s.ballots) use_device_vocabulary(b, s.target);
    if (s.ballots && s.match_any) use_match_any_vocabulary(b, s.target);
    const unsigned k = s.items_per_work_item, g = s.work_group_size, r = s.radix();
    const unsigned sub_groups = g / lanes;
    const std::string R = num(r) + "u", G = num(g) + "u";
    const std::string key = radix_bits_type(s.keys.bytes);
    b.line("for (uint i = t; i < " + num(sub_groups * r) + "u; i += " + G +
           ") kiln_sub_counts[i] = 0;");
    b.line("const uint lane = t % " + num(lanes) + "u, sub_group = t / " + num(lanes) + "u;");
    b.line("const uint sub_base = sub_group * " + R + ";");
    b.line("const uint lanes_below = (1u << lane) - 1u;");
    // This lane's first item in the tile; item j lies 32 j further.
    b.line("const uint first = sub_group * " + num(lanes * k) + "u + lane;");
    b.line("global const " + key + "* tile_keys = key_src + base + first;");
    // Items of this lane inside the tile: item j is when 32 j < left.
    b.line("const int left = (int)valid - (int)first;");
    if (radix_keys_convert(s)) {
        // The keys in their stored form, converted where the memory does not hold them so.
        load_lane_items(b, s, key, "loaded_key", "tile_keys");
        for (unsigned j = 0; j < k; ++j)
            b.line(key + " key" + num(j) + " = loaded_key" + num(j) + ";");
        radix_keys_crossing(b, s, single_pass, "stored_in", [&](bool convert) {
            if (convert)
                for (unsigned j = 0; j < k; ++j)
                    b.line("key" + num(j) + " = kiln_sort_stored(key" + num(j) + ");");
        });
    } else {
        load_lane_items(b, s, key, "key", "tile_keys");
    }
    b.local_barrier();
    // Items past the end get the last digit: they rank after every real key, being last in the
    // tile's order, and are taken out of that digit's count below. A key's rank within its
    // sub-group and its digit share a register (rank_digitJ, the digit in the low bits): the
    // tile's keys and these are what the registers hold until the keys move.
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), d = "digit" + J, peers = "peers" + J, before = "before" + J;
        b.line("const uint " + d + " = " + num(j * lanes) + " < left ? kiln_sort_stored_digit(key" +
               J + ", shift) : " + num(r - 1) + "u;");
        find_peers(b, s, J);
        b.line("const uint " + before + " = kiln_sub_counts[sub_base + " + d + "];");
        b.line("const uint rank_digit" + J + " = (" + before + " + popcount(" + peers +
               " & lanes_below)) << " + num(s.radix_bits) + " | " + d + ";");
        b.line(peer_barrier(s));
        b.line("if ((" + peers + " >> lane) == 1u) kiln_sub_counts[sub_base + " + d +
               "] = " + before + " + popcount(" + peers + ");");
        b.line(peer_barrier(s));
    }
    b.local_barrier();
    // Each work-item takes `per` consecutive digits: the counters become exclusive over
    // sub-groups, the digits' totals are scanned over the group, and kiln_start and kiln_end
    // mark where each digit lies in the ranked tile (both equal when absent). The digit's start
    // then goes into its counters, so that a key's place is its counter plus its rank.
    const unsigned per = r > g ? r / g : 1;
    b.line("uint own = 0;");
    b.open("for (uint p = 0; p < " + num(per) + "u; ++p)");
    b.line("const uint d = t * " + num(per) + "u + p;");
    b.open("if (d < " + R + ")");
    b.line("uint total = 0;");
    b.open("for (uint w = 0; w < " + num(sub_groups) + "u; ++w)");
    b.line("const uint c = kiln_sub_counts[w * " + R + " + d];");
    b.line("kiln_sub_counts[w * " + R + " + d] = total;");
    b.line("total += c;");
    b.close();
    b.line("kiln_start[d] = own;");
    b.line("own += total;");
    b.line("kiln_end[d] = own;");
    b.close();
    b.close();
    b.line("uint inclusive = own;");
    group_collectives(b, s.sub_group_size, s.target)
        .inclusive_scan(
            "kiln_scan", "t", G, "inclusive",
            [](const std::string& x, const std::string& y) { return x + " + " + y; }, "uint");
    b.open("for (uint p = 0; p < " + num(per) + "u; ++p)");
    b.line("const uint d = t * " + num(per) + "u + p;");
    b.open("if (d < " + R + ")");
    b.line("const uint start = kiln_start[d] + inclusive - own;");
    b.line("kiln_start[d] = start;");
    b.line("kiln_end[d] += inclusive - own - (d == " + num(r - 1) + "u ? " + num(s.tile()) +
           "u - valid : 0u);");
    b.line("for (uint w = 0; w < " + num(sub_groups) + "u; ++w) kiln_sub_counts[w * " + R +
           " + d] += start;");
    b.close();
    b.close();
    b.local_barrier();
}

void multi_split_place(source_builder& b, const radix_sort_shape& s) {
    // Beside the keys, the values' loads go first: in flight while the places are computed and
    // the keys written. (Loaded with the keys, before the ranking, they held 20 more registers
    // through it: 15.4 ms for 2^28 pairs at 256 x 20 on NVIDIA's OpenCL instead of 10.8.)
    if (s.values_beside_keys) load_values(b, s);
    // atJ stays declared for the values' round (multi_split_place_values).
    for (unsigned j = 0; j < s.items_per_work_item; ++j) {
        const std::string J = num(j);
        b.line("const uint at" + J + " = kiln_sub_counts[sub_base + (rank_digit" + J + " & " +
               num(s.radix() - 1) + "u)] + (rank_digit" + J + " >> " + num(s.radix_bits) + "u);");
    }
    b.local_barrier();  // the keys overwrite the counters
    for (unsigned j = 0; j < s.items_per_work_item; ++j)
        b.line("kiln_keys[at" + num(j) + "] = key" + num(j) + ";");
    if (s.values_beside_keys) place_values(b, s);
    b.local_barrier();
}

void multi_split_place_values(source_builder& b, const radix_sort_shape& s) {
    b.local_barrier();  // every key has left kiln_keys, which the values now use
    load_values(b, s);
    place_values(b, s);
    b.local_barrier();
}

}  // namespace kiln::detail
