// SPDX-License-Identifier: Apache-2.0
// What the three heat-world tools share: strict argument parsing, progress, stats. How they end
// on an error and write files is kiln::programs' (tools/support), shared with kiln's other
// programs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::heat {

// A bad command line; the tools print it as one line and exit with status 1.
class usage_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Strict parsers for command-line values: the whole text must be the value. `what` names the
// value in the error, e.g. "steps must be a whole number, got '1e3'".
unsigned parse_count(std::string_view text, std::string_view what);
// A finite number >= 0, rounded to float through double as the original's (float)strtod did.
float parse_non_negative(std::string_view text, std::string_view what);
// "0" (text) or "1" (binary).
bool parse_binary_choice(std::string_view text);

// Walks argv, telling options from positional values. A leading '-' followed by a digit or '.'
// is a (negative) number, so "-0.1" reaches the number parser and gets a precise complaint,
// and "-" alone is a positional value (standard output).
class argument_reader {
  public:
    argument_reader(int argc, const char* const* argv);

    bool done() const { return next_ >= arguments_.size(); }
    // True and consumed when the next argument is exactly `name`.
    bool flag(std::string_view name);
    // The value of `--name VALUE` or `--name=VALUE` when the next argument is that option.
    std::optional<std::string> option(std::string_view name);
    // For an argument no option matched: after "--" every remaining argument is a positional
    // value; any other option is unknown (usage_error); else the next one is positional.
    void take_positional(std::vector<std::string>& positional);

  private:
    bool next_is_option() const;
    std::string take();

    std::vector<std::string> arguments_;
    std::size_t next_ = 0;
};

bool stderr_is_terminal();

// A one-line progress bar on stderr, redrawn at most ten times a second. When not forced it
// stays silent for the first half second, so short runs print nothing.
class progress_bar {
  public:
    progress_bar(std::string label, std::uint64_t total, bool forced);
    progress_bar(const progress_bar&) = delete;
    progress_bar& operator=(const progress_bar&) = delete;
    ~progress_bar();

    void update(std::uint64_t done);
    void finish();  // draws the final state (if anything was drawn) and ends the line

  private:
    void draw(std::uint64_t done);

    std::string label_;
    std::uint64_t total_;
    bool forced_;
    bool drawn_ = false;
    bool finished_ = false;
    std::uint64_t last_done_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

// Wall-clock seconds since construction.
class stopwatch {
  public:
    stopwatch() : start_(std::chrono::steady_clock::now()) {}
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

  private:
    std::chrono::steady_clock::time_point start_;
};

// Bytes one cell update moves in the bandwidth model: read its temperature and flags, write
// its new temperature.
inline constexpr double bytes_per_cell_update = 12.0;

// "2.50e+08 cell updates/s, 3.00 GB/s (12 bytes per cell update)"
std::string update_rate_text(double cell_updates, double seconds);

}  // namespace kiln::heat
