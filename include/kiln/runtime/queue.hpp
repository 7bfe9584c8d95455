// SPDX-License-Identifier: Apache-2.0
// Command queues: where copies and launches are ordered (or not) and profiled.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <memory>

namespace kiln {

namespace detail {
class queue_impl;
namespace profiling {
class queue_recorder;
}
}  // namespace detail

/// How a queue orders and times its commands.
struct queue_options {
    /// Commands may run in any order that their wait lists allow.
    bool out_of_order = false;
    /// Events carry device timestamps (event::times()). Always on while KILN_PROFILE records.
    bool profiling = false;
};

inline constexpr queue_options in_order{};  ///< commands run in the order enqueued (the default)
/// In order, with device timestamps on every event.
inline constexpr queue_options profiled{.out_of_order = false, .profiling = true};
/// Commands run in any order their wait lists allow.
inline constexpr queue_options out_of_order{.out_of_order = true, .profiling = false};

/// Where copies and kernel launches on one device are enqueued. Cheap to copy: copies are the
/// same queue.
class queue {
  public:
    /// A new queue on `dev`.
    explicit queue(const kiln::device& dev, queue_options options = {});
    /// A queue over a backend queue made elsewhere (kiln/interop), which has `options`.
    queue(const kiln::device& dev, std::shared_ptr<detail::queue_impl> impl, queue_options options);

    /// The device it runs on.
    const kiln::device& device() const noexcept { return device_; }
    /// The options it was made with.
    const queue_options& options() const noexcept { return options_; }

    /// Submits everything enqueued so far without waiting.
    void flush() const;
    /// Waits until everything enqueued so far has completed.
    void finish() const;
    /// An event that completes when the given events (or, with none, all earlier work) have.
    event marker(const wait_list& after = {}) const;

    /// Which queue this handle refers to: the same for every copy of it, distinct between
    /// queues alive at once. A key for what is kept per queue.
    const void* identity() const noexcept { return impl_.get(); }

    /// The backend's queue, for kiln's own layers.
    detail::queue_impl& impl() const noexcept { return *impl_; }
    /// Watches the queue without keeping it alive: expired once every copy of it is gone, so
    /// that state kept per queue elsewhere (an FFT plan's counters) can be let go with it.
    std::weak_ptr<const detail::queue_impl> watch() const noexcept { return impl_; }
    /// The profiler's record of this queue; null unless KILN_PROFILE records.
    detail::profiling::queue_recorder* recorder() const noexcept { return recorder_.get(); }

  private:
    kiln::device device_;
    queue_options options_;
    std::shared_ptr<detail::queue_impl> impl_;
    // Declared after impl_ so that it is destroyed first: its last events finish on a live queue.
    std::shared_ptr<detail::profiling::queue_recorder> recorder_;
};

}  // namespace kiln
#pragma GCC visibility pop
