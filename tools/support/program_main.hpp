// SPDX-License-Identifier: Apache-2.0
// How kiln's own tools (kiln-info, kiln-prof, the heat world's) end: one line on error, status 1.
#pragma once

#include <functional>

namespace kiln::programs {

// Runs a program's body and returns its exit status. An exception becomes one line on standard
// error, "<program>: <message>", and status 1; running out of memory says what the program was
// doing (see now_doing) instead of a bare "std::bad_alloc". Standard output is flushed after the
// body, and output that could not be written (a full disk, /dev/full, a closed pipe) is an error
// too, so that `program --help > /dev/full` does not report success.
int run_program(const char* program, const std::function<int()>& body);

// Names what the program does from now on, for the out-of-memory message: after
// now_doing("encoding the picture"), "render_world: out of memory while encoding the picture".
// `activity` must outlive the program (a string literal): reporting it needs no memory.
void now_doing(const char* activity);

// Flushes std::cout and stdout; throws std::runtime_error when either could not be written.
void flush_standard_output();

}  // namespace kiln::programs
