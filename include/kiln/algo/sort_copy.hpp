// SPDX-License-Identifier: Apache-2.0
// Sorting a kiln::vector into another, the input left as it was (CUB's SortKeys with d_keys_in
// and d_keys_out, NumPy's np.sort):
//
//     kiln::sort(input, output);                   // ascending
//     kiln::sort(input, output, kiln::descending);
//
// The radix sort's first pass reads the input and its last writes the output, so the copy that
// sorting a copy in place would take is not made. The output has the input's size and is split
// over the same devices in the same parts; the same vector for both sorts it in place, and
// other overlaps of their memory are not allowed.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/algo/sort.hpp>
#include <kiln/error.hpp>
#include <kiln/vector.hpp>
#include <string_view>

namespace kiln {

namespace detail {

/// Sorts n keys of `input` into `output` on one device, leaving `input` as it was. Blocks until
/// done, except inside kiln::capture, which records it.
void radix_sort_copy_part(std::string_view call, const queue& q, radix_key key, bool descending,
                          const sort_operand& input, const sort_operand& output, std::size_t n);

template <class K>
void radix_sort_copy(std::string_view call, bool descending, const vector<K>& input,
                     vector<K>& output) {
    if (&input == &output) {
        radix_sort(call, descending, output);
        return;
    }
    const auto& layout = input.layout();
    bool same_layout = output.size() == input.size() && output.part_count() == layout.size();
    for (std::size_t k = 0; same_layout && k < layout.size(); ++k)
        same_layout = output.layout()[k].queue.device() == layout[k].queue.device() &&
                      output.layout()[k].size == layout[k].size;
    if (!same_layout) throw_sort_layout_mismatch(call);
    std::size_t shared = 0;
    for (std::size_t k = 0; k < layout.size(); ++k)
        shared += input.part(k).storage().memory() == output.part(k).storage().memory() ? 1 : 0;
    if (shared != 0 && shared != layout.size())
        throw invalid_argument_error(std::string(call),
                                     "the input and the output share some parts' memory");
    if (shared == layout.size() || layout.size() > 1) {
        // In place; a vector split over several devices has its sorted parts merged on the
        // host, which reads and writes it whole anyway.
        if (shared == 0) output.write(input.read());
        radix_sort(call, descending, output);
        return;
    }
    radix_sort_copy_part(call, layout[0].queue, radix_key_of<K>(), descending,
                         sort_operand_of(input.part(0)), sort_operand_of(output.part(0)),
                         input.size());
}

}  // namespace detail

/// Sorts the keys of `input` into `output` in ascending order (radix sort, stable); `input`
/// is left as it was.
template <radix_sortable K>
void sort(const vector<K>& input, vector<K>& output) {
    detail::radix_sort_copy("kiln::sort", false, input, output);
}
/// The same in descending order: the exact reverse of the ascending order, ties stable.
template <radix_sortable K>
void sort(const vector<K>& input, vector<K>& output, descending_order) {
    detail::radix_sort_copy("kiln::sort", true, input, output);
}

}  // namespace kiln
#pragma GCC visibility pop
