// The row-block stepper shared by step_world --devices and step_world_mpi.
#include "row_blocks.hpp"

#include <algorithm>

#include "tool_support.hpp"

namespace kiln::heat {

void row_block::start(engine& stepper, float dt) {
    session = stepper.start(part, dt);
    halo_rows_stale = false;
}

void row_block::step(unsigned steps) {
    halo_write_seconds = 0;
    if (halo_rows_stale) {
        const stopwatch write_clock;
        const std::span<const float> all(part.temperatures);
        const std::size_t after = block_offset() + block_cells();
        session->write_rows(0, all.first(block_offset()));
        session->write_rows(block_first_row - part_first_row + block_rows, all.subspan(after));
        halo_write_seconds = write_clock.seconds();
    }
    halo_rows_stale = true;  // the next step follows an exchange, or none follows
    session->step(steps);
}

void row_block::finish() {
    if (session) session->finish();
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

row_block cut_block(const world& w, std::uint32_t first_row, std::uint32_t rows,
                    unsigned halo_rows) {
    row_block block;
    block.block_first_row = first_row;
    block.block_rows = rows;
    block.part_first_row = first_row - std::min(first_row, halo_rows);
    const std::uint32_t end_row =
        first_row + rows + std::min<std::uint32_t>(w.height - first_row - rows, halo_rows);
    block.part.width = w.width;
    block.part.height = end_row - block.part_first_row;
    block.part.alpha = w.alpha;
    block.part.t = w.t;
    const auto begin = static_cast<std::ptrdiff_t>(std::size_t{block.part_first_row} * w.width);
    const auto end = static_cast<std::ptrdiff_t>(std::size_t{end_row} * w.width);
    block.part.flags.assign(w.flags.begin() + begin, w.flags.begin() + end);
    block.part.temperatures.assign(w.temperatures.begin() + begin, w.temperatures.begin() + end);
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
