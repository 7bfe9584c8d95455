// SPDX-License-Identifier: Apache-2.0
// Kernel generators for sorting: radix sort passes (upsweep histogram, scan, downsweep scatter,
// finish); their tile code is in radix_tile.cpp, the single pass in radix_onesweep.cpp and merge
// sort in merge_sort_kernels.cpp.
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
// the caller's buffers if it ended in b. A sort into other memory binds the input as a for the
// first pass alone, which is then never skipped: from the second pass on, a is the output.
#include "sort_kernels.hpp"

#include <charconv>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {
namespace {

/// An unsigned OpenCL C literal in hexadecimal: ulong for 8-byte keys, uint otherwise.
std::string hex_literal(unsigned long long value, bool wide) {
    char digits[17];
    const auto end = std::to_chars(digits, digits + sizeof digits, value, 16).ptr;
    return "0x" + std::string(digits, end) + (wide ? "UL" : "u");
}

/// The constants of a floating-point key's stored form: its width, sign bit, the mantissa's mask
/// and the value just above +inf there.
struct float_key_bits {
    explicit float_key_bits(const sort_key_info& key)
        : wide(key.bytes == 8),
          width(static_cast<unsigned>(key.bytes) * 8),
          sign(1ull << (width - 1)),
          // The exponent all ones, the mantissa zero: 0x7c00 (half), 0x7f80 (bfloat16),
          // 0x7f800000, 0x7ff0000000000000.
          infinity((sign - 1) >> key.mantissa_bits << key.mantissa_bits),
          mantissa_mask((1ull << key.mantissa_bits) - 1),
          above_infinity((sign | infinity) - mantissa_mask + 1),
          type(radix_bits_type(key.bytes)),
          signed_type(wide             ? "long"
                      : key.bytes == 2 ? "short"
                                       : "int") {}
    bool wide;
    unsigned width;
    unsigned long long sign, infinity, mantissa_mask, above_infinity;
    std::string type, signed_type;
    /// x ^ (mask | sign): every bit of x flipped where `mask` is all ones, only the sign bit
    /// where it is 0.
    std::string flip(const std::string& x, const std::string& mask_of) const {
        return "(" + type + ")(" + x + " ^ ((" + type + ")(" + mask_of + ") | " +
               hex_literal(sign, wide) + "))";
    }
};

// A floating-point key's stored form: negative numbers reversed, positive ones above them (-0
// just below +0): the sign, spread over the word by an arithmetic shift, flips every bit of a
// negative number and only the sign bit of a positive one. -inf then lies at the mantissa's mask
// and +inf at the sign and exponent; NaNs lie beyond both. Taking -inf's value away brings -inf
// to 0 and wraps the negative NaNs above +inf, beside the positive ones. Every step undoes, so
// the form keeps each NaN's payload; the digits then take the minimum with the value just above
// +inf, which gathers every NaN, whatever its sign and payload, on one value, the largest. No
// compare and select for NaN: the radix tiles take a digit twice a key a pass, and their kernels
// are bound by integer instructions on an H100.
std::string stored_bits(const sort_key_info& key, const std::string& k) {
    if (key.kind != sort_key_kind::floating) return k;
    const float_key_bits f(key);
    return "(" + f.type + ")(" +
           f.flip(k, "(" + f.signed_type + ")" + k + " >> " + num(f.width - 1)) + " - " +
           hex_literal(f.mantissa_mask, f.wide) + ")";
}

/// The key whose stored form `stored` is (stored_bits undone).
std::string raw_bits(const sort_key_info& key, const std::string& stored) {
    if (key.kind != sort_key_kind::floating) return stored;
    const float_key_bits f(key);
    const std::string flipped =
        "(" + f.type + ")(" + stored + " + " + hex_literal(f.mantissa_mask, f.wide) + ")";
    // The flipped key's top bit is set exactly where the key was positive: only its sign flips
    // back.
    return f.flip(flipped, "~((" + f.signed_type + ")" + flipped + " >> " + num(f.width - 1) + ")");
}

/// ordered_bits of the key whose stored form `stored` is.
std::string ordered_from_stored(const sort_key_info& key, bool descending,
                                const std::string& stored) {
    const std::string type = radix_bits_type(key.bytes);
    std::string ordered;
    switch (key.kind) {
        case sort_key_kind::unsigned_integer:
            ordered = stored;
            break;
        case sort_key_kind::signed_integer:
            ordered = "(" + stored + " ^ " +
                      hex_literal(1ull << (key.bytes * 8 - 1), key.bytes == 8) + ")";
            break;
        case sort_key_kind::floating: {
            const float_key_bits f(key);
            ordered =
                "min(" + stored + ", (" + type + ")" + hex_literal(f.above_infinity, f.wide) + ")";
            break;
        }
    }
    return "(" + type + ")(" + (descending ? "~" + ordered : ordered) + ")";
}

void define_radix_helpers(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.keys.bytes);
    b.define("kiln_pad", "uint kiln_pad(uint i) { return i + (i >> 5); }");
    // The radix tiles hold keys in their stored form (stored_bits), and the single pass keeps
    // it in memory between passes; the other kernels read the keys as they are.
    b.define("kiln_sort_stored", key + " kiln_sort_stored(" + key + " k) {\n    return " +
                                     stored_bits(s.keys, "k") + ";\n}");
    b.define("kiln_sort_raw",
             key + " kiln_sort_raw(" + key + " s) {\n    return " + raw_bits(s.keys, "s") + ";\n}");
    b.define("kiln_sort_stored_digit", "uint kiln_sort_stored_digit(" + key +
                                           " s, uint shift) {\n    return (uint)(" +
                                           ordered_from_stored(s.keys, s.descending, "s") +
                                           " >> shift) & " + num(s.radix() - 1) + "u;\n}");
    b.define("kiln_sort_digit", "uint kiln_sort_digit(" + key +
                                    " k, uint shift) {\n"
                                    "    return kiln_sort_stored_digit(kiln_sort_stored(k), "
                                    "shift);\n}");
    // Which buffer holds the keys now (see the file comment).
    b.define("kiln_sort_current",
             "uint kiln_sort_current(global const uint* state) {\n"
             "    return state[1] ? 1u - state[0] : state[0];\n}");
}

