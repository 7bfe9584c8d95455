// SPDX-License-Identifier: Apache-2.0
// A buffer the kernel may only read (access::in) bound to a pointer it writes through.
// clang-format off
// expected g++: no match for call to '(const kiln::cpp_kernel<{anonymous}::zero_kiln_kernel>) (const kiln::queue&, kiln::range, kiln::buffer<float, kiln::access::in>&, kiln::uint)'
// expected clang++: no matching function for call to object of type 'const ::kiln::cpp_kernel<zero_kiln_kernel>'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(zero, (kiln::global_ptr<float> y, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) y[i] = 0.0f;
});

kiln::event launch(const kiln::queue& q, kiln::buffer<float, kiln::access::in>& read_only,
                   kiln::buffer<float>& writable) {
    return KILN_MISTAKE(zero(q, kiln::range{4}, read_only, kiln::uint(4)),
                        zero(q, kiln::range{4}, writable, kiln::uint(4)));
}
