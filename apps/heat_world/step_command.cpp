// step_world's and step_world_mpi's command line: one parser, one help text, one engine choice.
#include "step_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "tool_support.hpp"
#include "world_io.hpp"

namespace kiln::heat {

std::string step_usage(step_tool tool) {
    const bool mpi = tool == step_tool::mpi;
    std::string text = mpi ? "usage: mpirun -n RANKS step_world_mpi [options] [dt [steps [binary]]]"
                           : "usage: step_world [options] [dt [steps [binary]]]";
    text += R"(

Reads a heat world (HPCEHeatWorldV0 text or binary) on standard input, advances it by `steps`
steps of `dt`, and writes it to standard output. Errors go to standard error, one line, with
exit status 1 and nothing on standard output.
)";
    if (mpi)
        text += R"(
Rank 0 reads the world and writes the result, byte for byte step_world's; every rank steps a
block of rows on its own device (chosen by its rank on the node among the devices --device
matches), with the rows around its block from the ranks that own them.
)";
    text += R"(
  dt       time step, a number >= 0 (default 0.1)
  steps    number of steps, a whole number >= 0 (default 1)
  binary   0 writes HPCEHeatWorldV0 text, 1 writes HPCEHeatWorldV0Binary (default 0)

options:
  --engine NAME   engine to step with (default: the fastest for the device; see --list-engines)
  --device SPEC   device for GPU engines (default: $KILN_DEVICE, else kiln's default device)
  --threads N     threads for the threads engine, at most 1024 (default: every core)
)";
    if (!mpi)
        text += R"(  --devices LIST  split the rows over several devices: comma-separated specs like
                  --device's, each meaning every device it matches (gpu: every GPU; 0,1)
)";
    text +=
        mpi ? R"(  --halo ROWS     rows each rank keeps around its block, and steps between exchanges
                  of them (default 32)
)"
            : R"(  --halo ROWS     with --devices: rows each device keeps around its block, and
                  steps between exchanges of them (default 32)
)";
    text += R"(  --list-engines  list the engines of this build and exit
  --stats         print the time taken, cell updates/s and GB/s on standard error
  --progress      draw a progress bar on standard error even when it is not a terminal
  --no-progress   never draw a progress bar
  --help          print this help
)";
    return text;
}

step_command parse_step_command(int argc, const char* const* argv, step_tool tool) {
    step_command command;
    std::vector<std::string> positional;
    for (argument_reader args(argc, argv); !args.done();) {
        if (args.flag("--help") || args.flag("-h")) {
            command.help = true;
            return command;
        } else if (args.flag("--stats")) {
            command.stats = true;
        } else if (args.flag("--progress")) {
            command.progress = progress_choice::always;
        } else if (args.flag("--no-progress")) {
            command.progress = progress_choice::never;
        } else if (args.flag("--list-engines")) {
            command.list_engines = true;
        } else if (auto value = args.option("--engine")) {
            command.engine_name = *value;
        } else if (auto value = args.option("--device")) {
            command.options.device = *value;
            command.device_given = true;
        } else if (auto value = args.option("--threads")) {
            command.options.threads = parse_count(*value, "--threads");
            if (command.options.threads > max_threads) {
                throw usage_error("--threads must be at most " + std::to_string(max_threads) +
                                  ", got " + *value);
            }
        } else if (auto list = tool == step_tool::mpi ? std::nullopt : args.option("--devices")) {
            command.devices = *list;
        } else if (auto halo = args.option("--halo")) {
            command.halo_rows = parse_count(*halo, "--halo");
            if (command.halo_rows == 0) throw usage_error("--halo must be at least 1, got 0");
        } else {
            args.take_positional(positional);
        }
    }
    if (positional.size() > 3) {
        throw usage_error("too many arguments: expected at most dt, steps and binary (try --help)");
    }
    if (positional.size() > 0) command.dt = parse_non_negative(positional[0], "dt");
    if (positional.size() > 1) command.steps = parse_count(positional[1], "steps");
    command.binary = positional.size() > 2 && parse_binary_choice(positional[2]);
    if (!command.device_given) {
        if (const char* from_environment = std::getenv("KILN_DEVICE")) {
            command.options.device = from_environment;
        }
    }
    if (command.halo_rows > 0 && tool == step_tool::single_process && !command.devices)
        throw usage_error("--halo needs --devices");
    if (command.engine_name == "list") command.list_engines = true;
    return command;
}

const engine_entry& chosen_engine(const engine_registry& registry, const step_command& command) {
    return registry.at(command.engine_name ? *command.engine_name
                                           : registry.default_engine(command.options));
}

world read_standard_input() {
    try {
        return read_world(std::cin);
    } catch (const world_format_error& e) {
        throw std::runtime_error(std::string("bad world on standard input: ") + e.what());
    }
}

void list_engines(const engine_registry& registry, const engine_options& options) {
    const std::string chosen = registry.default_engine(options);
    for (const engine_entry& entry : registry.entries()) {
        std::printf("%-10s %s%s\n", entry.name.c_str(), entry.summary.c_str(),
                    entry.name == chosen ? " (default)" : "");
    }
}

}  // namespace kiln::heat
