// SPDX-License-Identifier: Apache-2.0
// Work a scope holds back on this thread (kiln::fused's statements), enqueued before any other
// command the thread enqueues, so that commands keep the order of the statements that made them.
#pragma once

namespace kiln::detail {

/// What a scope holds back: enqueue() sends it to its queue and leaves nothing held.
class held_work {
  public:
    virtual void enqueue() = 0;

  protected:
    ~held_work() = default;
};

/// The work held on this thread (null for none), set by the scope that holds it.
held_work*& work_held_on_this_thread() noexcept;

/// Enqueues the work held on this thread, if any. Calls that enqueue a command or wait for a
/// queue do so through command_target_for (runtime/command_target.hpp).
inline void enqueue_held_work() {
    if (auto* work = work_held_on_this_thread()) [[unlikely]]
        work->enqueue();
}

}  // namespace kiln::detail
