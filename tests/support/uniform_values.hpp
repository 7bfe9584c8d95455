// SPDX-License-Identifier: Apache-2.0
// Test inputs: `count` values drawn uniformly from [-1, 1] as floats and converted to T, the same
// for every test that asks with the same seed.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace kiln::test {

template <class T>
std::vector<T> uniform_values(std::size_t count, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<T> values(count);
    for (T& v : values) v = T(uniform(generator));
    return values;
}

}  // namespace kiln::test
