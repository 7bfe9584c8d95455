// SPDX-License-Identifier: Apache-2.0
// An FP8 value made from a float by its constructor: OpenCL C has no FP8 types (CUDA:
// "identifier float8_e5m2 is undefined"). kiln_float_to_e5m2 rounds a float to one.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: make them with kiln_float_to_half, kiln_float_to_bf16, kiln_float_to_e4m3 or kiln_float_to_e5m2
// expected clang++: 16-bit and FP8 values are bits in kernels: make them with kiln_float_to_half, kiln_float_to_bf16, kiln_float_to_e4m3 or kiln_float_to_e5m2
// clang-format on
#include <kiln/kernel.hpp>

#include "float8_kernel.hpp"
#include "mistake.hpp"

KILN_FLOAT8_KERNEL(KILN_MISTAKE(e_out[i] = kiln::float8_e5m2(f[i] * 3.0f),
                                e_out[i] = kiln_float_to_e5m2(f[i] * 3.0f)));
