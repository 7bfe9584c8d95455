// SPDX-License-Identifier: Apache-2.0
// kiln-prof's reading and drawing: a Chrome trace parsed into lanes of spans, drawn as SVG or as
// an HTML page around the SVG.
#include "kiln_prof_draw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::prof {
namespace {

using nlohmann::json;

struct span {
    std::string name, category, tooltip;
    double start_us = 0, duration_us = 0;
    int row = 0;  // nesting depth (host lanes) or overlap (out-of-order queues)
};

struct lane {
    std::int64_t pid = 0, tid = 0;
    std::string process, thread;
    std::vector<span> spans;
    int rows = 1;
};

struct kernel_total {
    std::string name;
    long count = 0;
    double total_us = 0;
};

struct timeline {
    std::vector<lane> lanes;
    std::vector<kernel_total> kernels;  // largest total first
    double kernel_time_us = 0;
    double begin_us = 0, end_us = 0;  // first start, last end
};

// Colours of kiln's categories; anything else (another producer's trace) is grey.
const std::map<std::string, std::string> colours = {
    {"kernel", "#4e79a7"}, {"transfer", "#f28e2b"}, {"copy", "#59a14f"},  {"fill", "#b07aa1"},
    {"build", "#9c755f"},  {"wait", "#e15759"},     {"region", "#edc948"}};

std::string colour_of(const std::string& category) {
    auto found = colours.find(category);
    return found == colours.end() ? "#bab0ac" : found->second;
}

/// The length of the well-formed UTF-8 sequence that `text` starts with (RFC 3629: no overlong
/// forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if ((byte(i) & 0xC0) != 0x80) return 0;
    return length;
}

/// `text` as XML character data or attribute value. XML 1.0 allows no C0 control character but
/// tab, newline and carriage return, not even as a character reference, nor U+FFFE and U+FFFF,
/// nor broken UTF-8; JSON strings may hold all but the last, a file name all of them. Each
/// becomes U+FFFD, the replacement character.
std::string escape(std::string_view text) {
    constexpr std::string_view replacement = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) >= 0x80) {
            const std::size_t length = utf8_length(text.substr(i));
            const std::string_view character = text.substr(i, std::max<std::size_t>(length, 1));
            out += length == 0 || character == "\xEF\xBF\xBE" || character == "\xEF\xBF\xBF"
                       ? replacement
                       : character;
            i += character.size();
            continue;
        }
        ++i;
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\t':
            case '\n':
            case '\r':
                out += c;
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                    out += replacement;
                else
                    out += c;
        }
    }
    return out;
}

/// At most `bytes` bytes of `text`, cut before a character rather than inside one.
std::string_view prefix(std::string_view text, std::size_t bytes) {
    if (text.size() <= bytes) return text;
    while (bytes > 0 && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) --bytes;
    return text.substr(0, bytes);
}

/// The shortest text that reads back as `value` ("1e+308", "-0.5").
std::string shortest(double value) {
    char text[32];
    for (int digits = 1;; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (digits == 17 || std::strtod(text, nullptr) == value) return text;
    }
}

std::string number(double value, int decimals = 1) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

/// A tick's label: as few digits as the step needs.
std::string tick_text(double us) {
    char text[64];
    if (us >= 1e6)
        std::snprintf(text, sizeof text, "%g s", us / 1e6);
    else if (us >= 1e3)
        std::snprintf(text, sizeof text, "%g ms", us / 1e3);
    else
        std::snprintf(text, sizeof text, "%g us", us);
    return text;
}

std::string duration_text(double us) {
    if (us >= 1e6) return number(us / 1e6, 3) + " s";
    if (us >= 1e3) return number(us / 1e3, 3) + " ms";
    return number(us, 3) + " us";
}

/// `value` for a message: a number as itself, anything else by its type ("a string").
std::string described(const json& value) {
    if (value.is_number()) return shortest(value.get<double>());
    if (value.is_null()) return "null";
    const std::string type = value.type_name();
    return (type == "object" || type == "array" ? "an " : "a ") + type;
}

