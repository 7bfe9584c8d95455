// SPDX-License-Identifier: Apache-2.0
// A comparison of vectors, a vector of masks, as a condition: any() or all() makes it one.
// clang-format off
// expected g++: from 'kiln::vec<int, 4>' to 'bool'
// expected clang++: (aka 'vec<int, 4>') is not contextually convertible to 'bool'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(clamp_below, (kiln::global_ptr<kiln::float4> v, kiln::float4 limit), {
    const kiln::uint i = get_global_id(0);
    if (KILN_MISTAKE(v[i] > limit, any(v[i] > limit))) v[i] = limit;
});
