// SPDX-License-Identifier: Apache-2.0
// What the CUDA references of bench/ (CUB, Thrust, cuFFT, cuSPARSE, cudaMemcpy) share: one way to
// fail on an error, device copies of host data, and the best time of a piece of work by CUDA
// events.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cuda_reference {

/// Prints which call failed and why, then exits: a reference that fails must not print a time.
/// The process's name leads the line (the reference runs inside, or beside, a kiln benchmark).
[[noreturn]] inline void fail(const char* call, const char* why) {
    std::fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name, call, why);
    std::exit(2);
}

inline void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) fail(call, cudaGetErrorString(status));
}

/// A device copy of `host` (one element at least, so that empty inputs still get a pointer).
template <class T>
T* device_copy(const std::vector<T>& host) {
    T* p = nullptr;
    check(cudaMalloc(&p, std::max<std::size_t>(1, host.size()) * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy");
    return p;
}

/// The best of `repeats` runs of `work` on `stream`, timed by events around each, after one
/// untimed run.
template <class Work>
double best_event_seconds(int repeats, Work&& work, cudaStream_t stream = nullptr) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    work();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        work();
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        best = std::min(best, ms * 1e-3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best;
}

}  // namespace cuda_reference
