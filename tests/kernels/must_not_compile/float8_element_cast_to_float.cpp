// SPDX-License-Identifier: Apache-2.0
// An FP8 element cast to float: OpenCL C converts the uchar bits' integer (0x38, 56, for 1.0f)
// where C++ would give the value. kiln_e4m3_to_float converts the value.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: convert with kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "float8_kernel.hpp"
#include "mistake.hpp"

KILN_FLOAT8_KERNEL(KILN_MISTAKE(f[i] = (float)a[i], f[i] = kiln_e4m3_to_float(a[i])));
