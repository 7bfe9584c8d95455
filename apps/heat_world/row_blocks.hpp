// SPDX-License-Identifier: Apache-2.0
// Stepping a world as blocks of rows with deep halos: the loop shared by step_world --devices
// (blocks on the devices of one process) and step_world_mpi (one block per rank).
//
// Each block is stepped with `halo` rows of its neighbours around it, in a stepping session of
// an ordinary engine. The rows at the part's edge are stepped as if the world ended there,
// which is wrong, but the error moves inward one row per step: after up to `halo` steps the
// block itself is still exactly what one engine on the whole world computes (a cell depends
// only on its four neighbours). Then the halo rows are exchanged afresh.
#pragma once

#include <array>
#include <cstdint>
#include <kiln/runtime/pinned.hpp>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine.hpp"
#include "world.hpp"

namespace kiln::heat {

// Rows around each block, and steps between exchanges, unless --halo says otherwise: extra
// work of 2 x 64 rows per block (3% of a 4096-row block) for one exchange per 64 steps. On two
// H200s a 16384^2 world stepped 2.3% faster than with 32 rows, and no faster with 128.
inline constexpr unsigned default_halo_rows = 64;

// Host memory for a block's halo rows: pinned through the engine's device where it has one, so
// that the rows move to and from the device at the link's speed; ordinary memory for host
// engines.
class halo_storage {
  public:
    halo_storage() = default;
    // `device` null: ordinary memory.
    void allocate(std::size_t cells, const kiln::device* device);
    std::span<float> cells() { return pinned_.empty() ? std::span<float>(plain_) : pinned_; }

  private:
    kiln::host_vector<float> pinned_;
    std::vector<float> plain_;
};

// One block of a world's rows and the halo rows around it (the part): the block's session keeps
// the part's state; an exchange brings the halo rows afresh, device to device or through `halo`.
struct row_block {
    std::uint32_t width = 0;
    std::uint32_t part_first_row = 0;  // the world's row of the part's first row
    std::uint32_t part_rows = 0;
    std::uint32_t block_first_row = 0;  // the world's row of the block's first row
    std::uint32_t block_rows = 0;
    std::unique_ptr<stepping_session> session;  // from start() to read_back()
    // Halo rows that came through the host: those above the block, then those below.
    halo_storage halo;
    bool rows_above_fresh = false;  // in `halo`, not yet on the device
    bool rows_below_fresh = false;
    double halo_write_seconds = 0;  // the last step()'s hand-over of the halo rows to the session
    std::string start_text;         // the session's, once started (--stats)

    std::uint32_t rows_above() const { return block_first_row - part_first_row; }
    std::uint32_t rows_below() const {
        return part_first_row + part_rows - block_first_row - block_rows;
    }
    std::size_t block_cells() const { return std::size_t{block_rows} * width; }
    std::span<float> halo_above() { return halo.cells().first(std::size_t{rows_above()} * width); }
    std::span<float> halo_below() {
        return halo.cells().subspan(std::size_t{rows_above()} * width,
                                    std::size_t{rows_below()} * width);
    }
    // Starts the session on `part`, the part's rows in whichever world holds them (uploaded
    // straight from its arrays where the engine has a device).
    void start(engine& stepper, const world_rows& part, float dt);
    // Steps the part by `steps`, first handing the session the halo rows an exchange brought
    // through the host.
    void step(unsigned steps);
    // Reads the block's rows into `rows` (block_cells() of them) and ends the session.
    void read_back(std::span<float> rows);
};

// The first row of each of `blocks` blocks of `height` rows, as even as can be (the first
// height % blocks blocks one row longer), and `height` at the end.
std::vector<std::uint32_t> even_row_starts(std::uint32_t height, std::size_t blocks);

// Rows [first_row, first_row + rows) of a world `width` x `height` with up to `halo_rows` rows
// around them: the geometry only, no session yet.
row_block plan_block(std::uint32_t width, std::uint32_t height, std::uint32_t first_row,
                     std::uint32_t rows, unsigned halo_rows);

// The blocks of one run and how halo rows move between them: MPI messages between ranks, or
// copies between the devices of one process.
class block_stepper {
  public:
    virtual ~block_stepper() = default;
    // Starts every block's session (uploads its part).
    virtual void start() = 0;
    // Steps this process's blocks by `steps`; `last` when no exchange follows. Returns the
    // seconds it spent moving halo rows between host and devices (for blocks stepped at once,
    // the longest block's), which the exchange's cost includes.
    virtual double step(unsigned steps, bool last) = 0;
    // Moves every block's halo rows from the blocks that own them.
    virtual void exchange() = 0;
};

// Where a run's time went. The exchanges' cost counts reading the rows others want from the
// devices, moving them (host copies or MPI messages), and writing them to the devices that
// want them.
struct stepping_totals {
    double setup_seconds = 0;     // the sessions' start: the uploads
    double stepping_seconds = 0;  // the rounds of steps and the exchanges between them
    double finish_seconds = 0;    // the caller's read-back of the blocks
    unsigned exchanges = 0;
    double exchange_seconds = 0;
    std::string first_start_text;  // the first block's session start (--stats)
    // Halo row ranges moved over the run, by how (halo_move; step_world_mpi's all go through
    // host memory).
    std::array<unsigned, 4> moves{};
    unsigned moved(halo_move how) const { return moves[static_cast<std::size_t>(how)]; }
};

// Starts the blocks, then steps in rounds of at most `halo_rows` steps with an exchange between
// rounds; progress, if any, hears after every round.
stepping_totals step_in_rounds(block_stepper& blocks, unsigned steps, unsigned halo_rows,
                               const progress_callback& progress);

}  // namespace kiln::heat
