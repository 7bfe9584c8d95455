// SPDX-License-Identifier: Apache-2.0
// A float for a float4 parameter: kiln would have to choose between (2, 0, 0, 0) and
// (2, 2, 2, 2), so the launch refuses it; kiln::float4{2.0f} says which.
// clang-format off
// expected g++: no match for call to '(const kiln::cpp_kernel<{anonymous}::shift_kiln_kernel>) (const kiln::queue&, kiln::range, kiln::vector<kiln::vec<float, 4> >&, float, kiln::uint)'
// expected clang++: no matching function for call to object of type 'const ::kiln::cpp_kernel<shift_kiln_kernel>'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(shift, (kiln::global_ptr<kiln::float4> v, kiln::float4 by, kiln::uint n), {
    const kiln::uint i = get_global_id(0);
    if (i < n) v[i] = v[i] + by;
});

kiln::event launch(const kiln::queue& q, kiln::vector<kiln::float4>& v) {
    return shift(q, kiln::range{v.size()}, v, KILN_MISTAKE(2.0f, kiln::float4{2.0f}),
                 kiln::uint(v.size()));
}
