// Kernel generators for sorting: radix sort passes (upsweep histogram, scan, downsweep scatter)
// (merge sort passes are in merge_sort_kernels.cpp).
//
// Radix sort, one pass per digit, after Merrill and Grimshaw's reduce-then-scan sort:
//   upsweep    every work-group counts the digits of its chunk of keys -> counts[digit][group]
//   scan       one work-group turns counts into exclusive offsets (digit-major, so the offset of
//              (digit, group) is where that group's keys of that digit start in the output) and
//              decides whether every key has the same digit, in which case the pass is skipped
//   downsweep  every work-group walks its chunk tile by tile, ranks each tile's keys stably in
//              local memory and scatters keys and values to their offsets
// Keys and values live in two buffers (a: the caller's, b: a temporary) and move between them.
// Which one holds the data is decided on the device, with no host round trip: state[1] says
// whether the last pass was skipped, state[0] is the buffer the last pass wrote (or would have
// written). The state starts as zeros (data in a). The finish kernel copies the data back into
// the caller's buffers if it ended in b.
#include "sort_kernels.hpp"

#include <algorithm>
#include <kiln/detail/group_collectives.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {
namespace {

std::string num(unsigned long long value) {
    return std::to_string(value);
}

/// The key's bits as an unsigned number whose ascending order is the sort order.
std::string ordered_bits(const sort_key_info& key, bool descending) {
    const bool wide = key.bytes == 8;
    const std::string sign = wide ? "0x8000000000000000UL" : "0x80000000u";
    const std::string exponent = wide ? "0x7ff0000000000000UL" : "0x7f800000u";
    std::string ordered;
    switch (key.kind) {
        case sort_key_kind::unsigned_integer:
            ordered = "k";
            break;
        case sort_key_kind::signed_integer:
            ordered = "(k ^ " + sign + ")";
            break;
        case sort_key_kind::floating: {
            // Negative numbers reversed, positive ones above them (-0 just below +0); every NaN,
            // whatever its sign and payload, becomes the largest value so that NaNs come last.
            // Without selects: the sign, spread over the word by an arithmetic shift, flips
            // every bit of a negative number and only the sign bit of a positive one; a NaN's
            // comparison (1) negated is all ones.
            const std::string type = radix_bits_type(key.bytes),
                              signed_type = wide ? "long" : "int";
            ordered = "((k ^ ((" + type + ")((" + signed_type + ")k >> " + (wide ? "63" : "31") +
                      ") | " + sign + ")) | (" + type + ")(-(" + signed_type + ")((k & ~" + sign +
                      ") > " + exponent + ")))";
            break;
        }
    }
    return descending ? "~" + ordered : ordered;
}

std::string padded_size(unsigned count) {
    return num(count + (count >> 5));
}

/// In-tile ranking goes in rounds of at most this many bits of the digit: the round's counters,
/// one per (round digit, work-item), fit in local memory (16 x G words).
constexpr unsigned rank_round_bits = 4;

void define_radix_helpers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.key.bytes);
    b.define("kiln_pad", "uint kiln_pad(uint i) { return i + (i >> 5); }");
    b.define("kiln_sort_digit", "uint kiln_sort_digit(" + key +
                                    " k, uint shift) {\n    return (uint)(" +
                                    ordered_bits(s.key, s.descending) + " >> shift) & " +
                                    num(s.radix() - 1) + "u;\n}");
    // Which buffer holds the keys now (see the file comment).
    b.define("kiln_sort_current",
             "uint kiln_sort_current(global const uint* state) {\n"
             "    return state[1] ? 1u - state[0] : state[0];\n}");
}

