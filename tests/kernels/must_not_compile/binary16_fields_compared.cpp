// SPDX-License-Identifier: Apache-2.0
// A 16-bit struct field compared with a number: OpenCL C would compare its bits.
// clang-format off
// expected g++: 16-bit values are bits in kernels: compare kiln_half_to_float or kiln_bf16_to_float values
// expected clang++: 16-bit values are bits in kernels: compare kiln_half_to_float or kiln_bf16_to_float values
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = s[i].scale == 1.0f,
                                     f[i] = kiln_bf16_to_float(s[i].scale) == 1.0f));
