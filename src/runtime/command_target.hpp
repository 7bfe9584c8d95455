// SPDX-License-Identifier: Apache-2.0
// Where a command goes: the one step every runtime call that enqueues a command or waits for a
// queue takes first.
#pragma once

#include <kiln/runtime/queue.hpp>

#include "runtime/graph_recording.hpp"
#include "runtime/held_work.hpp"

namespace kiln::detail {

/// The capture in progress on this thread (null for none), which records the command instead of
/// running it, and the backend queue that runs it otherwise.
struct command_target {
    graph_recorder* recorder;
    queue_impl& queue;
};

/// The target of a command for `q`, once the work held on this thread (kiln::fused's statements)
/// is enqueued: so that every command, recorded or run, keeps the order of the statements that
/// came before it. Calls that reach the backend queue only through here cannot overtake them.
inline command_target command_target_for(const queue& q) {
    enqueue_held_work();
    return {active_recorder(), q.impl()};
}

}  // namespace kiln::detail
