// Kernel generators for sorting: radix sort passes (upsweep histogram, scan, downsweep scatter)
// and merge sort passes (work-group sort, rank-by-binary-search merges, gathers).
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
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {
namespace {

std::string bits_type(std::size_t bytes) {
    return bytes == 8 ? "ulong" : "uint";
}

std::string num(unsigned long long value) {
    return std::to_string(value);
}

/// The key's bits as an unsigned number whose ascending order is the sort order.
std::string ordered_bits(const sort_key_info& key, bool descending) {
    const bool wide = key.bytes == 8;
    const std::string sign = wide ? "0x8000000000000000UL" : "0x80000000u";
    const std::string exponent = wide ? "0x7ff0000000000000UL" : "0x7f800000u";
    const std::string all = wide ? "0xffffffffffffffffUL" : "0xffffffffu";
    std::string ordered;
    switch (key.kind) {
        case sort_key_kind::unsigned_integer:
            ordered = "k";
            break;
        case sort_key_kind::signed_integer:
            ordered = "(k ^ " + sign + ")";
            break;
        case sort_key_kind::floating:
            // Negative numbers reversed, positive ones above them (-0 just below +0); every NaN,
            // whatever its sign and payload, becomes the largest value so that NaNs come last.
            ordered = "((k & ~" + sign + ") > " + exponent + " ? " + all + " : (k & " + sign +
                      ") ? ~k : (k ^ " + sign + "))";
            break;
    }
    return descending ? "~" + ordered : ordered;
}

/// Index into the per-(digit, work-item) counters, padded by one word every 32 so that the
/// work-items scanning consecutive runs of counters do not all hit the same memory bank.
std::string padded(const std::string& index) {
    return "kiln_pad(" + index + ")";
}

void define_radix_helpers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = bits_type(s.key.bytes);
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
    const std::string key = bits_type(s.key.bytes);
    const unsigned g = s.work_group_size;
    b.begin_kernel("kiln_radix_upsweep", g);
    b.parameter("global const " + key + "* keys_a");
    b.parameter("global const " + key + "* keys_b");
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.parameter("ulong chunk");
    b.parameter("uint shift");
    b.parameter("global ulong* counts");
    b.begin_body();
    // One counter per (digit, work-item): each work-item increments its own, no atomics.
    b.local_array("uint", "kiln_counters", num(s.radix() * g + (s.radix() * g >> 5)));
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint d = 0; d < " + num(s.radix()) + "u; ++d) kiln_counters[" +
           padded("d * " + num(g) + "u + t") + "] = 0;");
    b.line("global const " + key + "* keys = kiln_sort_current(state) ? keys_b : keys_a;");
    b.line("const ulong begin = (ulong)get_group_id(0) * chunk;");
    b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    b.open("for (ulong i = begin + t; i < end; i += " + num(g) + "u)");
    b.line("const uint c = " + padded("kiln_sort_digit(keys[i], shift) * " + num(g) + "u + t") +
           ";");
    b.line("kiln_counters[c] += 1;");
    b.close();
    b.local_barrier();
    b.open("if (t < " + num(s.radix()) + "u)");
    b.line("uint total = 0;");
    b.line("for (uint w = 0; w < " + num(g) + "u; ++w) total += kiln_counters[" +
           padded("t * " + num(g) + "u + w") + "];");
    b.line("counts[(ulong)t * get_num_groups(0) + get_group_id(0)] = total;");
    b.close();
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
    std::string key, G, R, tile, key_exchange;
    unsigned g, k, r;
    explicit tile_names(const radix_sort_shape& s)
        : key(bits_type(s.key.bytes)),
          G(num(s.work_group_size) + "u"),
          R(num(s.radix()) + "u"),
          tile(num(s.tile()) + "u"),
          key_exchange("kiln_exchange" + num(s.key.bytes)),
          g(s.work_group_size),
          k(s.items_per_work_item),
          r(s.radix()) {}
};

void scatter_parameters(source_builder& b, const radix_sort_shape& s) {
    const std::string key = bits_type(s.key.bytes);
    b.parameter("global " + key + "* keys_a");
    b.parameter("global " + key + "* keys_b");
    if (s.value_bytes != 0) {
        b.parameter("global " + bits_type(s.value_bytes) + "* values_a");
        b.parameter("global " + bits_type(s.value_bytes) + "* values_b");
    }
}

