// SPDX-License-Identifier: Apache-2.0
// Work-groups, tiles or strips enough to cover a count: the one rounding-up division that the
// algorithms' launches share, and the rounding up to a multiple made of it.
#pragma once

#include <cstddef>

namespace kiln::detail {

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) {
    return (a + b - 1) / b;
}

/// The least multiple of `multiple` that is at least `a`.
constexpr std::size_t round_up(std::size_t a, std::size_t multiple) {
    return ceil_div(a, multiple) * multiple;
}

}  // namespace kiln::detail
