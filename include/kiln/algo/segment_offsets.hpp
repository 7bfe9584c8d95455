// SPDX-License-Identifier: Apache-2.0
// What kiln's segmented algorithms (segmented.hpp, segmented_sort.hpp) take as segment offsets.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <type_traits>

namespace kiln {

/// Offsets of segments: 32- or 64-bit integers.
template <class T>
concept segment_offset = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>;

}  // namespace kiln
#pragma GCC visibility pop
