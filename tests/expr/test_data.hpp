// SPDX-License-Identifier: Apache-2.0
// Test data for the vector-expression tests: random values with a replayable seed, edge sizes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::test {

/// Random host data, with the seed in the failure output so that a failure can be replayed.
template <class T>
std::vector<T> random_values(std::size_t n, double low, double high, unsigned seed = 20240521) {
    SCOPED_TRACE("random_values seed " + std::to_string(seed));
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(low, high);
    std::vector<T> values(n);
    for (auto& v : values) v = static_cast<T>(uniform(engine));
    return values;
}

/// Sizes that exercise the edges: empty, one element, not a multiple of any work-group size,
/// and a few work-groups' worth.
inline const std::vector<std::size_t>& edge_sizes() {
    static const std::vector<std::size_t> sizes = {0, 1, 7, 1000, 65537};
    return sizes;
}

}  // namespace kiln::test
