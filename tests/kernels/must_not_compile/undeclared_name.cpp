// SPDX-License-Identifier: Apache-2.0
// A name that neither C++ nor OpenCL C declares.
// clang-format off
// expected g++: 'undeclared_scale' was not declared in this scope
// expected clang++: use of undeclared identifier 'undeclared_scale'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(scale, (kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) y[i] = KILN_MISTAKE(undeclared_scale, 2.0f) * y[i];
});
