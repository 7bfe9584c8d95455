// SPDX-License-Identifier: Apache-2.0
// The CUDA toolkit's own performance on bench/expr's work: thrust::transform for y = 2*x + 3*z
// and cub::DeviceReduce::Sum, next to a device-to-device copy, on n = 2^28 floats by default; and
// y = 2*x + z and a float-accumulated sum over __half and __nv_bfloat16, the 16-bit rows'
// reference.
//
//     expr_cub_reference [log2(n)]
//
// Prints rows in the same format as expr_bench, to sit under its table in docs/benchmarks.md.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/execution_policy.h>
#include <thrust/transform.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <string>
#include <vector>

#include "cuda_reference.cuh"

namespace {

using cuda_reference::check;

struct two_x_plus_three_z {
    __host__ __device__ float operator()(float x, float z) const { return 2.0f * x + 3.0f * z; }
};

void row(const char* what, double seconds, double bytes, double limit_gb_per_s, const char* note) {
    const double gb_per_s = bytes / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.1f GB/s | %.1f%% | %s |\n", what, seconds * 1e3, gb_per_s,
                100.0 * gb_per_s / limit_gb_per_s, note);
}

/// 16-bit elements widened to float: the accumulator type of kiln::sum over half and bfloat16.
template <class T>
struct widen {
    __host__ __device__ float operator()(T v) const { return static_cast<float>(v); }
};

/// y = 2*x + z computed in float and rounded once, as kiln's 16-bit statements do.
template <class T>
struct two_x_plus_z {
    __device__ T operator()(T x, T z) const {
        return T(2.0f * static_cast<float>(x) + static_cast<float>(z));
    }
};

