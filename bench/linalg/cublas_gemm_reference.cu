// cuBLAS on bench/linalg/gemm_bench's products (gemm_workloads.hpp): cublasSgemm, cublasDgemm
// and cublasSgemmStridedBatched, row-major C = A B (cuBLAS's column-major C^T = B^T A^T), TF32
// off (CUBLAS_DEFAULT_MATH keeps float in float). Prints `cublas <work> <seconds>` lines that
// gemm_bench reads (best of 10 runs, CUDA events, after one untimed run).
//
//     gemm_cublas_reference [work...]     (all of gemm_workloads::gpu_workloads() by default)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cuda_reference.cuh"
#include "gemm_workloads.hpp"

namespace {

void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        cuda_reference::fail(call, ("cublasStatus_t " + std::to_string(int(status))).c_str());
}

template <class T>
double time_gemm(cublasHandle_t handle, const gemm_workloads::workload& w) {
    T* a = cuda_reference::device_copy(gemm_workloads::values<T>(w.m * w.k * w.batch, 1));
    T* b = cuda_reference::device_copy(gemm_workloads::values<T>(w.k * w.n * w.batch, 2));
    T* c = cuda_reference::device_copy(std::vector<T>(w.m * w.n * w.batch, T(0)));
    const T one = 1, zero = 0;
    const int m = int(w.m), n = int(w.n), k = int(w.k);
    const double seconds = cuda_reference::best_event_seconds(10, [&] {
        if constexpr (sizeof(T) == 8) {
            check(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c,
                              n),
                  "cublasDgemm");
        } else if (w.batch > 1) {
            check(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n,
                                            (long long)(w.k * w.n), a, k, (long long)(w.m * w.k),
                                            &zero, c, n, (long long)(w.m * w.n), int(w.batch)),
                  "cublasSgemmStridedBatched");
        } else {
            check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c,
                              n),
                  "cublasSgemm");
        }
    });
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return seconds;
}

}  // namespace

int main(int argc, char** argv) {
    cublasHandle_t handle;
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    const std::vector<std::string> wanted(argv + 1, argv + argc);
    for (const gemm_workloads::workload& w : gemm_workloads::gpu_workloads()) {
        bool chosen = wanted.empty();
        for (const std::string& name : wanted) chosen = chosen || name == w.name;
        if (!chosen) continue;
        const double seconds =
            w.double_precision ? time_gemm<double>(handle, w) : time_gemm<float>(handle, w);
        std::printf("cublas %s %.9f\n", w.name.c_str(), seconds);
        std::fflush(stdout);
    }
    cublasDestroy(handle);
    return 0;
}
