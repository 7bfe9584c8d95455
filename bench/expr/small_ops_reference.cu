// SPDX-License-Identifier: Apache-2.0
// Raw CUDA on small_ops_bench's work: `y = 2*x + z` at n = 1024 and 2^24 and one RK4 step of the
// Lorenz ensemble (1024 systems, x, y and z stored one after another, eight kernels a step), as
// launches one after another and as a CUDA graph of ten steps: the floor kiln's launch path is
// measured against.
//
//     small_ops_cuda_reference
//
// Prints rows in small_ops_bench's format, to sit under its table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "cuda_reference.cuh"

namespace {

using cuda_reference::check;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t small_n = 1024, large_n = std::size_t{1} << 24, systems = 1024;
constexpr double dt = 0.01;
constexpr unsigned threads = 256;

__global__ void two_x_plus_z(float* y, const float* x, const float* z, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + z[i];
}

__global__ void lorenz(const double* s, double* d, const double* R, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const double x = s[i], y = s[n + i], z = s[2 * n + i];
    d[i] = 10.0 * (y - x);
    d[n + i] = R[i] * x - y - x * z;
    d[2 * n + i] = x * y - (8.0 / 3.0) * z;
}

__global__ void along(double* out, const double* s, const double* k, double h, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    for (int c = 0; c < 3; ++c) out[c * n + i] = s[c * n + i] + h * k[c * n + i];
}

__global__ void rk4_update(double* s, const double* k1, const double* k2, const double* k3,
                           const double* k4, double h6, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    for (int c = 0; c < 3; ++c) {
        const std::size_t j = c * n + i;
        s[j] = s[j] + h6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    }
}

void row(const std::string& work, const char* form, double seconds_per_operation) {
    std::printf("| %s | %s | %.2f µs |\n", work.c_str(), form, seconds_per_operation * 1e6);
}

/// Best wall time per call over five batches of `calls`, each ended by a stream synchronize:
/// the host's enqueueing overlaps the device's work, as in small_ops_bench.
template <class Work>
double best_seconds_per_call(cudaStream_t stream, int calls, Work&& work) {
    work();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    double best = 1e30;
    for (int b = 0; b < 5; ++b) {
        const auto start = clock_type::now();
        for (int c = 0; c < calls; ++c) work();
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        best = std::min(best,
                        std::chrono::duration<double>(clock_type::now() - start).count() / calls);
    }
    return best;
}

unsigned blocks_for(std::size_t n) {
    return static_cast<unsigned>((n + threads - 1) / threads);
}

template <class T>
T* zeroed(std::size_t count) {
    T* p = nullptr;
    check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
    check(cudaMemset(p, 0, count * sizeof(T)), "cudaMemset");
    return p;
}

}  // namespace

int main() {
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

    for (const std::size_t n : {small_n, large_n}) {
        float *y = zeroed<float>(n), *x = zeroed<float>(n), *z = zeroed<float>(n);
        row("`y = 2*x + z`, n = " + std::to_string(n), "raw CUDA launches",
            best_seconds_per_call(stream, n == small_n ? 2000 : 20, [&] {
                two_x_plus_z<<<blocks_for(n), threads, 0, stream>>>(y, x, z, n);
            }));
        for (float* p : {y, x, z}) check(cudaFree(p), "cudaFree");
    }

    double *R = zeroed<double>(systems), *x = zeroed<double>(3 * systems),
           *tmp = zeroed<double>(3 * systems);
    double* k[4] = {zeroed<double>(3 * systems), zeroed<double>(3 * systems),
                    zeroed<double>(3 * systems), zeroed<double>(3 * systems)};
    const unsigned blocks = blocks_for(systems);
    const auto step = [&] {
        const double h[3] = {dt / 2, dt / 2, dt};
        for (int i = 0; i < 3; ++i) {
            lorenz<<<blocks, threads, 0, stream>>>(i == 0 ? x : tmp, k[i], R, systems);
            along<<<blocks, threads, 0, stream>>>(tmp, x, k[i], h[i], systems);
        }
        lorenz<<<blocks, threads, 0, stream>>>(tmp, k[3], R, systems);
        rk4_update<<<blocks, threads, 0, stream>>>(x, k[0], k[1], k[2], k[3], dt / 6, systems);
    };
    row("Lorenz RK4 step, 1024 systems", "raw CUDA launches (8 kernels)",
        best_seconds_per_call(stream, 200, step));

    // Ten steps captured from the stream into one graph, as kiln::capture records them.
    constexpr int steps_per_graph = 10;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    for (int s = 0; s < steps_per_graph; ++s) step();
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    row("Lorenz RK4 step, 1024 systems", "raw CUDA graph, 10 steps a graph",
        best_seconds_per_call(stream, 20, [&] {
            check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        }) / steps_per_graph);
    check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    for (double* p : {R, x, tmp, k[0], k[1], k[2], k[3]}) check(cudaFree(p), "cudaFree");
    check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    return 0;
}
