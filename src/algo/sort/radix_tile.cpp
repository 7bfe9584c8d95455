// SPDX-License-Identifier: Apache-2.0
// The radix sort's tile code, shared by its classic and single-pass scatters: local arrays, loads,
// ranking in rounds of 4-bit counting (the multi-split ranks in radix_multi_split.cpp), scatter.
#include <algorithm>
#include <functional>
#include <kiln/detail/group_collectives.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

/// Elements of a bank-padded local array of `count` (kiln_pad's one word every 32).
unsigned padded_count(unsigned count) {
    return count + (count >> 5);
}

/// In-tile ranking goes in rounds of at most this many bits of the digit: the round's counters,
/// one per (round digit, work-item), fit in local memory (16 x G words).
constexpr unsigned rank_round_bits = 4;

/// The rounds' counters, one per (round digit, work-item), bank-padded.
unsigned round_counter_count(const radix_sort_shape& s) {
    return padded_count((1u << rank_round_bits) * s.work_group_size);
}

/// The type of output positions: 32 bits in the single pass, whose status words limit n to
/// 2^30 anyway (fewer instructions per key), 64 bits in reduce-then-scan.
std::string position_type(bool single_pass) {
    return single_pass ? "uint" : "ulong";
}

/// Index of tile element `i` in kiln_keys and kiln_values.
std::string tile_at(const radix_sort_shape& s, const std::string& i) {
    return s.multi_split ? i : radix_padded(i);
}

/// One stable counting round over `width` bits of the digit from bit `low`: the tile in
/// kiln_keys (and kiln_values) is reordered by those bits, equal ones keeping their order.
void rank_round(source_builder& b, const radix_sort_shape& s, unsigned low, unsigned width) {
    const radix_tile_names n(s);
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
        b.line("const uint digit" + J + " = " + p + " < valid ? (kiln_sort_stored_digit(key" + J +
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
    group_collectives(b, s.sub_group_size, s.target)
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

}  // namespace

radix_tile_names::radix_tile_names(const radix_sort_shape& s)
    : key(radix_bits_type(s.keys.bytes)),
      value(s.value_bytes != 0 ? radix_bits_type(s.value_bytes) : ""),
      G(num(s.work_group_size) + "u"),
      R(num(s.radix()) + "u"),
      K(num(s.items_per_work_item) + "u"),
      g(s.work_group_size),
      k(s.items_per_work_item),
      r(s.radix()) {}

void radix_data_slots(kernel_description& kernel, const radix_sort_shape& s, bool b_const) {
    const std::string key = radix_bits_type(s.keys.bytes);
    kernel.global(key, "keys_a");
    if (b_const)
        kernel.global_const(key, "keys_b");
    else
        kernel.global(key, "keys_b");
    if (s.value_bytes != 0) {
        const std::string value = radix_bits_type(s.value_bytes);
        kernel.global(value, "values_a");
        if (b_const)
            kernel.global_const(value, "values_b");
        else
            kernel.global(value, "values_b");
    }
}

void radix_tile_setup(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    const radix_tile_names n(s);
    if (!s.multi_split) b.local_array("uint", "kiln_counters", num(round_counter_count(s)));
    b.local_array("uint", "kiln_scan", num(2 * n.g));
    b.local_array("uint", "kiln_start", n.R);  // where each digit starts in the ranked tile
    b.local_array("uint", "kiln_end", n.R);    // and where it ends (both 0 when absent)
    // Where the tile's keys of each digit go.
    b.local_array(position_type(single_pass), "kiln_run", n.R);
    if (s.multi_split) {
        multi_split_setup(b, s);  // unpadded: work-items read consecutive elements
        return;
    }
    b.local_array(n.key, "kiln_keys", num(padded_count(s.tile())));
    if (s.value_bytes != 0) b.local_array(n.value, "kiln_values", num(padded_count(s.tile())));
}

std::size_t radix_tile_local_bytes(const radix_sort_shape& s) {
    // radix_tile_setup's arrays, with kiln_run's positions as the downsweep's ulongs: the
    // single pass's are uints beside its 4-byte ticket, fewer bytes.
    const std::size_t g = s.work_group_size, r = s.radix();
    const std::size_t shared = 2 * g * 4 + 2 * r * 4 + r * 8;
    if (s.multi_split) return shared + multi_split_local_bytes(s);
    return shared + std::size_t{round_counter_count(s)} * 4 +
           std::size_t{padded_count(s.tile())} * (s.keys.bytes + s.value_bytes);
}

void radix_tile_pointers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.keys.bytes);
    b.line("global " + key + "* key_src = from_b ? keys_b : keys_a;");
    b.line("global " + key + "* key_dst = from_b ? keys_a : keys_b;");
    if (s.value_bytes != 0) {
        const std::string type = radix_bits_type(s.value_bytes);
        b.line("global " + type + "* value_src = from_b ? values_b : values_a;");
        b.line("global " + type + "* value_dst = from_b ? values_a : values_b;");
    }
}