void upsweep(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.key.bytes), G = num(s.work_group_size) + "u",
                      R = num(s.radix()) + "u";
    b.begin_kernel("kiln_radix_upsweep", s.work_group_size);
    b.parameter("global const " + key + "* keys_a");
    b.parameter("global const " + key + "* keys_b");
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.parameter("ulong chunk");
    b.parameter("uint shift");
    b.parameter("global ulong* counts");
    b.begin_body();
    // Counting needs no order: local atomics, one counter per digit.
    b.local_array("uint", "kiln_bins", R);
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint d = t; d < " + R + "; d += " + G + ") kiln_bins[d] = 0;");
    b.local_barrier();
    b.line("global const " + key + "* keys = kiln_sort_current(state) ? keys_b : keys_a;");
    b.line("const ulong begin = (ulong)get_group_id(0) * chunk;");
    b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    b.line("for (ulong i = begin + t; i < end; i += " + G +
           ") atomic_inc(&kiln_bins[kiln_sort_digit(keys[i], shift)]);");
    b.local_barrier();
    b.line("for (uint d = t; d < " + R + "; d += " + G +
           ") counts[(ulong)d * get_num_groups(0) + get_group_id(0)] = kiln_bins[d];");
    b.end_kernel();
}

void scan(source_builder& b, const radix_sort_shape& s) {
    const unsigned g = s.work_group_size;
    b.begin_kernel("kiln_radix_scan", g);
    b.parameter("global ulong* counts");
    b.parameter("uint blocks");
    b.parameter("global uint* state");
    b.parameter("ulong n");
    b.begin_body();
    b.local_array("ulong", "kiln_partial", num(g));
    b.local_array("ulong", "kiln_digit_start", num(s.radix()));
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint total = blocks * " + num(s.radix()) + "u;");
    b.line("ulong carry = 0;");
    b.open("for (uint base = 0; base < total; base += " + num(g) + "u)");
    b.line("const uint i = base + t;");
    b.line("const ulong x = i < total ? counts[i] : 0;");
    b.line("kiln_partial[t] = x;");
    b.local_barrier();
    b.open("for (uint offset = 1; offset < " + num(g) + "u; offset <<= 1)");
    b.line("const ulong y = t >= offset ? kiln_partial[t - offset] : 0;");
    b.local_barrier();
    b.line("kiln_partial[t] += y;");
    b.local_barrier();
    b.close();
    b.open("if (i < total)");
    b.line("const ulong exclusive = carry + kiln_partial[t] - x;");
    b.line("counts[i] = exclusive;");
    b.line("if (i % blocks == 0) kiln_digit_start[i / blocks] = exclusive;");
    b.close();
    b.line("carry += kiln_partial[" + num(g - 1) + "];");
    b.local_barrier();
    b.close();
    b.open("if (t == 0)");
    b.line("uint skip = 0;");
    b.open("for (uint d = 0; d < " + num(s.radix()) + "u; ++d)");
    b.line("const ulong next = d + 1 < " + num(s.radix()) + "u ? kiln_digit_start[d + 1] : n;");
    b.line("if (next - kiln_digit_start[d] == n) skip = 1;");
    b.close();
    b.line("state[0] = 1u - kiln_sort_current(state);");
    b.line("state[1] = skip;");
    b.close();
    b.end_kernel();
}

/// Names shared by the tile code of the classic and the single-pass downsweeps.
struct tile_names {
    std::string key, value, G, R, K;
    unsigned g, k, r;
    explicit tile_names(const radix_sort_shape& s)
        : key(radix_bits_type(s.key.bytes)),
          value(s.value_bytes != 0 ? radix_bits_type(s.value_bytes) : ""),
          G(num(s.work_group_size) + "u"),
          R(num(s.radix()) + "u"),
          K(num(s.items_per_work_item) + "u"),
          g(s.work_group_size),
          k(s.items_per_work_item),
          r(s.radix()) {}
};

void scatter_parameters(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.key.bytes);
    b.parameter("global " + key + "* keys_a");
    b.parameter("global " + key + "* keys_b");
    if (s.value_bytes != 0) {
        b.parameter("global " + radix_bits_type(s.value_bytes) + "* values_a");
        b.parameter("global " + radix_bits_type(s.value_bytes) + "* values_b");
    }
}

