// SPDX-License-Identifier: Apache-2.0
// Ends a test process that hangs, a read blocked on a FIFO say, with a message and status 1, so
// that a regression fails instead of stalling the test command (or a run by hand) forever.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>

namespace kiln::test {

/// While one lives, the process ends after `limit` unless the guard is gone by then.
class hang_guard {
  public:
    explicit hang_guard(std::chrono::seconds limit) {
        struct sigaction action {};
        action.sa_handler = &timed_out;
        sigemptyset(&action.sa_mask);
        sigaction(SIGALRM, &action, &previous_);
        alarm(static_cast<unsigned>(limit.count()));
    }
    ~hang_guard() {
        alarm(0);
        sigaction(SIGALRM, &previous_, nullptr);
    }
    hang_guard(const hang_guard&) = delete;
    hang_guard& operator=(const hang_guard&) = delete;

  private:
    static void timed_out(int) {
        static constexpr char message[] = "\nhang_guard: the test hung; ending the process\n";
        (void)!write(STDERR_FILENO, message, sizeof message - 1);
        _exit(1);
    }
    struct sigaction previous_ {};
};

}  // namespace kiln::test
