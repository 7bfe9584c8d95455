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
// Peers are found by one ballot per digit bit where sub-groups are real (CUDA's warps through
// the prelude's cl_khr_subgroup_ballot, NVIDIA's OpenCL through inline PTX); elsewhere each lane
// writes its digit to local memory and reads its sub-group's 32, with work-group barriers instead
// of sub-group ones: slower, but the same ranking on every device, which is how PoCL tests it.
#include <kiln/detail/group_collectives.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

std::string num(unsigned long long value) {
    return std::to_string(value);
}

constexpr unsigned lanes = 32;

bool ballots(const radix_sort_shape& s) {
    return s.sub_group_size == lanes || s.ptx_ballots;
}

/// Local memory writes visible to the work-items that find peers together.
std::string peer_barrier(const radix_sort_shape& s) {
    return ballots(s) ? "kiln_sub_group_sync();" : "barrier(CLK_LOCAL_MEM_FENCE);";
}

/// kiln_ballot(predicate): the lanes of the sub-group whose predicate holds (every lane must
/// call it); kiln_sub_group_sync(): orders the sub-group's local memory accesses.
void define_ballots(source_builder& b, const radix_sort_shape& s) {
    if (s.ptx_ballots) {
        // NVIDIA's OpenCL has no sub-group functions but compiles inline PTX; the fences keep
        // the compiler from moving local memory accesses across the warp barrier.
        b.define("kiln_ballot",
                 "uint kiln_ballot(uint predicate) {\n    uint mask;\n    asm volatile(\"{ .reg "
                 ".pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }\" : "
                 "\"=r\"(mask) : \"r\"(predicate));\n    return mask;\n}");
        b.define("kiln_sub_group_sync",
                 "void kiln_sub_group_sync(void) {\n    mem_fence(CLK_LOCAL_MEM_FENCE);\n    asm "
                 "volatile(\"bar.warp.sync 0xffffffff;\");\n    "
                 "mem_fence(CLK_LOCAL_MEM_FENCE);\n}");
    } else {
        b.define("kiln_ballot",
                 "uint kiln_ballot(uint predicate) {\n    return "
                 "sub_group_ballot((int)predicate).x;\n}");
        b.define("kiln_sub_group_sync",
                 "void kiln_sub_group_sync(void) {\n    "
                 "sub_group_barrier(CLK_LOCAL_MEM_FENCE);\n}");
    }
}

}  // namespace

void multi_split_setup(source_builder& b, const radix_sort_shape& s) {
    const unsigned sub_groups = s.work_group_size / lanes;
    b.local_array("uint", "kiln_sub_counts", num(sub_groups * s.radix()));
    if (!ballots(s)) b.local_array("uint", "kiln_lane_digits", num(s.work_group_size));
}

void multi_split_count(source_builder& b, const radix_sort_shape& s) {
    if (ballots(s)) define_ballots(b, s);
    const unsigned k = s.items_per_work_item, g = s.work_group_size, r = s.radix();
    const unsigned sub_groups = g / lanes;
    const std::string R = num(r) + "u", G = num(g) + "u";
    const std::string key = radix_bits_type(s.key.bytes);
    b.line("for (uint i = t; i < " + num(sub_groups * r) + "u; i += " + G +
           ") kiln_sub_counts[i] = 0;");
    b.line("const uint lane = t % " + num(lanes) + "u, sub_group = t / " + num(lanes) + "u;");
    b.line("const uint sub_base = sub_group * " + R + ";");
    // Every load first, so that they are in flight together. Items past the end (their loads
    // kept in bounds) get the last digit: they rank after every real key, being last in the
    // tile's order, and are taken out of that digit's count below.
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j);
        const std::string index =
            "sub_group * " + num(lanes * k) + "u + " + num(j * lanes) + "u + lane";
        b.line("const uint index" + J + " = " + index + ";");
        b.line("const ulong at" + J + " = base + min(index" + J + ", valid - 1u);");
        b.line("const " + key + " key" + J + " = key_src[at" + J + "];");
        if (s.value_bytes != 0)
            b.line("const " + radix_bits_type(s.value_bytes) + " value" + J + " = value_src[at" +
                   J + "];");
        b.line("const uint digit" + J + " = index" + J + " < valid ? kiln_sort_digit(key" + J +
               ", shift) : " + num(r - 1) + "u;");
    }
    b.local_barrier();
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), d = "digit" + J, peers = "peers" + J, before = "before" + J;
        if (ballots(s)) {
            b.line("uint " + peers + " = 0xffffffffu;");
            for (unsigned bit = 0; bit < s.radix_bits; ++bit) {
                const std::string set = "(" + d + " >> " + num(bit) + "u) & 1u";
                const std::string ones = "ones" + J + "_" + num(bit);
                b.line("const uint " + ones + " = kiln_ballot(" + set + ");");
                b.line(peers + " &= (" + set + ") ? " + ones + " : ~" + ones + ";");
            }
        } else {
            b.line("kiln_lane_digits[t] = " + d + ";");
            b.local_barrier();
            b.line("uint " + peers + " = 0;");
            b.line("for (uint l = 0; l < " + num(lanes) + "u; ++l) " + peers +
                   " |= (kiln_lane_digits[t - lane + l] == " + d + " ? 1u : 0u) << l;");
        }
        b.line("const uint " + before + " = kiln_sub_counts[sub_base + " + d + "];");
        b.line("const uint rank" + J + " = " + before + " + popcount(" + peers +
               " & ((1u << lane) - 1u));");
        b.line(peer_barrier(s));
        b.line("if ((" + peers + " >> lane) == 1u) kiln_sub_counts[sub_base + " + d +
               "] = " + before + " + popcount(" + peers + ");");
        b.line(peer_barrier(s));
    }
    b.local_barrier();
    // Each work-item takes `per` consecutive digits: the counters become exclusive over
    // sub-groups, the digits' totals are scanned over the group, and kiln_start and kiln_end
    // mark where each digit lies in the ranked tile (both equal when absent).
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
    group_collectives(b, s.sub_group_size)
        .inclusive_scan(
            "kiln_scan", "t", G, "inclusive",
            [](const std::string& x, const std::string& y) { return x + " + " + y; }, "uint");
    b.open("for (uint p = 0; p < " + num(per) + "u; ++p)");
    b.line("const uint d = t * " + num(per) + "u + p;");
    b.open("if (d < " + R + ")");
    b.line("kiln_start[d] += inclusive - own;");
    b.line("kiln_end[d] += inclusive - own - (d == " + num(r - 1) + "u ? " + num(s.tile()) +
           "u - valid : 0u);");
    b.close();
    b.close();
    b.local_barrier();
}

void multi_split_place(source_builder& b, const radix_sort_shape& s) {
    for (unsigned j = 0; j < s.items_per_work_item; ++j) {
        const std::string J = num(j), d = "digit" + J;
        b.open("");
        b.line("const uint at = " +
               radix_padded("kiln_start[" + d + "] + kiln_sub_counts[sub_base + " + d + "] + rank" +
                            J) +
               ";");
        b.line("kiln_keys[at] = key" + J + ";");
        if (s.value_bytes != 0) b.line("kiln_values[at] = value" + J + ";");
        b.close();
    }
    b.local_barrier();
}

}  // namespace kiln::detail
