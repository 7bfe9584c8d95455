// SPDX-License-Identifier: Apache-2.0
// The work held back on each thread (held_work.hpp).
#include "runtime/held_work.hpp"

namespace kiln::detail {

held_work*& work_held_on_this_thread() noexcept {
    thread_local held_work* held = nullptr;
    return held;
}

}  // namespace kiln::detail
