// SPDX-License-Identifier: Apache-2.0
// cudaMemcpy between device 0 and pinned or ordinary host memory, timed on the host's clock as
// transfer_bench times kiln's transfers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cuda_memcpy_reference.hpp"
#include "cuda_reference.cuh"

using cuda_reference::check;

double cuda_memcpy_seconds(memcpy_direction direction, std::size_t bytes, bool pinned,
                           int repeats) {
    void* device = nullptr;
    check(cudaMalloc(&device, bytes), "cudaMalloc");
    void* host = nullptr;
    std::unique_ptr<char[]> ordinary;
    if (pinned) {
        check(cudaMallocHost(&host, bytes), "cudaMallocHost");
    } else {
        ordinary.reset(new char[bytes]);
        host = ordinary.get();
    }
    std::memset(host, 1, bytes);  // first touch outside the timing
    check(cudaMemset(device, 0, bytes), "cudaMemset");
    auto copy = [&] {
        if (direction == memcpy_direction::host_to_device)
            check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        else
            check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    };
    copy();
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        copy();
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (pinned) check(cudaFreeHost(host), "cudaFreeHost");
    check(cudaFree(device), "cudaFree");
    return best;
}
