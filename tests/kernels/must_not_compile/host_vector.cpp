// SPDX-License-Identifier: Apache-2.0
// The standard library in a kernel body.
// clang-format off
// expected g++: 'vector' is not a member of 'kiln::detail::kernel_scope::std' {aka 'kiln::detail::host_library_is_not_available_in_kernels'}
// expected clang++: no template named 'vector' in 'kiln::detail::host_library_is_not_available_in_kernels'
// clang-format on
#include <kiln/kernel.hpp>
#include <vector>

#include "mistake.hpp"

KILN_KERNEL(gather, (kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    KILN_MISTAKE(std::vector<float> scratch(4), float scratch[4]);
    scratch[0] = y[i];
    if (i < n) y[i] = scratch[0];
});