/// Local arrays, and source and destination pointers chosen by `from_b` (declared before).
void tile_setup(source_builder& b, const radix_sort_shape& s) {
    const tile_names n(s);
    b.local_array("uint", "kiln_counters", num(n.r * n.g + (n.r * n.g >> 5)));
    b.local_array("uint", "kiln_sums", n.G);
    b.local_array("ulong", "kiln_run", n.R);
    // One exchange array per element size: keys and values of one size take turns in it.
    b.local_array(n.key, n.key_exchange, n.tile);
    if (s.value_bytes != 0 && s.value_bytes != s.key.bytes)
        b.local_array(bits_type(s.value_bytes), "kiln_exchange" + num(s.value_bytes), n.tile);
}

void tile_pointers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = bits_type(s.key.bytes);
    b.line("global " + key + "* key_src = from_b ? keys_b : keys_a;");
    b.line("global " + key + "* key_dst = from_b ? keys_a : keys_b;");
    if (s.value_bytes != 0) {
        const std::string type = bits_type(s.value_bytes);
        b.line("global " + type + "* value_src = from_b ? values_b : values_a;");
        b.line("global " + type + "* value_dst = from_b ? values_a : values_b;");
    }
}

/// Loads the tile at `base` (`valid` keys) and ranks it stably: afterwards the tile is sorted
/// in the key exchange array, rankJ says where item J of this work-item went, and
/// kiln_counters[pad(d * G)] is where digit d starts in the tile.
void tile_rank(source_builder& b, const radix_sort_shape& s) {
    const tile_names names(s);
    const std::string &key = names.key, &G = names.G, &R = names.R,
                      &key_exchange = names.key_exchange;
    const unsigned g = names.g, k = names.k, r = names.r;
    // Coalesced loads, item j*G + t to work-item t.
    for (unsigned j = 0; j < k; ++j) {
        const std::string i = num(j * g) + "u + t";
        b.line("if (" + i + " < valid) " + key_exchange + "[" + i + "] = key_src[base + " + i +
               "];");
    }
    b.line("for (uint d = 0; d < " + R + "; ++d) kiln_counters[" + padded("d * " + G + " + t") +
           "] = 0;");
    b.local_barrier();
    // Work-item t ranks the consecutive items t*K .. t*K+K-1, so that counting them in order
    // and then scanning over work-items keeps equal keys in tile order: the sort is stable.
    // Items past the end get the last digit and rank after every real key. A work-item counts
    // its items in registers (prefixJ: earlier items with the same digit) and the last item of
    // each digit stores the count: no chain of dependent local loads and stores.
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), p = "t * " + num(k) + "u + " + J + "u";
        b.line("const " + key + " key" + J + " = " + key_exchange + "[" + p + "];");
        b.line("const uint digit" + J + " = " + p + " < valid ? kiln_sort_digit(key" + J +
               ", shift) : " + num(r - 1) + "u;");
        std::string prefix = "0u";
        for (unsigned i = 0; i < j; ++i)
            prefix += " + (digit" + num(i) + " == digit" + J + " ? 1u : 0u)";
        b.line("const uint prefix" + J + " = " + prefix + ";");
    }
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j);
        std::string last = "1";
        for (unsigned i = j + 1; i < k; ++i) last += " && digit" + num(i) + " != digit" + J;
        b.line("if (" + last + ") kiln_counters[" + padded("digit" + J + " * " + G + " + t") +
               "] = prefix" + J + " + 1;");
    }
    b.local_barrier();
    // Exclusive scan of the counters in (digit, work-item) order: each work-item sums R
    // consecutive counters, the group scans those sums, each work-item writes its run back.
    b.line("uint own = 0;");
    b.line("for (uint c = 0; c < " + R + "; ++c) own += kiln_counters[" +
           padded("t * " + R + " + c") + "];");
    b.line("kiln_sums[t] = own;");
    b.local_barrier();
    b.open("for (uint offset = 1; offset < " + G + "; offset <<= 1)");
    b.line("const uint y = t >= offset ? kiln_sums[t - offset] : 0;");
    b.local_barrier();
    b.line("kiln_sums[t] += y;");
    b.local_barrier();
    b.close();
    b.open("");
    b.line("uint running = kiln_sums[t] - own;");
    b.open("for (uint c = 0; c < " + R + "; ++c)");
    b.line("const uint at = " + padded("t * " + R + " + c") + ";");
    b.line("const uint x = kiln_counters[at];");
    b.line("kiln_counters[at] = running;");
    b.line("running += x;");
    b.close();
    b.close();
    b.local_barrier();
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j);
        b.line("const uint rank" + J + " = kiln_counters[" +
               padded("digit" + J + " * " + G + " + t") + "] + prefix" + J + ";");
        b.line("if (t * " + num(k) + "u + " + J + "u < valid) " + key_exchange + "[rank" + J +
               "] = key" + J + ";");
    }
    b.local_barrier();
}

