// SPDX-License-Identifier: Apache-2.0
// The FFT benchmark's workloads and data, the same in fft_bench and the cuFFT reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fft_workloads {

/// One transform shape: sizes (row-major, the last contiguous; 0 = unused) and a batch.
struct workload {
    const char* name;
    std::size_t sizes[3];
    int rank;
    std::size_t batch;
    std::size_t elements() const {
        std::size_t n = batch;
        for (int d = 0; d < rank; ++d) n *= sizes[d];
        return n;
    }
};

/// Issue 10's shapes: powers of two in 1-D, 2-D, batched and 3-D, mixed radix, and a prime.
inline constexpr workload all[] = {
    {"1d_2^24", {std::size_t{1} << 24, 0, 0}, 1, 1},
    {"2d_4096^2", {4096, 4096, 0}, 2, 1},
    {"batched_1024x16384", {16384, 0, 0}, 1, 1024},
    {"3d_256^3", {256, 256, 256}, 3, 1},
    {"1d_10^6", {1000000, 0, 0}, 1, 1},
    {"1d_1000003", {1000003, 0, 0}, 1, 1},
};

/// Element i's (real, imaginary) parts: hashed, in [-1, 1).
inline float value(std::size_t i, int part) {
    const auto h = static_cast<std::uint32_t>(i * 2 + part) * 2654435761u;
    return static_cast<float>(h >> 8) / float(1u << 23) - 1.0f;
}

}  // namespace fft_workloads
