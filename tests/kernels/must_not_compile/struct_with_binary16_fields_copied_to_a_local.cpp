// SPDX-License-Identifier: Apache-2.0
// A struct with 16-bit fields copied into a local variable: its fields would then be host
// half and bfloat16 values, whose casts C++ would allow though OpenCL C reads bits. Kernels
// read such structs' fields through the pointer.
// clang-format off
// expected g++: kernels read its 16-bit fields as s[i].field
// expected clang++: kernels read its 16-bit fields as s[i].field
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"
#include "sixteen_bit_kernel.hpp"

KILN_SIXTEEN_BIT_KERNEL(KILN_MISTAKE(const weighted w = s[i]; f[i] = w.offset, f[i] = s[i].offset));