/// The type of output positions: 32 bits in the single pass, whose status words limit n to
/// 2^30 anyway (fewer instructions per key), 64 bits in reduce-then-scan.
std::string position_type(bool single_pass) {
    return single_pass ? "uint" : "ulong";
}

/// Local arrays of the tile code.
void tile_setup(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    const tile_names n(s);
    if (!s.multi_split)
        b.local_array("uint", "kiln_counters", padded_size((1u << rank_round_bits) * n.g));
    b.local_array("uint", "kiln_scan", num(2 * n.g));
    b.local_array("uint", "kiln_start", n.R);  // where each digit starts in the ranked tile
    b.local_array("uint", "kiln_end", n.R);    // and where it ends (both 0 when absent)
    // Where the tile's keys of each digit go.
    b.local_array(position_type(single_pass), "kiln_run", n.R);
    if (s.multi_split) {
        multi_split_setup(b, s);  // unpadded: work-items read consecutive elements
        return;
    }
    b.local_array(n.key, "kiln_keys", padded_size(s.tile()));
    if (s.value_bytes != 0) b.local_array(n.value, "kiln_values", padded_size(s.tile()));
}

/// Index of tile element `i` in kiln_keys and kiln_values.
std::string tile_at(const radix_sort_shape& s, const std::string& i) {
    return s.multi_split ? i : radix_padded(i);
}

void tile_pointers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.key.bytes);
    b.line("global " + key + "* key_src = from_b ? keys_b : keys_a;");
    b.line("global " + key + "* key_dst = from_b ? keys_a : keys_b;");
    if (s.value_bytes != 0) {
        const std::string type = radix_bits_type(s.value_bytes);
        b.line("global " + type + "* value_src = from_b ? values_b : values_a;");
        b.line("global " + type + "* value_dst = from_b ? values_a : values_b;");
    }
}

/// Coalesced loads of the tile at `base` (`valid` keys), item j*G + t to work-item t.
void tile_load(source_builder& b, const radix_sort_shape& s) {
    const tile_names n(s);
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t";
        b.open("if (" + i + " < valid)");
        b.line("kiln_keys[" + radix_padded(i) + "] = key_src[base + " + i + "];");
        if (s.value_bytes != 0)
            b.line("kiln_values[" + radix_padded(i) + "] = value_src[base + " + i + "];");
        b.close();
    }
    b.local_barrier();
}

