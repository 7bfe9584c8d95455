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

KILN_STRUCT(weighted, (kiln::half, weight), (kiln::bfloat16, scale), (float, offset));

KILN_KERNEL(sixteen_bit,
            (kiln::global_ptr<const kiln::half> h, kiln::global_ptr<kiln::half> h_out,
             kiln::global_ptr<const kiln::bfloat16> b, kiln::global_ptr<kiln::bfloat16> b_out,
             kiln::global_ptr<const weighted> s, kiln::global_ptr<float> f,
             kiln::global_ptr<kiln::ushort> u, kiln::uint n),
            {
                const kiln::uint i = get_global_id(0);
                if (i + 1 >= n) return;
                KILN_MISTAKE(const weighted w = s[i]; f[i] = w.offset, f[i] = s[i].offset);
            });