/// An event's fields, checked: nlohmann-json's own conversions throw messages that name no
/// field, and turn a float into an integer without a range check.
class event_fields {
  public:
    /// `within` names the object inside the event that holds the fields ("args."), or is "".
    event_fields(const json& event, std::size_t index, const std::string& trace,
                 const char* within = "")
        : event_(event), index_(index), trace_(trace), within_(within) {}

    /// A string field; "" where it is missing.
    std::string text(const char* key) const {
        const json* value = find(key);
        if (value == nullptr) return "";
        if (!value->is_string()) refuse(key, "is " + described(*value) + ", not a string");
        return value->get<std::string>();
    }

    /// A time in microseconds; 0 where it is missing.
    double time_us(const char* key) const {
        const json* value = find(key);
        if (value == nullptr) return 0;
        if (!value->is_number()) refuse(key, "is " + described(*value) + ", not a number");
        const double us = value->get<double>();
        if (std::abs(us) > max_time_us)
            refuse(key, "is " + shortest(us) + " us, beyond kiln-prof's limit of ±" +
                            shortest(max_time_us) + " us");
        return us;
    }

    /// A process or thread id; 0 where it is missing.
    std::int64_t id(const char* key) const {
        const json* value = find(key);
        if (value == nullptr) return 0;
        if (value->is_number_integer() &&
            (!value->is_number_unsigned() || value->get<std::uint64_t>() <= INT64_MAX))
            return value->get<std::int64_t>();
        // Whole floats below 2^63 in magnitude convert exactly.
        if (value->is_number_float()) {
            const double id = value->get<double>();
            if (id == std::trunc(id) && std::abs(id) < 0x1p63) return static_cast<std::int64_t>(id);
        }
        refuse(key, "is " + described(*value) + ", not a whole number of 64 bits");
    }

  private:
    const json* find(const char* key) const {
        const auto found = event_.find(key);
        return found == event_.end() ? nullptr : &*found;
    }
    [[noreturn]] void refuse(const char* key, const std::string& what) const {
        throw trace_error(trace_ + ": event " + std::to_string(index_) + ": \"" + within_ + key +
                          "\" " + what);
    }

    const json& event_;
    std::size_t index_;
    const std::string& trace_;
    const char* within_;
};

/// The JSON document, refused past max_json_depth while it is parsed: nlohmann-json's parser is
/// iterative, but its copies, comparisons and dump() recurse once per level.
template <typename Input>
json parse(Input&& text, const std::string& path) {
    const json::parser_callback_t limit_depth = [&path](int depth, json::parse_event_t event,
                                                        json&) {
        // `depth` counts the containers around the one that starts.
        if ((event == json::parse_event_t::object_start ||
             event == json::parse_event_t::array_start) &&
            depth >= max_json_depth)
            throw trace_error(path + " nests JSON deeper than " + std::to_string(max_json_depth) +
                              " levels, kiln-prof's limit");
        return true;
    };
    try {
        return json::parse(std::forward<Input>(text), limit_depth);
    } catch (const json::exception& e) {
        throw trace_error(path + " is not JSON: " + e.what());
    }
}

/// Row of each span: the lowest row whose last span has ended, so nested spans (a region around
/// a wait) sit below their parent and overlapping commands side by side. `spans` is sorted by
/// start. Returns the number of rows; O(n log n), however many spans overlap.
int assign_rows(std::vector<span>& spans) {
    using row_end = std::pair<double, int>;  // when a busy row's last span ends, and the row
    std::priority_queue<row_end, std::vector<row_end>, std::greater<>> busy;
    std::set<int> free_rows;
    int rows = 0;
    for (span& s : spans) {
        while (!busy.empty() && busy.top().first <= s.start_us) {
            free_rows.insert(busy.top().second);
            busy.pop();
        }
        if (free_rows.empty()) {
            s.row = rows++;
        } else {
            s.row = *free_rows.begin();
            free_rows.erase(free_rows.begin());
        }
        busy.emplace(s.start_us + s.duration_us, s.row);
    }
    return rows;
}

