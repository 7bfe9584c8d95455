// SPDX-License-Identifier: Apache-2.0
// Two translation units (same_name_first.cpp, same_name_second.cpp) each declare a KILN_KERNEL
// named `stamp` and a KILN_FUNCTION named `marked` with bodies of their own: each must run its
// own bodies.
#pragma once

#include <kiln/kiln.hpp>

namespace kiln::test {

/// Launches the first file's `stamp`, which writes 1 to every element.
kiln::event stamp_from_first_file(const kiln::queue& q, kiln::vector<int>& out);
/// Launches the second file's `stamp`, which writes 2 to every element.
kiln::event stamp_from_second_file(const kiln::queue& q, kiln::vector<int>& out);

/// out = marked(in) with the first file's `marked`, which adds 10.
void mark_in_first_file(kiln::vector<int>& out, const kiln::vector<int>& in);
/// out = marked(in) with the second file's `marked`, which adds 20.
void mark_in_second_file(kiln::vector<int>& out, const kiln::vector<int>& in);
/// out = marked(in) in a kernel calling the first file's `marked`.
kiln::event mark_by_kernel_in_first_file(const kiln::queue& q, kiln::vector<int>& out,
                                         const kiln::vector<int>& in);
/// out = marked(in) in a kernel calling the second file's `marked`.
kiln::event mark_by_kernel_in_second_file(const kiln::queue& q, kiln::vector<int>& out,
                                          const kiln::vector<int>& in);

}  // namespace kiln::test
