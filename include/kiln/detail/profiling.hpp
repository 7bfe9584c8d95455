// SPDX-License-Identifier: Apache-2.0
// The profiler beneath KILN_PROFILE, as far as tests and benchmarks reach it: a session recording
// the process's work, installed in code instead of through the environment.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <string>

namespace kiln::detail::profiling {

class session;

/// The session recording now: KILN_PROFILE's, or the innermost scoped_session's; nullptr when
/// profiling is off. The environment is read once, on the first call.
session* active() noexcept;

/// Nanoseconds on the host's steady clock, the one timeline every record is placed on.
std::uint64_t now_ns() noexcept;

/// What KILN_PROFILE does, without the environment and the exit: while it lives, queues created
/// are profiled and everything is recorded into its own session. For tests and benchmarks: one
/// at a time (not nested), made and dropped while no other thread uses kiln.
class scoped_session {
  public:
    scoped_session();
    ~scoped_session();
    scoped_session(const scoped_session&) = delete;
    scoped_session& operator=(const scoped_session&) = delete;

    /// The Chrome trace-event JSON that KILN_PROFILE=<file> writes at exit, of what is recorded
    /// so far. Commands of live queues that have not been waited for are not in it yet.
    std::string trace_json() const;
    /// The table KILN_PROFILE=summary prints at exit.
    std::string summary() const;
    /// Writes trace_json() as the exit does: false, with a message on stderr, when it cannot.
    bool write_trace(const std::string& path) const noexcept;

  private:
    std::shared_ptr<session> session_;
    session* previous_;
};

}  // namespace kiln::detail::profiling
#pragma GCC visibility pop
