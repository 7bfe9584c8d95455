// SPDX-License-Identifier: Apache-2.0
// kiln::capture and kiln::graph: recording a block's commands, and replaying them.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <string_view>
#include <utility>

#include "runtime/command_target.hpp"
#include "runtime/device_label.hpp"
#include "runtime/graph_recording.hpp"

namespace kiln {
namespace detail {
namespace {

thread_local graph_recorder* active = nullptr;

const char* const capture_call = "kiln::capture";

/// What recorded commands return: the work has not run, so nothing may wait for it.
class recorded_work_event final : public event_impl {
  public:
    void wait() override { refuse_wait(); }
    event_status status() override { refuse_wait(); }
    profiling_times times() override { refuse_wait(); }

  private:
    [[noreturn]] static void refuse_wait() {
        throw invalid_argument_error(
            capture_call,
            "waiting on work recorded inside the capture: it runs only when the "
            "graph is launched (wait on the event graph::launch returns)");
    }
};

/// Keeps a recorder active on this thread for the block, and no longer, even if it throws.
class activation {
  public:
    explicit activation(graph_recorder& recorder) {
        if (active)
            throw invalid_argument_error(capture_call,
                                         "a capture is already recording on this thread; "
                                         "captures do not nest");
        active = &recorder;
    }
    ~activation() { active = nullptr; }
    activation(const activation&) = delete;
    activation& operator=(const activation&) = delete;
};

}  // namespace

graph_recorder* active_recorder() noexcept {
    return active;
}

bool capture_in_progress() noexcept {
    return active != nullptr;
}

void refuse_inside_capture(const std::string& call, const std::string& why) {
    if (active)
        throw invalid_argument_error(call, "inside kiln::capture: " + why +
                                               "; a graph holds device commands only. Call it "
                                               "outside the capture, before or after the "
                                               "graph's launch");
}

void wait_outside_capture(const event& last) {
    if (!active) last.wait();
}

graph_recorder::graph_recorder(const queue& q) : recording_(std::make_shared<graph_recording>(q)) {}

void graph_recorder::refuse(const std::string& call, const std::string& why) const {
    throw invalid_argument_error(call, "inside kiln::capture: " + why +
                                           "; the recorded work has not run. Call it outside "
                                           "the capture, before or after the graph's launch");
}

void graph_recorder::check_queue(const queue& q, const char* call) const {
    if (!(q.device() == recording_->device))
        throw invalid_argument_error(
            call, "inside kiln::capture on " + device_label(recording_->device) +
                      ", work was enqueued on a queue of " + device_label(q.device()) +
                      ": a graph records the work of one device");
}

void graph_recorder::order_after(const wait_list& after) const {
    // Recorded commands replay in the order they were recorded, which every wait list inside
    // the block follows; an event from before the capture is waited for now.
    for (const event& e : after.events())
        if (!dynamic_cast<recorded_work_event*>(e.impl().get())) e.wait();
}

std::shared_ptr<event_impl> graph_recorder::recorded_event() const {
    return std::make_shared<recorded_work_event>();
}

memory_slot graph_recorder::slot_for(const std::shared_ptr<memory_impl>& memory) {
    // The latest entry at this address, if its memory is still the same: memory freed inside
    // the block may come back at the same address as another allocation.
    auto& memories = recording_->memories;
    for (memory_slot slot = memories.size(); slot-- > 0;)
        if (memories[slot].address == memory.get() &&
            (memories[slot].owned || !memories[slot].watched.expired()))
            return slot;
    memories.push_back({nullptr, memory, memory.get()});
    return memories.size() - 1;
}

void graph_recorder::allocated(const kiln::device& dev,
                               const std::shared_ptr<memory_impl>& memory) {
    if (dev == recording_->device) recording_->memories.push_back({memory, memory, memory.get()});
}

std::shared_ptr<event_impl> graph_recorder::launch(const queue& q,
                                                   const std::shared_ptr<kernel_impl>& kernel,
                                                   const launch_geometry& geometry,
                                                   std::span<const kernel_argument> args,
                                                   const wait_list& after) {
    check_queue(q, "kiln::kernel launch");
    order_after(after);
    recorded_launch launch{kernel, geometry, {args.begin(), args.end()}, {}};
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
        auto& arg = launch.args[i];
        if (arg.what != kernel_argument::kind::buffer || !arg.memory) continue;
        launch.buffer_slots.emplace_back(i, slot_for(arg.memory));
        arg.memory.reset();
    }
    recording_->commands.emplace_back(std::move(launch));
    return recorded_event();
}

std::shared_ptr<event_impl> graph_recorder::copy(const queue& q,
                                                 const std::shared_ptr<memory_impl>& source,
                                                 std::size_t source_offset,
                                                 const std::shared_ptr<memory_impl>& destination,
                                                 std::size_t destination_offset, std::size_t bytes,
                                                 const wait_list& after) {
    check_queue(q, "kiln::buffer::copy_to");
    order_after(after);
    recording_->commands.emplace_back(recorded_copy{slot_for(source), slot_for(destination),
                                                    source_offset, destination_offset, bytes});
    return recorded_event();
}

std::shared_ptr<event_impl> graph_recorder::fill(const queue& q,
                                                 const std::shared_ptr<memory_impl>& memory,
                                                 std::size_t offset, const void* pattern,
                                                 std::size_t pattern_size, std::size_t bytes,
                                                 const wait_list& after) {
    check_queue(q, "kiln::buffer::fill");
    order_after(after);
    recorded_fill fill{slot_for(memory), offset, bytes, {}, pattern_size};
    std::memcpy(fill.pattern.data(), pattern, pattern_size);
    recording_->commands.emplace_back(fill);
    return recorded_event();
}

std::shared_ptr<event_impl> graph_recorder::write(const queue& q,
                                                  const std::shared_ptr<memory_impl>& memory,
                                                  std::size_t offset, const void* src,
                                                  std::size_t bytes, const wait_list& after) {
    check_queue(q, "kiln::buffer::write");
    order_after(after);
    std::shared_ptr<memory_impl> snapshot = q.device().impl().allocate(bytes, access::inout);
    q.impl().write(*snapshot, 0, src, bytes, {}, true);
    allocated(q.device(), snapshot);
    recording_->commands.emplace_back(
        recorded_copy{slot_for(snapshot), slot_for(memory), 0, offset, bytes});
    return recorded_event();
}

std::shared_ptr<event_impl> graph_recorder::marker(const queue& q, const wait_list& after) {
    check_queue(q, "kiln::queue::marker");
    order_after(after);
    return recorded_event();
}

std::shared_ptr<graph_recording> graph_recorder::finish() && {
    return std::move(recording_);
}

void write_unrecorded(const queue& q, const buffer_storage& cell, const void* src,
                      std::size_t bytes) {
    if (!(cell.device() == q.device()))
        throw invalid_argument_error("kiln::graph_value::set",
                                     "the value lives on " + device_label(cell.device()) +
                                         " but its queue is on " + device_label(q.device()));
    // Statements kiln::fused holds were written before the set: they read the value it replaces.
    enqueue_held_work();
    q.impl().write(*cell.memory(), 0, src, bytes, {}, true);
}

namespace {

/// The memory of every slot, or an empty list when a watched one is gone.
std::vector<std::shared_ptr<memory_impl>> memory_if_live(const graph_recording& recording) {
    std::vector<std::shared_ptr<memory_impl>> live;
    live.reserve(recording.memories.size());
    for (const auto& memory : recording.memories) {
        live.push_back(memory.owned ? memory.owned : memory.watched.lock());
        if (!live.back()) return {};
    }
    return live;
}

/// The memory of every slot, or invalid_argument_error naming the first watched one gone.
std::vector<std::shared_ptr<memory_impl>> live_memory(const graph_recording& recording) {
    auto live = memory_if_live(recording);
    if (live.empty() && !recording.memories.empty())
        throw invalid_argument_error(
            "kiln::graph::launch",
            "a vector or buffer the captured work uses was destroyed or resized after the "
            "capture; capture again with the vectors as they are now");
    return live;
}

/// Whether KILN_GRAPH_REPLAY asks for the bound list everywhere (to compare the two forms, or to
/// work around a driver's): "native" (the default) or "list".
bool list_replay_forced() {
    const char* text = std::getenv("KILN_GRAPH_REPLAY");
    if (text == nullptr || *text == '\0' || std::string_view(text) == "native") return false;
    if (std::string_view(text) == "list") return true;
    throw invalid_argument_error(
        capture_call, "KILN_GRAPH_REPLAY is '" + std::string(text) + "'; it takes native or list");
}

/// The recorded commands in the backend's own form, or null where it has none. Memory the
/// block already freed leaves the graph unlaunchable, so it gets no native form either.
std::unique_ptr<native_graph_impl> record_natively(graph_recording& recording) {
    if (recording.commands.empty() || list_replay_forced()) return nullptr;
    const auto live = memory_if_live(recording);
    if (live.empty() && !recording.memories.empty()) return nullptr;
    std::vector<std::vector<kernel_argument>> bound_args;  // each launch's, with its memory
    bound_args.reserve(recording.commands.size());
    std::vector<graph_command> commands;
    commands.reserve(recording.commands.size());
    for (const auto& command : recording.commands) {
        if (const auto* launch = std::get_if<recorded_launch>(&command)) {
            auto& args = bound_args.emplace_back(launch->args);
            for (const auto& [index, slot] : launch->buffer_slots) args[index].memory = live[slot];
            commands.emplace_back(graph_launch{*launch->kernel, launch->geometry, args});
        } else if (const auto* copy = std::get_if<recorded_copy>(&command)) {
            commands.emplace_back(graph_copy{*live[copy->source], copy->source_offset,
                                             *live[copy->destination], copy->destination_offset,
                                             copy->bytes});
        } else {
            const auto& fill = std::get<recorded_fill>(command);
            commands.emplace_back(graph_fill{*live[fill.destination], fill.offset,
                                             fill.pattern.data(), fill.pattern_size, fill.bytes});
        }
    }
    return recording.capture_queue.impl().record(commands);
}

/// Replays each command through the queue's backend: the kernels, geometry and arguments were
/// checked when recorded, so each costs only the backend's enqueue.
std::shared_ptr<event_impl> replay(graph_recording& recording, const queue& q, queue_impl& target) {
    // Launches of one graph from several threads take turns: each lends its memory to the
    // recorded arguments.
    std::lock_guard lock(recording.launching);
    auto live = live_memory(recording);
    // Compared by owner, not address: a new queue may take a destroyed one's address.
    const auto same_queue = [](const auto& a, const auto& b) {
        return !a.owner_before(b) && !b.owner_before(a);
    };
    const bool ordered_by_queue =
        same_queue(recording.last_queue, q.watch()) && !q.options().out_of_order;
    std::shared_ptr<event_impl> last = ordered_by_queue ? nullptr : recording.last_launch.impl();
    bool waits_for_last = !ordered_by_queue;
    if (recording.native && recording.native->replays_on(target)) {
        const event previous(waits_for_last ? last : nullptr);
        last = recording.native->launch(target, previous ? event_list(&previous, 1) : event_list());
        recording.last_launch = event(last);
        recording.last_queue = q.watch();
        return last;
    }
    for (auto& command : recording.commands) {
        // Each command waits for the one before it where the queue does not order them: the
        // first after the previous launch on another queue, all on an out-of-order queue.
        const event previous(waits_for_last ? last : nullptr);
        waits_for_last = q.options().out_of_order;
        const event_list after = previous ? event_list(&previous, 1) : event_list();
        if (auto* launch = std::get_if<recorded_launch>(&command)) {
            // The arguments take the memory for this launch only: the graph watches the user's
            // memory, it does not keep it.
            auto& args = launch->args;
            for (const auto& [index, slot] : launch->buffer_slots) args[index].memory = live[slot];
            try {
                last = target.launch(*launch->kernel, launch->geometry, args, after,
                                     launch_completion::event);
            } catch (...) {
                for (const auto& [index, slot] : launch->buffer_slots) args[index].memory.reset();
                throw;
            }
            for (const auto& [index, slot] : launch->buffer_slots) args[index].memory.reset();
        } else if (const auto* copy = std::get_if<recorded_copy>(&command)) {
            last = target.copy(*live[copy->source], copy->source_offset, *live[copy->destination],
                               copy->destination_offset, copy->bytes, after);
        } else {
            const auto& fill = std::get<recorded_fill>(command);
            last = target.fill(*live[fill.destination], fill.offset, fill.pattern.data(),
                               fill.pattern_size, fill.bytes, after);
        }
    }
    if (recording.commands.empty()) {
        const event previous(last);
        last = target.marker(previous ? event_list(&previous, 1) : event_list());
    }
    recording.last_launch = event(last);
    recording.last_queue = q.watch();
    return last;
}

}  // namespace
}  // namespace detail

