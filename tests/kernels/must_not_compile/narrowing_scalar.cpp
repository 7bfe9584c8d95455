// SPDX-License-Identifier: Apache-2.0
// A double for a float parameter: a narrowing conversion, refused at the launch.
// clang-format off
// expected g++: no match for call to '(const kiln::cpp_kernel<{anonymous}::saxpy_kiln_kernel>) (const kiln::queue&, kiln::range, const double&,
// expected clang++: no matching function for call to object of type 'const ::kiln::cpp_kernel<saxpy_kiln_kernel>'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(saxpy,
            (float a, kiln::global_ptr<const float> x, kiln::global_ptr<float> y, kiln::uint n), {
                const kiln::uint i = get_global_id(0);
                if (i < n) y[i] = a * x[i] + y[i];
            });

kiln::event launch(const kiln::queue& q, const kiln::vector<float>& x, kiln::vector<float>& y) {
    const double a = 2.0;
    return saxpy(q, kiln::range{x.size()}, KILN_MISTAKE(a, float(a)), x, y, kiln::uint(x.size()));
}
