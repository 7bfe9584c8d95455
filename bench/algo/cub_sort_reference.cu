// SPDX-License-Identifier: Apache-2.0
// CUB's DeviceRadixSort on data handed over by sort_bench, timed with CUDA events: the reference
// that kiln's sort is measured against in the same run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "cub_sort_reference.hpp"
#include "cuda_reference.cuh"

namespace {

using cuda_reference::check;

/// Best time of sorting `n` keys (and values, when given) from pristine copies each repeat.
template <class K, class V>
double best_seconds(const K* host_keys, const V* host_values, std::size_t n, int repeats) {
    K *keys_in, *keys_out;
    V *values_in = nullptr, *values_out = nullptr;
    check(cudaMalloc(&keys_in, n * sizeof(K)), "cudaMalloc");
    check(cudaMalloc(&keys_out, n * sizeof(K)), "cudaMalloc");
    check(cudaMemcpy(keys_in, host_keys, n * sizeof(K), cudaMemcpyHostToDevice), "cudaMemcpy");
    if (host_values) {
        check(cudaMalloc(&values_in, n * sizeof(V)), "cudaMalloc");
        check(cudaMalloc(&values_out, n * sizeof(V)), "cudaMalloc");
        check(cudaMemcpy(values_in, host_values, n * sizeof(V), cudaMemcpyHostToDevice),
              "cudaMemcpy");
    }
    const auto run = [&](void* temp, std::size_t& temp_bytes) {
        const int count = static_cast<int>(n);
        if (host_values)
            return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in,
                                                   values_out, count);
        return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, count);
    };
    std::size_t temp_bytes = 0;
    check(run(nullptr, temp_bytes), "DeviceRadixSort size query");
    void* temp;
    check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
    // The input stays untouched (separate output buffers): every repeat sorts the same data.
    const double best = cuda_reference::best_event_seconds(
        repeats, [&] { check(run(temp, temp_bytes), "DeviceRadixSort"); });
    cudaFree(temp);
    cudaFree(keys_in);
    cudaFree(keys_out);
    cudaFree(values_in);
    cudaFree(values_out);
    return best;
}

}  // namespace

double cub_sort_seconds(cub_sort_case what, const void* keys, const void* values, std::size_t n,
                        int repeats) {
    switch (what) {
        case cub_sort_case::uint32_keys:
            return best_seconds(static_cast<const std::uint32_t*>(keys),
                                static_cast<const std::uint32_t*>(nullptr), n, repeats);
        case cub_sort_case::uint32_pairs:
            return best_seconds(static_cast<const std::uint32_t*>(keys),
                                static_cast<const std::uint32_t*>(values), n, repeats);
        case cub_sort_case::float_keys:
            return best_seconds(static_cast<const float*>(keys),
                                static_cast<const std::uint32_t*>(nullptr), n, repeats);
        case cub_sort_case::uint64_keys:
            return best_seconds(static_cast<const std::uint64_t*>(keys),
                                static_cast<const std::uint32_t*>(nullptr), n, repeats);
        case cub_sort_case::half_keys:
            return best_seconds(static_cast<const __half*>(keys),
                                static_cast<const std::uint32_t*>(nullptr), n, repeats);
        case cub_sort_case::bfloat16_keys:
            return best_seconds(static_cast<const __nv_bfloat16*>(keys),
                                static_cast<const std::uint32_t*>(nullptr), n, repeats);
    }
    return 0;
}
