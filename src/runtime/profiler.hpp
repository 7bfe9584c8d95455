// SPDX-License-Identifier: Apache-2.0
// The profiler's recorder (docs/profiling.md): sessions of plain records, and the per-queue part
// that holds a command's event only until its device times are read.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <kiln/detail/profiling.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend.hpp"

namespace kiln::detail::profiling {

enum class record_kind { kernel, write, read, copy, fill, build, wait, region };

/// One span. Records hold only plain values: no device, queue, event or program, so that they
/// keep nothing alive and can be written at exit after the backends are gone.
struct record {
    record_kind kind = record_kind::kernel;
    std::string name;    ///< kernel, region or wait name; a build's source hash
    std::string detail;  ///< a build's device
    std::uint32_t track = 0;
    /// Host clock; a device command's start and end are on its device's clock until placed.
    std::uint64_t start_ns = 0, end_ns = 0;
    std::uint64_t bytes = 0;
    std::size_t dims = 0;
    std::array<std::size_t, 3> global{}, local{};
    program_origin origin = program_origin::compiled;
    std::uint64_t build_ns = 0;
    bool blocking = false;
};

struct track {
    std::uint32_t pid = 0, tid = 0;
    std::string process, thread;
};

struct statistic {
    std::uint64_t count = 0, total_ns = 0, min_ns = ~std::uint64_t{0}, max_ns = 0;
    void add(std::uint64_t ns) noexcept;
};

/// Everything one profiled run records. Thread-safe.
class session {
  public:
    /// Past `max_trace_records` spans the trace keeps counting (the summary stays complete) but
    /// stores no more: a trace viewer cannot open much more anyway, and memory stays bounded.
    explicit session(std::size_t max_trace_records = 2'000'000);

    std::uint32_t queue_track(const device& dev, const queue_options& options);
    /// A span on the calling thread's host lane.
    void add_host(record r);
    /// A device command: `enqueued_host_ns` is the host time just before kiln asked the backend
    /// to enqueue it, `queued_device_ns` the device's own time for that moment.
    void add_device(record r, std::uint64_t enqueued_host_ns, std::uint64_t queued_device_ns);

    std::string trace_json() const;
    std::string summary() const;

  private:
    void add_locked(record&& r);

    mutable std::mutex mutex_;
    std::uint64_t origin_ns_;
    std::size_t max_trace_records_;
    std::vector<track> tracks_;
    std::map<std::thread::id, std::uint32_t> thread_tracks_;
    std::map<std::uint32_t, std::uint32_t> queues_per_device_;
    /// Per device track: the smallest offset from the device's clock to the host's that puts
    /// every command's queued time at or after kiln's host time before enqueueing it.
    std::map<std::uint32_t, std::int64_t> offsets_;
    std::vector<record> records_;
    std::uint64_t dropped_ = 0;
    std::map<std::pair<record_kind, std::string>, statistic> statistics_;
};

/// What a queue is asked to do, for the record.
struct command {
    record_kind kind = record_kind::kernel;
    std::size_t bytes = 0;
    const std::string* kernel = nullptr;
    const launch_geometry* geometry = nullptr;
    bool blocking = false;
};

/// A profiled queue's part of the session: each command's event is kept until the command is
/// known to be complete (the queue finished, or polled), its times read and the event dropped.
/// The last copy of the kiln::queue destroys it before the queue itself.
class queue_recorder {
  public:
    queue_recorder(std::shared_ptr<session> owner, const device& dev, const queue_options& options);
    ~queue_recorder();
    queue_recorder(const queue_recorder&) = delete;
    queue_recorder& operator=(const queue_recorder&) = delete;

    template <class Enqueue>
    event timed(const command& c, Enqueue&& enqueue) {
        const std::uint64_t before = now_ns();
        std::shared_ptr<event_impl> done = enqueue();
        add(c, done, before, now_ns());
        return event(std::move(done));
    }
    /// Everything enqueued so far has completed (after queue::finish).
    void completed() noexcept;
    /// Reads the times of the commands that are complete now, waiting for none (at exit).
    void read_completed() noexcept;

  private:
    struct pending {
        std::shared_ptr<event_impl> done;
        record r;
        std::uint64_t enqueued_ns;
    };
    void add(const command& c, std::shared_ptr<event_impl> done, std::uint64_t before,
             std::uint64_t after) noexcept;
    void keep(const command& c, std::shared_ptr<event_impl> done, std::uint64_t before,
              std::uint64_t after);
    void harvest(pending& p) noexcept;

    std::shared_ptr<session> session_;
    std::uint32_t track_;
    std::mutex mutex_;
    std::deque<pending> pending_;
};

/// The one check every command makes: a branch on the queue's recorder, null when profiling is
/// off, so that an unprofiled command costs nothing more.
template <class Enqueue>
event recorded(const queue& q, const command& c, Enqueue&& enqueue) {
    if (queue_recorder* recorder = q.recorder()) [[unlikely]]
        return recorder->timed(c, std::forward<Enqueue>(enqueue));
    return event(enqueue());
}

/// The queue options and recorder for a new queue: profiling forced on while a session records.
std::shared_ptr<queue_recorder> recorder_for(const device& dev, queue_options& options);

/// Records a host wait (event::wait, queue::finish) around `wait`.
template <class Wait>
void waited(const char* what, Wait&& wait) {
    session* s = active();
    if (s == nullptr) [[likely]] {
        wait();
        return;
    }
    record r;
    r.kind = record_kind::wait;
    r.name = what;
    r.start_ns = now_ns();
    wait();
    r.end_ns = now_ns();
    s->add_host(std::move(r));
}

/// Records a program build, its sources' hash and where the binary came from.
void record_build(const device& dev, std::span<const std::string> sources,
                  const std::string& options, program_origin origin,
                  std::chrono::nanoseconds build_time, std::uint64_t start_ns);

const char* kind_name(record_kind kind) noexcept;

}  // namespace kiln::detail::profiling
