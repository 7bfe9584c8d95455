// SPDX-License-Identifier: Apache-2.0
// The row-block stepper shared by step_world --devices and step_world_mpi.
#include "row_blocks.hpp"

#include <algorithm>

#include "tool_support.hpp"

namespace kiln::heat {

void halo_storage::allocate(std::size_t cells, const kiln::device* device) {
    if (device != nullptr) {
        pinned_ = kiln::host_vector<float>(cells, kiln::pinned_allocator<float>(*device));
    } else {
        plain_.resize(cells);
    }
}

void row_block::start(engine& stepper, const world_rows& part, float dt) {
    halo.allocate(std::size_t{rows_above() + rows_below()} * width, stepper.device());
    session = stepper.start_rows(part, dt);
    start_text = session->start_text();
    rows_above_fresh = rows_below_fresh = false;
}

void row_block::step(unsigned steps) {
    const stopwatch write_clock;
    if (rows_above_fresh) session->write_rows(0, halo_above());
    if (rows_below_fresh) session->write_rows(rows_above() + block_rows, halo_below());
    halo_write_seconds = rows_above_fresh || rows_below_fresh ? write_clock.seconds() : 0;
    rows_above_fresh = rows_below_fresh = false;
    session->step(steps);
}

void row_block::read_back(std::span<float> rows) {
    if (session) session->read_rows(rows_above(), rows);
    session.reset();
}

std::vector<std::uint32_t> even_row_starts(std::uint32_t height, std::size_t blocks) {
    std::vector<std::uint32_t> starts{0};
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::uint32_t rows =
            static_cast<std::uint32_t>(height / blocks + (b < height % blocks ? 1 : 0));
        starts.push_back(starts.back() + rows);
    }
    return starts;
}

row_block plan_block(std::uint32_t width, std::uint32_t height, std::uint32_t first_row,
                     std::uint32_t rows, unsigned halo_rows) {
    row_block block;
    block.width = width;
    block.block_first_row = first_row;
    block.block_rows = rows;
    block.part_first_row = first_row - std::min(first_row, halo_rows);
    const std::uint32_t end_row =
        first_row + rows + std::min<std::uint32_t>(height - first_row - rows, halo_rows);
    block.part_rows = end_row - block.part_first_row;
    return block;
}

stepping_totals step_in_rounds(block_stepper& blocks, unsigned steps, unsigned halo_rows,
                               const progress_callback& progress) {
    stepping_totals totals;
    const stopwatch setup_clock;
    blocks.start();
    totals.setup_seconds = setup_clock.seconds();
    const stopwatch stepping_clock;
    for (unsigned done = 0; done < steps;) {
        const unsigned round = std::min(halo_rows, steps - done);
        const bool last_round = done + round == steps;
        totals.exchange_seconds += blocks.step(round, last_round);
        done += round;
        if (!last_round) {
            const stopwatch exchange_clock;
            blocks.exchange();
            totals.exchange_seconds += exchange_clock.seconds();
            ++totals.exchanges;
        }
        if (progress) progress(done);
    }
    totals.stepping_seconds = stepping_clock.seconds();
    return totals;
}

}  // namespace kiln::heat
