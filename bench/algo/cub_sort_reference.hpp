// SPDX-License-Identifier: Apache-2.0
// The CUB reference sort_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>

/// half_keys and bfloat16_keys hand over kiln::half and kiln::bfloat16 bits, which CUB sorts as
/// __half and __nv_bfloat16.
enum class cub_sort_case {
    uint32_keys,
    uint32_pairs,
    float_keys,
    uint64_keys,
    half_keys,
    bfloat16_keys
};

/// Best device time in seconds of cub::DeviceRadixSort over `repeats` runs on a copy of the host
/// data (values only for uint32_pairs).
double cub_sort_seconds(cub_sort_case what, const void* keys, const void* values, std::size_t n,
                        int repeats);
