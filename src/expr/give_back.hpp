// SPDX-License-Identifier: Apache-2.0
// Lists that a thread's statements fill and empty again and again (a fused group's, a launch's
// ranges of allocations) are kept for the next ones, so that a time stepper allocates none of
// them after its first steps.
#pragma once

namespace kiln::detail {

/// `list`, emptied, into `spare` where that has no storage of its own.
template <class List>
void give_back(List& list, List& spare) noexcept {
    list.clear();
    if (spare.capacity() == 0) spare.swap(list);
}

}  // namespace kiln::detail