void upsweep(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.keys.bytes), G = num(s.work_group_size) + "u",
                      R = num(s.radix()) + "u";
    const kernel_description kernel = radix_sort_kernels(s).count;
    b.begin_kernel(kernel.name(), s.work_group_size);
    kernel.declare(b);
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
    const kernel_description kernel = radix_sort_kernels(s).scan;
    b.begin_kernel(kernel.name(), g);
    kernel.declare(b);
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
    b.line("if (skippable && next - kiln_digit_start[d] == n) skip = 1;");
    b.close();
    b.line("state[0] = 1u - kiln_sort_current(state);");
    b.line("state[1] = skip;");
    b.close();
    b.end_kernel();
}

void downsweep(source_builder& b, const radix_sort_shape& s) {
    const radix_tile_names n(s);
    const std::string tile = num(s.tile()) + "u";
    const kernel_description kernel = radix_sort_kernels(s).scatter;
    b.begin_kernel(kernel.name(), n.g);
    kernel.declare(b);
    b.begin_body();
    radix_tile_setup(b, s, false);
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (state[1]) return;");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint from_b = 1u - state[0];");
    radix_tile_pointers(b, s);
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
        multi_split_count(b, s, false);
        multi_split_place(b, s);
    } else {
        radix_tile_load(b, s, false);
        radix_tile_rank(b, s);
    }
    radix_tile_scatter(b, s, false);
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
    const std::string key = radix_bits_type(s.keys.bytes);
    const kernel_description kernel = radix_sort_kernels(s).finish;
    b.begin_kernel(kernel.name());
    kernel.declare(b);
    b.begin_body();
    b.line("if (kiln_sort_current(state) == 0) return;");
    b.open("for (ulong i = get_global_id(0); i < n; i += get_global_size(0))");
    b.line("if (keys_back) keys_a[i] = keys_b[i];");
    if (s.value_bytes != 0) b.line("values_a[i] = values_b[i];");
    b.close();
    b.end_kernel();
}

}  // namespace

std::string ordered_bits(const sort_key_info& key, bool descending) {
    return ordered_from_stored(key, descending, stored_bits(key, "k"));
}

