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
};

// Which tool parses: step_world also takes --devices.
enum class step_tool { single_process, mpi };

// Throws usage_error for a bad command line, with the message the tools print.
step_command parse_step_command(int argc, const char* const* argv, step_tool tool);

// The --help text of the tool.
std::string step_usage(step_tool tool);

// The engine the command names, or the registry's default for its options.
const engine_entry& chosen_engine(const engine_registry& registry, const step_command& command);

// The world on standard input; a malformed one throws std::runtime_error("bad world on
// standard input: ...").
world read_standard_input();

// --list-engines' lines, the default marked.
void list_engines(const engine_registry& registry, const engine_options& options);

}  // namespace kiln::heat
