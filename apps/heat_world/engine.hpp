// SPDX-License-Identifier: Apache-2.0
// Engines that step a heat world, and the registry step_world picks them from by name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "world.hpp"

namespace kiln {
class device;
}

namespace kiln::heat {

// Told how many of the run's steps are complete. Engines call it now and then from whichever
// thread they like, never from two threads at once, with counts that never decrease, and once
// with the full count at the end. It must be cheap and must not throw.
using progress_callback = std::function<void(unsigned steps_done)>;

// What the user asked for, passed to every engine factory.
struct engine_options {
    std::string device{};  // --device, else $KILN_DEVICE, else empty: the default device
    unsigned threads = 0;  // --threads for host engines; 0 means every core
};

// The most threads the threads engine takes. It runs one band of rows per thread, and the bands
// meet at a barrier after every step, so threads beyond the cores only add waiting; 1024 is
// above the hardware threads of any one machine the tools run on, yet far below the counts
// where creating threads exhausts the process's memory or the system's limits.
inline constexpr unsigned max_threads = 1024;

// How a range of halo rows went from one block's session to another's (copy_rows_to).
enum class halo_move {
    host_rows,      // not copied: the caller reads them into the target's host rows
    within_device,  // device to device on one device
    peer_to_peer,   // between two devices directly (CUDA peer access)
    staged,         // between two devices through pinned host memory, by kiln::buffer::copy_to
};

// A world being stepped by an engine that keeps its state between calls (the kiln engines on
// their device), so that a caller can step, replace some rows, and step again without moving
// the whole world: step_world_mpi's halo exchange. The world stays the session's until
// finish(); its temperatures are current only after that.
class stepping_session {
  public:
    virtual ~stepping_session() = default;
    // Advances the world by `steps` steps; w.t is not touched (advance_time is the caller's).
    virtual void step(unsigned steps) = 0;
    // The same in two halves, so that the caller can work while a device steps: launch_steps
    // starts the steps (engines without a device do them all here), finish_steps waits for
    // them. Nothing else may be asked of the session in between.
    virtual void launch_steps(unsigned steps) { step(steps); }
    virtual void finish_steps() {}
    // Copies the current temperatures of rows [first_row, first_row + rows.size() / width).
    virtual void read_rows(std::uint32_t first_row, std::span<float> rows) = 0;
    virtual void write_rows(std::uint32_t first_row, std::span<const float> rows) = 0;
    // Starts copying `rows` rows from `first_row` on into `target`'s rows from `target_row` on,
    // from one device's memory to the other's (kiln::buffer::copy_to: on one device, peer to
    // peer, or staged through pinned host memory), and says how; returns host_rows, doing
    // nothing, where the two sessions' states are not both device memory (the caller then goes
    // through the host: read_rows, write_rows). The copy is done once wait_for_copies()
    // returns; the target must not step before. Sessions on different sources may copy at
    // once, each from its own thread.
    virtual halo_move copy_rows_to(std::uint32_t /*first_row*/, std::uint32_t /*rows*/,
                                   stepping_session& /*target*/, std::uint32_t /*target_row*/) {
        return halo_move::host_rows;
    }
    virtual void wait_for_copies() {}
    // Brings the world's temperatures up to date.
    virtual void finish() = 0;
    // Where the session's start went, for --stats ("buffers allocated in 0.004 s, ..."); empty
    // where it started nothing worth telling.
    virtual std::string start_text() const { return {}; }
};

class engine {
  public:
    virtual ~engine() = default;

    virtual std::string_view name() const = 0;

    // A line for --stats, e.g. "threads (up to 8 threads)" or "resident on NVIDIA H100".
    virtual std::string description() const { return std::string(name()); }

    // Advances `w` by `steps` steps of `dt` with the update rule of the original program (see
    // engine_reference.cpp), and advances w.t by dt once per step. `w` must satisfy
    // check_world. progress may be empty.
    virtual void run(world& w, float dt, unsigned steps, const progress_callback& progress) = 0;

    // Starts stepping `w` by steps of `dt` (w must satisfy check_world and outlive the session).
    // The default steps the world in place through run(); engines with a device keep it there.
    virtual std::unique_ptr<stepping_session> start(world& w, float dt);

    // Starts stepping `rows` as a world of their own (rows.source must satisfy check_world; it
    // is read only here). The session keeps its own state: read_rows gives the temperatures, and
    // finish() brings nothing up to date. The default steps a copy of the rows through start();
    // engines with a device upload the rows straight from the source world.
    virtual std::unique_ptr<stepping_session> start_rows(const world_rows& rows, float dt);

    // The device the engine runs on, or none for host engines: whose pinned host memory moves
    // rows to and from its sessions fastest.
    virtual const kiln::device* device() const { return nullptr; }
};

struct engine_entry {
    std::string name{};
    std::string summary{};     // one line for --list-engines
    bool uses_device = false;  // false: runs on the host and ignores --device
    std::function<std::unique_ptr<engine>(const engine_options&)> create{};
    // How much this engine wants to be the default for these options: nullopt when it should
    // not be chosen by default (say, no usable device matches options.device), otherwise a rank;
    // the highest rank wins. The CPU engines rank low, so a GPU engine that ranks higher on a
    // usable device becomes the default without step_world changing.
    std::function<std::optional<int>(const engine_options&)> default_rank{};
};

class engine_registry {
  public:
    // Throws std::invalid_argument when the name is taken or the entry has no factory.
    void add(engine_entry entry);

    const engine_entry* find(std::string_view name) const;
    // Throws std::invalid_argument naming the known engines when `name` is not one of them.
    const engine_entry& at(std::string_view name) const;
    const std::vector<engine_entry>& entries() const { return entries_; }

    // The name of the engine with the highest default_rank for these options (the first added
    // wins a tie). Throws std::runtime_error when no engine is a candidate.
    std::string default_engine(const engine_options& options) const;

    // at(name).create(options)
    std::unique_ptr<engine> create(std::string_view name, const engine_options& options) const;

  private:
    std::vector<engine_entry> entries_;
};

// Ranks of the host engines, for GPU engines to place themselves against.
inline constexpr int reference_default_rank = 0;
inline constexpr int threads_default_rank = 10;

// The host engines.
std::unique_ptr<engine> make_reference_engine();
// `threads` is 0 (every core) or at most max_threads; more throws std::invalid_argument.
std::unique_ptr<engine> make_threads_engine(unsigned threads = 0);
void register_host_engines(engine_registry& registry);

// Every engine this build has: the host engines, and the kiln GPU engines once they exist
// (their registration goes in engine_registry.cpp, next to the host engines').
engine_registry make_engine_registry();

}  // namespace kiln::heat
