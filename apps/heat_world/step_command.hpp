// SPDX-License-Identifier: Apache-2.0
// step_world's command line, shared with step_world_mpi, which takes the same arguments.
#pragma once

#include <optional>
#include <string>

#include "atomic_file.hpp"
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

// An --input file open for reading, closed when this goes. Throws std::runtime_error
// "cannot read 'FILE': <reason>" when it cannot be opened, or is a folder.
class input_file {
  public:
    explicit input_file(const std::string& path);
    input_file(const input_file&) = delete;
    input_file& operator=(const input_file&) = delete;
    ~input_file();

    int fd() const { return fd_; }
    const std::string& shown() const { return shown_; }  // the name as messages show it: 'FILE'

  private:
    std::string shown_;
    int fd_ = -1;
};

// The world from --input's file, else from standard input; a malformed one throws
// std::runtime_error("bad world in 'FILE': ..." or "bad world on standard input: ...").
world read_input(const step_command& command);

// Writes the world in the command's format to --output's file, replaced whole or not at all,
// else to standard output. A binary world going to a regular file (or a new one) is written
// straight from its arrays at their offsets by several threads (replace_with_binary_world);
// otherwise its bytes are built in memory first (kiln::programs::write_file).
void write_output(const step_command& command, const world& w);

// Replaces the file `path` by the binary world `w` as kiln::programs::write_file would (a
// temporary file, flushed and renamed; on failure removed, the file as it was), the arrays
// written straight from the world's memory at their offsets by write_cells: no copy of the
// world's bytes is built. False, with nothing done, where write_file would write a stream (a
// descriptor's name, a device, a FIFO). Throws write_file's messages.
bool replace_with_binary_world(const std::string& path, const world& w,
                               const kiln::programs::file_system_calls& calls = {});

// --list-engines' lines, the default marked.
void list_engines(const engine_registry& registry, const engine_options& options);

}  // namespace kiln::heat