/// Wall clock of `reduce` followed by the copy of its float result to the host, best of 10: what
/// kiln::sum returns.
template <class Reduce>
double seconds_to_host(Reduce&& reduce, const float* result, float& host_result,
                       cudaStream_t stream) {
    double best = 1e30;
    for (int r = 0; r < 10; ++r) {
        const auto start = std::chrono::steady_clock::now();
        reduce();
        check(cudaMemcpyAsync(&host_result, result, sizeof(float), cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

template <class T>
void binary16_rows(const char* type, const std::vector<float>& host_x,
                   const std::vector<float>& host_z, cudaStream_t stream, double copy_gb_per_s) {
    const std::size_t n = host_x.size();
    std::vector<T> hx(n), hz(n);
    for (std::size_t i = 0; i < n; ++i) {
        hx[i] = T(host_x[i]);
        hz[i] = T(host_z[i]);
    }
    const std::size_t bytes = n * sizeof(T);
    T *x, *z, *y;
    float* sum;
    check(cudaMalloc(&x, bytes), "cudaMalloc");
    check(cudaMalloc(&z, bytes), "cudaMalloc");
    check(cudaMalloc(&y, bytes), "cudaMalloc");
    check(cudaMalloc(&sum, sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(z, hz.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    const double transform_seconds = cuda_reference::best_event_seconds(
        10,
        [&] { thrust::transform(thrust::cuda::par.on(stream), x, x + n, z, y, two_x_plus_z<T>{}); },
        stream);
    std::size_t temporary_bytes = 0;
    const auto reduce = [&](void* temporary) {
        check(cub::DeviceReduce::TransformReduce(temporary, temporary_bytes, x, sum,
                                                 static_cast<int>(n), cuda::std::plus<float>{},
                                                 widen<T>{}, 0.0f, stream),
              "DeviceReduce::TransformReduce");
    };
    reduce(nullptr);
    void* temporary = nullptr;
    check(cudaMalloc(&temporary, temporary_bytes), "cudaMalloc");
    const double reduce_seconds = cuda_reference::best_event_seconds(
        10, [&] { reduce(temporary); }, stream);
    float host_sum = 0;
    const double reduce_to_host_seconds =
        seconds_to_host([&] { reduce(temporary); }, sum, host_sum, stream);
    const std::string transform_name = std::string("thrust::transform `y = 2*x + z`, ") + type;
    const std::string reduce_name =
        std::string("cub::DeviceReduce::TransformReduce, ") + type + ", float accumulator";
    row(transform_name.c_str(), transform_seconds, 3.0 * bytes, copy_gb_per_s,
        "CUDA events, best of 10");
    row(reduce_name.c_str(), reduce_seconds, 1.0 * bytes, copy_gb_per_s,
        "CUDA events, result stays on the device");
    row((reduce_name + " + copy to host").c_str(), reduce_to_host_seconds, 1.0 * bytes,
        copy_gb_per_s, "wall clock, like kiln::sum");
    cudaFree(temporary);
    cudaFree(sum);
    cudaFree(y);
    cudaFree(z);
    cudaFree(x);
}

}  // namespace

int main(int argc, char** argv) {
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 28;
    const std::size_t n = std::size_t{1} << log2_n;
    const std::size_t bytes = n * sizeof(float);

    std::vector<float> host_x(n), host_z(n);
    for (std::size_t i = 0; i < n; ++i) {
        host_x[i] = static_cast<float>(i % 1024) / 1024.0f;
        host_z[i] = 1.0f - static_cast<float>(i % 512) / 512.0f;
    }
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    float *x, *z, *y, *copy, *sum;
    check(cudaMalloc(&x, bytes), "cudaMalloc");
    check(cudaMalloc(&z, bytes), "cudaMalloc");
    check(cudaMalloc(&y, bytes), "cudaMalloc");
    check(cudaMalloc(&copy, bytes), "cudaMalloc");
    check(cudaMalloc(&sum, sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(x, host_x.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(z, host_z.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");

    const double copy_seconds = cuda_reference::best_event_seconds(
        10,
        [&] {
            check(cudaMemcpyAsync(copy, x, bytes, cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync");
        },
        stream);
    const double copy_gb_per_s = 2.0 * bytes / copy_seconds / 1e9;

    const double transform_seconds = cuda_reference::best_event_seconds(
        10,
        [&] {
            thrust::transform(thrust::cuda::par.on(stream), x, x + n, z, y, two_x_plus_three_z{});
        },
        stream);

    std::size_t temporary_bytes = 0;
    check(cub::DeviceReduce::Sum(nullptr, temporary_bytes, x, sum, static_cast<int>(n), stream),
          "DeviceReduce::Sum");
    void* temporary = nullptr;
    check(cudaMalloc(&temporary, temporary_bytes), "cudaMalloc");
    const double reduce_seconds = cuda_reference::best_event_seconds(
        10,
        [&] {
            check(cub::DeviceReduce::Sum(temporary, temporary_bytes, x, sum, static_cast<int>(n),
                                         stream),
                  "DeviceReduce::Sum");
        },
        stream);
    // What kiln::sum returns: the value on the host. Time the reduction and the copy back.
    float host_sum = 0;
    const double reduce_to_host_seconds = seconds_to_host(
        [&] {
            check(cub::DeviceReduce::Sum(temporary, temporary_bytes, x, sum, static_cast<int>(n),
                                         stream),
                  "DeviceReduce::Sum");
        },
        sum, host_sum, stream);
    double exact_sum = 0;
    for (float v : host_x) exact_sum += v;

    int device_index = 0;
    cudaDeviceProp properties{};
    check(cudaGetDevice(&device_index), "cudaGetDevice");
    check(cudaGetDeviceProperties(&properties, device_index), "cudaGetDeviceProperties");
    std::printf("### CUDA toolkit reference, %s, n = 2^%d floats\n\n", properties.name, log2_n);
    std::printf("| work | time | bandwidth | of copy bandwidth | notes |\n|---|---|---|---|---|\n");
    std::printf(
        "| cudaMemcpy device to device (limit) | %.3f ms | %.1f GB/s | | CUDA events, best of 10 "
        "|\n",
        copy_seconds * 1e3, copy_gb_per_s);
    row("thrust::transform `y = 2*x + 3*z`", transform_seconds, 3.0 * bytes, copy_gb_per_s,
        "CUDA events, best of 10");
    row("cub::DeviceReduce::Sum", reduce_seconds, 1.0 * bytes, copy_gb_per_s,
        "CUDA events, result stays on the device");
    char note[96];
    std::snprintf(note, sizeof note, "wall clock, like kiln::sum; relative error vs double %.1e",
                  std::fabs(host_sum - exact_sum) / exact_sum);
    row("cub::DeviceReduce::Sum + copy to host", reduce_to_host_seconds, 1.0 * bytes, copy_gb_per_s,
        note);
    binary16_rows<__half>("__half", host_x, host_z, stream, copy_gb_per_s);
    binary16_rows<__nv_bfloat16>("__nv_bfloat16", host_x, host_z, stream, copy_gb_per_s);

    cudaFree(temporary);
    cudaFree(sum);
    cudaFree(copy);
    cudaFree(y);
    cudaFree(z);
    cudaFree(x);
    cudaStreamDestroy(stream);
    return 0;
}
