// SPDX-License-Identifier: Apache-2.0
// The CUB reference segmented_sort_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>
#include <cstdint>

/// Best device time in seconds of cub::DeviceSegmentedSort::SortKeys (SortPairs where `values`
/// is given) over `repeats` runs: n keys from `keys` (uint32 bits, of floats where `floats`) in
/// the segments of `offsets` (segments + 1 entries, begins and ends from one array), sorted out
/// of place so that every run starts from the same data; the sorted keys are left in `sorted`.
double cub_segmented_sort_seconds(const std::uint32_t* keys, bool floats,
                                  const std::uint32_t* values, std::size_t n,
                                  const std::int32_t* offsets, std::size_t segments, int repeats,
                                  std::uint32_t* sorted);