template <typename Input>
timeline read_trace(Input&& text, const std::string& path) {
    const json trace = parse(std::forward<Input>(text), path);
    // The events are read where they lie: a copy of the document would recurse.
    const json* events = &trace;
    if (trace.is_object()) {
        const auto found = trace.find("traceEvents");
        events = found == trace.end() ? nullptr : &*found;
    }
    if (events == nullptr || !events->is_array())
        throw trace_error(path + " has no traceEvents array");

    std::map<std::int64_t, std::string> process_names;
    std::map<std::pair<std::int64_t, std::int64_t>, lane> lanes;
    std::map<std::string, kernel_total> kernels;
    timeline result;
    bool any = false;
    for (std::size_t index = 0; index < events->size(); ++index) {
        const json& e = (*events)[index];
        if (!e.is_object()) continue;
        const event_fields fields(e, index, path);
        const std::string phase = fields.text("ph");
        const std::int64_t pid = fields.id("pid"), tid = fields.id("tid");
        if (phase == "M") {
            const auto args = e.find("args");
            const std::string name = args != e.end() && args->is_object()
                                         ? event_fields(*args, index, path, "args.").text("name")
                                         : "";
            const std::string what = fields.text("name");
            if (what == "process_name") process_names[pid] = name;
            if (what == "thread_name") lanes[{pid, tid}].thread = name;
            continue;
        }
        if (phase != "X") continue;
        span s;
        s.name = fields.text("name");
        s.category = fields.text("cat");
        s.start_us = fields.time_us("ts");
        s.duration_us = std::max(0.0, fields.time_us("dur"));
        s.tooltip = s.name + " (" + s.category + "): " + duration_text(s.duration_us);
        if (auto args = e.find("args"); args != e.end() && args->is_object())
            for (const auto& [key, value] : args->items())
                s.tooltip += "\n" + key + ": " + value.dump();
        if (s.category == "kernel") {
            kernel_total& k = kernels[s.name];
            k.name = s.name;
            ++k.count;
            k.total_us += s.duration_us;
            result.kernel_time_us += s.duration_us;
        }
        result.begin_us = any ? std::min(result.begin_us, s.start_us) : s.start_us;
        result.end_us =
            any ? std::max(result.end_us, s.start_us + s.duration_us) : s.start_us + s.duration_us;
        any = true;
        lanes[{pid, tid}].spans.push_back(std::move(s));
    }
    if (!any) throw trace_error(path + " has no complete (\"X\") events to draw");

    for (auto& [key, l] : lanes) {
        if (l.spans.empty()) continue;
        l.pid = key.first;
        l.tid = key.second;
        l.process =
            process_names.count(l.pid) ? process_names[l.pid] : "process " + std::to_string(l.pid);
        if (l.thread.empty()) l.thread = "thread " + std::to_string(l.tid);
        // Parents before their children: by start, the longer first.
        std::stable_sort(l.spans.begin(), l.spans.end(), [](const span& a, const span& b) {
            return a.start_us != b.start_us ? a.start_us < b.start_us
                                            : a.duration_us > b.duration_us;
        });
        l.rows = assign_rows(l.spans);
        result.lanes.push_back(std::move(l));
    }
    for (auto& [name, k] : kernels) result.kernels.push_back(k);
    std::stable_sort(
        result.kernels.begin(), result.kernels.end(),
        [](const kernel_total& a, const kernel_total& b) { return a.total_us > b.total_us; });
    return result;
}

// --- drawing ---------------------------------------------------------------------------------

