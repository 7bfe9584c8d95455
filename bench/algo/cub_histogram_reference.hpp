// SPDX-License-Identifier: Apache-2.0
// The CUB reference histogram_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>
#include <cstdint>

/// Best device time in seconds of cub::DeviceHistogram::HistogramEven over `repeats` runs: n
/// floats from `samples` into `bins` even bins over [lo, hi), whose counts it leaves in
/// `counts`.
double cub_histogram_seconds(const float* samples, std::size_t n, std::size_t bins, float lo,
                             float hi, int repeats, std::uint32_t* counts);
