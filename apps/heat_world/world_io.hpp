// SPDX-License-Identifier: Apache-2.0
// Strict readers and byte-exact writers for the HPCEHeatWorldV0 text and binary formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "world.hpp"

namespace kiln::heat {

enum class world_format { text, binary };

// The first line of each format.
inline constexpr std::string_view world_text_header = "HPCEHeatWorldV0";
inline constexpr std::string_view world_binary_header = "HPCEHeatWorldV0Binary";

// A malformed world file. what() is one line that starts with the position, e.g.
// "line 3: unknown cell flag 7 at x=2, y=0 (expected 0, 1 or 2)" or
// "byte offset 61: input ends after 3 of 16 temperatures".
class world_format_error : public std::runtime_error {
  public:
    enum class position_kind { line, byte_offset };

    world_format_error(position_kind kind, std::uint64_t position, const std::string& problem);

    position_kind kind() const { return kind_; }
    std::uint64_t position() const { return position_; }     // 1-based line or 0-based byte offset
    const std::string& problem() const { return problem_; }  // what() without the position

  private:
    position_kind kind_;
    std::uint64_t position_;
    std::string problem_;
};

// Reads one world in either format (the header says which). The whole input must be the world:
// anything but whitespace after `End` is an error. Throws world_format_error; never allocates
// more than a small multiple of the bytes actually read (or, from a regular file or bytes in
// memory, than the input holds), whatever the header claims. A token longer than any valid one
// (64 characters) or 1 MiB of whitespace in a row is an error as soon as it is seen, so an input
// without end (/dev/zero) fails at once instead of being read for as long as it lasts.
world read_world(std::istream& in);
world read_world(std::string_view bytes);
// The same from the open file descriptor `fd` (standard input, a file, a pipe), in large reads,
// the binary arrays straight into the world's memory. A read that fails throws
// std::runtime_error("reading <shown> failed: <reason>"). The binary arrays of a regular file
// with at least `parallel_from_cells` cells are read and checked by one thread per core, each
// reading its chunks with pread (one thread's copies from the page cache fall well short of the
// disk cache's speed on many-core machines); errors are the same as those of a serial read.
inline constexpr std::size_t parallel_read_cells = std::size_t{1} << 24;
world read_world(int fd, const std::string& shown,
                 std::size_t parallel_from_cells = parallel_read_cells);

// Where the parts of a binary world's file lie (its arrays' offsets within the file).
struct binary_world_layout {
    std::uint32_t width = 0, height = 0;
    float alpha = 0;
    std::uint64_t flags_offset = 0;         // the first flag's byte
    std::uint64_t temperatures_offset = 0;  // the first temperature's byte
    std::size_t cells() const { return std::size_t{width} * height; }
};

// The layout of the binary world in the regular file `fd`, read from the file's start, where
// the file is laid out as write_world lays one out: the arrays whole, '-' right after the
// flags, nothing but 'End' after the temperatures (whitespace around it allowed). Reads the
// header and the bytes around the arrays, not the arrays. nullopt for a text world, a file that
// is not regular, or any other layout, which read_world reads whole (saying what is wrong with
// it, first in the file's order). A malformed header throws world_format_error as read_world
// would.
std::optional<binary_world_layout> read_binary_layout(int fd, const std::string& shown);

// Writes exactly the bytes the original coursework program wrote for the same world.
// Throws std::runtime_error when the stream fails.
void write_world(std::ostream& out, const world& w, world_format format);
// Those bytes in memory, for kiln::programs::write_file.
std::string world_to_string(const world& w, world_format format);
// The bytes write_world writes before a binary world's flags: the header line, the size line
// and '-'.
std::string binary_world_head(std::uint32_t width, std::uint32_t height, float alpha);

}  // namespace kiln::heat
