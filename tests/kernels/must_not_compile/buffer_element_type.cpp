// SPDX-License-Identifier: Apache-2.0
// A buffer of float for a pointer to int.
// clang-format off
// expected g++: no match for call to '(const kiln::cpp_kernel<{anonymous}::count_kiln_kernel>) (const kiln::queue&, kiln::range, kiln::buffer<float>&, kiln::uint)'
// expected clang++: no matching function for call to object of type 'const ::kiln::cpp_kernel<count_kiln_kernel>'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(count, (kiln::global_ptr<int> counts, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) counts[i] += 1;
});

kiln::event launch(const kiln::queue& q, kiln::buffer<float>& floats, kiln::buffer<int>& ints) {
    return KILN_MISTAKE(count(q, kiln::range{4}, floats, kiln::uint(4)),
                        count(q, kiln::range{4}, ints, kiln::uint(4)));
}
