// SPDX-License-Identifier: Apache-2.0
// C's printf, a host function, in a kernel body.
// clang-format off
// expected g++: use of deleted function 'static void kiln::detail::kernel_scope::printf(A&& ...)
// expected clang++: call to deleted function 'printf'
// clang-format on
#include <cstdio>
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(show, (kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) KILN_MISTAKE(printf("%f\n", y[i]), y[i] = 0.0f);
});
