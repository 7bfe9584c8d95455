// SPDX-License-Identifier: Apache-2.0
// step_world_mpi's world I/O: every rank's part of the world (its block of rows and the halo
// rows around it) from the input, and the blocks back out to the output. A binary world file
// is read, and a binary output file written, by every rank at once, each its own rows at their
// offsets; any other input or output goes through rank 0, which scatters and gathers.
#pragma once

#include <cstdint>
#include <kiln/mpi.hpp>
#include <span>
#include <stdexcept>

#include "atomic_file.hpp"
#include "row_blocks.hpp"
#include "step_command.hpp"
#include "world.hpp"

namespace kiln::heat {

// What every rank knows of the world.
struct world_shape {
    std::uint32_t width = 0, height = 0;
    float alpha = 0;
    std::size_t cell_count() const { return std::size_t{width} * height; }
};

// How a world came in or went out: each rank its own rows of the file, or through rank 0 (which
// scatters or gathers). --stats says which.
enum class io_route { every_rank, through_rank_0 };
const char* io_route_text(io_route route);

// This rank's part of the world: its block of rows and the halo rows around it.
struct rank_part {
    world_shape shape;
    io_route read_route = io_route::through_rank_0;
    kiln::mpi::distribution cells;  // blocks of whole rows, in cells
    kiln::mpi::range_exchange exchange;
    row_block block;
    world rows;  // the part's rows as read, later where halo messages arrive
    std::span<std::uint32_t> block_flags() {
        return std::span<std::uint32_t>(rows.flags).subspan(block_offset(), block.block_cells());
    }
    std::span<float> block_temperatures() {
        return std::span<float>(rows.temperatures).subspan(block_offset(), block.block_cells());
    }

  private:
    std::size_t block_offset() const { return std::size_t{block.rows_above()} * block.width; }
};

// A failure every rank knows of that belongs to the input, not to one rank (a bad world): rank 0
// prints it as it is, without a rank number.
class shared_failure : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Collective: every rank's part of the command's input world, `halo_rows` rows around its
// block. A binary world file laid out as write_world lays one out (read_binary_layout: rank 0
// reads its header and the bytes around the arrays) is read by every rank at once, its part's
// rows only, with pread, checked as read_world checks them: a bad cell ends every rank with
// shared_failure "bad world in 'FILE': byte offset N: ...", the first in the file's order
// whichever rank met it. Any other input rank 0 reads whole (read_input) and scatters. Returns
// once every rank holds its rows, so that rank 0's clock then counts every rank's reading.
rank_part read_parts(const kiln::mpi::communicator& comm, const step_command& command,
                     unsigned halo_rows);

// Collective: writes the world of every rank's block to the command's output. A binary world
// going to a regular file (or a new one) is written by every rank at once, into the temporary
// file rank 0 begins (kiln::programs::file_replacement): rank 0 writes the bytes around the
// arrays, every rank its block's rows at their offsets (`calls`: the system calls, so that a
// test can make one rank's writes fail), flushes them (fsync: on a file system shared by
// several nodes each node holds its own), and once every rank has, rank 0 renames the file into
// place. A failure on any rank ends every rank (kiln::mpi::rank_failure) with the temporary
// file removed and the name as it was. Any other output rank 0 gathers and writes
// (write_output), in order. Returns, with the route taken, once the output is complete on
// every rank.
io_route write_blocks(const kiln::mpi::communicator& comm, const step_command& command,
                      rank_part& mine, const kiln::programs::file_system_calls& calls = {});

}  // namespace kiln::heat
