// SPDX-License-Identifier: Apache-2.0
// Work-groups, tiles or strips enough to cover a count: the one rounding-up division that the
// algorithms' launches share.
#pragma once

#include <cstddef>

namespace kiln::detail {

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) {
    return (a + b - 1) / b;
}

}  // namespace kiln::detail
