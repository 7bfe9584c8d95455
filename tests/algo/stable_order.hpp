// SPDX-License-Identifier: Apache-2.0
// The reference order the sort tests compare with: a stable sort of indices, and a vector read
// in that order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace kiln::test {

/// The indices of `keys` in stable sorted order.
template <class T, class Before>
std::vector<std::uint32_t> stable_order(const std::vector<T>& keys, Before before) {
    std::vector<std::uint32_t> order(keys.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return before(keys[a], keys[b]); });
    return order;
}

template <class T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<std::uint32_t>& order) {
    std::vector<T> out(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
    return out;
}

}  // namespace kiln::test
