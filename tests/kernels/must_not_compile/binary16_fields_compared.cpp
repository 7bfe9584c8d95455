// SPDX-License-Identifier: Apache-2.0
// A 16-bit struct field compared with a number: OpenCL C would compare its bits.
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
                KILN_MISTAKE(f[i] = s[i].scale == 1.0f,
                             f[i] = kiln_bf16_to_float(s[i].scale) == 1.0f);
            });
