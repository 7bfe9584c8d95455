// SPDX-License-Identifier: Apache-2.0
// The bits of a half element: OpenCL C without cl_khr_fp16 does not load half values, so
// unlike a bfloat16 element's or a 16-bit field's, its bits are not read this way.
// clang-format off
// expected g++: half elements are read with vload_half(i, p)
// expected clang++: half elements are read with vload_half(i, p)
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
                KILN_MISTAKE(u[i] = h[i].bits(), u[i] = b[i].bits());
            });
