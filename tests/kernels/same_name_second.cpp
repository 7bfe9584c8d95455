// The second of two kernels named `stamp` in two translation units (same_name.hpp).
#include "same_name.hpp"

KILN_KERNEL(stamp, (kiln::global_ptr<int> out), { out[get_global_id(0)] = 2; });

kiln::event kiln::test::stamp_from_second_file(const kiln::queue& q, kiln::vector<int>& out) {
    return stamp(q, kiln::range{out.size()}, out);
}
