// SPDX-License-Identifier: Apache-2.0
// How kiln's own tools (kiln-info, kiln-prof, the heat world's) end: one line on error, status 1.
#include "program_main.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

namespace kiln::programs {
namespace {

const char* current_activity = nullptr;

}  // namespace

void now_doing(const char* activity) {
    current_activity = activity;
}

void flush_standard_output() {
    errno = 0;
    std::cout.flush();
    int error = std::cout ? 0 : errno;
    errno = 0;
    if (std::fflush(stdout) != 0 && error == 0) error = errno;
    if (!std::cout || std::ferror(stdout)) {
        // A buffered write that failed earlier has lost its errno; then say what is known.
        throw std::runtime_error(
            "cannot write to standard output" +
            (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()));
    }
}

int run_program(const char* program, const std::function<int()>& body) {
    try {
        const int status = body();
        flush_standard_output();
        return status;
    } catch (const std::bad_alloc&) {
        // No allocation here: the process may have none left.
        if (current_activity != nullptr) {
            std::fprintf(stderr, "%s: out of memory while %s\n", program, current_activity);
        } else {
            std::fprintf(stderr, "%s: out of memory\n", program);
        }
    } catch (const std::exception& e) {
        std::string message = e.what();
        // One line, whatever the exception carried (a build log, say).
        for (char& c : message) {
            if (c == '\n' || c == '\r') c = ' ';
        }
        std::fprintf(stderr, "%s: %s\n", program, message.c_str());
    } catch (...) {
        std::fprintf(stderr, "%s: unknown error\n", program);
    }
    return 1;
}

}  // namespace kiln::programs
