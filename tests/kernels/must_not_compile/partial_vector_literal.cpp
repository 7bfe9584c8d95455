// SPDX-License-Identifier: Apache-2.0
// A vector literal with components left out: a C++ aggregate would zero them and OpenCL C
// refuses them, so kiln's vectors refuse them on both sides.
// clang-format off
// expected g++: no matching function for call to 'kiln::vec<float, 4>::vec(<brace-enclosed initializer list>)'
// expected clang++: no matching constructor for initialization of 'kiln::float4'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(fill, (kiln::global_ptr<kiln::float4> v, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n)
        v[i] = KILN_MISTAKE((kiln::float4{1.0f, 2.0f}), (kiln::float4{1.0f, 2.0f, 0.0f, 0.0f}));
});