radix_sort_kernels::radix_sort_kernels(const radix_sort_shape& s)
    : count(s.chunks ? "kiln_radix_chunk_count" : "kiln_radix_upsweep"),
      scan("kiln_radix_scan"),
      scatter(s.chunks ? "kiln_radix_chunk_scatter" : "kiln_radix_downsweep"),
      finish("kiln_radix_finish") {
    const std::string key = radix_bits_type(s.keys.bytes);
    count.global_const(key, "keys_a")
        .global_const(key, "keys_b")
        .global_const<std::uint32_t>("state")
        .scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("chunk")
        .scalar<std::uint32_t>("shift")
        .global<std::uint64_t>("counts");
    // skippable 0: the pass moves the data even where every key has its digit (a sort into
    // other memory, whose first pass reads the input and must leave it).
    scan.global<std::uint64_t>("counts")
        .scalar<std::uint32_t>("blocks")
        .global<std::uint32_t>("state")
        .scalar<std::uint64_t>("n")
        .scalar<std::uint32_t>("skippable");
    radix_data_slots(scatter, s, false);
    scatter.global_const<std::uint64_t>("counts")
        .global_const<std::uint32_t>("state")
        .scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("chunk")
        .scalar<std::uint32_t>("shift");
    radix_data_slots(finish, s, true);
    finish.global_const<std::uint32_t>("state").scalar<std::uint64_t>("n").scalar<std::uint32_t>(
        "keys_back");
    if (s.single_pass) {
        onesweep_kernels& one = single_pass.emplace(onesweep_kernels{
            kernel_description("kiln_onesweep_histogram"),
            kernel_description("kiln_onesweep_offsets"), kernel_description("kiln_onesweep_pass")});
        one.histogram.global_const(key, "keys")
            .scalar<std::uint64_t>("n")
            .global<std::uint32_t>("histogram");
        // control: state[2] as kiln_radix_finish reads it, skip[passes], ticket[passes].
        one.offsets.global<std::uint32_t>("histogram")
            .global<std::uint32_t>("control")
            .scalar<std::uint64_t>("n")
            .scalar<std::uint32_t>("first_skippable");
        radix_data_slots(one.pass, s, false);
        one.pass
            .global_const<std::uint32_t>("offsets")  // every pass's, from the offsets kernel
            .global<std::uint32_t>("control")
            .global<std::uint32_t>("status")
            .scalar<std::uint64_t>("n")
            .scalar<std::uint32_t>("shift")
            .scalar<std::uint32_t>("pass");
    }
}

std::vector<kernel_description> radix_sort_kernels::all() const {
    std::vector<kernel_description> kernels{count, scan, scatter, finish};
    if (single_pass)
        kernels.insert(kernels.end(),
                       {single_pass->histogram, single_pass->offsets, single_pass->pass});
    return kernels;
}

std::string radix_bits_type(std::size_t bytes) {
    return bytes == 8 ? "ulong" : bytes == 2 ? "ushort" : "uint";
}

// Index into a local array, padded by one word every 32 so that work-items reading runs of
// consecutive elements (t * K + j) do not all hit the same memory bank.
std::string radix_padded(const std::string& index) {
    return "kiln_pad(" + index + ")";
}

std::string radix_sort_shape::key() const {
    const auto flag = [](bool on, const char* name) { return on ? std::string(" ") + name : ""; };
    return "radix sort " + std::to_string(static_cast<int>(keys.kind)) + " " +
           std::to_string(keys.bytes) + " mantissa " + std::to_string(keys.mantissa_bits) +
           (descending ? " descending " : " ascending ") + std::to_string(radix_bits) + " " +
           std::to_string(work_group_size) + " " + std::to_string(items_per_work_item) + " value " +
           std::to_string(value_bytes) + " sg " + std::to_string(sub_group_size) +
           flag(single_pass, "single pass") + flag(multi_split, "multi-split") +
           flag(ballots, "ballots") + flag(match_any, "match") + " " + target.key() +
           flag(values_beside_keys, "beside") + flag(chunks, "chunks") + " histogram " +
           std::to_string(histogram.copies) + flag(histogram.per_sub_group, "sub-groups") +
           flag(histogram.digit_major, "digit-major") + flag(histogram.aggregated, "aggregated") +
           " " + build_options();
}

std::string radix_sort_shape::build_options() const {
    // NVIDIA's OpenCL failed to build with a space there (H100, driver 580, 2026-11-26).
    return register_limit != 0 ? "-cl-nv-maxrregcount=" + std::to_string(register_limit) : "";
}

std::string merge_sort_shape::key() const {
    return "merge sort " + key_type + " " + std::to_string(work_group_size) + " " +
           comparator_call + "\n" + comparator_source;
}

std::string radix_sort_source(const radix_sort_shape& shape) {
    source_builder b;
    define_radix_helpers(b, shape);
    if (shape.chunks) {
        scan(b, shape);
        finish(b, shape);
        radix_chunk_kernels(b, shape);
        return b.str();
    }
    upsweep(b, shape);
    scan(b, shape);
    downsweep(b, shape);
    finish(b, shape);
    if (shape.single_pass) radix_onesweep_kernels(b, shape);
    return b.str();
}

std::string radix_onesweep_histogram_source(const radix_sort_shape& shape) {
    source_builder b;
    define_radix_helpers(b, shape);
    radix_onesweep_histogram_kernel(b, shape);
    return b.str();
}

}  // namespace kiln::detail
