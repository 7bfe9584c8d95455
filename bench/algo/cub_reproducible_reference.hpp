// SPDX-License-Identifier: Apache-2.0
// The CUB reference reproducible_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>

/// Best device time in seconds of cub::DeviceReduce::Sum over `repeats` runs of n floats from
/// `values`, whose result it leaves in `result`: run-to-run (CUB's default, two-phase call) or,
/// where `gpu_to_gpu`, with that determinism required (CCCL 3.1's single-phase call, which
/// allocates its temporary storage each time). Returns a negative time where this CUB has no
/// gpu_to_gpu determinism (CCCL before 3.1).
double cub_sum_seconds(const float* values, std::size_t n, bool gpu_to_gpu, int repeats,
                       float* result);
