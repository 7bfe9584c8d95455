// SPDX-License-Identifier: Apache-2.0
// Two bfloat16 elements compared: OpenCL C would compare their bits (1 < -1, -0 != +0,
// NaN == NaN). Their values compare through kiln_bf16_to_float.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = b[i] < b[i + 1], f[i] = kiln_bf16_to_float(b[i]) <
                                                                    kiln_bf16_to_float(b[i + 1])));
