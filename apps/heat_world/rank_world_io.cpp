// SPDX-License-Identifier: Apache-2.0
// step_world_mpi's world I/O (rank_world_io.hpp): parts read with pread and blocks written with
// pwrite by every rank at once, or through rank 0.
#include "rank_world_io.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "huge_pages.hpp"
#include "program_main.hpp"
#include "world_arrays.hpp"
#include "world_io.hpp"

namespace kiln::heat {
namespace {

using kiln::mpi::detail::check;

// What rank 0 found out about a binary world file, for every rank.
struct input_plan {
    world_shape shape;
    std::uint64_t flags_offset = 0, temperatures_offset = 0;
    bool in_parallel = false;  // every rank reads its own part
};

// Collective: rank 0's `text` on every rank.
void broadcast(const kiln::mpi::communicator& comm, std::string& text) {
    unsigned long long length = text.size();
    check(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, comm.get()), "MPI_Bcast");
    text.resize(static_cast<std::size_t>(length));
    check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm.get()), "MPI_Bcast");
}

kiln::mpi::distribution row_blocks_in_cells(const world_shape& shape, int ranks) {
    const auto rows = kiln::mpi::distribution::even(shape.height, ranks);
    std::vector<std::size_t> cells;
    for (int r = 0; r < ranks; ++r) cells.push_back(rows.count(r) * shape.width);
    return kiln::mpi::distribution(cells);
}

// This rank's part of a world of `shape`, its arrays still empty: its block (as even as can be;
// a rank without rows wants nothing, its empty block at 0 of an empty part) and the halo rows
// around it.
rank_part plan_part(const kiln::mpi::communicator& comm, const world_shape& shape,
                    unsigned halo_rows) {
    kiln::mpi::distribution cells = row_blocks_in_cells(shape, comm.size());
    const std::size_t halo_cells = std::size_t{halo_rows} * shape.width;
    auto exchange = kiln::mpi::range_exchange::halo(comm, cells, halo_cells, halo_cells);
    const kiln::mpi::element_range wanted = exchange.wanted();
    const std::size_t block_cells = cells.count(comm.rank());
    rank_part mine{shape, io_route::through_rank_0, cells, std::move(exchange), {}, {}};
    row_block& block = mine.block;
    block.width = shape.width;
    if (block_cells > 0 && shape.width > 0) {
        block.part_first_row = static_cast<std::uint32_t>(wanted.first / shape.width);
        block.part_rows = static_cast<std::uint32_t>(wanted.size() / shape.width);
        block.block_first_row = static_cast<std::uint32_t>(cells.begin(comm.rank()) / shape.width);
        block.block_rows = static_cast<std::uint32_t>(block_cells / shape.width);
    }
    world& part = mine.rows;
    part.width = shape.width;
    part.height = block.part_rows;
    part.alpha = shape.alpha;
    // Fresh memory that the reads fill front to back: huge pages (huge_pages.hpp).
    reserve_huge(part.flags, part.cell_count());
    part.flags.resize(part.cell_count());
    reserve_huge(part.temperatures, part.cell_count());
    part.temperatures.resize(part.cell_count());
    return mine;
}

// Collective: scatters rank 0's world `w` into every rank's part, each block straight into its
// place among the part's rows, then the rows around it from the ranks that own them. The block
// is sent from where it lies among the part's rows, into whose other rows the halo arrives:
// Open MPI takes the disjoint send and receive regions of one array.
rank_part scatter_world(const kiln::mpi::communicator& comm, const world& w,
                        const world_shape& shape, unsigned halo_rows) {
    rank_part mine = plan_part(comm, shape, halo_rows);
    const std::span<std::uint32_t> block_flags = mine.block_flags();
    kiln::mpi::scatter<std::uint32_t>(comm, mine.cells, w.flags, block_flags);
    mine.exchange.run<std::uint32_t>(block_flags, mine.rows.flags);
    const std::span<float> block_temperatures = mine.block_temperatures();
    kiln::mpi::scatter<float>(comm, mine.cells, w.temperatures, block_temperatures);
    mine.exchange.run<float>(block_temperatures, mine.rows.temperatures);
    return mine;
}

