// SPDX-License-Identifier: Apache-2.0
// A pointer where a number belongs.
// clang-format off
// expected g++: cannot convert 'kiln::global_ptr<const float>' {aka 'kiln::detail::address_space_pointer<const float, kiln::detail::address_space::global>'} to 'const float' in initialization
// expected clang++: no viable conversion from 'kiln::global_ptr<const float>' (aka 'address_space_pointer<const float, detail::address_space::global>') to 'const float'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(copy, (kiln::global_ptr<const float> x, kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i >= n) return;
    const float value = KILN_MISTAKE(x, x[i]);
    y[i] = value;
});
