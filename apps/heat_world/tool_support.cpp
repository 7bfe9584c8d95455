// SPDX-License-Identifier: Apache-2.0
// What the three heat-world tools share: strict argument parsing, progress, stats.
#include "tool_support.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::heat {
namespace {

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

}  // namespace

unsigned parse_count(std::string_view text, std::string_view what) {
    const std::string name(what);
    if (!text.empty() && text.front() == '-' && text.size() > 1) {
        throw usage_error(name + " must not be negative, got " + quoted(text));
    }
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) {
        throw usage_error(name + " is too large (at most " +
                          std::to_string(std::numeric_limits<unsigned>::max()) + "), got " +
                          quoted(text));
    }
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        throw usage_error(name + " must be a whole number, got " + quoted(text));
    }
    return value;
}

float parse_non_negative(std::string_view text, std::string_view what) {
    const std::string name(what);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size()) {
        throw usage_error(name + " must be a number, got " + quoted(text));
    }
    if (error == std::errc::result_out_of_range || !std::isfinite(value) ||
        !std::isfinite(static_cast<float>(value))) {
        throw usage_error(name + " must be a finite number, got " + quoted(text));
    }
    if (value < 0) throw usage_error(name + " must not be negative, got " + quoted(text));
    return value == 0 ? 0.0f : static_cast<float>(value);  // "-0" becomes +0
}

bool parse_binary_choice(std::string_view text) {
    if (text == "0") return false;
    if (text == "1") return true;
    throw usage_error("binary must be 0 (text) or 1 (binary), got " + quoted(text));
}

argument_reader::argument_reader(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) arguments_.emplace_back(argv[i]);
}

bool argument_reader::flag(std::string_view name) {
    if (done() || arguments_[next_] != name) return false;
    ++next_;
    return true;
}

std::optional<std::string> argument_reader::option(std::string_view name) {
    if (done()) return std::nullopt;
    const std::string& argument = arguments_[next_];
    if (argument == name) {
        if (next_ + 1 >= arguments_.size()) {
            throw usage_error("option " + std::string(name) + " needs a value");
        }
        next_ += 2;
        return arguments_[next_ - 1];
    }
    if (argument.size() > name.size() && argument.compare(0, name.size(), name) == 0 &&
        argument[name.size()] == '=') {
        ++next_;
        return argument.substr(name.size() + 1);
    }
    return std::nullopt;
}

bool argument_reader::next_is_option() const {
    if (done()) return false;
    const std::string& argument = arguments_[next_];
    if (argument.size() < 2 || argument[0] != '-') return false;
    const char second = argument[1];
    return !((second >= '0' && second <= '9') || second == '.');
}

std::string argument_reader::take() {
    return arguments_.at(next_++);
}

void argument_reader::take_positional(std::vector<std::string>& positional) {
    if (flag("--")) {
        while (!done()) positional.push_back(take());
    } else if (next_is_option()) {
        throw usage_error("unknown option '" + take() + "' (try --help)");
    } else {
        positional.push_back(take());
    }
}

bool stderr_is_terminal() {
    return isatty(STDERR_FILENO) == 1;
}

progress_bar::progress_bar(std::string label, std::uint64_t total, bool forced)
    : label_(std::move(label)),
      total_(total),
      forced_(forced),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

progress_bar::~progress_bar() {
    // A bar left half drawn (an exception unwinding) still gets its line ended.
    if (drawn_ && !finished_) std::fputc('\n', stderr);
}

void progress_bar::update(std::uint64_t done) {
    using namespace std::chrono_literals;
    last_done_ = done;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < 100ms) return;
    if (!forced_ && !drawn_ && now - start_ < 500ms) return;
    last_draw_ = now;
    draw(done);
}

void progress_bar::finish() {
    if (finished_) return;
    finished_ = true;
    if (forced_ || drawn_) {
        draw(total_);
        std::fputc('\n', stderr);
    }
}

void progress_bar::draw(std::uint64_t done) {
    constexpr int bar_width = 30;
    const double fraction =
        total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
    const int filled = static_cast<int>(fraction * bar_width);
    char bar[bar_width + 1];
    for (int i = 0; i < bar_width; ++i) bar[i] = i < filled ? '#' : '.';
    bar[bar_width] = '\0';
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char eta[48] = "";
    if (done > 0 && done < total_) {
        std::snprintf(eta, sizeof eta, ", %.0f s left", elapsed / fraction - elapsed);
    }
    std::fprintf(stderr, "\r%s [%s] %5.1f%% %llu/%llu steps, %.1f s%s\x1b[K", label_.c_str(), bar,
                 100.0 * fraction, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total_), elapsed, eta);
    std::fflush(stderr);
    drawn_ = true;
}

std::string update_rate_text(double cell_updates, double seconds) {
    char text[128];
    if (seconds <= 0) {
        std::snprintf(text, sizeof text, "%.3g cell updates in no measurable time", cell_updates);
    } else {
        const double rate = cell_updates / seconds;
        std::snprintf(text, sizeof text,
                      "%.3g cell updates/s, %.3f GB/s (%.0f bytes per cell update)", rate,
                      rate * bytes_per_cell_update / 1e9, bytes_per_cell_update);
    }
    return text;
}

}  // namespace kiln::heat
