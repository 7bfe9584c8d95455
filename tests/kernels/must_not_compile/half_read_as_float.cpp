// SPDX-License-Identifier: Apache-2.0
// Reading a vector of half into floats: 16-bit values convert to float explicitly, never by
// reinterpreting their bytes.
// clang-format off
// expected g++: no matching function for call to 'kiln::vector<kiln::half>::read(std::vector<float>&) const'
// expected clang++: no matching member function for call to 'read'
// clang-format on
#include <kiln/vector.hpp>
#include <vector>

#include "mistake.hpp"

std::vector<float> widen(const kiln::vector<kiln::half>& v) {
    KILN_MISTAKE(std::vector<float> host(v.size()), std::vector<kiln::half> host(v.size()));
    v.read(host);
    return {};
}