/// One stable counting round over `width` bits of the digit from bit `low`: the tile in
/// kiln_keys (and kiln_values) is reordered by those bits, equal ones keeping their order.
void rank_round(source_builder& b, const radix_sort_shape& s, unsigned low, unsigned width) {
    const tile_names n(s);
    const unsigned w = 1u << width, k = n.k;
    const std::string W = num(w) + "u", G = n.G;
    b.open("");
    b.line("for (uint d = 0; d < " + W + "; ++d) kiln_counters[" +
           radix_padded("d * " + G + " + t") + "] = 0;");
    // Work-item t ranks the consecutive items t*K .. t*K+K-1, so that counting them in order
    // and then scanning over work-items keeps equal digits in tile order: the round is stable.
    // Items past the end get the last digit and rank after every real key. A work-item counts
    // its items in registers (prefixJ: earlier items with the same digit) and the last item of
    // each digit stores the count: no chain of dependent local loads and stores.
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), p = "t * " + n.K + " + " + J + "u";
        b.line("const " + n.key + " key" + J + " = kiln_keys[" + radix_padded(p) + "];");
        if (s.value_bytes != 0)
            b.line("const " + n.value + " value" + J + " = kiln_values[" + radix_padded(p) + "];");
        b.line("const uint digit" + J + " = " + p + " < valid ? (kiln_sort_digit(key" + J +
               ", shift) >> " + num(low) + "u) & " + num(w - 1) + "u : " + num(w - 1) + "u;");
        std::string prefix = "0u";
        for (unsigned i = 0; i < j; ++i)
            prefix += " + (digit" + num(i) + " == digit" + J + " ? 1u : 0u)";
        b.line("const uint prefix" + J + " = " + prefix + ";");
    }
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j);
        std::string last = "1";
        for (unsigned i = j + 1; i < k; ++i) last += " && digit" + num(i) + " != digit" + J;
        b.line("if (" + last + ") kiln_counters[" + radix_padded("digit" + J + " * " + G + " + t") +
               "] = prefix" + J + " + 1;");
    }
    b.local_barrier();
    // Exclusive scan of the counters in (digit, work-item) order: each work-item sums W
    // consecutive counters, the group scans those sums, each work-item writes its run back.
    b.line("uint own = 0;");
    b.line("for (uint c = 0; c < " + W + "; ++c) own += kiln_counters[" +
           radix_padded("t * " + W + " + c") + "];");
    b.line("uint inclusive = own;");
    group_collectives(b, s.sub_group_size)
        .inclusive_scan(
            "kiln_scan", "t", G, "inclusive",
            [](const std::string& x, const std::string& y) { return x + " + " + y; }, "uint");
    b.line("uint running = inclusive - own;");
    b.open("for (uint c = 0; c < " + W + "; ++c)");
    b.line("const uint at = " + radix_padded("t * " + W + " + c") + ";");
    b.line("const uint x = kiln_counters[at];");
    b.line("kiln_counters[at] = running;");
    b.line("running += x;");
    b.close();
    b.local_barrier();
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j);
        b.open("if (t * " + n.K + " + " + J + "u < valid)");
        b.line("const uint rank = kiln_counters[" + radix_padded("digit" + J + " * " + G + " + t") +
               "] + prefix" + J + ";");
        b.line("kiln_keys[" + radix_padded("rank") + "] = key" + J + ";");
        if (s.value_bytes != 0)
            b.line("kiln_values[" + radix_padded("rank") + "] = value" + J + ";");
        b.close();
    }
    b.local_barrier();
    b.close();
}

/// Sorts the loaded tile stably by the pass's digit in rounds of rank_round_bits (LSD within
/// the tile), then marks where each digit starts and ends in it (kiln_start and kiln_end,
/// cleared before).
void tile_rank(source_builder& b, const radix_sort_shape& s) {
    const tile_names n(s);
    for (unsigned low = 0; low < s.radix_bits; low += rank_round_bits)
        rank_round(b, s, low, std::min(rank_round_bits, s.radix_bits - low));
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t";
        b.open("if (" + i + " < valid)");
        b.line("const uint d = kiln_sort_digit(kiln_keys[" + radix_padded(i) + "], shift);");
        b.line("if (" + i + " == 0 || kiln_sort_digit(kiln_keys[" + radix_padded(i + " - 1") +
               "], shift) != d) kiln_start[d] = " + i + ";");
        b.line("if (" + i + " + 1 == valid || kiln_sort_digit(kiln_keys[" +
               radix_padded(i + " + 1") + "], shift) != d) kiln_end[d] = " + i + " + 1;");
        b.close();
    }
    b.local_barrier();
}

/// Writes the ranked tile to kiln_run[digit] + its place within the digit: consecutive
/// work-items write consecutive keys of one digit, which coalesces. In the single pass,
/// kiln_run[digit] already has the digit's start in the tile taken off (one local read less).
/// A position past the end is not written: the ranks of a correct tile never give one, but a
/// device that miscompiled the ranking (PoCL 5.0 on the GPU machine, 2026-11-22) left tiles
/// unsorted, and `i - kiln_start[d]` then wrapped, writing 16 GB past the buffer (SIGSEGV; on a
/// GPU it would corrupt other allocations). A wrong sort is reported by the tests instead.
/// The multi-split's values follow in a second round through the same local array, each to the
/// position its key went to.
void tile_scatter(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    const tile_names n(s);
    const std::string type = position_type(single_pass);
    const bool values_after = s.multi_split && s.value_bytes != 0;
    b.line("const " + type + " limit = (" + type + ")n;");
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t", J = num(j);
        const std::string position = values_after ? "position" + J : "position";
        if (values_after) b.line(type + " " + position + " = limit;");
        b.open("if (" + i + " < valid)");
        b.line("const " + n.key + " k = kiln_keys[" + tile_at(s, i) + "];");
        b.line("const uint d = kiln_sort_digit(k, shift);");
        b.line(std::string(values_after ? "" : "const " + type + " ") + position +
               " = kiln_run[d] + " + (single_pass ? i : "(ulong)(" + i + ") - kiln_start[d]") +
               ";");
        b.open("if (" + position + " < limit)");
        b.line("key_dst[" + position + "] = k;");
        if (s.value_bytes != 0 && !values_after)
            b.line("value_dst[position] = kiln_values[" + tile_at(s, i) + "];");
        b.close();
        b.close();
    }
    if (!values_after) return;
    multi_split_place_values(b, s);
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t", J = num(j);
        b.line("if (" + i + " < valid && position" + J + " < limit) value_dst[position" + J +
               "] = kiln_values[" + i + "];");
    }
}

