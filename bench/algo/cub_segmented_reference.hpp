// SPDX-License-Identifier: Apache-2.0
// The CUB reference segmented_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>
#include <cstdint>

/// Best device time in seconds of cub::DeviceSegmentedReduce::Sum over `repeats` runs: n floats
/// from `values` in the segments that `offsets` (segments + 1 entries) bounds, whose sums it
/// leaves in `sums`.
double cub_segmented_reduce_seconds(const float* values, std::size_t n, const std::int32_t* offsets,
                                    std::size_t segments, int repeats, float* sums);

/// Best device time in seconds of cub::DeviceScan::InclusiveSumByKey over `repeats` runs, with
/// keys that number the segments `offsets` bounds (made on the host and copied before the
/// timing, not timed), whose results it leaves in `scanned`. Elements past the last offset
/// take one more key.
double cub_segmented_scan_seconds(const float* values, std::size_t n, const std::int32_t* offsets,
                                  std::size_t segments, int repeats, float* scanned);
