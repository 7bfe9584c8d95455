// SPDX-License-Identifier: Apache-2.0
// Checks that a shape's or a policy's program-cache key changes with every field: a field left
// out of key() would let a program built for one value serve another.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace kiln::test {

/// Applies each change to a default-constructed Shape in turn and expects all the keys, the
/// default's among them, to differ.
template <class Shape>
void expect_every_change_changes_the_key(const std::vector<std::function<void(Shape&)>>& changes) {
    const Shape base{};
    std::vector<std::string> keys{base.key()};
    for (const auto& change : changes) {
        Shape changed = base;
        change(changed);
        keys.push_back(changed.key());
    }
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end()) << "two shapes share a key";
}

}  // namespace kiln::test
