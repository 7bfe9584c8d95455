// SPDX-License-Identifier: Apache-2.0
// The kernel of the FP8 cases: pointers to float8_e4m3 and float8_e5m2 and one statement, the
// case's, for an index i below n - 1.
#pragma once
// The case includes <kiln/kernel.hpp> first, which must_not_compile.sh takes precompiled: a
// second #include of it here would look for the header beside the precompiled one.

#define KILN_FLOAT8_KERNEL(...)                                                                  \
    KILN_KERNEL(                                                                                 \
        float8,                                                                                  \
        (kiln::global_ptr<const kiln::float8_e4m3> a, kiln::global_ptr<kiln::float8_e5m2> e_out, \
         kiln::global_ptr<float> f, kiln::uint n),                                               \
        {                                                                                        \
            const kiln::uint i = get_global_id(0);                                               \
            if (i + 1 >= n) return;                                                              \
            __VA_ARGS__;                                                                         \
        })
