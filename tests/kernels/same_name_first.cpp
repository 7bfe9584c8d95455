// SPDX-License-Identifier: Apache-2.0
// The first of two kernels named `stamp` and two functions named `marked` in two translation
// units (same_name.hpp).
#include "same_name.hpp"

// At namespace scope, not in an unnamed namespace of the test's own: the kernel's and the
// function's identities must be local to this file by themselves.
KILN_KERNEL(stamp, (kiln::global_ptr<int> out), { out[get_global_id(0)] = 1; });

KILN_FUNCTION(int, marked, (int x), return x + 10;);

KILN_KERNEL_USING(mark_all, (kiln::global_ptr<int> out, kiln::global_ptr<const int> in), (marked),
                  { out[get_global_id(0)] = marked(in[get_global_id(0)]); });

kiln::event kiln::test::stamp_from_first_file(const kiln::queue& q, kiln::vector<int>& out) {
    return stamp(q, kiln::range{out.size()}, out);
}

void kiln::test::mark_in_first_file(kiln::vector<int>& out, const kiln::vector<int>& in) {
    out = marked(in);
}

kiln::event kiln::test::mark_by_kernel_in_first_file(const kiln::queue& q, kiln::vector<int>& out,
                                                     const kiln::vector<int>& in) {
    return mark_all(q, kiln::range{out.size()}, out, in);
}
