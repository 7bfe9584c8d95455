// SPDX-License-Identifier: Apache-2.0
// CUB's DeviceReduce::Sum on data handed over by reproducible_bench, timed with CUDA events:
// the run-to-run and GPU-to-GPU references of kiln's default and reproducible sums.
#include <cub/device/device_reduce.cuh>

#include "cub_reproducible_reference.hpp"
#include "cuda_reference.cuh"

using cuda_reference::check;

#define KILN_CUB_HAS_GPU_TO_GPU \
    (CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1))

double cub_sum_seconds(const float* values, std::size_t n, bool gpu_to_gpu, int repeats,
                       float* result) {
#if !KILN_CUB_HAS_GPU_TO_GPU
    if (gpu_to_gpu) return -1;
#endif
    const std::vector<float> host(values, values + n);
    float* in = cuda_reference::device_copy(host);
    float* out;
    check(cudaMalloc(&out, sizeof(float)), "cudaMalloc");
    const int items = static_cast<int>(n);
    double best = -1;
    if (!gpu_to_gpu) {
        std::size_t temp_bytes = 0;
        check(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, items), "Sum size query");
        void* temp;
        check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
        best = cuda_reference::best_event_seconds(repeats, [&] {
            check(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, items), "DeviceReduce::Sum");
        });
        cudaFree(temp);
    }
#if KILN_CUB_HAS_GPU_TO_GPU
    if (gpu_to_gpu) {
        const auto env = cuda::execution::require(cuda::execution::determinism::gpu_to_gpu);
        best = cuda_reference::best_event_seconds(repeats, [&] {
            check(cub::DeviceReduce::Sum(in, out, items, env), "DeviceReduce::Sum (gpu_to_gpu)");
        });
    }
#endif
    check(cudaMemcpy(result, out, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(in);
    cudaFree(out);
    return best;
}
