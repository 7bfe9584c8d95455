// SPDX-License-Identifier: Apache-2.0
// A world's two arrays: their values checked as the readers check them, and rows of them moved
// between memory and a binary world file with pread and pwrite at computed offsets, from
// several threads at once (and, in step_world_mpi, from several ranks into one file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "atomic_file.hpp"
#include "world_io.hpp"

namespace kiln::heat {

// Reads `size` bytes at `offset` of the file `fd` into `out` with pread (from any thread);
// fewer only where the file ends. A read that fails throws std::runtime_error("reading <shown>
// failed: <reason>").
std::size_t read_at(int fd, const std::string& shown, char* out, std::size_t size,
                    std::uint64_t offset);

// " at x=3, y=1": where a cell is, in messages.
std::string at_cell(std::size_t index, std::uint32_t width);

// Why a temperature is not one a world may hold ("temperature 1.5 at x=3, y=1 is outside
// [0, 1]", "temperature at x=3, y=1 is NaN"), or empty when it is in [0, 1].
std::string temperature_problem(float value, std::size_t index, std::uint32_t width);

// Checks binary flags or temperatures that are cells [first, first + words.size()) of a world
// `width` cells wide, the array's first byte at `array_offset` of the input: throws
// world_format_error for the first bad one, at its byte ("byte offset 61: unknown cell flag 7
// at x=2, y=0 (expected 0, 1 or 2)"). One pass the compiler vectorises; the search for the
// culprit only on failure.
void check_cells(std::span<const std::uint32_t> flags, std::size_t first, std::uint32_t width,
                 std::uint64_t array_offset);
void check_cells(std::span<const float> temperatures, std::size_t first, std::uint32_t width,
                 std::uint64_t array_offset);

// The layout of the file write_world writes for a world of this shape, and that file's size.
binary_world_layout written_layout(std::uint32_t width, std::uint32_t height, float alpha);
std::uint64_t written_size(const binary_world_layout& layout);

// A binary array of a regular file, as read_cells reads it.
struct array_in_file {
    int fd = -1;
    std::string shown;               // the file, in messages: "'world.bin'"
    std::uint64_t file_offset = 0;   // the array's first byte in the file, for pread
    std::uint64_t input_offset = 0;  // the same counted from where the input began, for messages
    std::size_t cells = 0;           // the array's length
    std::uint32_t width = 0;         // the world's, for "at x=, y="
};

// Reads cells [first, first + out.size()) of the array, flags or temperatures, with pread, from
// up to one thread per core this process may run on, which take chunks of 2^20 cells in the
// file's order, and checks them (check_cells) a piece at a time while the piece is in the cache.
// Throws the first failure in the file's order, as a serial reader meets it: a bad cell, or
// "byte offset N: input ends after K of C cell flags" where the file is short; a read that
// fails throws std::runtime_error("reading <shown> failed: <reason>").
void read_cells(const array_in_file& array, std::size_t first, std::span<std::uint32_t> out);
void read_cells(const array_in_file& array, std::size_t first, std::span<float> out);

// Writes the bytes of write_world's binary file around the arrays (header, size line and '-'
// before the flags, the '-' between the arrays, "End\n" after them) at their places in `fd`,
// for `layout` as written_layout gives it. Returns 0, or the errno of the write that failed.
int write_binary_frame(int fd, const binary_world_layout& layout,
                       const kiln::programs::file_system_calls& calls);

// Writes cells [first, first + flags.size()) of both arrays at their places in `fd`, from up
// to one thread per core this process may run on. Returns 0, or the errno of a write that
// failed (the first in the file's order).
int write_cells(int fd, const binary_world_layout& layout, std::size_t first,
                std::span<const std::uint32_t> flags, std::span<const float> temperatures,
                const kiln::programs::file_system_calls& calls);

}  // namespace kiln::heat
