// SPDX-License-Identifier: Apache-2.0
// A bfloat16 element cast to float: in OpenCL C the element is its ushort bits, so the cast
// would give the bits as a number (1.0 as 16256). kiln_bf16_to_float reads the value.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = (float)b[i], f[i] = kiln_bf16_to_float(b[i])));
