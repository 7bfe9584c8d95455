// SPDX-License-Identifier: Apache-2.0
// The heat world: a grid of cells with flags and temperatures, and the coursework's test world.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace kiln::heat {

// Cell flags as stored in both file formats and in the kernels' flag buffers. The values are
// the original program's, so a flag word can go to a device buffer unchanged.
inline constexpr std::uint32_t cell_normal = 0;
inline constexpr std::uint32_t cell_fixed = 1;      // keeps its temperature (heat source or sink)
inline constexpr std::uint32_t cell_insulator = 2;  // keeps its temperature and blocks heat flow

// Bits of the packed flag word (see pack_neighbour_flags): bits 0 and 1 are the cell's own flag;
// each neighbour bit says that neighbour passes no heat, because it is an insulator or it lies
// outside the world. The OpenCL kernels and the threads engine rely on these exact values.
inline constexpr std::uint32_t packed_held = cell_fixed | cell_insulator;
inline constexpr std::uint32_t packed_up_blocked = 1u << 2;     // (x, y-1)
inline constexpr std::uint32_t packed_down_blocked = 1u << 3;   // (x, y+1)
inline constexpr std::uint32_t packed_left_blocked = 1u << 4;   // (x-1, y)
inline constexpr std::uint32_t packed_right_blocked = 1u << 5;  // (x+1, y)

struct world {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    float alpha = 0.1f;  // propagation constant
    // Simulated time. Neither file format stores it (the original did not either), so a world
    // read from a file starts at 0; it exists so engines advance it exactly as the original did.
    float t = 0.0f;
    std::vector<std::uint32_t> flags;  // row-major, index y * width + x
    std::vector<float> temperatures;   // row-major, each in [0, 1]

    std::size_t cell_count() const { return std::size_t{width} * height; }
    std::size_t index(std::uint32_t x, std::uint32_t y) const { return std::size_t{y} * width + x; }

    friend bool operator==(const world&, const world&) = default;
};

// The number of cells of a width x height world, after checking that the product neither
// overflows nor needs more memory than this machine has (8 bytes per cell: a flag and a
// temperature). Throws std::length_error naming the problem.
std::size_t checked_cell_count(std::uint64_t width, std::uint64_t height);

// Throws std::invalid_argument when a world built in code breaks the invariants the readers
// guarantee: sizes that agree, a finite alpha >= 0, known flags, temperatures in [0, 1] (NaN
// excluded).
void check_world(const world& w);

// The coursework's n x n "slalom" test world (n >= 3): an insulating border, two insulating
// walls with spurs, a fixed heat source along row 1 and a fixed sink at (n/2, n-3).
world make_test_world(std::uint32_t n, float alpha);

// Rows [first_row, first_row + rows) of a world, to be stepped as a world of their own (the
// cells beyond its first and last rows count as outside): a block of rows with its halo, taken
// straight from the whole world's arrays rather than from a copy.
struct world_rows {
    const world& source;
    std::uint32_t first_row = 0;
    std::uint32_t rows = 0;

    std::size_t first_cell() const { return std::size_t{first_row} * source.width; }
    std::size_t cell_count() const { return std::size_t{rows} * source.width; }
    std::span<const std::uint32_t> flags() const {
        return std::span<const std::uint32_t>(source.flags).subspan(first_cell(), cell_count());
    }
    std::span<const float> temperatures() const {
        return std::span<const float>(source.temperatures).subspan(first_cell(), cell_count());
    }
};

// One flag word per cell: the cell's own flag plus the packed_*_blocked bits of its four
// neighbours, computed once so that a step reads one flag per cell instead of five.
std::vector<std::uint32_t> pack_neighbour_flags(const world& w);
std::vector<std::uint32_t> pack_neighbour_flags(const world_rows& rows);
// The same words written into `packed` (one per cell of `rows`), as 32-bit words or as bytes,
// since they use six bits; on every core for large worlds.
template <class Word>
void pack_neighbour_flags_into(const world_rows& rows, std::span<Word> packed);
extern template void pack_neighbour_flags_into(const world_rows&, std::span<std::uint32_t>);
extern template void pack_neighbour_flags_into(const world_rows&, std::span<std::uint8_t>);

// Adds dt to w.t once per step, in float, as the original did: t is not dt*steps exactly.
void advance_time(world& w, float dt, unsigned steps);

}  // namespace kiln::heat
