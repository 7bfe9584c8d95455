// SPDX-License-Identifier: Apache-2.0
// The products bench/linalg/gemm_bench times, shared with its cuBLAS reference so that both run
// the same shapes under the same names: issue 41's goals.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace gemm_workloads {

/// The inputs' type: the output's, or 16-bit with float accumulation and a float output, or float
/// with TF32 allowed (cuBLAS: CUBLAS_COMPUTE_32F_FAST_TF32); or bf16 inputs with a bf16 output,
/// plain or through an epilogue adding a bias per column (float in kiln, bf16 in cuBLASLt, whose
/// bias is of the output's type) and taking the ReLU (cuBLASLt: CUBLASLT_EPILOGUE_RELU_BIAS); or
/// E4M3 inputs with a bf16 output, B given transposed (n x k, k inner, as cuBLASLt's FP8 products
/// require: "TN" in its column-major terms).
enum class inputs { as_output, bf16, f16, tf32, bf16_out, bf16_bias_relu, e4m3_bf16_out };

struct workload {
    std::string name;
    std::size_t m, n, k, batch;
    bool double_precision;
    gemm_workloads::inputs inputs = inputs::as_output;
    double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
};

/// The GPU rows: square SGEMM and DGEMM, odd shapes, small k, many small products.
inline std::vector<workload> gpu_workloads() {
    return {{"sgemm_4096", 4096, 4096, 4096, 1, false},
            {"sgemm_8192", 8192, 8192, 8192, 1, false},
            {"dgemm_4096", 4096, 4096, 4096, 1, true},
            {"sgemm_4095", 4095, 4095, 4095, 1, false},
            {"sgemm_1000x3000x77", 1000, 3000, 77, 1, false},
            {"sgemm_8192x8192x64", 8192, 8192, 64, 1, false},
            {"sgemm_batched_4096x64", 64, 64, 64, 4096, false}};
}

/// The GPU rows of 16-bit inputs, float accumulation and output (tensor cores where there are),
/// and of floats with TF32 allowed.
inline std::vector<workload> binary16_workloads() {
    return {{"bf16_4096", 4096, 4096, 4096, 1, false, inputs::bf16},
            {"bf16_8192", 8192, 8192, 8192, 1, false, inputs::bf16},
            {"f16_4096", 4096, 4096, 4096, 1, false, inputs::f16},
            {"f16_8192", 8192, 8192, 8192, 1, false, inputs::f16},
            {"tf32_4096", 4096, 4096, 4096, 1, false, inputs::tf32},
            {"tf32_8192", 8192, 8192, 8192, 1, false, inputs::tf32}};
}

/// The GPU rows of epilogues: bf16 in and out, plain and with bias and ReLU (issue 69's goal: the
/// second within 1.05x of the first, and no slower than cuBLASLt's).
inline std::vector<workload> epilogue_workloads() {
    return {{"bf16_out_4096", 4096, 4096, 4096, 1, false, inputs::bf16_out},
            {"bf16_bias_relu_4096", 4096, 4096, 4096, 1, false, inputs::bf16_bias_relu}};
}

/// The GPU rows of FP8 inputs: E4M3 A and B (B transposed), float accumulation, a bf16 C.
inline std::vector<workload> float8_workloads() {
    return {{"e4m3_4096", 4096, 4096, 4096, 1, false, inputs::e4m3_bf16_out},
            {"e4m3_8192", 8192, 8192, 8192, 1, false, inputs::e4m3_bf16_out}};
}

/// The CPU row.
inline std::vector<workload> cpu_workloads() {
    return {{"sgemm_2048", 2048, 2048, 2048, 1, false}};
}

/// Values in [-1, 1], the same for every program that asks with the same seed.
template <class T>
std::vector<T> values(std::size_t count, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<T> out(count);
    for (T& x : out) x = T(uniform(generator));
    return out;
}

}  // namespace gemm_workloads
