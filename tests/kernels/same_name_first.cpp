// The first of two kernels named `stamp` in two translation units (same_name.hpp).
#include "same_name.hpp"

// At namespace scope, not in an unnamed namespace of the test's own: the kernel's identity
// must be local to this file by itself.
KILN_KERNEL(stamp, (kiln::global_ptr<int> out), { out[get_global_id(0)] = 1; });

kiln::event kiln::test::stamp_from_first_file(const kiln::queue& q, kiln::vector<int>& out) {
    return stamp(q, kiln::range{out.size()}, out);
}
