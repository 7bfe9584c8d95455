// SPDX-License-Identifier: Apache-2.0
// cuSPARSE on bench/algo/spmv_bench's matrices: cusparseSpMV, CSR, float values, int32 indices,
// y = A x; and one conjugate-gradient iteration on the Poisson matrix with cuSPARSE + cuBLAS
// (SpMV, two dots, three axpys and a scal). Prints `cusparse <work> <seconds>` lines that
// spmv_bench reads (best of 20 runs, CUDA events; the buffer and analysis are prepared before
// timing, as a solver would).
//
//     spmv_cusparse_reference poisson_side power_law_rows
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda_reference.cuh"
#include "spmv_matrices.hpp"

namespace {

using cuda_reference::check;
using cuda_reference::device_copy;

void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        cuda_reference::fail(call, ("cublasStatus_t " + std::to_string(int(status))).c_str());
}
void check(cusparseStatus_t status, const char* call) {
    if (status != CUSPARSE_STATUS_SUCCESS)
        cuda_reference::fail(call, cusparseGetErrorString(status));
}

/// Seconds of y = A x, or with `cg` of one CG iteration (p the direction, x = p at the start).
double time_spmv(const spmv_matrices::csr& m, bool cg = false) {
    cusparseHandle_t handle;
    check(cusparseCreate(&handle), "cusparseCreate");
    std::int32_t* row_pointers = device_copy(m.row_pointers);
    std::int32_t* columns = device_copy(m.column_indices);
    float* values = device_copy(m.values);
    float* x = device_copy(spmv_matrices::operand(m.columns));
    float* y = nullptr;
    check(cudaMalloc(&y, m.rows * sizeof(float)), "cudaMalloc");
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t vx, vy;
    check(cusparseCreateCsr(&a, static_cast<int64_t>(m.rows), static_cast<int64_t>(m.columns),
                            static_cast<int64_t>(m.values.size()), row_pointers, columns, values,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                            CUDA_R_32F),
          "cusparseCreateCsr");
    check(cusparseCreateDnVec(&vx, static_cast<int64_t>(m.columns), x, CUDA_R_32F),
          "cusparseCreateDnVec");
    check(cusparseCreateDnVec(&vy, static_cast<int64_t>(m.rows), y, CUDA_R_32F),
          "cusparseCreateDnVec");
    const float one = 1, zero = 0;
    std::size_t buffer_bytes = 0;
    check(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy,
                                  CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &buffer_bytes),
          "cusparseSpMV_bufferSize");
    void* buffer = nullptr;
    check(cudaMalloc(&buffer, std::max<std::size_t>(1, buffer_bytes)), "cudaMalloc");
    const auto spmv = [&] {
        check(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy,
                           CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer),
              "cusparseSpMV");
    };
    // CG: x is p, y is A p; u and r live beside them. The dots return to the host, as kiln's.
    cublasHandle_t blas;
    check(cublasCreate(&blas), "cublasCreate");
    const int n = static_cast<int>(m.rows);
    float* u = device_copy(std::vector<float>(m.rows, 0.0f));
    float* r = device_copy(spmv_matrices::operand(m.rows));
    float rr = 0;
    check(cublasSdot(blas, n, r, 1, r, 1, &rr), "cublasSdot");
    const auto cg_iteration = [&] {
        spmv();
        float pap = 0, rr_next = 0;
        check(cublasSdot(blas, n, x, 1, y, 1, &pap), "cublasSdot");
        const float alpha = rr / pap, minus_alpha = -alpha;
        check(cublasSaxpy(blas, n, &alpha, x, 1, u, 1), "cublasSaxpy");
        check(cublasSaxpy(blas, n, &minus_alpha, y, 1, r, 1), "cublasSaxpy");
        check(cublasSdot(blas, n, r, 1, r, 1, &rr_next), "cublasSdot");
        const float beta = rr_next / rr;
        check(cublasSscal(blas, n, &beta, x, 1), "cublasSscal");
        check(cublasSaxpy(blas, n, &one, r, 1, x, 1), "cublasSaxpy");
        rr = rr_next;
    };
    const auto run = [&] {
        if (cg)
            cg_iteration();
        else
            spmv();
    };
    const double best = cuda_reference::best_event_seconds(20, run);
    cusparseDestroySpMat(a);
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    cusparseDestroy(handle);
    cublasDestroy(blas);
    cudaFree(u);
    cudaFree(r);
    for (void* p :
         {static_cast<void*>(row_pointers), static_cast<void*>(columns), static_cast<void*>(values),
          static_cast<void*>(x), static_cast<void*>(y), buffer})
        cudaFree(p);
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: spmv_cusparse_reference poisson_side power_law_rows\n");
        return 1;
    }
    const std::size_t side = std::strtoull(argv[1], nullptr, 10);
    const std::size_t rows = std::strtoull(argv[2], nullptr, 10);
    std::printf("cusparse poisson %.9f\n", time_spmv(spmv_matrices::poisson_2d(side)));
    std::printf("cusparse cg_poisson %.9f\n", time_spmv(spmv_matrices::poisson_2d(side), true));
    std::printf("cusparse power_law %.9f\n", time_spmv(spmv_matrices::power_law(rows, 100000)));
    return 0;
}
