// SPDX-License-Identifier: Apache-2.0
// FP8 elements compared: OpenCL C would compare the uchar bits, by which every negative value is
// greater than every positive one and -0 differs from +0. Their floats compare as values do.
// clang-format off
// expected g++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// expected clang++: 16-bit and FP8 values are bits in kernels: compare the floats of kiln_half_to_float, kiln_bf16_to_float, kiln_e4m3_to_float or kiln_e5m2_to_float
// clang-format on
#include <kiln/kernel.hpp>

#include "float8_kernel.hpp"
#include "mistake.hpp"

KILN_FLOAT8_KERNEL(KILN_MISTAKE(f[i] = a[i] < a[i + 1],
                                f[i] = kiln_e4m3_to_float(a[i]) < kiln_e4m3_to_float(a[i + 1])));
