// cuSPARSE on bench/algo/spmv_bench's matrices: cusparseSpMV, CSR, float values, int32 indices,
// y = A x. Prints `cusparse <matrix> <seconds>` lines that spmv_bench reads (best of 20 runs,
// CUDA events; the buffer and analysis are prepared before timing, as a solver would).
//
//     spmv_cusparse_reference poisson_side power_law_rows
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spmv_matrices.hpp"

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "spmv_cusparse_reference: %s failed: %s\n", call,
                     cudaGetErrorString(status));
        std::exit(2);
    }
}
void check(cusparseStatus_t status, const char* call) {
    if (status != CUSPARSE_STATUS_SUCCESS) {
        std::fprintf(stderr, "spmv_cusparse_reference: %s failed: %s\n", call,
                     cusparseGetErrorString(status));
        std::exit(2);
    }
}

template <class T>
T* device_copy(const std::vector<T>& host) {
    T* p = nullptr;
    check(cudaMalloc(&p, std::max<std::size_t>(1, host.size()) * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy");
    return p;
}

double time_spmv(const spmv_matrices::csr& m) {
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
    const auto run = [&] {
        check(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx, &zero, vy,
                           CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer),
              "cusparseSpMV");
    };
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    run();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    double best = 1e30;
    for (int r = 0; r < 20; ++r) {
        check(cudaEventRecord(start), "cudaEventRecord");
        run();
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        best = std::min(best, ms * 1e-3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cusparseDestroySpMat(a);
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    cusparseDestroy(handle);
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
    std::printf("cusparse power_law %.9f\n", time_spmv(spmv_matrices::power_law(rows, 100000)));
    return 0;
}
