// SPDX-License-Identifier: Apache-2.0
// The profiler's recorder: which session records, how commands' device times are collected
// and placed on the host's clock, and what happens at exit (docs/profiling.md).
#include "runtime/profiler.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <kiln/runtime/profile.hpp>

#include "runtime/atomic_file.hpp"

namespace kiln::detail::profiling {

namespace {

// What active() returns: unread until the environment has been looked at, then null or the
// recording session. Two loads and a branch per question once read (acquire loads are plain
// loads on x86 and cheap elsewhere).
constinit std::atomic<session*> current{nullptr};
constinit std::atomic<bool> environment_read{false};

// KILN_PROFILE's session and what to do with it at exit. Never destroyed: queues that outlive
// the exit handler (static ones) still record into it harmlessly.
struct environment_profile {
    std::shared_ptr<session> owner;
    std::string path;  // empty: print the summary
    // Its queues, so that the exit handler reads the times of what those still alive then have
    // run: a static queue, or a Python module's, outlives the handler and would take them along.
    std::mutex queues_mutex{};
    std::vector<std::weak_ptr<queue_recorder>> queues{};

    void keep(const std::shared_ptr<queue_recorder>& recorder) {
        std::lock_guard lock(queues_mutex);
        // Dropping the queues gone whenever the list would grow keeps it to the live ones, at
        // a constant cost per queue made.
        if (queues.size() == queues.capacity())
            std::erase_if(queues, [](const auto& q) { return q.expired(); });
        queues.push_back(recorder);
    }
    void read_live_queues() noexcept {
        std::vector<std::shared_ptr<queue_recorder>> live;
        {
            std::lock_guard lock(queues_mutex);
            for (const auto& q : queues)
                if (auto recorder = q.lock()) live.push_back(std::move(recorder));
        }
        for (const auto& recorder : live) recorder->read_completed();
    }
};
environment_profile* from_environment = nullptr;

void write_at_exit() noexcept {
    environment_profile& profile = *from_environment;
    try {
        profile.read_live_queues();
        if (profile.path.empty()) {
            const std::string table = profile.owner->summary();
            std::fputs(table.c_str(), stderr);
            return;
        }
        const std::string trace = profile.owner->trace_json();
        // What the program printed is still in stdout's buffer: it goes before a trace that is
        // written into the same stream (KILN_PROFILE=/dev/stdout).
        std::fflush(stdout);
        write_file(profile.path, trace.data(), trace.size());
        std::fprintf(stderr, "kiln: profile written to %s\n", profile.path.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kiln: KILN_PROFILE: the profile was not written: %s\n", e.what());
    } catch (...) {
        std::fputs("kiln: KILN_PROFILE: the profile was not written\n", stderr);
    }
}

session* read_environment() noexcept {
    static std::once_flag once;
    try {
        std::call_once(once, [] {
            const char* value = std::getenv("KILN_PROFILE");
            if (value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0) {
                from_environment = new environment_profile{
                    std::make_shared<session>(),
                    std::strcmp(value, "summary") == 0 ? std::string() : std::string(value)};
                current.store(from_environment->owner.get(), std::memory_order_release);
                std::atexit(write_at_exit);
            }
            environment_read.store(true, std::memory_order_release);
        });
    } catch (...) {
        // Out of memory while starting: run unprofiled rather than fail the caller.
        environment_read.store(true, std::memory_order_release);
    }
    return current.load(std::memory_order_acquire);
}

std::mutex installed_mutex;  // orders scoped sessions' installing and their queues' lookups
std::shared_ptr<session> installed;

std::shared_ptr<session> owning(session* s) {
    std::lock_guard lock(installed_mutex);
    if (installed && installed.get() == s) return installed;
    if (from_environment != nullptr && from_environment->owner.get() == s)
        return from_environment->owner;
    return nullptr;
}

}  // namespace

session* active() noexcept {
    if (environment_read.load(std::memory_order_acquire)) [[likely]]
        return current.load(std::memory_order_acquire);
    return read_environment();
}

std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// --- scoped sessions ---------------------------------------------------------------------------

scoped_session::scoped_session() : session_(std::make_shared<session>()), previous_(active()) {
    std::lock_guard lock(installed_mutex);
    installed = session_;
    current.store(session_.get(), std::memory_order_release);
}

scoped_session::~scoped_session() {
    std::lock_guard lock(installed_mutex);
    installed.reset();
    current.store(previous_, std::memory_order_release);
}

std::string scoped_session::trace_json() const {
    return session_->trace_json();
}
std::string scoped_session::summary() const {
    return session_->summary();
}
bool scoped_session::write_trace(const std::string& path) const noexcept {
    try {
        const std::string trace = session_->trace_json();
        write_file(path, trace.data(), trace.size());
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kiln: the profile was not written: %s\n", e.what());
    }
    return false;
}

// --- queues ------------------------------------------------------------------------------------

std::shared_ptr<queue_recorder> recorder_for(const device& dev, queue_options& options) {
    session* s = active();
    if (s == nullptr) [[likely]]
        return nullptr;
    std::shared_ptr<session> owner = owning(s);
    if (!owner) return nullptr;
    options.profiling = true;
    auto recorder = std::make_shared<queue_recorder>(std::move(owner), dev, options);
    if (from_environment != nullptr && from_environment->owner.get() == s)
        from_environment->keep(recorder);
    return recorder;
}

queue_recorder::queue_recorder(std::shared_ptr<session> owner, const device& dev,
                               const queue_options& options)
    : session_(std::move(owner)), track_(session_->queue_track(dev, options)) {}

queue_recorder::~queue_recorder() {
    // The queue is going away: what it still runs completes first, as queue::finish would.
    for (pending& p : pending_) {
        try {
            if (p.done) p.done->wait();
        } catch (...) {
            p.done.reset();  // the command failed: it has no times
        }
        harvest(p);
    }
}

void queue_recorder::add(const command& c, std::shared_ptr<event_impl> done, std::uint64_t before,
                         std::uint64_t after) noexcept {
    // The command is enqueued: whatever happens to its record, its event reaches the caller.
    try {
        keep(c, std::move(done), before, after);
    } catch (...) {
        // No memory for the record: the command is left out of the profile.
    }
}

void queue_recorder::keep(const command& c, std::shared_ptr<event_impl> done, std::uint64_t before,
                          std::uint64_t after) {
    record r;
    r.kind = c.kind;
    r.track = track_;
    r.bytes = c.bytes;
    r.blocking = c.blocking;
    if (c.kernel != nullptr) r.name = *c.kernel;
    if (c.geometry != nullptr) {
        r.dims = c.geometry->dims;
        r.global = c.geometry->global;
        r.local = c.geometry->local;
    }
    if (c.blocking) {
        // The host waited for the transfer inside the call.
        record wait;
        wait.kind = record_kind::wait;
        wait.name = std::string("blocking ") + kind_name(c.kind);
        wait.start_ns = before;
        wait.end_ns = after;
        session_->add_host(std::move(wait));
    }
    if (!done) return;  // a backend may return no event: nothing to time
    std::lock_guard lock(mutex_);
    pending_.push_back({std::move(done), std::move(r), before});
    // Poll only once enough have gathered: most programs wait on their queues long before, and
    // the poll is a driver call per command.
    constexpr std::size_t poll_threshold = 256;
    if (pending_.size() < poll_threshold) return;
    while (!pending_.empty()) {
        try {
            if (pending_.front().done->status() != event_status::complete) break;
        } catch (...) {
            pending_.front().done.reset();
        }
        harvest(pending_.front());
        pending_.pop_front();
    }
}

void queue_recorder::completed() noexcept {
    std::lock_guard lock(mutex_);
    for (pending& p : pending_) harvest(p);
    pending_.clear();
}

void queue_recorder::read_completed() noexcept {
    std::lock_guard lock(mutex_);
    std::erase_if(pending_, [&](pending& p) {
        try {
            if (p.done->status() != event_status::complete) return false;
        } catch (...) {
            p.done.reset();  // the command failed: it has no times
        }
        harvest(p);
        return true;
    });
}

void queue_recorder::harvest(pending& p) noexcept {
    if (!p.done) return;
    try {
        const profiling_times times = p.done->times();
        p.r.start_ns = times.started_ns;
        p.r.end_ns = times.ended_ns;
        session_->add_device(std::move(p.r), p.enqueued_ns, times.queued_ns);
    } catch (...) {
        // A failed command, or no memory for the record: it stays out of the profile.
    }
    p.done.reset();
}

// --- builds --------------------------------------------------------------------------------------

void record_build(const device& dev, std::span<const std::string> sources,
                  const std::string& options, program_origin origin,
                  std::chrono::nanoseconds build_time, std::uint64_t start_ns) {
    session* s = active();
    if (s == nullptr) return;
    // FNV-1a of the sources and options: names the program the same way in every run.
    std::uint64_t hash = 14695981039346656037ull;
    auto mix = [&](std::string_view text) {
        for (unsigned char c : text) {
            hash ^= c;
            hash *= 1099511628211ull;
        }
        hash ^= 0xff;  // a separator, so that ("ab", "c") and ("a", "bc") differ
        hash *= 1099511628211ull;
    };
    for (const auto& source : sources) mix(source);
    mix(options);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    record r;
    r.kind = record_kind::build;
    r.name = hex;
    r.detail = dev.name() + " (" + std::string(to_string(dev.backend())) + ")";
    r.origin = origin;
    r.build_ns = static_cast<std::uint64_t>(build_time.count());
    r.start_ns = start_ns;
    r.end_ns = now_ns();
    s->add_host(std::move(r));
}

const char* kind_name(record_kind kind) noexcept {
    switch (kind) {
        case record_kind::kernel:
            return "kernel";
        case record_kind::write:
            return "write";
        case record_kind::read:
            return "read";
        case record_kind::copy:
            return "copy";
        case record_kind::fill:
            return "fill";
        case record_kind::build:
            return "build";
        case record_kind::wait:
            return "wait";
        case record_kind::region:
            return "region";
    }
    return "?";
}

}  // namespace kiln::detail::profiling

namespace kiln {

bool profiling_enabled() noexcept {
    return detail::profiling::active() != nullptr;
}

profile_region::profile_region(std::string_view name) {
    if (detail::profiling::active() == nullptr) [[likely]]
        return;
    name_ = name;
    recording_ = true;
    start_ns_ = detail::profiling::now_ns();
}

profile_region::~profile_region() {
    if (!recording_) [[likely]]
        return;
    detail::profiling::session* s = detail::profiling::active();
    if (s == nullptr) return;
    try {
        detail::profiling::record r;
        r.kind = detail::profiling::record_kind::region;
        r.name = std::move(name_);
        r.start_ns = start_ns_;
        r.end_ns = detail::profiling::now_ns();
        s->add_host(std::move(r));
    } catch (...) {
        // No memory for the record: the region is left out, the program goes on.
    }
}

}  // namespace kiln
