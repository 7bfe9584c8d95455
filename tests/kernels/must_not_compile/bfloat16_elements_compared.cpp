// SPDX-License-Identifier: Apache-2.0
// Two bfloat16 elements compared: OpenCL C would compare their bits (1 < -1, -0 != +0,
// NaN == NaN). Their values compare through kiln_bf16_to_float.
// clang-format off
// expected g++: 16-bit values are bits in kernels: compare kiln_half_to_float or kiln_bf16_to_float values
// expected clang++: 16-bit values are bits in kernels: compare kiln_half_to_float or kiln_bf16_to_float values
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
                KILN_MISTAKE(f[i] = b[i] < b[i + 1],
                             f[i] = kiln_bf16_to_float(b[i]) < kiln_bf16_to_float(b[i + 1]));
            });
