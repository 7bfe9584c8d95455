// SPDX-License-Identifier: Apache-2.0
// A half element copied to another: OpenCL C without cl_khr_fp16 neither loads nor stores
// half values. vload_half and vstore_half_rte copy it.
// clang-format off
// expected g++: half elements are written with vstore_half_rte(value, i, p)
// expected clang++: half elements are written with vstore_half_rte(value, i, p)
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
                KILN_MISTAKE(h_out[i] = h[i], vstore_half_rte(vload_half(i, h), i, h_out));
            });
