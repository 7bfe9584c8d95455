// SPDX-License-Identifier: Apache-2.0
// The second of two kernels named `stamp` and two functions named `marked` in two translation
// units (same_name.hpp).
#include "same_name.hpp"

KILN_KERNEL(stamp, (kiln::global_ptr<int> out), { out[get_global_id(0)] = 2; });

KILN_FUNCTION(int, marked, (int x), return x + 20;);

KILN_KERNEL_USING(mark_all, (kiln::global_ptr<int> out, kiln::global_ptr<const int> in), (marked),
                  { out[get_global_id(0)] = marked(in[get_global_id(0)]); });

kiln::event kiln::test::stamp_from_second_file(const kiln::queue& q, kiln::vector<int>& out) {
    return stamp(q, kiln::range{out.size()}, out);
}

void kiln::test::mark_in_second_file(kiln::vector<int>& out, const kiln::vector<int>& in) {
    out = marked(in);
}

kiln::event kiln::test::mark_by_kernel_in_second_file(const kiln::queue& q, kiln::vector<int>& out,
                                                      const kiln::vector<int>& in) {
    return mark_all(q, kiln::range{out.size()}, out, in);
}