void radix_tile_load(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    const radix_tile_names n(s);
    const auto load = [&](bool convert) {
        for (unsigned j = 0; j < n.k; ++j) {
            const std::string i = num(j * n.g) + "u + t";
            const std::string key = "key_src[base + " + i + "]";
            b.open("if (" + i + " < valid)");
            b.line("kiln_keys[" + radix_padded(i) +
                   "] = " + (convert ? "kiln_sort_stored(" + key + ")" : key) + ";");
            if (s.value_bytes != 0)
                b.line("kiln_values[" + radix_padded(i) + "] = value_src[base + " + i + "];");
            b.close();
        }
    };
    radix_keys_crossing(b, s, single_pass, "stored_in", load);
    b.local_barrier();
}

void radix_keys_crossing(source_builder& b, const radix_sort_shape& s, bool single_pass,
                         const std::string& kept, const std::function<void(bool convert)>& emit) {
    if (!radix_keys_convert(s) || !single_pass) {
        emit(radix_keys_convert(s));
        return;
    }
    // A uniform branch rather than a select per key: the tile kernels are bound by integer
    // instructions, and a select would convert every key in every pass.
    b.open("if (" + kept + ")");
    emit(false);
    b.close();
    b.open("else");
    emit(true);
    b.close();
}

bool radix_keys_convert(const radix_sort_shape& s) {
    return s.keys.kind == sort_key_kind::floating;
}

void radix_tile_rank(source_builder& b, const radix_sort_shape& s) {
    const radix_tile_names n(s);
    for (unsigned low = 0; low < s.radix_bits; low += rank_round_bits)
        rank_round(b, s, low, std::min(rank_round_bits, s.radix_bits - low));
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t";
        b.open("if (" + i + " < valid)");
        b.line("const uint d = kiln_sort_stored_digit(kiln_keys[" + radix_padded(i) + "], shift);");
        b.line("if (" + i + " == 0 || kiln_sort_stored_digit(kiln_keys[" +
               radix_padded(i + " - 1") + "], shift) != d) kiln_start[d] = " + i + ";");
        b.line("if (" + i + " + 1 == valid || kiln_sort_stored_digit(kiln_keys[" +
               radix_padded(i + " + 1") + "], shift) != d) kiln_end[d] = " + i + " + 1;");
        b.close();
    }
    b.local_barrier();
}

void radix_tile_scatter(source_builder& b, const radix_sort_shape& s, bool single_pass) {
    const radix_tile_names n(s);
    const std::string type = position_type(single_pass);
    const bool values_after = s.multi_split && s.value_bytes != 0 && !s.values_beside_keys;
    b.line("const " + type + " limit = (" + type + ")n;");
    if (values_after)
        for (unsigned j = 0; j < n.k; ++j) b.line(type + " position" + num(j) + " = limit;");
    const auto scatter = [&](bool convert) {
        for (unsigned j = 0; j < n.k; ++j) {
            const std::string i = num(j * n.g) + "u + t", J = num(j);
            const std::string position = values_after ? "position" + J : "position";
            b.open("if (" + i + " < valid)");
            b.line("const " + n.key + " k = kiln_keys[" + tile_at(s, i) + "];");
            b.line("const uint d = kiln_sort_stored_digit(k, shift);");
            b.line(std::string(values_after ? "" : "const " + type + " ") + position +
                   " = kiln_run[d] + " + (single_pass ? i : "(ulong)(" + i + ") - kiln_start[d]") +
                   ";");
            b.open("if (" + position + " < limit)");
            b.line("key_dst[" + position + "] = " + (convert ? "kiln_sort_raw(k)" : "k") + ";");
            if (s.value_bytes != 0 && !values_after)
                b.line("value_dst[position] = kiln_values[" + tile_at(s, i) + "];");
            b.close();
            b.close();
        }
    };
    radix_keys_crossing(b, s, single_pass, "stored_out", scatter);
    if (!values_after) return;
    multi_split_place_values(b, s);
    for (unsigned j = 0; j < n.k; ++j) {
        const std::string i = num(j * n.g) + "u + t", J = num(j);
        b.line("if (" + i + " < valid && position" + J + " < limit) value_dst[position" + J +
               "] = kiln_values[" + i + "];");
    }
}

}  // namespace kiln::detail
