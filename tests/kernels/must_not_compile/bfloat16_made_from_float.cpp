// SPDX-License-Identifier: Apache-2.0
// A bfloat16 made from a float by its constructor: OpenCL C has no bfloat16 type (CUDA:
// "identifier bfloat16 is undefined"). kiln_float_to_bf16 rounds a float to one.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: make them with kiln_float_to_half, kiln_float_to_bf16, kiln_float_to_e4m3 or kiln_float_to_e5m2
// expected clang++: 16-bit and FP8 values are bits in kernels: make them with kiln_float_to_half, kiln_float_to_bf16, kiln_float_to_e4m3 or kiln_float_to_e5m2
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(b_out[i] = kiln::bfloat16(vload_half(i, h) * 3.0f),
                                     b_out[i] = kiln_float_to_bf16(vload_half(i, h) * 3.0f)));
