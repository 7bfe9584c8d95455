// SPDX-License-Identifier: Apache-2.0
// Command queues.
#include <kiln/runtime/queue.hpp>

#include "backend/backend.hpp"
#include "runtime/command_target.hpp"
#include "runtime/profiler.hpp"

namespace kiln {

queue::queue(const kiln::device& dev, queue_options options)
    : device_(dev), options_(options), recorder_(detail::profiling::recorder_for(dev, options_)) {
    impl_ = dev.impl().create_queue(options_);
}

queue::queue(const kiln::device& dev, std::shared_ptr<detail::queue_impl> impl,
             queue_options options)
    : device_(dev), options_(options), impl_(std::move(impl)) {
    // KILN_PROFILE records the queue's commands; their device times come only if it has them.
    queue_options recorded = options_;
    recorder_ = detail::profiling::recorder_for(dev, recorded);
}

void queue::flush() const {
    detail::command_target_for(*this).queue.flush();
}
void queue::finish() const {
    const detail::command_target target = detail::command_target_for(*this);
    if (target.recorder) [[unlikely]]
        target.recorder->refuse("kiln::queue::finish", "it waits on the host for the queue's work");
    detail::profiling::waited("queue::finish", [&] { target.queue.finish(); });
    if (recorder_) [[unlikely]]
        recorder_->completed();
}
event queue::marker(const wait_list& after) const {
    const detail::command_target target = detail::command_target_for(*this);
    if (target.recorder) [[unlikely]]
        return event(target.recorder->marker(*this, after));
    return event(target.queue.marker(after.events()));
}

}  // namespace kiln
