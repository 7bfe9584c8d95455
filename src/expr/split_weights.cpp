// SPDX-License-Identifier: Apache-2.0
// What split vectors weigh devices by: the weighting choice, and memory bandwidth from the
// user, the driver, or a measurement made once and kept in memory and in kiln's cache directory.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <kiln/runtime/cache.hpp>
#include <kiln/vector.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "expr/bandwidth_file.hpp"
#include "runtime/atomic_file.hpp"
#include "runtime/device_identity.hpp"

namespace kiln {
namespace {

split_weighting weighting_from_environment() {
    const char* text = std::getenv("KILN_SPLIT_WEIGHTING");
    if (text == nullptr || std::string_view(text) == "memory_bandwidth")
        return split_weighting::memory_bandwidth;
    if (std::string_view(text) == "compute") return split_weighting::compute;
    throw invalid_argument_error(
        "KILN_SPLIT_WEIGHTING",
        "expected memory_bandwidth or compute, got '" + std::string(text) + "'");
}

// Devices of one model measure alike: one measurement serves them all, so that equal devices
// get equal parts rather than parts that differ by the noise of two measurements.
std::string model_of(const device& d) {
    return detail::device_identity(d.properties());
}

// The measurement of a model across processes: a small text file in kiln's cache directory,
// its first lines the format and the model (a hash collision then reads as a miss).
constexpr const char* disk_format = "kiln-bandwidth 1";

// Three short lines; a device's identity is a few hundred bytes. Anything larger is not kiln's.
constexpr std::size_t max_disk_entry_bytes = 64 << 10;

// Best effort: a cache that cannot be written only means measuring again next time. Written
// through kiln's one writer of its own files, so that readers never see half a file.
void write_to_disk(const std::string& model, double value) {
    const std::filesystem::path entry = detail::bandwidth_file(model);
    if (entry.empty()) return;
    std::error_code ignored;
    std::filesystem::create_directories(entry.parent_path(), ignored);
    std::ostringstream text;
    text.precision(17);
    text << disk_format << "\n" << model << "\n" << value << "\n";
    try {
        detail::replace_own_file(entry.string(), text.str().data(), text.str().size());
    } catch (const std::runtime_error&) {
    }
}

struct bandwidth_state {
    std::mutex mutex;
    std::optional<split_weighting> weighting;
    std::map<std::size_t, double> set_by_user;  // by device index
    std::map<std::string, double> measured;     // by model
};

bandwidth_state& state() {
    static bandwidth_state instance;
    return instance;
}

// Bytes/s of `y = 2 * x` over 16 MiB each way, the best of a few runs after one that builds
// the kernel: large enough to leave the caches of CPU devices, short on any device.
double measure_copy_bandwidth(const queue& q) {
    constexpr std::size_t n = std::size_t{1} << 22;
    vector<float> x(q, n), y(q, n);
    x = 1.0f;
    y = 2 * x;
    q.finish();
    double best = 0;
    for (int run = 0; run < 3; ++run) {
        const auto start = std::chrono::steady_clock::now();
        y = 2 * x;
        q.finish();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (seconds > 0) best = std::max(best, 2.0 * n * sizeof(float) / seconds);
    }
    return best > 0 ? best : 1.0;
}

}  // namespace

namespace detail {

std::filesystem::path bandwidth_file(const std::string& model) {
    const std::filesystem::path folder = program_cache::directory();
    if (folder.empty()) return {};
    return folder / "bandwidth" / std::to_string(std::hash<std::string>{}(model));
}

// A FIFO or a link to /dev/zero there once hung the process or grew its memory without bound.
std::optional<double> read_measured_bandwidth(const std::string& model) {
    const std::filesystem::path entry = bandwidth_file(model);
    if (entry.empty()) return std::nullopt;
    const own_file_read found = read_own_file(entry.string(), max_disk_entry_bytes);
    if (!found.file) return std::nullopt;
    std::istringstream in(found.file->bytes);
    std::string format, stored_model;
    double value = 0;
    if (!std::getline(in, format) || format != disk_format || !std::getline(in, stored_model) ||
        stored_model != model || !(in >> value) || !std::isfinite(value) || value <= 0)
        return std::nullopt;
    return value;
}

}  // namespace detail

void set_split_weighting(split_weighting weighting) {
    const std::lock_guard lock(state().mutex);
    state().weighting = weighting;
}

split_weighting current_split_weighting() {
    const std::lock_guard lock(state().mutex);
    if (!state().weighting) state().weighting = weighting_from_environment();
    return *state().weighting;
}

void set_memory_bandwidth(const device& d, double bytes_per_second) {
    if (!std::isfinite(bytes_per_second) || bytes_per_second < 0)
        throw invalid_argument_error(
            "kiln::set_memory_bandwidth",
            "bandwidth must be a finite number >= 0, got " + std::to_string(bytes_per_second));
    const std::lock_guard lock(state().mutex);
    if (bytes_per_second == 0)
        state().set_by_user.erase(d.index());
    else
        state().set_by_user[d.index()] = bytes_per_second;
}

double memory_bandwidth(const queue& q) {
    const device d = q.device();
    const std::lock_guard lock(state().mutex);
    if (const auto user = state().set_by_user.find(d.index()); user != state().set_by_user.end())
        return user->second;
    if (const double peak = d.properties().peak_memory_bandwidth_gb_per_s(); peak > 0)
        return peak * 1e9;
    const std::string model = model_of(d);
    if (const auto known = state().measured.find(model); known != state().measured.end())
        return known->second;
    // Measured under the lock, so that two threads never measure the same model at once (the
    // measurement's vectors live on one queue and never ask for weights).
    std::optional<double> value = detail::read_measured_bandwidth(model);
    if (!value) {
        value = measure_copy_bandwidth(q);
        write_to_disk(model, *value);
    }
    state().measured.emplace(model, *value);
    return *value;
}

}  // namespace kiln
