// SPDX-License-Identifier: Apache-2.0
// FNV-1a, 64 bits: simple and good enough to name files and to fingerprint texts (never a
// guard against a wrong result by itself: the program cache stores each full key beside it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::detail {

inline std::uint64_t fnv1a(const void* data, std::size_t size,
                           std::uint64_t hash = 14695981039346656037ull) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        hash ^= bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

}  // namespace kiln::detail
