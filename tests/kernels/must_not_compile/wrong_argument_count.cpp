// SPDX-License-Identifier: Apache-2.0
// A built-in called with too few arguments.
// clang-format off
// expected g++: no matching function for call to '{anonymous}::limit_kiln_kernel::fmin(float&)'
// expected clang++: no matching function for call to 'fmin'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(limit, (kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) y[i] = KILN_MISTAKE(fmin(y[i]), fmin(y[i], 1.0f));
});
