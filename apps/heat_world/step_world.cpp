// SPDX-License-Identifier: Apache-2.0
// step_world: reads a heat world (standard input or a file), advances it, writes it (standard
// output or a file).
#include <cstdio>
#include <cstdlib>
#include <iostream>

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
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("step_world", [&] {
        using namespace kiln::heat;
        const step_command command = parse_step_command(argc, argv, step_tool::single_process);
        if (command.help) {
            std::fputs(step_usage(step_tool::single_process).c_str(), stdout);
            return 0;
        }
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

        // Before reading the input, so that a missing device fails fast.
        const std::unique_ptr<engine> stepper = entry.create(command.options);
        const std::vector<kiln::device> devices =
            command.devices ? parse_device_list(*command.devices) : std::vector<kiln::device>{};
        std::vector<std::unique_ptr<engine>> device_engines =
            make_device_engines(entry, command.options, devices);
        const unsigned halo_rows = command.halo_rows > 0 ? command.halo_rows : default_halo_rows;

        std::ios::sync_with_stdio(false);
        const stopwatch read_clock;
        kiln::programs::now_doing("reading the world");
        world w = read_input(command);
        const double read_seconds = read_clock.seconds();

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
            stepper->run(w, dt, steps, on_progress);
        else
            totals = step_on_devices(w, device_engines, dt, steps, halo_rows, on_progress);
        const double step_seconds = step_clock.seconds();
        if (bar) bar->finish();

        const stopwatch write_clock;
        kiln::programs::now_doing("writing the world");
        write_output(command, w);
        const double write_seconds = write_clock.seconds();

        if (command.stats) {
            const double updates = static_cast<double>(w.cell_count()) * steps;
            std::fprintf(stderr,
                         "step_world: %s: %u x %u cells, %u steps in %.4f s: %s; read %.3f s, "
                         "write %.3f s\n",
                         stepper->description().c_str(), w.width, w.height, steps, step_seconds,
                         update_rate_text(updates, step_seconds).c_str(), read_seconds,
                         write_seconds);
            if (!devices.empty()) print_device_stats(devices.size(), w, steps, halo_rows, totals);
        }
        return 0;
    });
}