void downsweep(source_builder& b, const radix_sort_shape& s) {
    const tile_names n(s);
    const std::string tile = num(s.tile()) + "u";
    b.begin_kernel("kiln_radix_downsweep", n.g);
    scatter_parameters(b, s);
    b.parameter("global const ulong* counts");
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.parameter("ulong chunk");
    b.parameter("uint shift");
    b.begin_body();
    tile_setup(b, s, false);
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (state[1]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint from_b = 1u - state[0];");
    tile_pointers(b, s);
    b.line("const ulong begin = (ulong)get_group_id(0) * chunk;");
    b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    b.open("for (uint d = t; d < " + n.R + "; d += " + n.G + ")");
    b.line("kiln_run[d] = counts[(ulong)d * get_num_groups(0) + get_group_id(0)];");
    b.line("kiln_start[d] = 0;");
    b.line("kiln_end[d] = 0;");
    b.close();
    b.open("for (ulong base = begin; base < end; base += " + tile + ")");
    b.line("const uint valid = end - base < " + tile + " ? (uint)(end - base) : " + tile + ";");
    if (s.multi_split) {
        multi_split_count(b, s);
        multi_split_place(b, s);
    } else {
        tile_load(b, s);
        tile_rank(b, s);
    }
    tile_scatter(b, s, false);
    b.local_barrier();
    b.open("for (uint d = t; d < " + n.R + "; d += " + n.G + ")");
    b.line("kiln_run[d] += kiln_end[d] - kiln_start[d];");
    b.line("kiln_start[d] = 0;");
    b.line("kiln_end[d] = 0;");
    b.close();
    b.local_barrier();
    b.close();
    b.end_kernel();
}

void finish(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.key.bytes);
    b.begin_kernel("kiln_radix_finish");
    b.parameter("global " + key + "* keys_a");
    b.parameter("global const " + key + "* keys_b");
    if (s.value_bytes != 0) {
        b.parameter("global " + radix_bits_type(s.value_bytes) + "* values_a");
        b.parameter("global const " + radix_bits_type(s.value_bytes) + "* values_b");
    }
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.begin_body();
    b.line("if (kiln_sort_current(state) == 0) return;");
    b.open("for (ulong i = get_global_id(0); i < n; i += get_global_size(0))");
    b.line("keys_a[i] = keys_b[i];");
    if (s.value_bytes != 0) b.line("values_a[i] = values_b[i];");
    b.close();
    b.end_kernel();
}

// --- single pass per digit (Onesweep, Adinets and Merrill 2022) -----------------------------
// One histogram kernel counts the digits of every pass at once; each pass is then one kernel in
// which work-groups take tiles in ticket order, rank them as above, publish their digit counts
// and look back over earlier tiles for their digit offsets (decoupled look-back). A status word
// per (tile, digit) packs a flag in its top two bits (01: this tile's count, 10: inclusive prefix)
// and the count in the low 30 bits, so n must stay below 2^30.

