// SPDX-License-Identifier: Apache-2.0
// A bfloat16 element cast to float: in OpenCL C the element is its ushort bits, so the cast
// would give the bits as a number (1.0 as 16256). kiln_bf16_to_float reads the value.
// clang-format off
// expected g++: 16-bit values are bits in kernels: convert with kiln_half_to_float or kiln_bf16_to_float
// expected clang++: 16-bit values are bits in kernels: convert with kiln_half_to_float or kiln_bf16_to_float
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
                KILN_MISTAKE(f[i] = (float)b[i], f[i] = kiln_bf16_to_float(b[i]));
            });
