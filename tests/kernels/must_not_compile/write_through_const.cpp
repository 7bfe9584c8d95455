// SPDX-License-Identifier: Apache-2.0
// A write through a pointer to const, here a const vector captured by KILN_LAMBDA.
// clang-format off
// expected g++: assignment of read-only location
// expected clang++: cannot assign to return value because function 'operator[]<unsigned int>' returns a const value
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

kiln::event fill(const kiln::queue& q, const kiln::vector<float>& x, kiln::vector<float>& y) {
    return kiln::parallel_for(q, x.size(), KILN_LAMBDA((kiln::uint i), (x, y), {
                                  KILN_MISTAKE(x, y)[i] = 1.0f;
                              }));
}
