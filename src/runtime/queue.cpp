// Command queues.
#include <kiln/runtime/queue.hpp>

#include "backend/backend.hpp"

namespace kiln {

queue::queue(const kiln::device& dev, queue_options options)
    : device_(dev), options_(options), impl_(dev.impl().create_queue(options)) {}

void queue::flush() const {
    impl_->flush();
}
void queue::finish() const {
    impl_->finish();
}
event queue::marker(const wait_list& after) const {
    return event(impl_->marker(after.events()));
}

}  // namespace kiln
