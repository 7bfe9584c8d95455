// SPDX-License-Identifier: Apache-2.0
// Kernels that take each vector they read at the element's index once, however many of their
// arguments it is: kiln::fused groups (fused.cpp) and copy_if (algo/scan/copy_if.cpp).
//
// A generator with a fused_context declares a vector's first parameter and makes its others
// names for it (fused_context::declared); the launch passes the arguments that passed_once keeps.
// Which arguments share a vector then changes the kernel's text as much as the node types do:
// the program's key says it with vector_number.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::detail {

/// `vector`'s number among the vectors `met` so far, which it joins if new: 1 for the first met,
/// 2 for the next...; 0 where the argument is no vector (null). Arguments of one number share a
/// vector.
inline std::uintptr_t vector_number(std::vector<const void*>& met, const void* vector) {
    if (!vector) return 0;
    const auto at = std::find(met.begin(), met.end(), vector);
    if (at == met.end()) {
        met.push_back(vector);
        return met.size();
    }
    return static_cast<std::uintptr_t>(at - met.begin()) + 1;
}

/// Whether such a kernel takes an argument of `vector`: one that is no vector, or the first of
/// its vector (which joins `met`).
inline bool passed_once(std::vector<const void*>& met, const void* vector) {
    const std::size_t known = met.size();
    return !vector || vector_number(met, vector) > known;
}

}  // namespace kiln::detail
