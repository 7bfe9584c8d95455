// SPDX-License-Identifier: Apache-2.0
// The benches' figures as rows a program reads: where KILN_BENCH_TSV names a file, every figure a
// bench compares with a reference is also appended there, in docs/bench/ratios.tsv's columns, so
// that the report's chart and tables are drawn from rows rather than parsed out of printed tables.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <string>
#include <string_view>

#include "report_start.hpp"

namespace kiln::bench {

/// Which way a ratio reads (ratios.tsv's `measure`): `speed` is the reference's time over kiln's
/// (above 1, kiln is faster), `time` kiln's over the reference's, `bandwidth` a share of the copy
/// bandwidth, `bound` a multiple of the bound the copy bandwidth sets.
enum class measure { speed, time, bandwidth, bound };

/// The backend as the report names it: "CUDA", "NVIDIA OpenCL", OpenCL by vendor, and CPU
/// devices by their cores and platform ("2 cores, PoCL 3.1").
inline std::string backend_label(const kiln::device& dev) {
    const kiln::device_properties& p = dev.properties();
    const bool pocl = p.platform.find("Portable Computing Language") != std::string::npos;
    if (dev.is_cpu())
        return std::to_string(p.compute_units) + " cores, " +
               (pocl ? "PoCL " + p.driver_version : p.platform);
    if (dev.backend() == kiln::backend_kind::cuda) return "CUDA";
    if (p.vendor.find("NVIDIA") != std::string::npos) return "NVIDIA OpenCL";
    return "OpenCL (" + p.vendor + ")";
}

/// The device as the chart's panels group them: a GPU by its name, PoCL's CPU devices together.
inline std::string device_label(const kiln::device& dev) {
    if (dev.is_cpu() &&
        dev.properties().platform.find("Portable Computing Language") != std::string::npos)
        return "CPU devices (PoCL)";
    return dev.name();
}

/// Where record_ratio's rows come from (record_rows_of).
struct ratio_context {
    std::string backend, device, area;
};
inline ratio_context& current_ratio_context() {
    static ratio_context context;
    return context;
}
/// A field of one TSV row: tabs and line breaks would end the field or the row.
inline std::string tsv_field(std::string_view text) {
    std::string field(text);
    for (char& c : field)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return field;
}

/// The device and the report's area (docs/benchmarks.md: "scan family", "sorting", ...) of the
/// rows record_ratio appends from now on: set where a bench starts measuring a device.
inline void record_rows_of(const kiln::device& dev, std::string_view area) {
    current_ratio_context() = {backend_label(dev), device_label(dev), std::string(area)};
}

/// Appends one row to the file KILN_BENCH_TSV names, its header first where the file is empty:
/// the work, kiln's ratio to `reference`, which way it reads, and the device, area and date of
/// record_rows_of. Does nothing where KILN_BENCH_TSV is unset or empty.
inline void record_ratio(std::string_view work, double ratio, measure how,
                         std::string_view reference) {
    const char* path = std::getenv("KILN_BENCH_TSV");
    if (path == nullptr || *path == '\0') return;
    std::FILE* file = std::fopen(path, "a");
    if (file == nullptr) {
        std::fprintf(stderr, "KILN_BENCH_TSV: cannot append to %s\n", path);
        return;
    }
    std::fseek(file, 0, SEEK_END);
    if (std::ftell(file) == 0)
        std::fputs("area\twork\tbackend\tratio\tmeasure\treference\tdevice\tdate\n", file);
    constexpr const char* measures[] = {"speed", "time", "bandwidth", "bound"};
    const ratio_context& context = current_ratio_context();
    std::fprintf(file, "%s\t%s\t%s\t%.3g\t%s\t%s\t%s\t%s\n", tsv_field(context.area).c_str(),
                 tsv_field(work).c_str(), tsv_field(context.backend).c_str(), ratio,
                 measures[static_cast<int>(how)], tsv_field(reference).c_str(),
                 tsv_field(context.device).c_str(), today().c_str());
    std::fclose(file);
}

}  // namespace kiln::bench
