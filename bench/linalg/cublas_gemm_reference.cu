// SPDX-License-Identifier: Apache-2.0
// cuBLAS on bench/linalg/gemm_bench's products (gemm_workloads.hpp): cublasSgemm, cublasDgemm
// and cublasSgemmStridedBatched, row-major C = A B (cuBLAS's column-major C^T = B^T A^T), TF32
// off (CUBLAS_DEFAULT_MATH keeps float in float); cublasGemmEx for bf16 and fp16 inputs with
// CUBLAS_COMPUTE_32F and a float C. Prints `cublas <work> <seconds>` lines that
// gemm_bench reads (best of 10 runs, CUDA events, after one untimed run).
//
//     gemm_cublas_reference [work...]     (all of gemm_workloads::gpu_workloads() by default)
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

/// Inputs of `Input` (cudaDataType `type`: 16-bit, or float under `compute`), float accumulation
/// and C.
template <class Input>
double time_gemm_ex(cublasHandle_t handle, const gemm_workloads::workload& w, cudaDataType type,
                    cublasComputeType_t compute = CUBLAS_COMPUTE_32F) {
    Input* a = cuda_reference::device_copy(gemm_workloads::values<Input>(w.m * w.k, 1));
    Input* b = cuda_reference::device_copy(gemm_workloads::values<Input>(w.k * w.n, 2));
    float* c = cuda_reference::device_copy(std::vector<float>(w.m * w.n, 0.0f));
    const float one = 1, zero = 0;
    const int m = int(w.m), n = int(w.n), k = int(w.k);
    const double seconds = cuda_reference::best_event_seconds(10, [&] {
        check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, type, n, a, type, k,
                           &zero, c, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
    });
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return seconds;
}

double time_work(cublasHandle_t handle, const gemm_workloads::workload& w) {
    switch (w.inputs) {
        case gemm_workloads::inputs::bf16:
            return time_gemm_ex<__nv_bfloat16>(handle, w, CUDA_R_16BF);
        case gemm_workloads::inputs::f16:
            return time_gemm_ex<__half>(handle, w, CUDA_R_16F);
        case gemm_workloads::inputs::tf32:
            return time_gemm_ex<float>(handle, w, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
        case gemm_workloads::inputs::as_output:
            break;
    }
    return w.double_precision ? time_gemm<double>(handle, w) : time_gemm<float>(handle, w);
}

}  // namespace

int main(int argc, char** argv) {
    cublasHandle_t handle;
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    const std::vector<std::string> wanted(argv + 1, argv + argc);
    std::vector<gemm_workloads::workload> works = gemm_workloads::gpu_workloads();
    for (const gemm_workloads::workload& w : gemm_workloads::binary16_workloads())
        works.push_back(w);
    for (const gemm_workloads::workload& w : works) {
        bool chosen = wanted.empty();
        for (const std::string& name : wanted) chosen = chosen || name == w.name;
        if (!chosen) continue;
        const double seconds = time_work(handle, w);
        std::printf("cublas %s %.9f\n", w.name.c_str(), seconds);
        std::fflush(stdout);
    }
    cublasDestroy(handle);
    return 0;
}
