// Two translation units (same_name_first.cpp, same_name_second.cpp) each declare a KILN_KERNEL
// named `stamp` with a body of their own: each must run its own body.
#pragma once

#include <kiln/kiln.hpp>

namespace kiln::test {

/// Launches the first file's `stamp`, which writes 1 to every element.
kiln::event stamp_from_first_file(const kiln::queue& q, kiln::vector<int>& out);
/// Launches the second file's `stamp`, which writes 2 to every element.
kiln::event stamp_from_second_file(const kiln::queue& q, kiln::vector<int>& out);

}  // namespace kiln::test
