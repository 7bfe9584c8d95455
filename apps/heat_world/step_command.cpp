// SPDX-License-Identifier: Apache-2.0
// step_world's and step_world_mpi's command line: one parser, one help text, one engine choice.
#include "step_command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/error.hpp>
#include <kiln/runtime/device.hpp>
#include <stdexcept>

#include "atomic_file.hpp"
#include "engine_kiln.hpp"
#include "program_main.hpp"
#include "tool_support.hpp"
#include "world_arrays.hpp"
#include "world_io.hpp"

namespace kiln::heat {

std::string step_usage(step_tool tool) {
    const bool mpi = tool == step_tool::mpi;
    std::string text = mpi ? "usage: mpirun -n RANKS step_world_mpi [options] [dt [steps [binary]]]"
                           : "usage: step_world [options] [dt [steps [binary]]]";
    text += R"(

Reads a heat world (HPCEHeatWorldV0 text or binary) on standard input (or --input's file),
advances it by `steps` steps of `dt`, and writes it to standard output (or --output's file).
Errors go to standard error, one line, with exit status 1 and nothing on standard output.
)";
    if (mpi)
        text += R"(
Every rank steps a block of rows on its own device (chosen by its rank on the node among the
devices --device matches), with the rows around its block from the ranks that own them, and
the result is byte for byte step_world's. A binary world file (--input) every rank reads at
once, each its own rows, and a binary world to a file (--output) every rank writes so, the file
replaced once all have; other input and output goes through rank 0, standard input and output
through mpirun's forwarding, which is much slower for large worlds.
)";
    text += R"(
  dt       time step, a number >= 0 (default 0.1)
  steps    number of steps, a whole number >= 0 (default 1)
  binary   0 writes HPCEHeatWorldV0 text, 1 writes HPCEHeatWorldV0Binary (default 0)

options:
  --engine NAME   engine to step with (default: the fastest for the device; see --list-engines)
  --input FILE    read the world from FILE (also -i FILE; -: standard input, the default)
  --output FILE   write the world to FILE (also -o FILE; -: standard output, the default),
                  replaced only once the new world is complete and on disk
  --device SPEC   device for GPU engines (default: $KILN_DEVICE, else kiln's default device);
                  one that matches no device is an error, whatever the engine
  --threads N     threads for the threads engine, at most 1024 (default: every core)
)";
    if (!mpi)
        text += R"(  --devices LIST  split the rows over several devices: comma-separated specs like
                  --device's, each meaning every device it matches (gpu: every GPU; 0,1)
)";
    text +=
        mpi ? R"(  --halo ROWS     rows each rank keeps around its block, and steps between exchanges
                  of them (default 64)
)"
            : R"(  --halo ROWS     with --devices: rows each device keeps around its block, and
                  steps between exchanges of them (default 64)
)";
    text += R"(  --list-engines  list the engines of this build and exit
  --stats         print the time taken, cell updates/s and GB/s on standard error
  --progress      draw a progress bar on standard error even when it is not a terminal
  --no-progress   never draw a progress bar
  --help          print this help
)";
    return text;
}

namespace {

std::optional<std::string> either_option(argument_reader& args, std::string_view long_name,
                                         std::string_view short_name) {
    if (auto value = args.option(long_name)) return value;
    return args.option(short_name);
}

// --input's or --output's file; "-" is the standard stream.
std::optional<std::string> file_argument(const std::string& name, const char* option) {
    if (name.empty()) throw usage_error(std::string(option) + " needs a file name, got ''");
    if (name == "-") return std::nullopt;
    return name;
}

std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

}  // namespace

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
        } else if (auto file = either_option(args, "--input", "-i")) {
            command.input = file_argument(*file, "--input");
        } else if (auto file = either_option(args, "--output", "-o")) {
            command.output = file_argument(*file, "--output");
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

void check_device_choice(const step_command& command) {
    const std::string& spec = command.options.device;
    if (spec.empty()) return;
    std::vector<kiln::device> matching;
    try {
        matching = kiln::devices(kiln::filters::from_spec(spec));
    } catch (const kiln::invalid_argument_error&) {
        // Only commas and spaces: a choice of no device.
    }
    if (!matching.empty()) return;
    const std::string choice =
        command.device_given ? "--device " + quoted(spec) : "KILN_DEVICE=" + quoted(spec);
    throw std::invalid_argument(choice + " matches no device (devices: " + device_list_text() +
                                ")");
}

input_file::input_file(const std::string& path) : shown_(quoted(path)) {
    do {
        fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) throw std::runtime_error("cannot read " + shown_ + ": " + std::strerror(errno));
    struct stat status {};
    if (fstat(fd_, &status) == 0 && S_ISDIR(status.st_mode)) {
        close(fd_);
        throw std::runtime_error("cannot read " + shown_ + ": " + std::strerror(EISDIR));
    }
}

input_file::~input_file() {
    close(fd_);
}

world read_input(const step_command& command) {
    if (!command.input) {
        try {
            return read_world(STDIN_FILENO, "standard input");
        } catch (const world_format_error& e) {
            throw std::runtime_error(std::string("bad world on standard input: ") + e.what());
        }
    }
    const input_file file(*command.input);
    try {
        return read_world(file.fd(), file.shown());
    } catch (const world_format_error& e) {
        throw std::runtime_error("bad world in " + file.shown() + ": " + e.what());
    }
}

bool replace_with_binary_world(const std::string& path, const world& w,
                               const kiln::programs::file_system_calls& calls) {
    if (w.flags.size() != w.cell_count() || w.temperatures.size() != w.cell_count()) {
        throw std::invalid_argument("write_world: the world's arrays do not match its size");
    }
    const binary_world_layout layout = written_layout(w.width, w.height, w.alpha);
    const auto replacement = kiln::programs::file_replacement::begin(path, written_size(layout));
    if (!replacement) return false;
    int error = write_binary_frame(replacement->fd(), layout, calls);
    if (error == 0)
        error = write_cells(replacement->fd(), layout, 0, w.flags, w.temperatures, calls);
    if (error != 0) {
        throw std::runtime_error(
            kiln::programs::replacement_failure(path, replacement->replaces_existing(), error));
    }
    replacement->commit(calls);
    return true;
}

void write_output(const step_command& command, const world& w) {
    const world_format format = command.binary ? world_format::binary : world_format::text;
    if (!command.output) {
        write_world(std::cout, w, format);
        kiln::programs::flush_standard_output();
        return;
    }
    if (format == world_format::binary && replace_with_binary_world(*command.output, w)) return;
    const std::string bytes = world_to_string(w, format);
    kiln::programs::write_file(*command.output, bytes.data(), bytes.size());
}

void list_engines(const engine_registry& registry, const engine_options& options) {
    const std::string chosen = registry.default_engine(options);
    for (const engine_entry& entry : registry.entries()) {
        std::printf("%-10s %s%s\n", entry.name.c_str(), entry.summary.c_str(),
                    entry.name == chosen ? " (default)" : "");
    }
}

}  // namespace kiln::heat
