// Command queues.
#include <kiln/runtime/queue.hpp>

#include "backend/backend.hpp"
#include "runtime/graph_recording.hpp"
#include "runtime/held_work.hpp"
#include "runtime/profiler.hpp"

namespace kiln {

queue::queue(const kiln::device& dev, queue_options options)
    : device_(dev), options_(options), recorder_(detail::profiling::recorder_for(dev, options_)) {
    impl_ = dev.impl().create_queue(options_);
}

void queue::flush() const {
    detail::enqueue_held_work();
    impl_->flush();
}
void queue::finish() const {
    detail::enqueue_held_work();
    if (auto* recorder = detail::active_recorder()) [[unlikely]]
        recorder->refuse("kiln::queue::finish", "it waits on the host for the queue's work");
    detail::profiling::waited("queue::finish", [&] { impl_->finish(); });
    if (recorder_) [[unlikely]]
        recorder_->completed();
}
event queue::marker(const wait_list& after) const {
    detail::enqueue_held_work();
    if (auto* recorder = detail::active_recorder()) [[unlikely]]
        return event(recorder->marker(*this, after));
    return event(impl_->marker(after.events()));
}

}  // namespace kiln