graph::graph(std::shared_ptr<detail::graph_recording> recording)
    : recording_(std::move(recording)) {}

std::size_t graph::size() const noexcept {
    return recording_ ? recording_->commands.size() : 0;
}

bool graph::replays_natively() const noexcept {
    return recording_ && recording_->native;
}

const kiln::device& graph::device() const {
    if (!recording_)
        throw invalid_argument_error("kiln::graph::device", "an empty graph has no device");
    return recording_->device;
}

event graph::launch() const {
    if (!recording_)
        throw invalid_argument_error("kiln::graph::launch",
                                     "an empty graph (default-constructed) has nothing to launch");
    return launch(recording_->capture_queue);
}

event graph::launch(const queue& q) const {
    if (!recording_)
        throw invalid_argument_error("kiln::graph::launch",
                                     "an empty graph (default-constructed) has nothing to launch");
    if (!(q.device() == recording_->device))
        throw invalid_argument_error(
            "kiln::graph::launch", "the graph was captured on " +
                                       detail::device_label(recording_->device) +
                                       ", but the queue is on " + detail::device_label(q.device()));
    // Statements kiln::fused holds go first: the graph's work comes after them.
    const detail::command_target target = detail::command_target_for(q);
    if (target.recorder)
        target.recorder->refuse("kiln::graph::launch", "graphs are launched outside captures");
    return event(detail::replay(*recording_, q, target.queue));
}

graph capture(const queue& q, const std::function<void()>& block) {
    // What an enclosing kiln::fused holds ran before the capture; the statements it holds from
    // the block are the graph's, recorded before the capture ends.
    detail::enqueue_held_work();
    detail::graph_recorder recorder(q);
    {
        detail::activation recording(recorder);
        block();
        detail::enqueue_held_work();
    }
    auto recording = std::move(recorder).finish();
    recording->native = detail::record_natively(*recording);
    return graph(std::move(recording));
}

}  // namespace kiln
