// SPDX-License-Identifier: Apache-2.0
// CUB on bench/algo's work, on algo_bench's data (algo_data.hpp): DeviceScan's InclusiveSum and
// ExclusiveSum of int32 and float, DeviceReduce::ReduceByKey over runs of 1, 8, 32 and 1024,
// DeviceSelect::If keeping 1%, half and 99%, DeviceSelect::Unique. Prints `cub <work> <seconds>`
// lines that algo_bench reads (best of 10 runs, CUDA events; results stay on the device). Each
// work's result is checked against the host's first (a scan's last element, a count), so that
// a time is only printed for the work algo_bench checks on its side.
//
//     algo_cub_reference log2(n_scan) log2(n_by_key) log2(n_select)
//                        (unique runs on n_select keys)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <string>
#include <vector>

#include "algo_data.hpp"
#include "cuda_reference.cuh"

namespace {

using cuda_reference::best_event_seconds;
using cuda_reference::check;
using cuda_reference::device_copy;
using cuda_reference::fail;

struct keep_even {
    __host__ __device__ bool operator()(int v) const { return (v & 1) == 0; }
};
struct below {
    int bound;
    __host__ __device__ bool operator()(int v) const { return v < bound; }
};

/// Temporary storage shared by every work, grown as needed.
struct temporary {
    void* data = nullptr;
    std::size_t bytes = 0;
    void reserve(std::size_t wanted) {
        if (wanted <= bytes) return;
        if (data) cudaFree(data);
        check(cudaMalloc(&data, wanted), "cudaMalloc");
        bytes = wanted;
    }
    ~temporary() { cudaFree(data); }
};

template <class T>
T* device_array(std::size_t n) {
    T* p = nullptr;
    check(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc");
    return p;
}

template <class T>
T read_back(const T* device_value) {
    T value{};
    check(cudaMemcpy(&value, device_value, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return value;
}

/// Times `call(temp, bytes)`, a CUB call, after sizing its temporary storage with it.
template <class Call>
double timed(temporary& temp, const char* what, Call&& call) {
    std::size_t bytes = 0;
    check(call(nullptr, bytes), what);
    temp.reserve(bytes);
    return best_event_seconds(10, [&] {
        std::size_t b = temp.bytes;
        check(call(temp.data, b), what);
    });
}

template <class T>
void scan(temporary& temp, std::size_t n, bool inclusive, const char* type) {
    std::vector<T> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = T(algo_data::scan_value(i));
    T* in = device_copy(host);
    T* out = device_array<T>(n);
    const int items = static_cast<int>(n);
    const double s = inclusive
                         ? timed(temp, "DeviceScan::InclusiveSum",
                                 [&](void* t, std::size_t& b) {
                                     return cub::DeviceScan::InclusiveSum(t, b, in, out, items);
                                 })
                         : timed(temp, "DeviceScan::ExclusiveSum", [&](void* t, std::size_t& b) {
                               return cub::DeviceScan::ExclusiveSum(t, b, in, out, items);
                           });
    // Small whole partial sums (algo_data): the last one is exact in either type.
    T last{};
    for (std::size_t i = 0; i + (inclusive ? 0 : 1) < n; ++i) last += host[i];
    if (read_back(out + n - 1) != last)
        fail("DeviceScan", "the last partial sum is not the host's");
    std::printf("cub %s_scan_%s %.9f\n", inclusive ? "inclusive" : "exclusive", type, s);
    cudaFree(in);
    cudaFree(out);
}

void reduce_by_key(temporary& temp, std::size_t n, std::size_t length) {
    std::vector<int> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = algo_data::run_key(i, length);
        values[i] = algo_data::run_value(i);
    }
    int* k = device_copy(keys);
    int* v = device_copy(values);
    int* out_k = device_array<int>(n);
    int* out_v = device_array<int>(n);
    int* runs = device_array<int>(1);
    const double s = timed(temp, "DeviceReduce::ReduceByKey", [&](void* t, std::size_t& b) {
        return cub::DeviceReduce::ReduceByKey(t, b, k, out_k, v, out_v, runs,
                                              cuda::std::plus<int>{}, static_cast<int>(n));
    });
    if (static_cast<std::size_t>(read_back(runs)) != (n + length - 1) / length)
        fail("DeviceReduce::ReduceByKey", "the count of runs is not the host's");
    std::printf("cub reduce_by_key_%zu %.9f\n", length, s);
    for (int* p : {k, v, out_k, out_v, runs}) cudaFree(p);
}

void copy_if(temporary& temp, std::size_t n, int percent) {
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = algo_data::select_value(i);
    const auto host_kept = static_cast<std::size_t>(std::count_if(
        host.begin(), host.end(), [&](int v) { return algo_data::kept(v, percent); }));
    int* in = device_copy(host);
    int* out = device_array<int>(n);
    int* count = device_array<int>(1);
    const int items = static_cast<int>(n);
    const auto select = [&](auto keep) {
        return timed(temp, "DeviceSelect::If", [&](void* t, std::size_t& b) {
            return cub::DeviceSelect::If(t, b, in, out, count, items, keep);
        });
    };
    const double s =
        percent == 50 ? select(keep_even{}) : select(below{algo_data::select_bound(percent)});
    if (static_cast<std::size_t>(read_back(count)) != host_kept)
        fail("DeviceSelect::If", "the count kept is not the host's");
    std::printf("cub copy_if_%d %.9f\n", percent, s);
    for (int* p : {in, out, count}) cudaFree(p);
}

void unique(temporary& temp, std::size_t n) {
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = algo_data::unique_key(i);
    std::size_t host_runs = 0;
    for (std::size_t i = 0; i < n; ++i) host_runs += i == 0 || host[i] != host[i - 1];
    int* in = device_copy(host);
    int* out = device_array<int>(n);
    int* count = device_array<int>(1);
    const double s = timed(temp, "DeviceSelect::Unique", [&](void* t, std::size_t& b) {
        return cub::DeviceSelect::Unique(t, b, in, out, count, static_cast<int>(n));
    });
    if (static_cast<std::size_t>(read_back(count)) != host_runs)
        fail("DeviceSelect::Unique", "the count of runs is not the host's");
    std::printf("cub unique %.9f\n", s);
    for (int* p : {in, out, count}) cudaFree(p);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n_scan = std::size_t{1} << (argc > 1 ? std::atoi(argv[1]) : 28);
    const std::size_t n_key = std::size_t{1} << (argc > 2 ? std::atoi(argv[2]) : 26);
    const std::size_t n_select = std::size_t{1} << (argc > 3 ? std::atoi(argv[3]) : 28);
    temporary temp;
    scan<int>(temp, n_scan, true, "int32");
    scan<int>(temp, n_scan, false, "int32");
    scan<float>(temp, n_scan, true, "float");
    scan<float>(temp, n_scan, false, "float");
    for (const std::size_t length : algo_data::run_lengths) reduce_by_key(temp, n_key, length);
    for (const int percent : algo_data::kept_percents) copy_if(temp, n_select, percent);
    unique(temp, n_select);
    return 0;
}
