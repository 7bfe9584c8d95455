// SPDX-License-Identifier: Apache-2.0
// Events: completion of enqueued work, waiting, and profiling times.
#pragma once
#pragma GCC visibility push(default)

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace kiln {

namespace detail {
class event_impl;
}

/// Where enqueued work stands, as the backend reports it.
enum class event_status { queued, submitted, running, complete };

/// Device timestamps in nanoseconds (queue must have been created with profiling on).
struct profiling_times {
    std::uint64_t queued_ns = 0;     ///< when the host enqueued the command
    std::uint64_t submitted_ns = 0;  ///< when it was handed to the device
    std::uint64_t started_ns = 0;    ///< when the device began it
    std::uint64_t ended_ns = 0;      ///< when the device finished it
};

/// A handle on enqueued work. A default-constructed event is already complete.
class event {
  public:
    event() = default;  ///< complete already; false as a bool
    /// A handle on a backend's event (kiln's backends make these).
    explicit event(std::shared_ptr<detail::event_impl> impl) noexcept : impl_(std::move(impl)) {}

    /// Blocks until the work is done; throws if it failed.
    void wait() const;
    /// Where the work stands now, without waiting.
    event_status status() const;
    /// Whether the work has completed.
    bool done() const { return status() == event_status::complete; }
    /// Waits, then reads the timestamps. Throws if the queue was not created with profiling.
    profiling_times times() const;
    /// Time from start to end on the device.
    std::chrono::nanoseconds duration() const;

    /// Whether the event stands for enqueued work (a default-made one does not).
    explicit operator bool() const noexcept { return impl_ != nullptr; }
    /// The backend's event, for kiln's own layers.
    const std::shared_ptr<detail::event_impl>& impl() const noexcept { return impl_; }

  private:
    std::shared_ptr<detail::event_impl> impl_;
};

/// The events an operation must wait for: none, one, or any number.
class wait_list {
  public:
    wait_list() = default;  ///< nothing to wait for
    /// One event; an empty one (default-made) adds nothing.
    wait_list(const event& e) {  // NOLINT(google-explicit-constructor): lets a lone event stand in
        if (e) events_.push_back(e);
    }
    ///@{
    /// The listed events, the empty ones left out.
    wait_list(std::initializer_list<event> events);
    wait_list(std::span<const event> events);
    wait_list(const std::vector<event>& events) : wait_list(std::span<const event>(events)) {}
    ///@}

    /// The events to wait for.
    std::span<const event> events() const noexcept { return events_; }
    /// Whether there is nothing to wait for.
    bool empty() const noexcept { return events_.empty(); }

  private:
    std::vector<event> events_;
};

///@{
/// Blocks until every event has completed; throws if any work failed.
void wait_for_all(std::span<const event> events);
inline void wait_for_all(std::initializer_list<event> events) {
    wait_for_all(std::span<const event>(events.begin(), events.size()));
}
///@}

}  // namespace kiln
#pragma GCC visibility pop
