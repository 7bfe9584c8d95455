// SPDX-License-Identifier: Apache-2.0
// Sorting within segments of a kiln::vector: kiln::segmented_sort and segmented_sort_by_key.
//
//     kiln::segmented_sort(keys, offsets);                 // each [offsets[i], offsets[i+1])
//     kiln::segmented_sort_by_key(keys, values, offsets);  // the values move with their keys
//
// offsets holds segments + 1 monotone entries (CUB's DeviceSegmentedSort with begin and end
// offsets from one array), the first 0 and the last at most keys.size(); keys past the last
// offset stay where they are. Keys are those kiln::sort takes, in its ascending order (NaNs
// last, -0 before +0: docs/sorting.md); values any 4- or 8-byte element; offsets 32- or 64-bit
// integers. The sort is stable. Bad offsets are found on the device, which reports only a flag;
// docs/algorithms.md, "Segmented sort", gives the strategies, which the module in
// src/algo/segmented_sort/ plans for the device.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <cstddef>
#include <kiln/algo/segment_offsets.hpp>
#include <kiln/algo/sort.hpp>
#include <kiln/vector.hpp>
#include <optional>
#include <string>
#include <type_traits>

namespace kiln {

namespace detail {

/// Where one of segmented sort's vectors lies, its type erased.
struct segmented_sort_operand {
    std::size_t size = 0, parts = 0;
    /// The device of its first part, where it has one.
    std::optional<kiln::queue> queue;
    /// Its bytes, where it lies in one non-empty part.
    std::optional<sort_operand> memory;
};

template <class T>
segmented_sort_operand segmented_sort_operand_of(const vector<T>& v) {
    segmented_sort_operand operand{v.size(), v.part_count(), std::nullopt, std::nullopt};
    if (v.part_count() > 0) operand.queue = v.layout()[0].queue;
    if (v.part_count() == 1 && v.size() > 0) operand.memory = sort_operand_of(v.part(0));
    return operand;
}

/// kiln::segmented_sort's arguments, their types erased: run_segmented_sort
/// (src/algo/segmented_sort/) checks them and runs the strategy the device's plan chooses.
struct segmented_sort_input {
    const char* call = "kiln::segmented_sort";
    radix_key key;
    segmented_sort_operand keys, offsets;
    std::optional<segmented_sort_operand> values;
    bool offsets_signed = false;
};

/// Throws invalid_argument_error naming what is wrong with `input` (sizes, devices, offsets);
/// then sorts every segment. Returns once the keys and values are sorted.
void run_segmented_sort(const segmented_sort_input& input);

}  // namespace detail

/// Sorts keys[offsets[i], offsets[i+1]) ascending for every segment i, stably.
template <radix_sortable K, segment_offset O>
void segmented_sort(vector<K>& keys, const vector<O>& offsets) {
    detail::run_segmented_sort({.call = "kiln::segmented_sort",
                                .key = detail::radix_key_of<K>(),
                                .keys = detail::segmented_sort_operand_of(keys),
                                .offsets = detail::segmented_sort_operand_of(offsets),
                                .values = std::nullopt,
                                .offsets_signed = std::is_signed_v<O>});
}

/// Sorts every segment's keys ascending and moves its values with them; keys that compare
/// equal keep their order (stable).
template <radix_sortable K, sort_value V, segment_offset O>
void segmented_sort_by_key(vector<K>& keys, vector<V>& values, const vector<O>& offsets) {
    // The keys as their own values move once, as in kiln::sort_by_key.
    const bool values_are_keys = static_cast<const void*>(&values) == &keys;
    detail::run_segmented_sort(
        {.call = "kiln::segmented_sort_by_key",
         .key = detail::radix_key_of<K>(),
         .keys = detail::segmented_sort_operand_of(keys),
         .offsets = detail::segmented_sort_operand_of(offsets),
         .values = values_are_keys ? std::nullopt
                                   : std::optional(detail::segmented_sort_operand_of(values)),
         .offsets_signed = std::is_signed_v<O>});
}

}  // namespace kiln
#pragma GCC visibility pop