/// Writes the ranked tile's keys (and values) to kiln_run[digit] + their place within the
/// digit: consecutive work-items write consecutive keys of one digit, which coalesces.
void tile_scatter(source_builder& b, const radix_sort_shape& s) {
    const tile_names names(s);
    const std::string &key = names.key, &G = names.G, &key_exchange = names.key_exchange;
    const unsigned g = names.g, k = names.k;
    for (unsigned j = 0; j < k; ++j) b.line("ulong position" + num(j) + " = 0;");
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), i = num(j * g) + "u + t";
        b.open("if (" + i + " < valid)");
        b.line("const " + key + " kk = " + key_exchange + "[" + i + "];");
        b.line("const uint d = kiln_sort_digit(kk, shift);");
        b.line("position" + J + " = kiln_run[d] + (" + i + " - kiln_counters[" +
               padded("d * " + G) + "]);");
        b.line("key_dst[position" + J + "] = kk;");
        b.close();
    }
    if (s.value_bytes != 0) {
        // The value of sorted position i is the one whose key went to i: load the tile's values,
        // move each to its key's rank, and write it where that key went.
        const std::string type = bits_type(s.value_bytes);
        const std::string exchange = "kiln_exchange" + num(s.value_bytes);
        b.local_barrier();
        for (unsigned j = 0; j < k; ++j) {
            const std::string i = num(j * g) + "u + t";
            b.line("if (" + i + " < valid) " + exchange + "[" + i + "] = value_src[base + " + i +
                   "];");
        }
        b.local_barrier();
        for (unsigned j = 0; j < k; ++j)
            b.line("const " + type + " value" + num(j) + " = " + exchange + "[t * " + num(k) +
                   "u + " + num(j) + "u];");
        b.local_barrier();
        for (unsigned j = 0; j < k; ++j)
            b.line("if (t * " + num(k) + "u + " + num(j) + "u < valid) " + exchange + "[rank" +
                   num(j) + "] = value" + num(j) + ";");
        b.local_barrier();
        for (unsigned j = 0; j < k; ++j) {
            const std::string i = num(j * g) + "u + t";
            b.line("if (" + i + " < valid) value_dst[position" + num(j) + "] = " + exchange + "[" +
                   i + "];");
        }
    }
}

