// SPDX-License-Identifier: Apache-2.0
// cuBLAS on bench/linalg/gemm_bench's products (gemm_workloads.hpp): cublasSgemm, cublasDgemm
// and cublasSgemmStridedBatched, row-major C = A B (cuBLAS's column-major C^T = B^T A^T), TF32
// off (CUBLAS_DEFAULT_MATH keeps float in float); cublasGemmEx for bf16 and fp16 inputs with
// CUBLAS_COMPUTE_32F and a float C; cublasLtMatmul for bf16 in and out, plain and with
// CUBLASLT_EPILOGUE_RELU_BIAS, and for E4M3 inputs with a bf16 output (compute capability 8.9
// and later; no line elsewhere). Prints `cublas <work> <seconds>` lines that
// gemm_bench reads (best of 10 runs, CUDA events, after one untimed run).
//
//     gemm_cublas_reference [work...]     (all of gemm_workloads::gpu_workloads() by default)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
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

void check_lt(cublasStatus_t status, const char* call) {
    check(status, call);
}

/// Inputs of `Input` (cudaDataType `input`: bf16, or E4M3) and a bf16 output through
/// cublasLtMatmul, float accumulation, with `epilogue` (CUBLASLT_EPILOGUE_RELU_BIAS takes a bf16
/// bias per row of cuBLAS's column-major D, which is per column of the row-major C), on the
/// algorithm its heuristic ranks first. FP8 products must be "TN": B is given as the row-major
/// n x k matrix that gemm_bench reads transposed, cuBLAS's first operand with CUBLAS_OP_T.
template <class Input>
double time_lt_bf16_out(const gemm_workloads::workload& w, cublasLtEpilogue_t epilogue,
                        cudaDataType input = CUDA_R_16BF) {
    cublasLtHandle_t lt;
    check_lt(cublasLtCreate(&lt), "cublasLtCreate");
    const bool tn = input != CUDA_R_16BF;
    auto* a = cuda_reference::device_copy(gemm_workloads::values<Input>(w.m * w.k, 1));
    auto* b = cuda_reference::device_copy(gemm_workloads::values<Input>(w.k * w.n, 2));
    auto* c =
        cuda_reference::device_copy(std::vector<__nv_bfloat16>(w.m * w.n, __float2bfloat16(0.0f)));
    auto* bias = cuda_reference::device_copy(gemm_workloads::values<__nv_bfloat16>(w.n, 3));
    const std::size_t workspace_bytes = std::size_t(32) << 20;
    void* workspace = nullptr;
    cudaMalloc(&workspace, workspace_bytes);
    cublasLtMatmulDesc_t op;
    check_lt(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
    check_lt(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                            sizeof epilogue),
             "epilogue");
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
        check_lt(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof bias),
                 "bias");
    if (tn) {
        const cublasOperation_t transposed = CUBLAS_OP_T;
        check_lt(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transposed,
                                                sizeof transposed),
                 "transa");
    }
    // Row-major C = A B as column-major C^T (n x m) = B^T (n x k) A^T (k x m); for TN, B^T as the
    // transpose of the column-major k x n matrix that row-major n x k B^T is.
    cublasLtMatrixLayout_t first, second, out;
    if (tn)
        check_lt(cublasLtMatrixLayoutCreate(&first, input, w.k, w.n, w.k), "layout B");
    else
        check_lt(cublasLtMatrixLayoutCreate(&first, input, w.n, w.k, w.n), "layout B");
    check_lt(cublasLtMatrixLayoutCreate(&second, input, w.k, w.m, w.k), "layout A");
    check_lt(cublasLtMatrixLayoutCreate(&out, CUDA_R_16BF, w.n, w.m, w.n), "layout C");
    cublasLtMatmulPreference_t preference;
    check_lt(cublasLtMatmulPreferenceCreate(&preference), "preference");
    check_lt(
        cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof workspace_bytes),
        "workspace");
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    check_lt(cublasLtMatmulAlgoGetHeuristic(lt, op, first, second, out, out, preference, 1,
                                            &heuristic, &found),
             "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) cuda_reference::fail("cublasLtMatmulAlgoGetHeuristic", "no algorithm");
    const float one = 1, zero = 0;
    const double seconds = cuda_reference::best_event_seconds(10, [&] {
        check_lt(cublasLtMatmul(lt, op, &one, b, first, a, second, &zero, c, out, c, out,
                                &heuristic.algo, workspace, workspace_bytes, 0),
                 "cublasLtMatmul");
    });
    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatrixLayoutDestroy(first);
    cublasLtMatrixLayoutDestroy(second);
    cublasLtMatrixLayoutDestroy(out);
    cublasLtMatmulDescDestroy(op);
    cudaFree(workspace);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(bias);
    cublasLtDestroy(lt);
    return seconds;
}

/// Whether the GPU has FP8 tensor cores, which cuBLASLt's FP8 products need (8.9 and later).
bool has_float8_tensor_cores() {
    int device = 0, major = 0, minor = 0;
    cuda_reference::check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_reference::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                          "major");
    cuda_reference::check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                          "minor");
    return major * 10 + minor >= 89;
}

/// Seconds per call of `w`; 0 where cuBLAS has no such product on this GPU.
double time_work(cublasHandle_t handle, const gemm_workloads::workload& w) {
    switch (w.inputs) {
        case gemm_workloads::inputs::bf16_out:
            return time_lt_bf16_out<__nv_bfloat16>(w, CUBLASLT_EPILOGUE_DEFAULT);
        case gemm_workloads::inputs::bf16_bias_relu:
            return time_lt_bf16_out<__nv_bfloat16>(w, CUBLASLT_EPILOGUE_RELU_BIAS);
        case gemm_workloads::inputs::e4m3_bf16_out:
            return has_float8_tensor_cores() ? time_lt_bf16_out<__nv_fp8_e4m3>(
                                                   w, CUBLASLT_EPILOGUE_DEFAULT, CUDA_R_8F_E4M3)
                                             : 0;
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
    for (const gemm_workloads::workload& w : gemm_workloads::epilogue_workloads())
        works.push_back(w);
    for (const gemm_workloads::workload& w : gemm_workloads::float8_workloads()) works.push_back(w);
    for (const gemm_workloads::workload& w : works) {
        bool chosen = wanted.empty();
        for (const std::string& name : wanted) chosen = chosen || name == w.name;
        if (!chosen) continue;
        const double seconds = time_work(handle, w);
        if (seconds == 0) continue;
        std::printf("cublas %s %.9f\n", w.name.c_str(), seconds);
        std::fflush(stdout);
    }
    cublasDestroy(handle);
    return 0;
}
