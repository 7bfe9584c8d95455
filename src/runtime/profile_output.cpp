// SPDX-License-Identifier: Apache-2.0
// The profiler's session: records kept under one lock, and what they become at exit (a Chrome
// trace-event file or a summary table).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

#include "runtime/json_text.hpp"
#include "runtime/profiler.hpp"

namespace kiln::detail::profiling {

namespace {

constexpr std::uint32_t host_pid = 0;

const char* origin_name(program_origin origin) {
    switch (origin) {
        case program_origin::memory_cache:
            return "memory";
        case program_origin::disk_cache:
            return "disk";
        case program_origin::compiled:
            break;
    }
    return "compiled";
}

bool on_device(record_kind kind) {
    return kind == record_kind::kernel || kind == record_kind::write || kind == record_kind::read ||
           kind == record_kind::copy || kind == record_kind::fill;
}

const char* category(record_kind kind) {
    return kind == record_kind::write || kind == record_kind::read ? "transfer" : kind_name(kind);
}

const char* direction(record_kind kind) {
    switch (kind) {
        case record_kind::write:
            return "host to device";
        case record_kind::read:
            return "device to host";
        case record_kind::copy:
            return "device to device";
        default:
            return nullptr;
    }
}

/// The summary's row a record counts in: kernels by name, transfers by kind, builds by origin.
std::string row_name(const record& r) {
    switch (r.kind) {
        case record_kind::kernel:
            return "kernel " + r.name;
        case record_kind::build:
            return std::string("build (") + origin_name(r.origin) + ")";
        case record_kind::wait:
            return "wait " + r.name;
        case record_kind::region:
            return "region " + r.name;
        default:
            break;
    }
    const char* way = direction(r.kind);
    return way ? std::string(kind_name(r.kind)) + " (" + way + ")" : kind_name(r.kind);
}

// Fixed-point text that no locale changes (JSON needs '.').
std::string fixed(double value, int decimals = 3) {
    char text[64];
    auto [end, ec] =
        std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
    return ec == std::errc() ? std::string(text, end) : "0";
}

std::string sizes(std::size_t dims, const std::array<std::size_t, 3>& values) {
    std::string text = "[";
    for (std::size_t d = 0; d < dims; ++d) {
        if (d > 0) text += ',';
        text += std::to_string(values[d]);
    }
    return text + "]";
}

}  // namespace

void statistic::add(std::uint64_t ns) noexcept {
    ++count;
    total_ns += ns;
    min_ns = std::min(min_ns, ns);
    max_ns = std::max(max_ns, ns);
}

session::session(std::size_t max_trace_records)
    : origin_ns_(now_ns()), max_trace_records_(max_trace_records) {
    tracks_.push_back({});  // index 0 unused: a record's track is set before it is added
}

std::uint32_t session::queue_track(const device& dev, const queue_options& options) {
    std::lock_guard lock(mutex_);
    const auto pid = static_cast<std::uint32_t>(dev.index() + 1);
    const std::uint32_t tid = ++queues_per_device_[pid];
    tracks_.push_back({pid, tid,
                       "device " + std::to_string(dev.index()) + ": " + dev.name() + " (" +
                           std::string(to_string(dev.backend())) + ")",
                       "queue " + std::to_string(tid) +
                           (options.out_of_order ? " (out of order)" : " (in order)")});
    return static_cast<std::uint32_t>(tracks_.size() - 1);
}

void session::add_host(record r) {
    std::lock_guard lock(mutex_);
    auto [found, inserted] =
        thread_tracks_.emplace(std::this_thread::get_id(), static_cast<std::uint32_t>(0));
    if (inserted) {
        const auto tid = static_cast<std::uint32_t>(thread_tracks_.size());
        tracks_.push_back({host_pid, tid, "host", "thread " + std::to_string(tid)});
        found->second = static_cast<std::uint32_t>(tracks_.size() - 1);
    }
    r.track = found->second;
    add_locked(std::move(r));
}

void session::add_device(record r, std::uint64_t enqueued_host_ns, std::uint64_t queued_device_ns) {
    std::lock_guard lock(mutex_);
    if (queued_device_ns != 0) {
        const std::int64_t offset = static_cast<std::int64_t>(enqueued_host_ns) -
                                    static_cast<std::int64_t>(queued_device_ns);
        auto [found, inserted] = offsets_.emplace(r.track, offset);
        if (!inserted) found->second = std::max(found->second, offset);
    }
    add_locked(std::move(r));
}

void session::add_locked(record&& r) {
    statistics_[{r.kind, row_name(r)}].add(r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0);
    if (records_.size() < max_trace_records_)
        records_.push_back(std::move(r));
    else
        ++dropped_;
}

std::string session::trace_json() const {
    std::lock_guard lock(mutex_);
    std::string out = "{\"traceEvents\":[\n";
    bool first = true;
    auto begin_event = [&] {
        out += first ? "" : ",\n";
        first = false;
    };
    std::vector<std::uint32_t> named_processes;
    for (std::size_t t = 1; t < tracks_.size(); ++t) {
        const track& k = tracks_[t];
        if (std::find(named_processes.begin(), named_processes.end(), k.pid) ==
            named_processes.end()) {
            named_processes.push_back(k.pid);
            begin_event();
            out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(k.pid) +
                   ",\"tid\":0,\"args\":{\"name\":";
            out += json_string(k.process);
            out += "}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" +
                   std::to_string(k.pid) +
                   ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(k.pid) + "}}";
        }
        begin_event();
        out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(k.pid) +
               ",\"tid\":" + std::to_string(k.tid) + ",\"args\":{\"name\":";
        out += json_string(k.thread);
        out += "}}";
    }
    for (const record& r : records_) {
        const track& k = tracks_[r.track];
        std::int64_t shift = 0;
        if (on_device(r.kind))
            if (auto found = offsets_.find(r.track); found != offsets_.end()) shift = found->second;
        const double start_us = static_cast<double>(static_cast<std::int64_t>(r.start_ns) + shift -
                                                    static_cast<std::int64_t>(origin_ns_)) /
                                1e3;
        const std::uint64_t duration_ns = r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
        begin_event();
        out += "{\"name\":";
        out += json_string(r.kind == record_kind::build ? "build " + r.name
                           : r.kind == record_kind::kernel || r.kind == record_kind::region ||
                                   r.kind == record_kind::wait
                               ? r.name
                               : std::string(kind_name(r.kind)));
        out += std::string(",\"cat\":\"") + category(r.kind) +
               "\",\"ph\":\"X\",\"pid\":" + std::to_string(k.pid) +
               ",\"tid\":" + std::to_string(k.tid) + ",\"ts\":" + fixed(start_us) +
               ",\"dur\":" + fixed(duration_ns / 1e3) + ",\"args\":{";
        switch (r.kind) {
            case record_kind::kernel:
                out += "\"global\":" + sizes(r.dims, r.global) + ",\"local\":" +
                       (r.local[0] == 0 ? std::string("null") : sizes(r.dims, r.local)) +
                       ",\"device_ns\":" + std::to_string(duration_ns);
                break;
            case record_kind::write:
            case record_kind::read:
            case record_kind::copy:
            case record_kind::fill:
                if (const char* way = direction(r.kind))
                    out += std::string("\"direction\":\"") + way + "\",";
                out += "\"bytes\":" + std::to_string(r.bytes) + ",\"GB/s\":" +
                       fixed(duration_ns > 0 ? static_cast<double>(r.bytes) / duration_ns : 0.0) +
                       ",\"device_ns\":" + std::to_string(duration_ns) +
                       ",\"blocking\":" + (r.blocking ? "true" : "false");
                break;
            case record_kind::build:
                out += "\"source_hash\":\"" + r.name + "\",\"cache\":\"" + origin_name(r.origin) +
                       "\",\"build_ns\":" + std::to_string(r.build_ns) + ",\"device\":";
                out += json_string(r.detail);
                break;
            case record_kind::wait:
            case record_kind::region:
                out += "\"host_ns\":" + std::to_string(duration_ns);
                break;
        }
        out += "}}";
    }
    out += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"kiln\",\"clock\":";
    out += json_string(
        "microseconds on the host's steady clock since profiling began; device "
        "times shifted per queue by the offset from each command's queued time");
    out += ",\"dropped_events\":" + std::to_string(dropped_) + "}}\n";
    return out;
}

std::string session::summary() const {
    std::lock_guard lock(mutex_);
    std::uint64_t device_total = 0, device_count = 0;
    std::size_t width = 24;
    for (const auto& [key, stat] : statistics_) {
        if (on_device(key.first)) {
            device_total += stat.total_ns;
            device_count += stat.count;
        }
        width = std::max(width, key.second.size());
    }
    std::string out = "kiln profile: " + std::to_string(device_count) + " device commands, " +
                      fixed(device_total / 1e6) + " ms of device time\n";
    auto line = [&](std::string_view name, const std::string& count, const std::string& total,
                    const std::string& mean, const std::string& min, const std::string& max,
                    const std::string& share) {
        char text[512];
        std::snprintf(text, sizeof text, "%-*.*s %8s %12s %12s %12s %12s %7s",
                      static_cast<int>(width), static_cast<int>(name.size()), name.data(),
                      count.c_str(), total.c_str(), mean.c_str(), min.c_str(), max.c_str(),
                      share.c_str());
        std::string_view row(text);
        while (row.ends_with(' ')) row.remove_suffix(1);
        out += row;
        out += '\n';
    };
    for (bool device_part : {true, false}) {
        line(device_part ? "device time" : "host time", "count", "total ms", "mean us", "min us",
             "max us", device_part ? "share" : "");
        // Largest total first: where the time went.
        std::vector<std::pair<std::string, statistic>> rows;
        for (const auto& [key, stat] : statistics_)
            if (on_device(key.first) == device_part) rows.emplace_back(key.second, stat);
        std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return a.second.total_ns > b.second.total_ns;
        });
        for (const auto& [name, stat] : rows)
            line(name, std::to_string(stat.count), fixed(stat.total_ns / 1e6),
                 fixed(static_cast<double>(stat.total_ns) / stat.count / 1e3),
                 fixed(stat.min_ns / 1e3), fixed(stat.max_ns / 1e3),
                 device_part
                     ? fixed(device_total ? 100.0 * stat.total_ns / device_total : 0.0, 1) + "%"
                     : "");
    }
    return out;
}

}  // namespace kiln::detail::profiling
