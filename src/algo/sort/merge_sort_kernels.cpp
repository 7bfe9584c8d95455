// SPDX-License-Identifier: Apache-2.0
// Kernel generators for the comparison sort (work-group run sort, rank-by-binary-search merges,
// and the serial merges taken where a comparator gave two keys one place) and for moving values
// through a permutation.
#include <cstdint>
#include <kiln/detail/source_builder.hpp>
#include <string>
#include <vector>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

std::string bits_type(std::size_t bytes) {
    return bytes == 8 ? "ulong" : "uint";
}

}  // namespace

merge_sort_kernels::merge_sort_kernels(const merge_sort_shape& s)
    : block_sort("kiln_merge_block_sort"),
      pass("kiln_merge_pass"),
      serial_pass("kiln_merge_serial_pass"),
      copy_keys("kiln_merge_copy_keys") {
    const auto claimed = [](kernel_description& k) {
        k.global<std::uint32_t>("claims").global<std::uint32_t>("broken").scalar<std::uint32_t>(
            "stamp");
    };
    block_sort.global_const(s.key_type, "keys")
        .global(s.key_type, "dst")
        .global<std::uint32_t>("order")
        .scalar<std::uint64_t>("n");
    claimed(block_sort);
    for (kernel_description* merge : {&pass, &serial_pass})
        merge->global_const(s.key_type, "src")
            .global(s.key_type, "dst")
            .global_const<std::uint32_t>("order_src")
            .global<std::uint32_t>("order_dst")
            .scalar<std::uint64_t>("n")
            .scalar<std::uint64_t>("width");
    claimed(pass);
    copy_keys.global_const(s.key_type, "src").global(s.key_type, "dst").scalar<std::uint64_t>("n");
}

std::vector<kernel_description> merge_sort_kernels::all() const {
    return {block_sort, pass, serial_pass, copy_keys};
}

permutation_kernels::permutation_kernels()
    : iota("kiln_order_iota"),
      gather4("kiln_gather4"),
      gather8("kiln_gather8"),
      copy4("kiln_copy4"),
      copy8("kiln_copy8") {
    iota.global<std::uint32_t>("order").scalar<std::uint64_t>("n");
    for (const std::size_t bytes : {4, 8}) {
        const std::string type = bits_type(bytes);
        kernel_description& g = bytes == 8 ? gather8 : gather4;
        g.global_const(type, "src")
            .global(type, "dst")
            .global_const<std::uint32_t>("order")
            .scalar<std::uint64_t>("n");
        (bytes == 8 ? copy8 : copy4)
            .global_const(type, "src")
            .global(type, "dst")
            .scalar<std::uint64_t>("n");
    }
}

std::vector<kernel_description> permutation_kernels::all() const {
    return {iota, gather4, gather8, copy4, copy8};
}

std::string merge_sort_source(const merge_sort_shape& s) {
    source_builder b;
    const std::string& key = s.key_type;
    const std::string before = "kiln_merge_before";
    const std::string G = num(s.work_group_size) + "u";
    const merge_sort_kernels kernels(s);
    b.define("comparator", s.comparator_source);
    b.define(before, "int " + before + "(" + key + " a, " + key + " b) {\n    return " +
                         s.comparator_call + ";\n}");
    const auto claim = [](const std::string& place) {
        return "if (atomic_xchg(claims + " + place + ", stamp) == stamp) *broken = 1u;";
    };

    // Each work-group sorts a run of G keys: a key's place is the number of keys that go before
    // it, counting equal keys only when they come earlier (stability). G^2 comparisons per run,
    // cheap next to the merges for the small G used.
    b.begin_kernel(kernels.block_sort.name(), s.work_group_size);
    kernels.block_sort.declare(b);
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
    // Not the key itself: a comparator that says before(x, x) would push it past the run.
    b.line("place += (j < t ? !" + before + "(x, y) : j > t && " + before + "(y, x)) ? 1u : 0u;");
    b.close();
    b.line("dst[base + place] = x;");
    b.line("order[base + place] = (uint)(base + t);");
    b.line(claim("base + place"));
    b.close();
    b.end_kernel();

    // Merges neighbouring sorted runs of `width` keys: a key's output place is its place in its
    // own run plus the number of keys of the other run that go before it, found by binary
    // search (the co-ranking merge path computes, done per key). Keys of the left run go before
    // equal keys of the right run, which keeps the sort stable.
    b.begin_kernel(kernels.pass.name());
    kernels.pass.declare(b);
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
    b.line(claim("place"));
    b.close();
    b.end_kernel();

    // Each work-item merges whole pairs of runs, taking the left key unless the right one goes
    // before it: every key is taken once, whatever the comparator answers. The host runs it only
    // where a claim found two keys given one place.
    b.begin_kernel(kernels.serial_pass.name());
    kernels.serial_pass.declare(b);
    b.begin_body();
    b.open(
        "for (ulong start = get_global_id(0) * 2 * width; start < n; start += get_global_size(0) "
        "* 2 * width)");
    b.line("const ulong middle = start + width < n ? start + width : n;");
    b.line("const ulong end = start + 2 * width < n ? start + 2 * width : n;");
    b.line("ulong left = start, right = middle;");
    b.open("for (ulong out = start; out < end; ++out)");
    b.line("const int take_left = left < middle && (right == end || !" + before +
           "(src[right], src[left]));");
    b.line("const ulong from = take_left ? left++ : right++;");
    b.line("dst[out] = src[from];");
    b.line("order_dst[out] = order_src[from];");
    b.close();
    b.close();
    b.end_kernel();

    b.begin_kernel(kernels.copy_keys.name());
    kernels.copy_keys.declare(b);
    b.begin_body();
    b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i];");
    b.end_kernel();

    return b.str();
}

std::string permutation_source() {
    source_builder b;
    const permutation_kernels kernels;
    b.begin_kernel(kernels.iota.name());
    kernels.iota.declare(b);
    b.begin_body();
    b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) order[i] = (uint)i;");
    b.end_kernel();
    for (std::size_t size : {4, 8}) {
        b.begin_kernel(kernels.gather(size).name());
        kernels.gather(size).declare(b);
        b.begin_body();
        b.line(
            "for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = "
            "src[order[i]];");
        b.end_kernel();
        b.begin_kernel(kernels.copy(size).name());
        kernels.copy(size).declare(b);
        b.begin_body();
        b.line("for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i];");
        b.end_kernel();
    }
    return b.str();
}

}  // namespace kiln::detail