void downsweep(source_builder& b, const radix_sort_shape& s) {
    const tile_names names(s);
    const std::string &G = names.G, &R = names.R, &tile = names.tile;
    b.begin_kernel("kiln_radix_downsweep", names.g);
    scatter_parameters(b, s);
    b.parameter("global const ulong* counts");
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.parameter("ulong chunk");
    b.parameter("uint shift");
    b.begin_body();
    tile_setup(b, s);
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (state[1]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint from_b = 1u - state[0];");
    tile_pointers(b, s);
    b.line("const ulong begin = (ulong)get_group_id(0) * chunk;");
    b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    b.line("if (t < " + R +
           ") kiln_run[t] = counts[(ulong)t * get_num_groups(0) + get_group_id(0)];");
    b.open("for (ulong base = begin; base < end; base += " + tile + ")");
    b.line("const uint valid = end - base < " + tile + " ? (uint)(end - base) : " + tile + ";");
    tile_rank(b, s);
    tile_scatter(b, s);
    b.local_barrier();
    b.open("if (t < " + R + ")");
    b.line("const uint first = kiln_counters[" + padded("t * " + G) + "];");
    b.line("const uint next = t + 1 < " + R + " ? kiln_counters[" + padded("(t + 1) * " + G) +
           "] : valid;");
    b.line("kiln_run[t] += next - first;");
    b.close();
    b.local_barrier();
    b.close();
    b.end_kernel();
}

void finish(source_builder& b, const radix_sort_shape& s) {
    const std::string key = bits_type(s.key.bytes);
    b.begin_kernel("kiln_radix_finish");
    b.parameter("global " + key + "* keys_a");
    b.parameter("global const " + key + "* keys_b");
    if (s.value_bytes != 0) {
        b.parameter("global " + bits_type(s.value_bytes) + "* values_a");
        b.parameter("global const " + bits_type(s.value_bytes) + "* values_b");
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
    const unsigned copies = std::max(1u, n.g / 32), bins = passes * n.r;
    b.begin_kernel("kiln_onesweep_histogram", n.g);
    b.parameter("global const " + n.key + "* keys");
    b.parameter("ulong n");
    b.parameter("global uint* histogram");
    b.begin_body();
    // One copy of the counters per 32 work-items: fewer work-items contend for one counter.
    b.local_array("uint", "kiln_bins", num(copies * bins));
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint i = t; i < " + num(copies * bins) + "u; i += " + n.G + ") kiln_bins[i] = 0;");
    b.local_barrier();
    b.line("const uint copy = (t / 32u) * " + num(bins) + "u;");
    b.open("for (ulong i = get_global_id(0); i < n; i += get_global_size(0))");
    b.line("const " + n.key + " k = keys[i];");
    for (unsigned p = 0; p < passes; ++p)
        b.line("atomic_inc(&kiln_bins[copy + " + num(p * n.r) + "u + kiln_sort_digit(k, " +
               num(p * s.radix_bits) + "u)]);");
    b.close();
    b.local_barrier();
    b.open("for (uint i = t; i < " + num(bins) + "u; i += " + n.G + ")");
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
    b.open("if (t < " + num(passes) + "u)");
    b.line("uint run = 0, same = 0;");
    b.open("for (uint d = 0; d < " + n.R + "; ++d)");
    b.line("const uint c = histogram[t * " + n.R + " + d];");
    b.line("histogram[t * " + n.R + " + d] = run;");
    b.line("run += c;");
    b.line("if (c == n) same = 1;");
    b.close();
    b.line("skip[t] = same;");
    b.line("kiln_skip[t] = same;");
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
    const tile_names names(s);
    const std::string &G = names.G, &R = names.R, &tile = names.tile;
    b.begin_kernel("kiln_onesweep_pass", names.g);
    scatter_parameters(b, s);
    b.parameter("global const uint* offsets");  // every pass's, from kiln_onesweep_offsets
    b.parameter("global uint* control");        // state[2], skip[passes], ticket[passes]
    b.parameter("global uint* status");
    b.parameter("ulong n");
    b.parameter("uint shift");
    b.parameter("uint pass");
    b.begin_body();
    tile_setup(b, s);
    b.local_array("uint", "kiln_tile", "1");
    b.line("global const uint* skip = control + 2;");
    b.line("global uint* ticket = control + 2 + " + num(passes) + "u;");
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (skip[pass]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    // The data moved once per pass that was not skipped.
    b.line("uint from_b = 0;");
    b.line("for (uint p = 0; p < pass; ++p) from_b ^= skip[p] ? 0u : 1u;");
    tile_pointers(b, s);
    // Tiles in the order work-groups start, not by group id: a group waits only for groups
    // that started before it, which the device keeps running (groups_make_progress).
    b.line("if (t == 0) kiln_tile[0] = atomic_inc(ticket + pass);");
    b.local_barrier();
    b.line("const uint tile_id = kiln_tile[0];");
    b.line("const ulong base = (ulong)tile_id * " + tile + ";");
    b.line("const uint valid = n - base < " + tile + " ? (uint)(n - base) : " + tile + ";");
    tile_rank(b, s);
    // Work-item d < R handles digit d; the others run the look-back loop zero times.
    b.line("const uint digit_lane = t < " + R + " ? t : 0;");
    b.line("const uint first = kiln_counters[" + padded("digit_lane * " + G) + "];");
    b.line("const uint next = digit_lane + 1 < " + R + " ? kiln_counters[" +
           padded("(digit_lane + 1) * " + G) + "] : valid;");
    // This pass's status words: one per (tile, digit).
    b.line("global uint* words = status + (ulong)pass * ((n + " + tile + " - 1) / " + tile +
           ") * " + R + ";");
    b.line("global uint* mine = words + (ulong)tile_id * " + R + " + digit_lane;");
    b.open("if (t < " + R + ")");
    b.release_store("uint", "mine", "(tile_id == 0 ? 0x80000000u : 0x40000000u) | (next - first)");
    b.close();
    // Walk back while earlier tiles show only their own counts; stop at an inclusive prefix
    // (tile 0 always publishes one). A zero word: that tile has not published yet, read again.
    b.line("uint exclusive = 0;");
    b.open("for (uint j = t < " + R + " ? tile_id : 0; j > 0;)");
    b.line("uint word;");
    b.acquire_load("uint", "words + (ulong)(j - 1) * " + R + " + digit_lane", "word");
    b.open("if (word != 0)");
    b.line("exclusive += word & 0x3fffffffu;");
    b.line("j = (word & 0x80000000u) ? 0 : j - 1;");
    b.close();
    b.close();
    b.open("if (t < " + R + ")");
    b.open("if (tile_id != 0)");
    b.release_store("uint", "mine", "0x80000000u | (exclusive + next - first)");
    b.close();
    b.line("kiln_run[t] = offsets[pass * " + R + " + t] + exclusive;");
    b.close();
    b.local_barrier();
    tile_scatter(b, s);
    b.end_kernel();
}

}  // namespace

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
