// SPDX-License-Identifier: Apache-2.0
// CUB's DeviceHistogram::HistogramEven on data handed over by histogram_bench, timed with CUDA
// events: the reference that kiln::histogram is measured against in the same run.
#include <cub/device/device_histogram.cuh>

#include "cub_histogram_reference.hpp"
#include "cuda_reference.cuh"

using cuda_reference::check;

double cub_histogram_seconds(const float* samples, std::size_t n, std::size_t bins, float lo,
                             float hi, int repeats, std::uint32_t* counts) {
    float* d_samples;
    unsigned int* d_counts;
    check(cudaMalloc(&d_samples, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_counts, bins * sizeof(unsigned int)), "cudaMalloc");
    check(cudaMemcpy(d_samples, samples, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    const int levels = static_cast<int>(bins) + 1;
    const auto run = [&](void* temp, std::size_t& temp_bytes) {
        return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d_samples, d_counts, levels,
                                                   lo, hi, static_cast<long long>(n));
    };
    std::size_t temp_bytes = 0;
    check(run(nullptr, temp_bytes), "HistogramEven size query");
    void* temp;
    check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
    const double best = cuda_reference::best_event_seconds(
        repeats, [&] { check(run(temp, temp_bytes), "HistogramEven"); });
    check(cudaMemcpy(counts, d_counts, bins * sizeof(unsigned int), cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    cudaFree(temp);
    cudaFree(d_samples);
    cudaFree(d_counts);
    return best;
}
