// SPDX-License-Identifier: Apache-2.0
// A half field of a KILN_STRUCT cast to float: the field is its ushort bits in OpenCL C, so
// the cast would read the bits as a number. kiln_half_to_float reads the value.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = (float)s[i].weight,
                                     f[i] = kiln_half_to_float(s[i].weight)));
