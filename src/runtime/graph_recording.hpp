// SPDX-License-Identifier: Apache-2.0
// What kiln::capture records (kiln/runtime/graph.hpp), and the hooks through which the
// runtime's enqueueing calls reach a capture in progress on their thread instead of the queue.
#pragma once

#include <array>
#include <cstddef>
#include <kiln/runtime/graph.hpp>
#include <kiln/runtime/program.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "backend/backend.hpp"

namespace kiln::detail {

/// Device memory a recorded command uses, by its index in graph_recording::memories.
using memory_slot = std::size_t;

struct recorded_launch {
    std::shared_ptr<kernel_impl> kernel;
    launch_geometry geometry;
    /// Buffer arguments with `memory` left empty: replay puts slots[i]'s memory there.
    std::vector<kernel_argument> args;
    std::vector<std::pair<std::size_t, memory_slot>> buffer_slots;  ///< argument index, slot
};

struct recorded_copy {
    memory_slot source, destination;
    std::size_t source_offset, destination_offset, bytes;
};

struct recorded_fill {
    memory_slot destination;
    std::size_t offset, bytes;
    std::array<std::byte, 128> pattern;
    std::size_t pattern_size;
};

using recorded_command = std::variant<recorded_launch, recorded_copy, recorded_fill>;

/// Memory of a graph: what the recorded block made (temporaries, snapshots of host writes) is
/// owned; what existed before it (the user's vectors) is only watched, so that a launch after
/// it is gone is refused rather than writing memory nobody reads.
struct recorded_memory {
    std::shared_ptr<memory_impl> owned;
    std::weak_ptr<memory_impl> watched;
    const memory_impl* address = nullptr;
};

/// A finished recording: what kiln::graph replays.
struct graph_recording {
    explicit graph_recording(const queue& q) : device(q.device()), capture_queue(q) {}

    kiln::device device;
    queue capture_queue;
    std::vector<recorded_command> commands;
    std::vector<recorded_memory> memories;
    /// The commands as the backend's own recorded work, where it has one (a CUDA graph, an
    /// OpenCL command buffer); launches on queues it does not take replay `commands`.
    std::unique_ptr<native_graph_impl> native;
    std::mutex launching;
    /// The last launch's end and queue: a launch on another queue (or on an out-of-order one)
    /// waits for it, since launches share the graph's temporaries.
    event last_launch;
    std::weak_ptr<const queue_impl> last_queue;
};

/// The capture in progress on this thread, or null. Each hook below is called by the runtime
/// only while this is non-null.
class graph_recorder;
graph_recorder* active_recorder() noexcept;

class graph_recorder {
  public:
    explicit graph_recorder(const queue& q);

    std::shared_ptr<event_impl> launch(const queue& q, const std::shared_ptr<kernel_impl>& kernel,
                                       const launch_geometry& geometry,
                                       std::span<const kernel_argument> args,
                                       const wait_list& after);
    std::shared_ptr<event_impl> copy(const queue& q, const std::shared_ptr<memory_impl>& source,
                                     std::size_t source_offset,
                                     const std::shared_ptr<memory_impl>& destination,
                                     std::size_t destination_offset, std::size_t bytes,
                                     const wait_list& after);
    std::shared_ptr<event_impl> fill(const queue& q, const std::shared_ptr<memory_impl>& memory,
                                     std::size_t offset, const void* pattern,
                                     std::size_t pattern_size, std::size_t bytes,
                                     const wait_list& after);
    /// A host write: its bytes as they are now go to memory of the graph's own, copied into
    /// place at each launch.
    std::shared_ptr<event_impl> write(const queue& q, const std::shared_ptr<memory_impl>& memory,
                                      std::size_t offset, const void* src, std::size_t bytes,
                                      const wait_list& after);
    /// An event standing for the recorded work so far (queue::marker).
    std::shared_ptr<event_impl> marker(const queue& q, const wait_list& after);
    /// Memory allocated inside the block: the graph's own.
    void allocated(const kiln::device& dev, const std::shared_ptr<memory_impl>& memory);
    /// Throws invalid_argument_error: `call` needs the recorded work to have run.
    [[noreturn]] void refuse(const std::string& call, const std::string& why) const;

    std::shared_ptr<graph_recording> finish() &&;

  private:
    void check_queue(const queue& q, const char* call) const;
    void order_after(const wait_list& after) const;
    memory_slot slot_for(const std::shared_ptr<memory_impl>& memory);
    std::shared_ptr<event_impl> recorded_event() const;

    std::shared_ptr<graph_recording> recording_;
};

}  // namespace kiln::detail
