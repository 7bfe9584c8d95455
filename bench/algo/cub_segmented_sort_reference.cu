// SPDX-License-Identifier: Apache-2.0
// CUB's DeviceSegmentedSort on data handed over by segmented_sort_bench, timed with CUDA events:
// the reference that kiln::segmented_sort is measured against in the same run.
#include <cstdint>
#include <cub/device/device_segmented_sort.cuh>

#include "cub_segmented_sort_reference.hpp"
#include "cuda_reference.cuh"

namespace {

using cuda_reference::check;

template <class K>
double best_seconds(const K* host_keys, const std::uint32_t* host_values, std::size_t n,
                    const std::int32_t* host_offsets, std::size_t segments, int repeats,
                    K* sorted) {
    K *keys_in, *keys_out;
    std::uint32_t *values_in = nullptr, *values_out = nullptr;
    std::int32_t* offsets;
    check(cudaMalloc(&keys_in, n * sizeof(K)), "cudaMalloc");
    check(cudaMalloc(&keys_out, n * sizeof(K)), "cudaMalloc");
    check(cudaMalloc(&offsets, (segments + 1) * sizeof(std::int32_t)), "cudaMalloc");
    check(cudaMemcpy(keys_in, host_keys, n * sizeof(K), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(offsets, host_offsets, (segments + 1) * sizeof(std::int32_t),
                     cudaMemcpyHostToDevice),
          "cudaMemcpy");
    if (host_values) {
        check(cudaMalloc(&values_in, n * sizeof(std::uint32_t)), "cudaMalloc");
        check(cudaMalloc(&values_out, n * sizeof(std::uint32_t)), "cudaMalloc");
        check(cudaMemcpy(values_in, host_values, n * sizeof(std::uint32_t), cudaMemcpyHostToDevice),
              "cudaMemcpy");
    }
    const auto run = [&](void* temp, std::size_t& temp_bytes) {
        const auto count = static_cast<std::int64_t>(n);
        const auto segment_count = static_cast<std::int64_t>(segments);
        if (host_values)
            return cub::DeviceSegmentedSort::SortPairs(temp, temp_bytes, keys_in, keys_out,
                                                       values_in, values_out, count, segment_count,
                                                       offsets, offsets + 1);
        return cub::DeviceSegmentedSort::SortKeys(temp, temp_bytes, keys_in, keys_out, count,
                                                  segment_count, offsets, offsets + 1);
    };
    std::size_t temp_bytes = 0;
    check(run(nullptr, temp_bytes), "DeviceSegmentedSort size query");
    void* temp;
    check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
    const double best = cuda_reference::best_event_seconds(
        repeats, [&] { check(run(temp, temp_bytes), "DeviceSegmentedSort"); });
    check(cudaMemcpy(sorted, keys_out, n * sizeof(K), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(temp);
    cudaFree(keys_in);
    cudaFree(keys_out);
    cudaFree(offsets);
    cudaFree(values_in);
    cudaFree(values_out);
    return best;
}

}  // namespace

double cub_segmented_sort_seconds(const std::uint32_t* keys, bool floats,
                                  const std::uint32_t* values, std::size_t n,
                                  const std::int32_t* offsets, std::size_t segments, int repeats,
                                  std::uint32_t* sorted) {
    if (floats)
        return best_seconds(reinterpret_cast<const float*>(keys), values, n, offsets, segments,
                            repeats, reinterpret_cast<float*>(sorted));
    return best_seconds(keys, values, n, offsets, segments, repeats, sorted);
}
