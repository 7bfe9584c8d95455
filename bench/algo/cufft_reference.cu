// SPDX-License-Identifier: Apache-2.0
// cuFFT on bench/algo's FFT workloads (complex float, out of place): prints `cufft <name>
// <seconds>` lines that fft_bench reads (best of 10 runs, CUDA events, plans made beforehand).
//
//     fft_cufft_reference
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_reference.cuh"
#include "fft_workloads.hpp"

namespace {

using cuda_reference::best_event_seconds;
using cuda_reference::check;

void check(cufftResult status, const char* call) {
    if (status != CUFFT_SUCCESS)
        cuda_reference::fail(call, ("cufftResult " + std::to_string(int(status))).c_str());
}

}  // namespace

int main() {
    for (const auto& w : fft_workloads::all) {
        const std::size_t n = w.elements();
        std::vector<cufftComplex> host(n);
        for (std::size_t i = 0; i < n; ++i)
            host[i] = {fft_workloads::value(i, 0), fft_workloads::value(i, 1)};
        cufftComplex* in = cuda_reference::device_copy(host);
        cufftComplex* out = nullptr;
        check(cudaMalloc(&out, n * sizeof(cufftComplex)), "cudaMalloc");
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
