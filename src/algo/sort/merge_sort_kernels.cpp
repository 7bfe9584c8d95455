// Kernel generators for the comparison sort (work-group run sort, rank-by-binary-search merges)
// and for moving values through a permutation.
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

std::string bits_type(std::size_t bytes) {
    return bytes == 8 ? "ulong" : "uint";
}

std::string num(unsigned long long value) {
    return std::to_string(value);
}

}  // namespace

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
