// SPDX-License-Identifier: Apache-2.0
// kiln-prof's reading and drawing, apart from its files: a trace's text in, a picture's text out,
// so that the fuzzer (fuzz/kiln_prof_fuzz.cpp) runs the code the tool runs.
#pragma once

#include <cstddef>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::prof {

// A trace kiln-prof does not draw. The message is one line that names the trace.
struct trace_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The deepest JSON kiln-prof reads: deeper input is refused while it is parsed, since
// nlohmann-json copies and prints documents by recursion. A kiln trace nests 4 levels (the
// document, traceEvents, an event, its args).
inline constexpr int max_json_depth = 256;
// Times and durations beyond ±1e20 us (3 million years; nanoseconds since 1970 are 1.7e18) are
// refused: within it, every position, tick and total drawn stays finite.
inline constexpr double max_time_us = 1e20;

enum class picture_format { svg, html };

struct picture {
    std::string text;  // the SVG, or the HTML page around it
    std::size_t lanes = 0, kernels = 0;
};

// Draws a Chrome trace (a KILN_PROFILE file, or another tool's) as a timeline. `name` stands
// for the trace in the title and in errors. Throws trace_error.
picture draw_trace(std::string_view json_text, const std::string& name, picture_format format);
picture draw_trace(std::istream& json_text, const std::string& name, picture_format format);

}  // namespace kiln::prof
