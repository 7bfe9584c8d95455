// SPDX-License-Identifier: Apache-2.0
// A 16-bit struct field compared with a number: OpenCL C would compare its bits.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = s[i].scale == 1.0f,
                                     f[i] = kiln_bf16_to_float(s[i].scale) == 1.0f));