void onesweep_histogram(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const tile_names n(s);
    const unsigned bins = passes * n.r, group = s.histogram_group();
    const std::string G = num(group) + "u";
    // One copy of the counters per 32 work-items, so that fewer work-items contend for one
    // counter, as far as 32 KB of local memory allows.
    const unsigned copies = std::max(1u, std::min(group / 32, 8192u / bins));
    b.begin_kernel("kiln_onesweep_histogram", group);
    b.parameter("global const " + n.key + "* keys");
    b.parameter("ulong n");
    b.parameter("global uint* histogram");
    b.begin_body();
    b.local_array("uint", "kiln_bins", num(copies * bins));
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint i = t; i < " + num(copies * bins) + "u; i += " + G + ") kiln_bins[i] = 0;");
    b.local_barrier();
    b.line("const uint copy = (t % " + num(copies) + "u) * " + num(bins) + "u;");
    // Four keys per work-item per step, loaded before they are counted: one load in flight
    // per work-item left the kernel waiting on memory (H100: 0.9 ms for 2^28 keys, 2026-11-22).
    constexpr unsigned unroll = 4;
    b.line("const ulong stride = get_global_size(0);");
    b.open("for (ulong i = get_global_id(0); i < n; i += " + num(unroll) + " * stride)");
    for (unsigned u = 0; u < unroll; ++u)
        b.line("const " + n.key + " k" + num(u) + " = i + " + num(u) + " * stride < n ? keys[i + " +
               num(u) + " * stride] : 0;");
    for (unsigned u = 0; u < unroll; ++u) {
        b.open("if (i + " + num(u) + " * stride < n)");
        for (unsigned p = 0; p < passes; ++p)
            b.line("atomic_inc(&kiln_bins[copy + " + num(p * n.r) + "u + kiln_sort_digit(k" +
                   num(u) + ", " + num(p * s.radix_bits) + "u)]);");
        b.close();
    }
    b.close();
    b.local_barrier();
    b.open("for (uint i = t; i < " + num(bins) + "u; i += " + G + ")");
    b.line("uint total = 0;");
    b.line("for (uint c = 0; c < " + num(copies) + "u; ++c) total += kiln_bins[c * " + num(bins) +
           "u + i];");
    b.line("if (total != 0) atomic_add(&histogram[i], total);");
    b.close();
    b.end_kernel();
}