// Collective: throws shared_failure on every rank with the first of the bad cells the ranks met
// (`found`, each rank's first in its own rows) in the file's order, which is the one read_world
// reports: every cell lies in some rank's rows, so the rank whose rows hold the first bad cell
// met it.
void agree_on_first_bad_cell(const kiln::mpi::communicator& comm, const std::string& shown,
                             const std::optional<world_format_error>& found) {
    constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t mine = found ? found->position() : none;
    std::uint64_t first = none;
    check(MPI_Allreduce(&mine, &first, 1, MPI_UINT64_T, MPI_MIN, comm.get()), "MPI_Allreduce");
    if (first == none) return;
    try {
        // Ranks whose halo rows hold the same cell meet the same error; agree takes one.
        comm.agree([&] {
            if (found && found->position() == first)
                throw std::runtime_error("bad world in " + shown + ": " + found->what());
        });
    } catch (const kiln::mpi::rank_failure& failure) {
        throw shared_failure(failure.rank_message());
    }
}

// Collective: every rank reads its part's rows of the binary world file `path` laid out as
// `plan` says.
rank_part read_parts_in_parallel(const kiln::mpi::communicator& comm, const std::string& path,
                                 const input_plan& plan, unsigned halo_rows) {
    rank_part mine = plan_part(comm, plan.shape, halo_rows);
    mine.read_route = io_route::every_rank;
    const std::size_t first = std::size_t{mine.block.part_first_row} * plan.shape.width;
    std::string shown;
    std::optional<world_format_error> found;
    comm.agree([&] {
        const input_file file(path);
        shown = file.shown();
        const auto array = [&](std::uint64_t offset) {
            return array_in_file{.fd = file.fd(),
                                 .shown = shown,
                                 .file_offset = offset,
                                 .input_offset = offset,
                                 .cells = plan.shape.cell_count(),
                                 .width = plan.shape.width};
        };
        try {
            read_cells(array(plan.flags_offset), first, std::span(mine.rows.flags));
            read_cells(array(plan.temperatures_offset), first, std::span(mine.rows.temperatures));
        } catch (const world_format_error& bad) {
            found = bad;
        }
    });
    agree_on_first_bad_cell(comm, shown, found);
    return mine;
}

// Collective: rank 0's plan for reading the command's input: in parallel where it is a binary
// world file laid out as written.
input_plan plan_input(const kiln::mpi::communicator& comm, const step_command& command) {
    input_plan plan;
    comm.agree([&] {
        if (comm.rank() != 0 || !command.input) return;
        const input_file file(*command.input);
        std::optional<binary_world_layout> layout;
        try {
            layout = read_binary_layout(file.fd(), file.shown());
        } catch (const world_format_error& e) {
            throw std::runtime_error("bad world in " + file.shown() + ": " + e.what());
        }
        if (!layout) return;
        plan = {.shape = {layout->width, layout->height, layout->alpha},
                .flags_offset = layout->flags_offset,
                .temperatures_offset = layout->temperatures_offset,
                .in_parallel = true};
    });
    check(MPI_Bcast(&plan, sizeof plan, MPI_BYTE, 0, comm.get()), "MPI_Bcast");
    return plan;
}

// Collective: the world of every rank's block, on rank 0 (empty elsewhere).
world gather_world(const kiln::mpi::communicator& comm, rank_part& mine) {
    world w;
    if (comm.rank() == 0) {
        w.width = mine.shape.width;
        w.height = mine.shape.height;
        w.alpha = mine.shape.alpha;
        w.flags.resize(w.cell_count());
        w.temperatures.resize(w.cell_count());
    }
    kiln::mpi::gather<std::uint32_t>(comm, mine.cells, mine.block_flags(), w.flags);
    kiln::mpi::gather<float>(comm, mine.cells, mine.block_temperatures(), w.temperatures);
    return w;
}

