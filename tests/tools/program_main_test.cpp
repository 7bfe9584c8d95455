// SPDX-License-Identifier: Apache-2.0
// Tests of run_program: errors become one line and status 1, also for memory and standard output.
#include "program_main.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

namespace kiln::programs {
namespace {

// Runs run_program and returns what it printed on standard error.
std::string stderr_of(int& status, const std::function<int()>& body) {
    testing::internal::CaptureStderr();
    status = run_program("tool", body);
    return testing::internal::GetCapturedStderr();
}

TEST(run_program, returns_the_bodys_status) {
    int status = -1;
    EXPECT_EQ(stderr_of(status, [] { return 0; }), "");
    EXPECT_EQ(status, 0);
    EXPECT_EQ(stderr_of(status, [] { return 77; }), "");
    EXPECT_EQ(status, 77);
}

TEST(run_program, turns_an_exception_into_one_line_and_status_1) {
    int status = -1;
    EXPECT_EQ(stderr_of(status, []() -> int { throw std::runtime_error("bad\nworld"); }),
              "tool: bad world\n");
    EXPECT_EQ(status, 1);
    EXPECT_EQ(stderr_of(status, []() -> int { throw 42; }), "tool: unknown error\n");
    EXPECT_EQ(status, 1);
}

TEST(run_program, says_what_ran_out_of_memory) {
    int status = -1;
    EXPECT_EQ(stderr_of(status,
                        []() -> int {
                            now_doing("encoding the picture");
                            throw std::bad_alloc();
                        }),
              "tool: out of memory while encoding the picture\n");
    EXPECT_EQ(status, 1);
}

// Points standard output at /dev/full for the lifetime of the object.
class full_standard_output {
  public:
    full_standard_output() {
        std::fflush(stdout);
        saved_ = dup(STDOUT_FILENO);
        const int full = open("/dev/full", O_WRONLY);
        dup2(full, STDOUT_FILENO);
        close(full);
    }
    ~full_standard_output() {
        std::cout.clear();
        std::fflush(stdout);
        std::clearerr(stdout);
        dup2(saved_, STDOUT_FILENO);
        close(saved_);
    }

  private:
    int saved_ = -1;
};

TEST(run_program, fails_when_standard_output_cannot_be_written) {
    int status = -1;
    std::string message;
    {
        const full_standard_output full;
        message = stderr_of(status, [] {
            std::fputs("usage: tool\n", stdout);
            std::cout << "more\n";
            return 0;
        });
    }
    EXPECT_EQ(status, 1);
    EXPECT_EQ(message, "tool: cannot write to standard output: No space left on device\n");
}

}  // namespace
}  // namespace kiln::programs
