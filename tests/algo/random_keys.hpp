// SPDX-License-Identifier: Apache-2.0
// Random sort keys for the sort tests: floats spread over a wide range, integers with every bit
// random.
#pragma once

#include <cstddef>
#include <random>
#include <type_traits>
#include <vector>

namespace kiln::test {

template <class T>
std::vector<T> random_keys(std::size_t n, unsigned seed) {
    std::mt19937_64 engine(seed);
    std::vector<T> keys(n);
    for (auto& k : keys) {
        if constexpr (std::is_floating_point_v<T>)
            k = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(engine));
        else
            k = static_cast<T>(engine());  // every bit random: high bits and negatives included
    }
    return keys;
}

}  // namespace kiln::test
