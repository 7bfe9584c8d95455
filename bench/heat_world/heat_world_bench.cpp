// SPDX-License-Identifier: Apache-2.0
// heat_world_bench: every heat-world engine on one device, in cell updates per second and as a
// share of the bound that the device's copy bandwidth, measured in the same run, sets.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <device_limits.hpp>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine.hpp"
#include "program_main.hpp"
#include "ratio_rows.hpp"
#include "tool_support.hpp"
#include "world.hpp"

namespace {

constexpr const char* usage = R"(usage: heat_world_bench [options] [N[:STEPS] ...]

Steps make_world's N x N test world with every engine on one device and prints a markdown
table on standard output: seconds, cell updates/s, GB/s at 12 bytes per cell update, and the
ratio to the bound that the device's copy bandwidth, measured in the same run, sets
(copy GB/s / 12 bytes = cell updates/s).

  N[:STEPS]          world sizes and step counts (default on a GPU: 5000:1000 8192:1000;
                     on other devices: 1000:100); STEPS defaults to 1000

options:
  --device SPEC      device for the kiln engines (default: $KILN_DEVICE, else kiln's default)
  --engines LIST     comma-separated engines (default: threads and every kiln engine)
  --capped-steps N   most steps the slow engines run, naive everywhere and threads beside a
                     GPU; their seconds are extrapolated to STEPS (default 100; 0: no cap)
  --help             print this help
)";

struct workload {
    std::uint32_t n;
    unsigned steps;
};

workload parse_workload(const std::string& text) {
    const std::size_t colon = text.find(':');
    const unsigned n = kiln::heat::parse_count(text.substr(0, colon), "N");
    if (n < 3) throw kiln::heat::usage_error("N must be at least 3, got " + std::to_string(n));
    const unsigned steps = colon == std::string::npos
                               ? 1000
                               : kiln::heat::parse_count(text.substr(colon + 1), "STEPS");
    if (steps == 0) throw kiln::heat::usage_error("STEPS must be at least 1");
    return {n, steps};
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');) {
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

struct timing {
    unsigned steps_run = 0;
    double run_seconds = 0;   // the whole run(): packing flags, uploading, stepping, reading back
    double step_seconds = 0;  // the steady stepping time of steps_run steps
};

// Times one run. The steady stepping time comes from the progress reports: from the first one
// to the last, scaled to every step, so that packing flags, uploading the world, the first
// launch's one-time costs and reading back stay out. An engine that reports nothing before the
// end is timed over the whole run.
timing time_run(kiln::heat::engine& stepper, const kiln::heat::world& start, unsigned steps) {
    using clock = std::chrono::steady_clock;
    struct report {
        unsigned done;
        clock::time_point when;
    };
    std::optional<report> first;
    report last{0, clock::now()};
    kiln::heat::world w = start;
    const kiln::heat::stopwatch run_clock;
    stepper.run(w, 0.1f, steps, [&](unsigned done) {
        const report now{done, clock::now()};
        if (!first && done > 0 && done < steps) first = now;
        last = now;
    });
    timing result{.steps_run = steps, .run_seconds = run_clock.seconds(), .step_seconds = 0};
    result.step_seconds = result.run_seconds;
    if (first && last.done == steps) {
        const double seconds = std::chrono::duration<double>(last.when - first->when).count();
        if (seconds > 0) result.step_seconds = seconds * steps / (steps - first->done);
    }
    return result;
}

std::string format(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("heat_world_bench", [&] {
        using namespace kiln::heat;
        std::string device_spec;
        if (const char* from_environment = std::getenv("KILN_DEVICE"))
            device_spec = from_environment;
        std::vector<std::string> engine_names;
        unsigned capped_steps = 100;
        std::vector<std::string> workload_texts;
        for (argument_reader args(argc, argv); !args.done();) {
            if (args.flag("--help") || args.flag("-h")) {
                std::fputs(usage, stdout);
                return 0;
            } else if (auto value = args.option("--device")) {
                device_spec = *value;
            } else if (auto value = args.option("--engines")) {
                engine_names = split_list(*value);
            } else if (auto value = args.option("--capped-steps")) {
                capped_steps = parse_count(*value, "--capped-steps");
            } else {
                args.take_positional(workload_texts);
            }
        }
        std::vector<workload> workloads;
        for (const std::string& text : workload_texts) workloads.push_back(parse_workload(text));

        const kiln::device device =
            device_spec.empty() ? kiln::default_device() : kiln::select_device(device_spec);
        const bool gpu = device.is_gpu();
        if (workloads.empty()) {
            // 5000 x 5000 for 1000 steps is the coursework's table; on a CPU device that would
            // take minutes per engine, so a smaller world stands in.
            workloads = gpu ? std::vector<workload>{{5000, 1000}, {8192, 1000}}
                            : std::vector<workload>{{1000, 100}};
        }
        const engine_registry registry = make_engine_registry();
        if (engine_names.empty()) {
            for (const engine_entry& entry : registry.entries()) {
                if (entry.name == "threads" || entry.uses_device)
                    engine_names.push_back(entry.name);
            }
        }
        for (const std::string& name : engine_names)
            registry.at(name);  // unknown names fail before any work

        const std::size_t copy_bytes = kiln::bench::copy_benchmark_bytes(device);
        const double copy_gb_per_s = kiln::bench::measure_copy_bandwidth(device, copy_bytes);
        const double bound = copy_gb_per_s * 1e9 / bytes_per_cell_update;
        kiln::bench::record_rows_of(device, "heat world");
        std::printf("## Heat world on %s (%s, %s)\n\n", device.name().c_str(),
                    std::string(kiln::to_string(device.backend())).c_str(),
                    std::string(kiln::to_string(device.type())).c_str());
        std::printf(
            "Copy bandwidth %.1f GB/s (bytes read + written, %zu MiB buffers); bound %.3g cell "
            "updates/s "
            "at %.0f bytes per cell update.\n\n",
            copy_gb_per_s, copy_bytes >> 20, bound, bytes_per_cell_update);
        std::printf(
            "| engine | size | steps | seconds | cell updates/s | GB/s | of bound | run s |\n");
        std::printf("|---|---|---|---:|---:|---:|---:|---:|\n");
        std::fflush(stdout);

        const engine_options options{.device = std::to_string(device.index())};
        std::vector<std::string> notes;
        for (const workload& load : workloads) {
            const world start = make_test_world(load.n, 0.1f);
            for (const std::string& name : engine_names) {
                const engine_entry& entry = registry.at(name);
                const std::unique_ptr<engine> stepper = entry.create(options);
                // The host engines run beside the device; their ratio means something only when
                // the device is this machine's processor.
                const bool on_device = entry.uses_device || device.is_cpu();
                const bool slow = name == "naive" || (!entry.uses_device && gpu);
                const unsigned steps =
                    slow && capped_steps != 0 ? std::min(load.steps, capped_steps) : load.steps;
                const timing t = time_run(*stepper, start, steps);
                const double seconds = t.step_seconds * load.steps / steps;
                const double rate = static_cast<double>(start.cell_count()) * load.steps / seconds;
                const std::string size = std::to_string(load.n) + "x" + std::to_string(load.n);
                const std::string steps_text =
                    std::to_string(load.steps) +
                    (steps < load.steps ? " (" + std::to_string(steps) + " run)" : "");
                std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(),
                            size.c_str(), steps_text.c_str(), format("%.3f", seconds).c_str(),
                            format("%.3g", rate).c_str(),
                            format("%.1f", rate * bytes_per_cell_update / 1e9).c_str(),
                            on_device ? format("%.2f", rate / bound).c_str() : "-",
                            format("%.3f", t.run_seconds).c_str());
                if (on_device)
                    kiln::bench::record_ratio(name + ", " + size + " x " + steps_text + " steps",
                                              rate / bound, kiln::bench::measure::bound,
                                              "copy bound, 12 bytes a cell update");
                std::fflush(stdout);
                if (load.n == workloads.front().n)
                    notes.push_back(name + ": " + stepper->description());
            }
        }
        std::printf(
            "\nseconds: steady stepping time for all steps, from the engine's progress reports, "
            "without packing flags, uploading and reading back; rows marked \"(N run)\" ran N "
            "steps and are extrapolated. run s: the whole run of the steps run. of bound: cell "
            "updates/s over copy bandwidth / %.0f bytes (\"-\": a host engine beside the "
            "device).\n",
            bytes_per_cell_update);
        for (const std::string& note : notes) std::printf("- %s\n", note.c_str());
        return 0;
    });
}
