// SPDX-License-Identifier: Apache-2.0
// Events and wait lists.
#include <kiln/runtime/event.hpp>

#include "backend/backend.hpp"
#include "runtime/profiler.hpp"

namespace kiln {

void event::wait() const {
    if (impl_) detail::profiling::waited("event::wait", [&] { impl_->wait(); });
}

event_status event::status() const {
    return impl_ ? impl_->status() : event_status::complete;
}

profiling_times event::times() const {
    if (!impl_)
        throw invalid_argument_error("kiln::event::times", "an empty event has no profiling times");
    impl_->wait();
    return impl_->times();
}

std::chrono::nanoseconds event::duration() const {
    auto t = times();
    return std::chrono::nanoseconds(t.ended_ns - t.started_ns);
}

wait_list::wait_list(std::initializer_list<event> events) {
    for (const auto& e : events)
        if (e) events_.push_back(e);
}

wait_list::wait_list(std::span<const event> events) {
    for (const auto& e : events)
        if (e) events_.push_back(e);
}

void wait_for_all(std::span<const event> events) {
    for (const auto& e : events) e.wait();
}

namespace detail {
void wait_on_host(event_list events) {
    wait_for_all(events);
}
}  // namespace detail

}  // namespace kiln
