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

void downsweep(source_builder& b, const radix_sort_shape& s) {
    const std::string key = bits_type(s.key.bytes);
    const unsigned g = s.work_group_size, k = s.items_per_work_item, r = s.radix();
    const std::string G = num(g) + "u", R = num(r) + "u", tile = num(s.tile()) + "u";
    b.begin_kernel("kiln_radix_downsweep", g);
    b.parameter("global " + key + "* keys_a");
    b.parameter("global " + key + "* keys_b");
    if (s.value_bytes != 0) {
        b.parameter("global " + bits_type(s.value_bytes) + "* values_a");
        b.parameter("global " + bits_type(s.value_bytes) + "* values_b");
    }
    b.parameter("global const ulong* counts");
    b.parameter("global const uint* state");
    b.parameter("ulong n");
    b.parameter("ulong chunk");
    b.parameter("uint shift");
    b.begin_body();
    b.local_array("uint", "kiln_counters", num(r * g + (r * g >> 5)));
    b.local_array("uint", "kiln_sums", G);
    b.local_array("ulong", "kiln_run", R);
    // One exchange array per element size: keys and values of one size take turns in it.
    b.local_array(key, "kiln_exchange" + num(s.key.bytes), tile);
    if (s.value_bytes != 0 && s.value_bytes != s.key.bytes)
        b.local_array(bits_type(s.value_bytes), "kiln_exchange" + num(s.value_bytes), tile);
    const std::string key_exchange = "kiln_exchange" + num(s.key.bytes);
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (state[1]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint from_b = 1u - state[0];");
    b.line("global " + key + "* key_src = from_b ? keys_b : keys_a;");
    b.line("global " + key + "* key_dst = from_b ? keys_a : keys_b;");
    if (s.value_bytes != 0) {
        const std::string type = bits_type(s.value_bytes);
        b.line("global " + type + "* value_src = from_b ? values_b : values_a;");
        b.line("global " + type + "* value_dst = from_b ? values_a : values_b;");
    }
    b.line("const ulong begin = (ulong)get_group_id(0) * chunk;");
    b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    b.line("if (t < " + R +
           ") kiln_run[t] = counts[(ulong)t * get_num_groups(0) + get_group_id(0)];");
    b.open("for (ulong base = begin; base < end; base += " + tile + ")");
    b.line("const uint valid = end - base < " + tile + " ? (uint)(end - base) : " + tile + ";");
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
    // Items past the end get the last digit and rank after every real key.
    for (unsigned j = 0; j < k; ++j) {
        const std::string J = num(j), p = "t * " + num(k) + "u + " + J + "u";
        b.line("const " + key + " key" + J + " = " + key_exchange + "[" + p + "];");
        b.line("const uint digit" + J + " = " + p + " < valid ? kiln_sort_digit(key" + J +
               ", shift) : " + num(r - 1) + "u;");
        b.line("const uint prefix" + J + " = kiln_counters[" +
               padded("digit" + J + " * " + G + " + t") + "];");
        b.line("kiln_counters[" + padded("digit" + J + " * " + G + " + t") + "] = prefix" + J +
               " + 1;");
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
    // The tile is now sorted in local memory; consecutive work-items write consecutive keys of
    // one digit, which coalesces.
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

}  // namespace

std::string radix_sort_source(const radix_sort_shape& shape) {
    source_builder b;
    define_radix_helpers(b, shape);
    upsweep(b, shape);
    scan(b, shape);
    downsweep(b, shape);
    finish(b, shape);
    return b.str();
}

std::string merge_sort_source(const merge_sort_shape& s) {
    source_builder b;
    const std::string& key = s.key_type;
    const std::string before = s.comparator_name;
    const std::string G = num(s.work_group_size) + "u";
    b.define("comparator", s.comparator_source);

    // Each work-group sorts a run of G keys: a key's place is the number of keys that go before
    // it, counting equal keys only when they come earlier (stability). G^2 comparisons per run,
    // cheap next to the merges for the small G used.
    b.begin_kernel("kiln_merge_block_sort", s.work_group_size);
    b.parameter("global " + key + "* keys");
    b.parameter("global uint* order");
    b.parameter("ulong n");
    b.begin_body();
    b.local_array(key, "kiln_run", G);
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const ulong base = (ulong)get_group_id(0) * " + G + ";");
    b.line("const uint valid = n - base < " + G + " ? (uint)(n - base) : " + G + ";");
    b.line("if (t < valid) kiln_run[t] = keys[base + t];");
    b.local_barrier();
    b.open("if (t < valid)");
    b.line("const " + key + " x = kiln_run[t];");
    b.line("uint place = 0;");
    b.open("for (uint j = 0; j < valid; ++j)");
    b.line("const " + key + " y = kiln_run[j];");
    b.line("place += (j < t ? !" + before + "(x, y) : " + before + "(y, x)) ? 1u : 0u;");
    b.close();
    b.line("keys[base + place] = x;");
    b.line("order[base + place] = (uint)(base + t);");
    b.close();
    b.end_kernel();

    // Merges neighbouring sorted runs of `width` keys: a key's output place is its place in its
    // own run plus the number of keys of the other run that go before it, found by binary
    // search (the co-ranking merge path computes, done per key). Keys of the left run go before
    // equal keys of the right run, which keeps the sort stable.
    b.begin_kernel("kiln_merge_pass");
    b.parameter("global const " + key + "* src");
    b.parameter("global " + key + "* dst");
    b.parameter("global const uint* order_src");
    b.parameter("global uint* order_dst");
    b.parameter("ulong n");
    b.parameter("ulong width");
    b.begin_body();
    b.open("for (ulong i = get_global_id(0); i < n; i += get_global_size(0))");
    b.line("const ulong run = i / width;");
    b.line("const ulong start = (run - (run & 1)) * width;");
    b.line("const " + key + " x = src[i];");
    b.line("ulong place;");
    b.open("if ((run & 1) == 0)");
    b.line("const ulong first = start + width < n ? start + width : n;");
    b.line("ulong lo = first;");
    b.line("ulong hi = start + 2 * width < n ? start + 2 * width : n;");
    b.open("while (lo < hi)");
    b.line("const ulong mid = lo + (hi - lo) / 2;");
    b.line("if (" + before + "(src[mid], x)) lo = mid + 1; else hi = mid;");
    b.close();
    b.line("place = i + (lo - first);");
    b.close();
    b.open("else");
    b.line("ulong lo = start;");
    b.line("ulong hi = start + width;");
    b.open("while (lo < hi)");
    b.line("const ulong mid = lo + (hi - lo) / 2;");
    b.line("if (!" + before + "(x, src[mid])) lo = mid + 1; else hi = mid;");
    b.close();
    b.line("place = i - width + (lo - start);");
    b.close();
    b.line("dst[place] = x;");
    b.line("order_dst[place] = order_src[i];");
    b.close();
    b.end_kernel();

    b.begin_kernel("kiln_merge_copy_keys");
    b.parameter("global const " + key + "* src");
    b.parameter("global " + key + "* dst");
    b.parameter("ulong n");
    b.begin_body();
    b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i];");
    b.end_kernel();

    return b.str();
}

std::string permutation_source() {
    source_builder b;
    b.begin_kernel("kiln_order_iota");
    b.parameter("global uint* order");
    b.parameter("ulong n");
    b.begin_body();
    b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) order[i] = (uint)i;");
    b.end_kernel();
    for (std::size_t size : {4, 8}) {
        const std::string type = bits_type(size);
        b.begin_kernel("kiln_gather" + num(size));
        b.parameter("global const " + type + "* src");
        b.parameter("global " + type + "* dst");
        b.parameter("global const uint* order");
        b.parameter("ulong n");
        b.begin_body();
        b.line(
            "for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = "
            "src[order[i]];");
        b.end_kernel();
        b.begin_kernel("kiln_copy" + num(size));
        b.parameter("global const " + type + "* src");
        b.parameter("global " + type + "* dst");
        b.parameter("ulong n");
        b.begin_body();
        b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i];");
        b.end_kernel();
    }
    return b.str();
}

}  // namespace kiln::detail
