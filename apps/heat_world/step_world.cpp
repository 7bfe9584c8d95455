// step_world: reads a heat world on standard input, advances it, writes it to standard output.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "engine.hpp"
#include "program_main.hpp"
#include "tool_support.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace {

constexpr const char* usage = R"(usage: step_world [options] [dt [steps [binary]]]

Reads a heat world (HPCEHeatWorldV0 text or binary) on standard input, advances it by `steps`
steps of `dt`, and writes it to standard output. Errors go to standard error, one line, with
exit status 1 and nothing on standard output.

  dt       time step, a number >= 0 (default 0.1)
  steps    number of steps, a whole number >= 0 (default 1)
  binary   0 writes HPCEHeatWorldV0 text, 1 writes HPCEHeatWorldV0Binary (default 0)

options:
  --engine NAME   engine to step with (default: the fastest for the device; see --list-engines)
  --device SPEC   device for GPU engines (default: $KILN_DEVICE, else kiln's default device)
  --threads N     threads for the threads engine, at most 1024 (default: every core)
  --list-engines  list the engines of this build and exit
  --stats         print the time taken, cell updates/s and GB/s on standard error
  --progress      draw a progress bar on standard error even when it is not a terminal
  --no-progress   never draw a progress bar
  --help          print this help
)";

void list_engines(const kiln::heat::engine_registry& registry,
                  const kiln::heat::engine_options& options) {
    const std::string chosen = registry.default_engine(options);
    for (const kiln::heat::engine_entry& entry : registry.entries()) {
        std::printf("%-10s %s%s\n", entry.name.c_str(), entry.summary.c_str(),
                    entry.name == chosen ? " (default)" : "");
    }
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("step_world", [&] {
        using namespace kiln::heat;
        bool stats = false;
        bool list = false;
        enum class progress_choice {
            automatic,
            always,
            never
        } progress_mode = progress_choice::automatic;
        std::optional<std::string> engine_name;
        std::optional<std::string> device_argument;
        engine_options options;
        std::vector<std::string> positional;
        for (argument_reader args(argc, argv); !args.done();) {
            if (args.flag("--help") || args.flag("-h")) {
                std::fputs(usage, stdout);
                return 0;
            } else if (args.flag("--stats")) {
                stats = true;
            } else if (args.flag("--progress")) {
                progress_mode = progress_choice::always;
            } else if (args.flag("--no-progress")) {
                progress_mode = progress_choice::never;
            } else if (args.flag("--list-engines")) {
                list = true;
            } else if (auto value = args.option("--engine")) {
                engine_name = *value;
            } else if (auto value = args.option("--device")) {
                device_argument = *value;
            } else if (auto value = args.option("--threads")) {
                options.threads = parse_count(*value, "--threads");
                if (options.threads > max_threads) {
                    throw usage_error("--threads must be at most " + std::to_string(max_threads) +
                                      ", got " + *value);
                }
            } else if (args.flag("--")) {
                while (!args.done()) positional.push_back(args.take());
            } else if (args.next_is_option()) {
                throw usage_error("unknown option '" + args.take() + "' (try --help)");
            } else {
                positional.push_back(args.take());
            }
        }
        if (positional.size() > 3) {
            throw usage_error(
                "too many arguments: expected at most dt, steps and binary (try --help)");
        }
        const float dt = positional.size() > 0 ? parse_non_negative(positional[0], "dt") : 0.1f;
        const unsigned steps = positional.size() > 1 ? parse_count(positional[1], "steps") : 1;
        const bool binary = positional.size() > 2 && parse_binary_choice(positional[2]);

        if (device_argument) {
            options.device = *device_argument;
        } else if (const char* from_environment = std::getenv("KILN_DEVICE")) {
            options.device = from_environment;
        }

        const engine_registry registry = make_engine_registry();
        if (list || engine_name == "list") {
            list_engines(registry, options);
            return 0;
        }
        const std::string chosen = engine_name ? *engine_name : registry.default_engine(options);
        const engine_entry& entry = registry.at(chosen);
        if (device_argument && !entry.uses_device) {
            std::fprintf(stderr,
                         "step_world: note: engine '%s' runs on the host and ignores --device\n",
                         chosen.c_str());
        }

        // Before reading the input, so that a missing device fails fast.
        const std::unique_ptr<engine> stepper = entry.create(options);

        std::ios::sync_with_stdio(false);
        const stopwatch read_clock;
        kiln::programs::now_doing("reading the world");
        world w;
        try {
            w = read_world(std::cin);
        } catch (const world_format_error& e) {
            throw std::runtime_error(std::string("bad world on standard input: ") + e.what());
        }
        const double read_seconds = read_clock.seconds();

        const bool show_progress =
            progress_mode == progress_choice::always ||
            (progress_mode == progress_choice::automatic && stderr_is_terminal());
        std::optional<progress_bar> bar;
        progress_callback on_progress;
        if (show_progress) {
            bar.emplace("step_world", steps, progress_mode == progress_choice::always);
            on_progress = [&bar](unsigned done) { bar->update(done); };
        }
        const stopwatch step_clock;
        kiln::programs::now_doing("stepping the world");
        stepper->run(w, dt, steps, on_progress);
        const double step_seconds = step_clock.seconds();
        if (bar) bar->finish();

        const stopwatch write_clock;
        kiln::programs::now_doing("writing the world");
        write_world(std::cout, w, binary ? world_format::binary : world_format::text);
        kiln::programs::flush_standard_output();
        const double write_seconds = write_clock.seconds();

        if (stats) {
            const double updates = static_cast<double>(w.cell_count()) * steps;
            std::fprintf(stderr,
                         "step_world: %s: %u x %u cells, %u steps in %.4f s: %s; read %.3f s, "
                         "write %.3f s\n",
                         stepper->description().c_str(), w.width, w.height, steps, step_seconds,
                         update_rate_text(updates, step_seconds).c_str(), read_seconds,
                         write_seconds);
        }
        return 0;
    });
}
