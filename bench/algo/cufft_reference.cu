// cuFFT on bench/algo's FFT workloads (complex float, out of place): prints `cufft <name>
// <seconds>` lines that fft_bench reads (best of 10 runs, CUDA events, plans made beforehand).
//
//     fft_cufft_reference
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fft_workloads.hpp"

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "fft_cufft_reference: %s failed: %s\n", call,
                     cudaGetErrorString(status));
        std::exit(2);
    }
}

void check(cufftResult status, const char* call) {
    if (status != CUFFT_SUCCESS) {
        std::fprintf(stderr, "fft_cufft_reference: %s failed: cufftResult %d\n", call, int(status));
        std::exit(2);
    }
}

template <class Work>
double best_event_seconds(int repeats, Work&& work) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    work();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        check(cudaEventRecord(start), "cudaEventRecord");
        work();
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        best = std::min(best, ms * 1e-3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best;
}

}  // namespace

int main() {
    for (const auto& w : fft_workloads::all) {
        const std::size_t n = w.elements();
        std::vector<cufftComplex> host(n);
        for (std::size_t i = 0; i < n; ++i)
            host[i] = {fft_workloads::value(i, 0), fft_workloads::value(i, 1)};
        cufftComplex *in = nullptr, *out = nullptr;
        check(cudaMalloc(&in, n * sizeof(cufftComplex)), "cudaMalloc");
        check(cudaMalloc(&out, n * sizeof(cufftComplex)), "cudaMalloc");
        check(cudaMemcpy(in, host.data(), n * sizeof(cufftComplex), cudaMemcpyHostToDevice),
              "cudaMemcpy");
        int sizes[3] = {int(w.sizes[0]), int(w.sizes[1]), int(w.sizes[2])};
        cufftHandle plan;
        check(cufftPlanMany(&plan, w.rank, sizes, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C,
                            int(w.batch)),
              "cufftPlanMany");
        const double s = best_event_seconds(
            10, [&] { check(cufftExecC2C(plan, in, out, CUFFT_FORWARD), "cufftExecC2C"); });
        std::printf("cufft %s %.9f\n", w.name, s);
        cufftDestroy(plan);
        cudaFree(in);
        cudaFree(out);
    }
    return 0;
}
