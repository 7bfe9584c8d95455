// SPDX-License-Identifier: Apache-2.0
// CUB's DeviceSegmentedReduce::Sum and DeviceScan::InclusiveSumByKey on data handed over by
// segmented_bench, timed with CUDA events: the references that kiln::segmented_reduce and
// segmented_inclusive_scan are measured against in the same run.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <vector>

#include "cub_segmented_reference.hpp"
#include "cuda_reference.cuh"

using cuda_reference::check;

double cub_segmented_reduce_seconds(const float* values, std::size_t n, const std::int32_t* offsets,
                                    std::size_t segments, int repeats, float* sums) {
    float* d_values = cuda_reference::device_copy(std::vector<float>(values, values + n));
    std::int32_t* d_offsets =
        cuda_reference::device_copy(std::vector<std::int32_t>(offsets, offsets + segments + 1));
    float* d_sums;
    check(cudaMalloc(&d_sums, std::max<std::size_t>(1, segments) * sizeof(float)), "cudaMalloc");
    const auto run = [&](void* temp, std::size_t& temp_bytes) {
        return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, d_values, d_sums,
                                               static_cast<int>(segments), d_offsets,
                                               d_offsets + 1);
    };
    std::size_t temp_bytes = 0;
    check(run(nullptr, temp_bytes), "DeviceSegmentedReduce::Sum size query");
    void* temp;
    check(cudaMalloc(&temp, std::max<std::size_t>(1, temp_bytes)), "cudaMalloc");
    const double best = cuda_reference::best_event_seconds(
        repeats, [&] { check(run(temp, temp_bytes), "DeviceSegmentedReduce::Sum"); });
    check(cudaMemcpy(sums, d_sums, segments * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(temp);
    cudaFree(d_values);
    cudaFree(d_offsets);
    cudaFree(d_sums);
    return best;
}

double cub_segmented_scan_seconds(const float* values, std::size_t n, const std::int32_t* offsets,
                                  std::size_t segments, int repeats, float* scanned) {
    std::vector<std::int32_t> keys(n);
    for (std::size_t i = 0; i < segments; ++i)
        for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) keys[k] = std::int32_t(i);
    for (std::size_t k = std::size_t(offsets[segments]); k < n; ++k)
        keys[k] = std::int32_t(segments);
    float* d_values = cuda_reference::device_copy(std::vector<float>(values, values + n));
    std::int32_t* d_keys = cuda_reference::device_copy(keys);
    float* d_scanned;
    check(cudaMalloc(&d_scanned, std::max<std::size_t>(1, n) * sizeof(float)), "cudaMalloc");
    const auto run = [&](void* temp, std::size_t& temp_bytes) {
        return cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, d_keys, d_values, d_scanned,
                                                  static_cast<int>(n));
    };
    std::size_t temp_bytes = 0;
    check(run(nullptr, temp_bytes), "InclusiveSumByKey size query");
    void* temp;
    check(cudaMalloc(&temp, std::max<std::size_t>(1, temp_bytes)), "cudaMalloc");
    const double best = cuda_reference::best_event_seconds(
        repeats, [&] { check(run(temp, temp_bytes), "InclusiveSumByKey"); });
    check(cudaMemcpy(scanned, d_scanned, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(temp);
    cudaFree(d_values);
    cudaFree(d_keys);
    cudaFree(d_scanned);
    return best;
}