constexpr double width = 1400, label_width = 360, margin = 20, row_height = 16, lane_gap = 6;
constexpr double axis_top = 70;
constexpr std::size_t top_kernel_count = 10;
// The axis spans at least 1 us, so that a trace of one instant (all events at one time, of no
// duration) still has a scale and ticks. The longest axis, 3e20 us (from -max_time_us to
// max_time_us plus a duration of max_time_us), keeps every position and tick finite.
constexpr double min_axis_us = 1;

/// A step of 1, 2 or 5 times a power of ten giving at most 8 steps over `axis_us`.
double nice_step(double axis_us) {
    const double raw = axis_us / 8;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * power) return m * power;
    return 10 * power;
}

/// The timeline as an <svg> element; `top_kernels_inside` adds the kernel table as SVG text
/// (for a standalone .svg; the HTML page has a real table instead).
std::string draw_svg(const timeline& t, const std::string& title, bool top_kernels_inside) {
    const double x0 = label_width + margin, x1 = width - margin;
    const double axis_us = std::max(t.end_us - t.begin_us, min_axis_us);
    const double scale = (x1 - x0) / axis_us;
    double lanes_height = 0;
    for (const lane& l : t.lanes) lanes_height += l.rows * row_height + lane_gap;
    const std::size_t table_rows =
        top_kernels_inside ? std::min(top_kernel_count, t.kernels.size()) : 0;
    const double table_top = axis_top + 20 + lanes_height + 30;
    const double height = table_top + (table_rows ? (table_rows + 2) * 18 : 0) + margin;

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
        << number(height, 0) << "\" viewBox=\"0 0 " << width << " " << number(height, 0)
        << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    svg << "<text x=\"" << margin << "\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
        << escape(title) << "</text>\n";
    svg << "<text x=\"" << margin << "\" y=\"44\">" << t.lanes.size() << " lanes, "
        << duration_text(t.end_us - t.begin_us) << " from first to last event</text>\n";
    // Legend.
    double legend_x = x0;
    svg << "<g class=\"legend\">\n";
    for (const auto& [category, colour] : colours) {
        svg << "<rect x=\"" << legend_x << "\" y=\"34\" width=\"12\" height=\"12\" fill=\""
            << colour << "\"/><text x=\"" << legend_x + 16 << "\" y=\"44\">" << category
            << "</text>\n";
        legend_x += 90;
    }
    svg << "</g>\n";
    // Time axis: ticks relative to the first event.
    const double step = nice_step(axis_us);
    // At most 9 ticks; counted, not accumulated, so that no rounding of `at` adds one.
    const int steps = std::min(static_cast<int>(axis_us / step * (1 + 1e-9)), 8);
    svg << "<g class=\"axis\" stroke=\"#dddddd\">\n";
    for (int i = 0; i <= steps; ++i) {
        const double at = i * step, x = x0 + at * scale;
        svg << "<line x1=\"" << number(x) << "\" y1=\"" << axis_top << "\" x2=\"" << number(x)
            << "\" y2=\"" << number(axis_top + 20 + lanes_height) << "\"/>"
            << "<text x=\"" << number(x + 2) << "\" y=\"" << axis_top + 12
            << "\" stroke=\"none\" fill=\"#555555\">" << tick_text(at) << "</text>\n";
    }
    svg << "</g>\n";

    double y = axis_top + 20;
    for (const lane& l : t.lanes) {
        const double h = l.rows * row_height;
        svg << "<g class=\"lane\" data-pid=\"" << l.pid << "\" data-tid=\"" << l.tid << "\">\n"
            << "<rect class=\"lane-background\" x=\"" << x0 << "\" y=\"" << number(y)
            << "\" width=\"" << x1 - x0 << "\" height=\"" << h << "\" fill=\"#f4f4f4\"/>\n"
            << "<text class=\"lane-label\" x=\"" << margin << "\" y=\"" << number(y + 12) << "\">"
            << escape(prefix(l.process, 34)) << " / " << escape(l.thread) << "</text>\n";
        for (const span& s : l.spans) {
            const double x = x0 + (s.start_us - t.begin_us) * scale;
            svg << "<rect class=\"event " << escape(s.category) << "\" x=\"" << number(x, 2)
                << "\" y=\"" << number(y + s.row * row_height + 1) << "\" width=\""
                << number(std::max(s.duration_us * scale, 1.0), 2) << "\" height=\""
                << row_height - 2 << "\" fill=\"" << colour_of(s.category) << "\"><title>"
                << escape(s.tooltip) << "</title></rect>\n";
        }
        svg << "</g>\n";
        y += h + lane_gap;
    }

    if (table_rows > 0) {
        svg << "<g class=\"top-kernels\">\n<text x=\"" << margin << "\" y=\"" << table_top
            << "\" font-weight=\"bold\">Top kernels by device time</text>\n";
        const double columns[] = {margin, 500, 600, 720, 840};
        const char* headings[] = {"kernel", "count", "total", "mean", "share"};
        for (int c = 0; c < 5; ++c)
            svg << "<text x=\"" << columns[c] << "\" y=\"" << table_top + 18
                << "\" font-weight=\"bold\">" << headings[c] << "</text>\n";
        for (std::size_t r = 0; r < table_rows; ++r) {
            const kernel_total& k = t.kernels[r];
            const double row_y = table_top + 18 * (r + 2);
            const std::string cells[] = {
                k.name, std::to_string(k.count), duration_text(k.total_us),
                duration_text(k.total_us / k.count),
                number(t.kernel_time_us > 0 ? 100 * k.total_us / t.kernel_time_us : 0) + "%"};
            svg << "<g class=\"kernel-row\">";
            for (int c = 0; c < 5; ++c)
                svg << "<text x=\"" << columns[c] << "\" y=\"" << row_y << "\">" << escape(cells[c])
                    << "</text>";
            svg << "</g>\n";
        }
        svg << "</g>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

/// A page with no outside references (no scripts, fonts or styles from the network), written
/// as well-formed XHTML so that XML tools read it too.
std::string draw_html(const timeline& t, const std::string& title) {
    std::ostringstream html;
    html << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
         << "<meta charset=\"utf-8\"/>\n<title>" << escape(title) << "</title>\n"
         << "<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}"
            "td,th{padding:2px 12px;text-align:right}td:first-child,th:first-child{text-align:left}"
            "tr:nth-child(even){background:#f4f4f4}svg{max-width:100%;height:auto}"
            "svg rect.event:hover{stroke:#000}</style>\n"
         << "</head>\n<body>\n"
         << draw_svg(t, title, false) << "<h2>Top kernels by device time</h2>\n"
         << "<table class=\"top-kernels\">\n<tr><th>kernel</th><th>count</th><th>total</th>"
            "<th>mean</th><th>share</th></tr>\n";
    for (std::size_t r = 0; r < std::min(top_kernel_count, t.kernels.size()); ++r) {
        const kernel_total& k = t.kernels[r];
        html << "<tr class=\"kernel-row\"><td>" << escape(k.name) << "</td><td>" << k.count
             << "</td><td>" << duration_text(k.total_us) << "</td><td>"
             << duration_text(k.total_us / k.count) << "</td><td>"
             << number(t.kernel_time_us > 0 ? 100 * k.total_us / t.kernel_time_us : 0)
             << "%</td></tr>\n";
    }
    html << "</table>\n</body>\n</html>\n";
    return html.str();
}

template <typename Input>
picture draw(Input&& text, const std::string& name, picture_format format) {
    const timeline t = read_trace(std::forward<Input>(text), name);
    const std::string title = "kiln profile: " + name;
    return {format == picture_format::html ? draw_html(t, title) : draw_svg(t, title, true),
            t.lanes.size(), t.kernels.size()};
}

}  // namespace

picture draw_trace(std::string_view json_text, const std::string& name, picture_format format) {
    return draw(json_text, name, format);
}

picture draw_trace(std::istream& json_text, const std::string& name, picture_format format) {
    return draw(json_text, name, format);
}

}  // namespace kiln::prof
