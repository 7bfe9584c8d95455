// SPDX-License-Identifier: Apache-2.0
// step_world: reads a heat world (standard input or a file), advances it, writes it (standard
// output or a file).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "device_blocks.hpp"
#include "engine.hpp"
#include "program_main.hpp"
#include "step_command.hpp"
#include "tool_support.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace {

// The second --stats line of --devices: where the time went, and what the halo exchanges cost.
void print_device_stats(std::size_t devices, const kiln::heat::world& w, unsigned steps,
                        unsigned halo_rows, const kiln::heat::stepping_totals& totals) {
    const double updates = static_cast<double>(w.cell_count()) * steps;
    using move = kiln::heat::halo_move;
    std::fprintf(
        stderr,
        "step_world: on %zu devices: setup %.3f s (upload), stepping %.4f s (%s), "
        "read-back %.3f s; %u halo exchanges of %u rows in %.4f s (%.1f%% of the "
        "stepping; %.3f ms each); halo rows moved %u times within a device, %u times peer "
        "to peer, %u times staged through pinned host memory, %u times through the blocks' "
        "host rows\n",
        devices, totals.setup_seconds, totals.stepping_seconds,
        kiln::heat::update_rate_text(updates, totals.stepping_seconds).c_str(),
        totals.finish_seconds, totals.exchanges, halo_rows, totals.exchange_seconds,
        totals.stepping_seconds > 0 ? 100 * totals.exchange_seconds / totals.stepping_seconds : 0.0,
        totals.exchanges > 0 ? 1e3 * totals.exchange_seconds / totals.exchanges : 0.0,
        totals.moved(move::within_device), totals.moved(move::peer_to_peer),
        totals.moved(move::staged), totals.moved(move::host_rows));
    if (!totals.first_start_text.empty())
        std::fprintf(stderr, "step_world: the first device's setup: %s\n",
                     totals.first_start_text.c_str());
}

// Reads the world on a thread of its own, started before anything else: finding the devices
// (the drivers' start, about half a second with a GPU) and starting the engines (contexts,
// kernels) happen meanwhile, so a run's start-up is the longer of the two, not their sum. The
// thread is detached: a device error still ends the run at once, whatever the input is doing.
struct world_read {
    kiln::heat::world w;
    double seconds;  // since the start of main, when the world was in
};

std::future<world_read> read_in_background(const kiln::heat::step_command& command,
                                           const kiln::heat::stopwatch& main_clock) {
    auto promise = std::make_shared<std::promise<world_read>>();
    std::future<world_read> result = promise->get_future();
    std::thread([promise, command, main_clock] {
        try {
            kiln::heat::world w = kiln::heat::read_input(command);
            promise->set_value({std::move(w), main_clock.seconds()});
        } catch (...) {
            promise->set_exception(std::current_exception());
        }
    }).detach();
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    const kiln::heat::stopwatch main_clock;
    // A file-size limit (ulimit -f) is one more full disk: a write past it then fails with EFBIG
    // and the usual message, the temporary file removed, instead of the signal ending the
    // process with the temporary file left behind.
    std::signal(SIGXFSZ, SIG_IGN);
    return kiln::programs::run_program("step_world", [&] {
        using namespace kiln::heat;
        const step_command command = parse_step_command(argc, argv, step_tool::single_process);
        if (command.help) {
            std::fputs(step_usage(step_tool::single_process).c_str(), stdout);
            return 0;
        }
        std::ios::sync_with_stdio(false);
        std::optional<std::future<world_read>> reading;
        if (!command.list_engines) reading = read_in_background(command, main_clock);
        check_device_choice(command);
        const engine_registry registry = make_engine_registry();
        if (command.list_engines) {
            list_engines(registry, command.options);
            return 0;
        }
        const engine_entry& entry = chosen_engine(registry, command);
        if (command.device_given && !entry.uses_device) {
            std::fprintf(stderr,
                         "step_world: note: engine '%s' runs on the host and ignores --device\n",
                         entry.name.c_str());
        }
        const float dt = command.dt;
        const unsigned steps = command.steps;

        const std::vector<kiln::device> devices =
            command.devices ? parse_device_list(*command.devices) : std::vector<kiln::device>{};
        const unsigned halo_rows = command.halo_rows > 0 ? command.halo_rows : default_halo_rows;
        std::vector<std::unique_ptr<engine>> engines;
        if (devices.empty())
            engines.push_back(entry.create(command.options));
        else
            engines = make_device_engines(entry, command.options, devices);
        engine& stepper = *engines.front();
        const double engines_seconds = main_clock.seconds();
        kiln::programs::now_doing("reading the world");
        auto [w, read_seconds] = reading->get();

        const bool show_progress =
            command.progress == progress_choice::always ||
            (command.progress == progress_choice::automatic && stderr_is_terminal());
        std::optional<progress_bar> bar;
        progress_callback on_progress;
        if (show_progress) {
            bar.emplace("step_world", steps, command.progress == progress_choice::always);
            on_progress = [&bar](unsigned done) { bar->update(done); };
        }
        const stopwatch step_clock;
        kiln::programs::now_doing("stepping the world");
        stepping_totals totals;
        if (devices.empty())
            stepper.run(w, dt, steps, on_progress);
        else
            totals = step_on_devices(w, engines, dt, steps, halo_rows, on_progress);
        const double step_seconds = step_clock.seconds();
        if (bar) bar->finish();

        const stopwatch write_clock;
        kiln::programs::now_doing("writing the world");
        write_output(command, w);
        const double write_seconds = write_clock.seconds();

        // The engines go before the figures, so that "in main" counts their end too.
        const std::string description = stepper.description();
        const stopwatch release_clock;
        engines.clear();
        const double release_seconds = release_clock.seconds();
        if (command.stats) {
            const double updates = static_cast<double>(w.cell_count()) * steps;
            std::fprintf(
                stderr,
                "step_world: %s: %u x %u cells, %u steps in %.4f s: %s; world read after %.3f "
                "s, devices found and engines started meanwhile after %.3f s, write %.3f s, "
                "engines ended in %.3f s; %.3f s in main\n",
                description.c_str(), w.width, w.height, steps, step_seconds,
                update_rate_text(updates, step_seconds).c_str(), read_seconds, engines_seconds,
                write_seconds, release_seconds, main_clock.seconds());
            if (!devices.empty()) print_device_stats(devices.size(), w, steps, halo_rows, totals);
        }
        return 0;
    });
}
