// CUB on bench/algo's work: DeviceScan::InclusiveSum of int32, DeviceReduce::ReduceByKey over
// runs of 8, DeviceSelect::If keeping half. Prints `cub <work> <seconds>` lines that algo_bench
// reads (best of 10 runs, CUDA events; results stay on the device).
//
//     algo_cub_reference log2(n_scan) log2(n_by_key) log2(n_select)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <vector>

#include "algo_data.hpp"
#include "cuda_reference.cuh"

namespace {

using cuda_reference::best_event_seconds;
using cuda_reference::check;
using cuda_reference::device_copy;

struct keep_even {
    __host__ __device__ bool operator()(int v) const { return (v & 1) == 0; }
};

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n_scan = std::size_t{1} << (argc > 1 ? std::atoi(argv[1]) : 28);
    const std::size_t n_key = std::size_t{1} << (argc > 2 ? std::atoi(argv[2]) : 26);
    const std::size_t n_select = std::size_t{1} << (argc > 3 ? std::atoi(argv[3]) : 28);
    void* temp = nullptr;
    std::size_t temp_bytes = 0;
    const auto reserve = [&](std::size_t bytes) {
        if (bytes <= temp_bytes) return;
        if (temp) cudaFree(temp);
        check(cudaMalloc(&temp, bytes), "cudaMalloc");
        temp_bytes = bytes;
    };

    {
        std::vector<int> host(n_scan);
        for (std::size_t i = 0; i < n_scan; ++i) host[i] = algo_data::scan_value(i);
        int* in = device_copy(host);
        int* out = nullptr;
        check(cudaMalloc(&out, n_scan * sizeof(int)), "cudaMalloc");
        std::size_t bytes = 0;
        cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, static_cast<int>(n_scan));
        reserve(bytes);
        const double s = best_event_seconds(10, [&] {
            std::size_t b = temp_bytes;
            check(cub::DeviceScan::InclusiveSum(temp, b, in, out, static_cast<int>(n_scan)),
                  "DeviceScan::InclusiveSum");
        });
        std::printf("cub scan %.9f\n", s);
        cudaFree(in);
        cudaFree(out);
    }
    {
        std::vector<int> keys(n_key), values(n_key);
        for (std::size_t i = 0; i < n_key; ++i) {
            keys[i] = algo_data::run_key(i);
            values[i] = algo_data::run_value(i);
        }
        int* k = device_copy(keys);
        int* v = device_copy(values);
        int *out_k = nullptr, *out_v = nullptr, *runs = nullptr;
        check(cudaMalloc(&out_k, n_key * sizeof(int)), "cudaMalloc");
        check(cudaMalloc(&out_v, n_key * sizeof(int)), "cudaMalloc");
        check(cudaMalloc(&runs, sizeof(int)), "cudaMalloc");
        std::size_t bytes = 0;
        cub::DeviceReduce::ReduceByKey(nullptr, bytes, k, out_k, v, out_v, runs,
                                       cuda::std::plus<int>{}, static_cast<int>(n_key));
        reserve(bytes);
        const double s = best_event_seconds(10, [&] {
            std::size_t b = temp_bytes;
            check(cub::DeviceReduce::ReduceByKey(temp, b, k, out_k, v, out_v, runs,
                                                 cuda::std::plus<int>{}, static_cast<int>(n_key)),
                  "DeviceReduce::ReduceByKey");
        });
        std::printf("cub reduce_by_key %.9f\n", s);
        cudaFree(k);
        cudaFree(v);
        cudaFree(out_k);
        cudaFree(out_v);
        cudaFree(runs);
    }
    {
        std::vector<int> host(n_select);
        for (std::size_t i = 0; i < n_select; ++i) host[i] = algo_data::select_value(i);
        int* in = device_copy(host);
        int *out = nullptr, *count = nullptr;
        check(cudaMalloc(&out, n_select * sizeof(int)), "cudaMalloc");
        check(cudaMalloc(&count, sizeof(int)), "cudaMalloc");
        std::size_t bytes = 0;
        cub::DeviceSelect::If(nullptr, bytes, in, out, count, static_cast<int>(n_select),
                              keep_even{});
        reserve(bytes);
        const double s = best_event_seconds(10, [&] {
            std::size_t b = temp_bytes;
            check(cub::DeviceSelect::If(temp, b, in, out, count, static_cast<int>(n_select),
                                        keep_even{}),
                  "DeviceSelect::If");
        });
        std::printf("cub copy_if %.9f\n", s);
        cudaFree(in);
        cudaFree(out);
        cudaFree(count);
    }
    cudaFree(temp);
    return 0;
}
