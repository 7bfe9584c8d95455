// SPDX-License-Identifier: Apache-2.0
// A bfloat16 made from a float by its constructor: OpenCL C has no bfloat16 type (CUDA:
// "identifier bfloat16 is undefined"). kiln_float_to_bf16 rounds a float to one.
// clang-format off
// expected g++: 16-bit values are bits in kernels: make them with kiln_float_to_half or kiln_float_to_bf16
// expected clang++: 16-bit values are bits in kernels: make them with kiln_float_to_half or kiln_float_to_bf16
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
                KILN_MISTAKE(b_out[i] = kiln::bfloat16(vload_half(i, h) * 3.0f),
                             b_out[i] = kiln_float_to_bf16(vload_half(i, h) * 3.0f));
            });
