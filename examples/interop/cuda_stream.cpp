// SPDX-License-Identifier: Apache-2.0
// kiln inside a CUDA program: memory from cuMemAlloc and the program's own stream go to kiln for
// expressions and a sort, then cuBLAS multiplies kiln's results on the same stream, with no
// synchronisation between the two: the stream orders them on the device. Checked against the
// CPU. Exits with 77 (skipped) where there is no CUDA device.
#include <cublas_v2.h>
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/interop/cuda.hpp>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(CUresult result, const char* call) {
    if (result != CUDA_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed: " + std::to_string(result));
}
void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed: " + std::to_string(status));
}

}  // namespace

int main() {
    int devices = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
        std::printf("cuda_stream: no CUDA device: skipped\n");
        return 77;
    }
    try {
        // The program's CUDA objects, made without kiln, in the primary context (cuBLAS's too).
        CUdevice device = 0;
        check(cuDeviceGet(&device, 0), "cuDeviceGet");
        CUcontext context = nullptr;
        check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
        CUstream stream = nullptr;
        check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        const std::size_t n = 256, count = 1 << 20;
        CUdeviceptr a = 0, b = 0, c = 0, keys = 0;
        for (CUdeviceptr* p : {&a, &b, &c})
            check(cuMemAlloc(p, n * n * sizeof(float)), "cuMemAlloc");
        check(cuMemAlloc(&keys, count * sizeof(std::uint32_t)), "cuMemAlloc");
        cublasHandle_t blas = nullptr;
        check(cublasCreate(&blas), "cublasCreate");
        check(cublasSetStream(blas, stream), "cublasSetStream");

        kiln::device d = kiln::interop::cuda::wrap_device(device);
        {
            // [doc:cuda-interop]
            kiln::queue s = kiln::interop::cuda::wrap_stream(d, stream);
            auto A = kiln::interop::cuda::wrap_vector<float>(s, a, n * n);
            auto B = kiln::interop::cuda::wrap_vector<float>(s, b, n * n);
            auto k = kiln::interop::cuda::wrap_vector<std::uint32_t>(s, keys, count);
            auto i = kiln::element_index();
            A = kiln::cast<float>(i % 7) - 3;  // kiln fills A and B on `stream`...
            B = kiln::cast<float>(i % 5) * 0.5f;
            k = kiln::cast<std::uint32_t>((i * 2654435761u) % 1000003u);
            kiln::sort(k);
            // ...and cuBLAS reads them on the same stream, after kiln's work, without a wait:
            // C = A B, row-major, as column-major C^T = B^T A^T.
            const float one = 1.0f, zero = 0.0f;
            check(
                cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                            reinterpret_cast<const float*>(b), n, reinterpret_cast<const float*>(a),
                            n, &zero, reinterpret_cast<float*>(c), n),
                "cublasSgemm");
            // [/doc]
        }

        check(cuStreamSynchronize(stream), "cuStreamSynchronize");
        std::vector<float> host_c(n * n);
        std::vector<std::uint32_t> sorted(count);
        check(cuMemcpyDtoH(host_c.data(), c, host_c.size() * sizeof(float)), "cuMemcpyDtoH");
        check(cuMemcpyDtoH(sorted.data(), keys, sorted.size() * sizeof(std::uint32_t)),
              "cuMemcpyDtoH");
        int status = 0;
        for (std::size_t r = 0; r < n && status == 0; ++r)
            for (std::size_t col = 0; col < n; ++col) {
                double expected = 0;
                for (std::size_t j = 0; j < n; ++j)
                    expected += (static_cast<double>((r * n + j) % 7) - 3) *
                                (static_cast<double>((j * n + col) % 5) * 0.5);
                if (std::abs(host_c[r * n + col] - expected) > 1e-3 * (1 + std::abs(expected))) {
                    std::fprintf(stderr, "cuda_stream: C(%zu, %zu) is %g, not %g\n", r, col,
                                 host_c[r * n + col], expected);
                    status = 1;
                    break;
                }
            }
        std::vector<std::uint32_t> expected_keys(count);
        for (std::size_t j = 0; j < count; ++j)
            expected_keys[j] = static_cast<std::uint32_t>((j * 2654435761u) % 1000003u);
        std::sort(expected_keys.begin(), expected_keys.end());
        if (sorted != expected_keys) {
            std::fprintf(stderr, "cuda_stream: kiln's sort of the program's keys differs\n");
            status = 1;
        }
        cublasDestroy(blas);
        for (CUdeviceptr p : {a, b, c, keys}) cuMemFree(p);
        cuStreamDestroy(stream);
        cuDevicePrimaryCtxRelease(device);
        if (status == 0)
            std::printf("cuda_stream: kiln and cuBLAS on one stream of %s: OK\n", d.name().c_str());
        return status;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda_stream: %s\n", e.what());
        return 1;
    }
}