// What every rank needs of the replacement rank 0 began.
struct shared_replacement {
    std::string temporary_path;  // empty: no replacement (the output is a stream)
    bool replaces_existing = false;
};

// Collective: every rank writes its block into the replacement rank 0 began (`replacement`,
// null elsewhere), rank 0 the bytes around the arrays; then rank 0 renames it into place.
void write_blocks_in_place(const kiln::mpi::communicator& comm, const std::string& path,
                           rank_part& mine, kiln::programs::file_replacement* replacement,
                           const shared_replacement& shared,
                           const kiln::programs::file_system_calls& calls) {
    const binary_world_layout layout =
        written_layout(mine.shape.width, mine.shape.height, mine.shape.alpha);
    comm.agree([&] {
        const auto failed = [&](int error) {
            throw std::runtime_error(
                kiln::programs::replacement_failure(path, shared.replaces_existing, error));
        };
        int fd = replacement ? replacement->fd()
                             : kiln::programs::open_replacement_part(shared.temporary_path);
        if (fd < 0) failed(errno);
        int error = replacement ? write_binary_frame(fd, layout, calls) : 0;
        if (error == 0) {
            const std::size_t first = std::size_t{mine.block.block_first_row} * layout.width;
            error = write_cells(fd, layout, first, mine.block_flags(), mine.block_temperatures(),
                                calls);
        }
        if (error == 0 && calls.fsync(fd) != 0) error = errno;
        if (!replacement && close(fd) != 0 && error == 0) error = errno;
        if (error != 0) failed(error);
    });
    comm.agree([&] {
        if (replacement) replacement->commit(calls);
    });
}

}  // namespace

const char* io_route_text(io_route route) {
    return route == io_route::every_rank ? "every rank its rows of the file" : "through rank 0";
}

rank_part read_parts(const kiln::mpi::communicator& comm, const step_command& command,
                     unsigned halo_rows) {
    const input_plan plan = plan_input(comm, command);
    if (plan.in_parallel) return read_parts_in_parallel(comm, *command.input, plan, halo_rows);
    world w;
    comm.agree([&] {
        if (comm.rank() == 0) w = read_input(command);
    });
    world_shape shape{w.width, w.height, w.alpha};
    check(MPI_Bcast(&shape, sizeof shape, MPI_BYTE, 0, comm.get()), "MPI_Bcast");
    rank_part mine = scatter_world(comm, w, shape, halo_rows);
    // Every rank's halo rows have arrived once every rank is here.
    check(MPI_Barrier(comm.get()), "MPI_Barrier");
    return mine;
}

io_route write_blocks(const kiln::mpi::communicator& comm, const step_command& command,
                      rank_part& mine, const kiln::programs::file_system_calls& calls) {
    const bool root = comm.rank() == 0;
    if (command.binary && command.output) {
        std::unique_ptr<kiln::programs::file_replacement> replacement;
        shared_replacement shared;
        comm.agree([&] {
            if (!root) return;
            const std::uint64_t size =
                written_size(written_layout(mine.shape.width, mine.shape.height, mine.shape.alpha));
            replacement = kiln::programs::file_replacement::begin(*command.output, size);
            if (!replacement) return;
            shared = {replacement->temporary_path(), replacement->replaces_existing()};
        });
        broadcast(comm, shared.temporary_path);
        int replaces_existing = shared.replaces_existing;
        check(MPI_Bcast(&replaces_existing, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
        shared.replaces_existing = replaces_existing != 0;
        if (!shared.temporary_path.empty()) {
            write_blocks_in_place(comm, *command.output, mine, replacement.get(), shared, calls);
            return io_route::every_rank;
        }
    }
    world w = gather_world(comm, mine);
    comm.agree([&] {
        if (!root) return;
        kiln::programs::now_doing("writing the world");
        write_output(command, w);
    });
    return io_route::through_rank_0;
}

}  // namespace kiln::heat
