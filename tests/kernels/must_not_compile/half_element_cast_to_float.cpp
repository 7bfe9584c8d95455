// SPDX-License-Identifier: Apache-2.0
// A half element cast to float: OpenCL C without cl_khr_fp16 does not load half values
// ("loading directly from pointer to type '__global half' requires cl_khr_fp16"). vload_half
// reads it as a float.
// clang-format off
// expected g++: half elements are read with vload_half(i, p)
// expected clang++: half elements are read with vload_half(i, p)
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(f[i] = float(h[i]), f[i] = vload_half(i, h)));