/// Turns each pass's digit counts into exclusive offsets, marks the passes whose keys all share
/// their digit, and records where the data ends (for kiln_radix_finish).
void onesweep_offsets(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const tile_names n(s);
    b.begin_kernel("kiln_onesweep_offsets", n.g);
    b.parameter("global uint* histogram");
    b.parameter("global uint* control");  // state[2] as kiln_radix_finish reads it, skip[passes]
    b.parameter("ulong n");
    b.begin_body();
    b.local_array("uint", "kiln_skip", num(passes));
    b.line("global uint* state = control;");
    b.line("global uint* skip = control + 2;");
    b.line("const uint t = (uint)get_local_id(0);");
    b.open("for (uint p = t; p < " + num(passes) + "u; p += " + n.G + ")");
    b.line("uint run = 0, same = 0;");
    b.open("for (uint d = 0; d < " + n.R + "; ++d)");
    b.line("const uint c = histogram[p * " + n.R + " + d];");
    b.line("histogram[p * " + n.R + " + d] = run;");
    b.line("run += c;");
    b.line("if (c == n) same = 1;");
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

/// The look-back's accesses to the status words. No fence: a reader uses nothing but the word
/// itself (flag and count share it), and a volatile access of an aligned word is one access to
/// the coherent level (L2). (Under CUDA a fence is __threadfence(), in the spin loop of every
/// digit's work-item: with fences the CUDA backend sorted 2.6x slower than NVIDIA's OpenCL;
/// without them 1.19x with 4-bit rounds and equal with the multi-split, H100 2026-11-22.)
std::string status_word(const std::string& address) {
    return "*(volatile global uint*)(" + address + ")";
}

void onesweep_pass(source_builder& b, const radix_sort_shape& s, unsigned passes) {
    const tile_names n(s);
    const std::string tile = num(s.tile()) + "u", R = n.R, G = n.G;
    b.begin_kernel("kiln_onesweep_pass", n.g);
    scatter_parameters(b, s);
    b.parameter("global const uint* offsets");  // every pass's, from kiln_onesweep_offsets
    b.parameter("global uint* control");        // state[2], skip[passes], ticket[passes]
    b.parameter("global uint* status");
    b.parameter("ulong n");
    b.parameter("uint shift");
    b.parameter("uint pass");
    b.begin_body();
    b.local_array("uint", "kiln_tile", "1");
    tile_setup(b, s, true);
    b.line("global const uint* skip = control + 2;");
    b.line("global uint* ticket = control + 2 + " + num(passes) + "u;");
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (skip[pass]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    // The data moved once per pass that was not skipped.
    b.line("uint from_b = 0;");
    b.line("for (uint p = 0; p < pass; ++p) from_b ^= skip[p] ? 0u : 1u;");
    tile_pointers(b, s);
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
        multi_split_count(b, s);
    } else {
        tile_load(b, s);
        tile_rank(b, s);
    }
    // This pass's status words: one per (tile, digit). Every digit's count is published before
    // any look-back, so a group that handles several digits never waits on itself.
    b.line("global uint* words = status + (ulong)pass * ((n + " + tile + " - 1) / " + tile +
           ") * " + R + ";");
    b.line("global uint* mine = words + (ulong)tile_id * " + R + ";");
    b.line("for (uint d = t; d < " + R + "; d += " + G + ") " + status_word("mine + d") +
           " = (tile_id == 0 ? 0x80000000u : 0x40000000u) | (kiln_end[d] - kiln_start[d]);");
    // The multi-split knows the counts before the keys move: published first, the move
    // overlaps with the earlier tiles' work.
    if (s.multi_split) multi_split_place(b, s);
    // Walk back while earlier tiles show only their own counts; stop at an inclusive prefix
    // (tile 0 always publishes one). A zero word: that tile has not published yet, read again.
    b.open("for (uint d = t; d < " + R + "; d += " + G + ")");
    b.line("uint exclusive = 0;");
    b.open("for (uint j = tile_id; j > 0;)");
    b.line("const uint word = " + status_word("words + (ulong)(j - 1) * " + R + " + d") + ";");
    b.open("if (word != 0)");
    b.line("exclusive += word & 0x3fffffffu;");
    b.line("j = (word & 0x80000000u) ? 0 : j - 1;");
    b.close();
    b.close();
    b.line("if (tile_id != 0) " + status_word("mine + d") +
           " = 0x80000000u | (exclusive + kiln_end[d] - kiln_start[d]);");
    // Wraps (mod 2^32) where the digit's global start is below its tile start; position adds
    // the tile index back.
    b.line("kiln_run[d] = offsets[pass * " + R + " + d] + exclusive - kiln_start[d];");
    b.close();
    b.local_barrier();
    tile_scatter(b, s, true);
    b.end_kernel();
}

}  // namespace

std::string radix_bits_type(std::size_t bytes) {
    return bytes == 8 ? "ulong" : "uint";
}

// Index into a local array, padded by one word every 32 so that work-items reading runs of
// consecutive elements (t * K + j) do not all hit the same memory bank.
std::string radix_padded(const std::string& index) {
    return "kiln_pad(" + index + ")";
}

std::string radix_sort_source(const radix_sort_shape& shape) {
    source_builder b;
    define_radix_helpers(b, shape);
    upsweep(b, shape);
    scan(b, shape);
    downsweep(b, shape);
    finish(b, shape);
    if (shape.single_pass) {
        const unsigned passes =
            (static_cast<unsigned>(shape.key.bytes) * 8 + shape.radix_bits - 1) / shape.radix_bits;
        onesweep_histogram(b, shape, passes);
        onesweep_offsets(b, shape, passes);
        onesweep_pass(b, shape, passes);
    }
    return b.str();
}

}  // namespace kiln::detail
