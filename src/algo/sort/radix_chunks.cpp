// SPDX-License-Identifier: Apache-2.0
// The CPU strategy of the radix sort (radix_sort_shape::chunks): one work-item per long chunk of
// keys, in plain loops, with no local memory and no barrier. Per digit pass:
//   count    every work-item counts the digits of its chunk into a private histogram
//            -> counts[digit][chunk], the layout kiln_radix_scan turns into offsets
//   scan     kiln_radix_scan, shared with the tile strategy (sort_kernels.cpp): offsets, and the
//            pass skipped where every key has the same digit
//   scatter  every work-item walks its chunk in order and writes each key (and its value) at
//            its digit's next offset, so equal digits keep their order: the sort is stable
// The tile strategy ranks tiles in local memory between barriers, which PoCL runs as loops over
// the group's work-items; here each core walks its chunk once per step, as a host radix sort
// would (the histograms and the scatter per chunk of Satish et al.'s CPU radix sort).
#include <kiln/detail/source_builder.hpp>
#include <string>

#include "sort_kernels.hpp"

namespace kiln::detail {

void radix_chunk_kernels(source_builder& b, const radix_sort_shape& s) {
    const std::string key = radix_bits_type(s.keys.bytes), R = std::to_string(s.radix()) + "u";
    const auto chunk_bounds = [&] {
        b.line("const ulong c = get_global_id(0), chunks = get_global_size(0);");
        b.line("const ulong begin = c * chunk;");
        b.line("const ulong end = n - begin > chunk ? begin + chunk : n;");
    };

    const radix_sort_kernels kernels(s);
    b.begin_kernel(kernels.count.name(), 1);
    kernels.count.declare(b);
    b.begin_body();
    chunk_bounds();
    b.line("global const " + key + "* keys = kiln_sort_current(state) ? keys_b : keys_a;");
    b.line("uint bins[" + R + "];");
    b.line("for (uint d = 0; d < " + R + "; ++d) bins[d] = 0;");
    b.line("for (ulong i = begin; i < end; ++i) ++bins[kiln_sort_digit(keys[i], shift)];");
    b.line("for (uint d = 0; d < " + R + "; ++d) counts[d * chunks + c] = bins[d];");
    b.end_kernel();

    b.begin_kernel(kernels.scatter.name(), 1);
    kernels.scatter.declare(b);
    b.begin_body();
    // Every key has this pass's digit in common: the data stays where it is.
    b.line("if (state[1]) return;");
    b.line("const uint from_b = 1u - state[0];");
    radix_tile_pointers(b, s);
    chunk_bounds();
    b.line("ulong next[" + R + "];");
    b.line("for (uint d = 0; d < " + R + "; ++d) next[d] = counts[d * chunks + c];");
    b.open("for (ulong i = begin; i < end; ++i)");
    b.line("const " + key + " k = key_src[i];");
    b.line("const ulong to = next[kiln_sort_digit(k, shift)]++;");
    b.line("key_dst[to] = k;");
    if (s.value_bytes != 0) b.line("value_dst[to] = value_src[i];");
    b.close();
    b.end_kernel();
}

}  // namespace kiln::detail
