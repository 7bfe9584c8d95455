// SPDX-License-Identifier: Apache-2.0
// Recorded work replayed: kiln::capture records what a block enqueues on one device, and the
// graph it returns launches that work again on the same memory, without the host work of the
// statements that first enqueued it (expression hashing, kernel lookup, argument checks).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>
#include <string>
#include <utility>

namespace kiln {

namespace detail {
struct graph_recording;
/// Writes `bytes` bytes of `cell` from `src` at once, never recorded by a capture in progress,
/// after enqueueing the statements kiln::fused holds on this thread.
void write_unrecorded(const queue& q, const buffer_storage& cell, const void* src,
                      std::size_t bytes);
/// Whether kiln::capture is recording on this thread (the temporary pool then gives the graph
/// blocks of its own).
bool capture_in_progress() noexcept;
/// While kiln::capture records on this thread, throws invalid_argument_error naming `call`, whose
/// work a graph cannot hold: `why` says what it does instead (reads a result back to choose the
/// work after it, runs a host library on the device's memory). Calls check before they record.
void refuse_inside_capture(const std::string& call, const std::string& why);
/// Waits for `last`, the last command of a call that returns once its work is done; inside a
/// capture that work runs when the graph is launched, and nothing is waited for.
void wait_outside_capture(const event& last);
}  // namespace detail

/// Kernels, copies and fills recorded by kiln::capture, replayed by launch(). It holds the
/// kernels with their bound arguments, the temporaries the recorded algorithms allocated (its
/// own, never shared with later work), and the bytes of host writes made inside the block; the
/// vectors and buffers the block used are watched, not kept: launching after one of them was
/// destroyed or resized throws invalid_argument_error.
class graph {
  public:
    graph() = default;

    /// Replays the recorded work on the queue it was captured on, in the recorded order, and
    /// returns the event of its last command.
    event launch() const;
    /// Replays on another queue of the capture's device; invalid_argument_error for a queue of
    /// another device.
    event launch(const queue& q) const;

    /// Recorded commands (kernel launches, copies, fills).
    std::size_t size() const noexcept;
    /// Whether launch() enqueues the backend's own recorded form in one call: a CUDA graph on
    /// CUDA, a command buffer on OpenCL devices with cl_khr_command_buffer. Otherwise (and on
    /// queues that form does not take) each command is enqueued in turn, already bound.
    bool replays_natively() const noexcept;
    /// The device whose queue was captured.
    const kiln::device& device() const;

  private:
    friend graph capture(const queue& q, const std::function<void()>& block);
    explicit graph(std::shared_ptr<detail::graph_recording> recording);
    std::shared_ptr<detail::graph_recording> recording_;
};

/// Runs `block` recording, instead of running, the kernels, copies and fills it enqueues on any
/// queue of q's device from this thread (expression statements, algorithm launches, KILN_KERNEL
/// launches, buffer copies). Inside the block, reading results to the host, waiting on an event
/// or a queue, and enqueueing on another device throw kiln::invalid_argument_error naming the
/// call: the recorded work has not run. A host write inside the block records its bytes as they
/// are then. Captures do not nest.
graph capture(const queue& q, const std::function<void()>& block);

/// A scalar that recorded kernels read from device memory, so that it may change between
/// launches of a graph: use it in expressions like a scalar (`y = a * x + y`) and set() it
/// before launch().
template <device_value T>
class graph_value {
  public:
    /// A cell on q's device holding `initial`.
    graph_value(const queue& q, const T& initial) : queue_(q), cell_(q, 1) { set(initial); }

    /// Writes the value to the device at once (also inside a capture: it is not recorded).
    /// Launches enqueued afterwards read it; wait for launches still running on other queues
    /// before setting a value they read. Inside kiln::fused, the statements held so far are
    /// enqueued first, so that they read the value this one replaces, as they would without it.
    void set(const T& value) {
        detail::write_unrecorded(queue_, cell_.storage(), &value, sizeof(T));
        value_ = value;
    }
    /// The value last set.
    const T& get() const noexcept { return value_; }
    /// The device memory holding the value, which kernels take as a pointer.
    const buffer<T>& cell() const noexcept { return cell_; }

  private:
    queue queue_;
    buffer<T> cell_;
    T value_{};
};

}  // namespace kiln
#pragma GCC visibility pop
