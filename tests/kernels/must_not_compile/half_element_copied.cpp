// SPDX-License-Identifier: Apache-2.0
// A half element copied to another: OpenCL C without cl_khr_fp16 neither loads nor stores
// half values. vload_half and vstore_half_rte copy it.
// clang-format off
// expected g++: half elements are written with vstore_half_rte(value, i, p)
// expected clang++: half elements are written with vstore_half_rte(value, i, p)
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(h_out[i] = h[i], vstore_half_rte(vload_half(i, h), i, h_out)));
