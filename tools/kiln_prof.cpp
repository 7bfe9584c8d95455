// kiln-prof: draws a KILN_PROFILE trace as a timeline (SVG, or a self-contained HTML page): one
// lane per device queue and host thread, events coloured by kind, and the top kernels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "atomic_file.hpp"
#include "program_main.hpp"

namespace {

using nlohmann::json;

struct span {
    std::string name, category, tooltip;
    double start_us = 0, duration_us = 0;
    int row = 0;  // nesting depth (host lanes) or overlap (out-of-order queues)
};

struct lane {
    long pid = 0, tid = 0;
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
    double begin_us = 0, end_us = 1;
};

// Colours of kiln's categories; anything else (another producer's trace) is grey.
const std::map<std::string, std::string> colours = {
    {"kernel", "#4e79a7"}, {"transfer", "#f28e2b"}, {"copy", "#59a14f"},  {"fill", "#b07aa1"},
    {"build", "#9c755f"},  {"wait", "#e15759"},     {"region", "#edc948"}};

std::string colour_of(const std::string& category) {
    auto found = colours.find(category);
    return found == colours.end() ? "#bab0ac" : found->second;
}

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
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
            default:
                out += c;
        }
    }
    return out;
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

timeline read_trace(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    json trace;
    try {
        trace = json::parse(in);
    } catch (const json::exception& e) {
        throw std::runtime_error(path + " is not JSON: " + e.what());
    }
    const json& events = trace.is_array() ? trace : trace.value("traceEvents", json::array());
    if (!events.is_array()) throw std::runtime_error(path + " has no traceEvents array");

    std::map<long, std::string> process_names;
    std::map<std::pair<long, long>, lane> lanes;
    std::map<std::string, kernel_total> kernels;
    timeline result;
    bool any = false;
    for (const json& e : events) {
        if (!e.is_object()) continue;
        const std::string phase = e.value("ph", "");
        const long pid = e.value("pid", 0L), tid = e.value("tid", 0L);
        if (phase == "M") {
            const std::string name = e.value("args", json::object()).value("name", "");
            if (e.value("name", "") == "process_name") process_names[pid] = name;
            if (e.value("name", "") == "thread_name") lanes[{pid, tid}].thread = name;
            continue;
        }
        if (phase != "X") continue;
        span s;
        s.name = e.value("name", "");
        s.category = e.value("cat", "");
        s.start_us = e.value("ts", 0.0);
        s.duration_us = std::max(0.0, e.value("dur", 0.0));
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
    if (!any) throw std::runtime_error(path + " has no complete (\"X\") events to draw");
    if (result.end_us <= result.begin_us) result.end_us = result.begin_us + 1;

    for (auto& [key, l] : lanes) {
        if (l.spans.empty()) continue;
        l.pid = key.first;
        l.tid = key.second;
        l.process =
            process_names.count(l.pid) ? process_names[l.pid] : "process " + std::to_string(l.pid);
        if (l.thread.empty()) l.thread = "thread " + std::to_string(l.tid);
        // Rows: a span goes to the first row whose last span has ended, so nested spans (a
        // region around a wait) sit below their parent and overlapping commands side by side.
        std::stable_sort(l.spans.begin(), l.spans.end(), [](const span& a, const span& b) {
            return a.start_us != b.start_us ? a.start_us < b.start_us
                                            : a.duration_us > b.duration_us;
        });
        std::vector<double> row_ends;
        for (span& s : l.spans) {
            std::size_t row = 0;
            while (row < row_ends.size() && row_ends[row] > s.start_us) ++row;
            if (row == row_ends.size()) row_ends.push_back(0);
            row_ends[row] = s.start_us + s.duration_us;
            s.row = static_cast<int>(row);
        }
        l.rows = static_cast<int>(row_ends.size());
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

double nice_step(double range) {
    const double raw = range / 8;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * power) return m * power;
    return 10 * power;
}

/// The timeline as an <svg> element; `top_kernels_inside` adds the kernel table as SVG text
/// (for a standalone .svg; the HTML page has a real table instead).
std::string draw_svg(const timeline& t, const std::string& title, bool top_kernels_inside) {
    const double x0 = label_width + margin, x1 = width - margin;
    const double scale = (x1 - x0) / (t.end_us - t.begin_us);
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
    const double step = nice_step(t.end_us - t.begin_us);
    svg << "<g class=\"axis\" stroke=\"#dddddd\">\n";
    for (double at = 0; at <= t.end_us - t.begin_us + 1e-9; at += step) {
        const double x = x0 + at * scale;
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
            << escape(l.process.substr(0, 34)) << " / " << escape(l.thread) << "</text>\n";
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

void print_usage() {
    std::cout
        << "usage: kiln-prof TRACE.json -o OUTPUT.svg|OUTPUT.html\n"
           "Draws a trace written by KILN_PROFILE=TRACE.json as a timeline: a lane per device\n"
           "queue and host thread, events coloured by kind (hover for details), and the top\n"
           "kernels by device time. .html gives a self-contained page, anything else an SVG.\n";
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("kiln-prof", [&] {
        std::string input, output;
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            if (arg == "--help" || arg == "-h") {
                print_usage();
                return 0;
            }
            if (arg == "-o" && i + 1 < argc)
                output = argv[++i];
            else if (!arg.starts_with("-") && input.empty())
                input = arg;
            else
                throw std::invalid_argument("unexpected argument '" + arg + "' (try --help)");
        }
        if (input.empty() || output.empty())
            throw std::invalid_argument("needs a trace and -o OUTPUT (try --help)");
        kiln::programs::now_doing("reading the trace");
        const timeline t = read_trace(input);
        kiln::programs::now_doing("drawing the timeline");
        const std::string title = "kiln profile: " + input;
        const std::string text =
            output.ends_with(".html") ? draw_html(t, title) : draw_svg(t, title, true);
        kiln::programs::write_file(output, text.data(), text.size());
        std::cout << "kiln-prof: " << output << ": " << t.lanes.size() << " lanes, "
                  << t.kernels.size() << " kernels\n";
        return 0;
    });
}
