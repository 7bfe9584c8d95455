// SPDX-License-Identifier: Apache-2.0
// step_world's command line, shared with step_world_mpi, which takes the same arguments.
#pragma once

#include <optional>
#include <string>

#include "engine.hpp"
#include "world.hpp"

namespace kiln::heat {

enum class progress_choice { automatic, always, never };

struct step_command {
    bool help = false;
    bool list_engines = false;
    bool stats = false;
    progress_choice progress = progress_choice::automatic;
    std::optional<std::string> engine_name;
    bool device_given = false;  // --device on the command line (not only $KILN_DEVICE)
    engine_options options;     // device: --device, else $KILN_DEVICE, else empty
    float dt = 0.1f;
    unsigned steps = 1;
    bool binary = false;
    unsigned halo_rows = 0;              // --halo; 0 when not given
    std::optional<std::string> devices;  // --devices, step_world only
    std::optional<std::string> input;    // --input / -i FILE; none: standard input
    std::optional<std::string> output;   // --output / -o FILE; none: standard output
};

// Which tool parses: step_world also takes --devices.
enum class step_tool { single_process, mpi };

// Throws usage_error for a bad command line, with the message the tools print.
step_command parse_step_command(int argc, const char* const* argv, step_tool tool);

// The --help text of the tool.
std::string step_usage(step_tool tool);

// Throws std::invalid_argument when the command's device choice (--device, else $KILN_DEVICE)
// matches no device: "--device 'x' matches no device (devices: 0: ..., 1: ...)". Such a choice
// is an error whatever the engine, as in kiln-info, not a quiet fall back to the host engines.
void check_device_choice(const step_command& command);

// The engine the command names, or the registry's default for its options.
const engine_entry& chosen_engine(const engine_registry& registry, const step_command& command);

// The world from --input's file, else from standard input; a malformed one throws
// std::runtime_error("bad world in 'FILE': ..." or "bad world on standard input: ...").
world read_input(const step_command& command);

// Writes the world in the command's format to --output's file, replaced whole or not at all
// (kiln::programs::write_file: the bytes are built in memory first), else to standard output.
void write_output(const step_command& command, const world& w);

// --list-engines' lines, the default marked.
void list_engines(const engine_registry& registry, const engine_options& options);

}  // namespace kiln::heat
