// SPDX-License-Identifier: Apache-2.0
// The bits of a half element: OpenCL C without cl_khr_fp16 does not load half values, so
// unlike a bfloat16 element's or a 16-bit field's, its bits are not read this way.
// clang-format off
// expected g++: half elements are read with vload_half(i, p)
// expected clang++: half elements are read with vload_half(i, p)
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(u[i] = h[i].bits(), u[i] = b[i].bits()));
