// SPDX-License-Identifier: Apache-2.0
// The kernel of the 16-bit cases: pointers to half, bfloat16 and a struct with fields of both,
// and one statement, the case's, for an index i below n - 1.
#pragma once
// The case includes <kiln/kernel.hpp> first, which must_not_compile.sh takes precompiled: a
// second #include of it here would look for the header beside the precompiled one.

KILN_STRUCT(weighted, (kiln::half, weight), (kiln::bfloat16, scale), (float, offset));

#define KILN_SIXTEEN_BIT_KERNEL(...)                                                               \
    KILN_KERNEL(sixteen_bit,                                                                       \
                (kiln::global_ptr<const kiln::half> h, kiln::global_ptr<kiln::half> h_out,         \
                 kiln::global_ptr<const kiln::bfloat16> b, kiln::global_ptr<kiln::bfloat16> b_out, \
                 kiln::global_ptr<const weighted> s, kiln::global_ptr<float> f,                    \
                 kiln::global_ptr<kiln::ushort> u, kiln::uint n),                                  \
                {                                                                                  \
                    const kiln::uint i = get_global_id(0);                                         \
                    if (i + 1 >= n) return;                                                        \
                    __VA_ARGS__;                                                                   \
                })
