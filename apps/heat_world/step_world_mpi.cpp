// SPDX-License-Identifier: Apache-2.0
// step_world_mpi: step_world over MPI ranks; each rank steps a block of rows and the halo around
// it.
//
// Every rank reads its block of rows and the halo rows around it (rank_world_io.hpp: each its
// own rows of a binary world file, else rank 0 reads and scatters), steps its block with the
// row-block stepper of step_world --devices (row_blocks.hpp: deep halos, exchanged once per
// `halo` steps), the halo rows moving between ranks as MPI messages, and at the end writes
// its block (each its own rows of a binary output file, else rank 0 gathers and writes).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <iostream>
#include <kiln/mpi.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine.hpp"
#include "parallel.hpp"
#include "program_main.hpp"
#include "rank_world_io.hpp"
#include "row_blocks.hpp"
#include "step_command.hpp"
#include "tool_support.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace {

using namespace kiln::heat;

constexpr const char* program = "step_world_mpi";

// Test-only hooks (tests/heat_world, docs/mpi.md), so that tests can check that every rank
// stops when one fails. KILN_TEST_FAIL_RANK=R makes rank R fail as a device would, when it
// starts stepping.
void injected_failure(const kiln::mpi::communicator& comm) {
    const char* failing = std::getenv("KILN_TEST_FAIL_RANK");
    if (failing != nullptr && std::to_string(comm.rank()) == failing)
        throw kiln::error("clEnqueueNDRangeKernel", -5, "CL_OUT_OF_RESOURCES",
                          "injected on rank " + std::to_string(comm.rank()) +
                              " by KILN_TEST_FAIL_RANK (a test hook)");
}

// KILN_TEST_FULL_DISK_RANK=R makes rank R's writes of its rows into a binary output file fail
// as on a full disk (ENOSPC), after rank 0 reserved the file's space.
kiln::programs::file_system_calls output_calls(const kiln::mpi::communicator& comm) {
    kiln::programs::file_system_calls calls;
    const char* full = std::getenv("KILN_TEST_FULL_DISK_RANK");
    if (full != nullptr && std::to_string(comm.rank()) == full) {
        calls.pwrite = [](int, const void*, std::size_t, off_t) -> ssize_t {
            errno = ENOSPC;
            return -1;
        };
    }
    return calls;
}

// This rank's block, its halo rows moving between ranks as MPI messages: only the rows other
// ranks want leave a device, into their places among the part's host rows (stale while the
// session runs), from which they are sent; the halo rows arrive in the same host rows, go to
// the block's pinned halo rows and on to the device at the next step. One MPI_Alltoallv a round
// moves every rank's rows at once.
class rank_blocks final : public block_stepper {
  public:
    rank_blocks(const kiln::mpi::communicator& comm, rank_part& mine, engine& stepper, float dt)
        : comm_(comm), mine_(mine), stepper_(stepper), dt_(dt) {}

    void start() override {
        comm_.agree([&] {
            if (mine_.block.block_rows > 0)
                mine_.block.start(stepper_, world_rows{mine_.rows, 0, mine_.rows.height}, dt_);
        });
    }
    double step(unsigned steps, bool last) override {
        double halo_seconds = 0;
        comm_.agree([&] {
            injected_failure(comm_);
            if (mine_.block.block_rows == 0) return;
            mine_.block.step(steps);
            halo_seconds = mine_.block.halo_write_seconds;
            if (last) return;
            const stopwatch read_clock;
            read_outgoing();
            halo_seconds += read_clock.seconds();
        });
        return halo_seconds;
    }
    // Collective.
    void exchange() override {
        row_block& block = mine_.block;
        mine_.exchange.run<float>(mine_.block_temperatures(), mine_.rows.temperatures);
        if (block.block_rows == 0) return;
        const std::span<const float> arrived(mine_.rows.temperatures);
        const std::span<float> above = block.halo_above(), below = block.halo_below();
        std::copy_n(arrived.begin(), above.size(), above.begin());
        std::copy_n(arrived.end() - static_cast<std::ptrdiff_t>(below.size()), below.size(),
                    below.begin());
        block.rows_above_fresh = !above.empty();
        block.rows_below_fresh = !below.empty();
    }

  private:
    // The rows other ranks want, from the session.
    void read_outgoing() {
        const std::size_t width = mine_.block.width;
        for (const kiln::mpi::element_range& sent : mine_.exchange.sent_ranges())
            mine_.block.session->read_rows(
                static_cast<std::uint32_t>(mine_.block.rows_above() + sent.first / width),
                mine_.block_temperatures().subspan(sent.first, sent.size()));
    }
    const kiln::mpi::communicator& comm_;
    rank_part& mine_;
    engine& stepper_;
    float dt_;
};

// This rank's block with the halo exchange overlapped with the stepping, for runs whose every
// block has at least 2 x `halo` rows (rank_blocks otherwise). Each rank steps its block's edges,
// the `halo` rows at each end that a neighbour wants, first, as sessions of their own on the
// part's end rows [0, above + 2 halo) and [rows - below - 2 halo, rows): exact after the round
// for the rows `halo` or more from an edge session's own ends, which are the rows wanted. It
// reads them into pinned host rows and sends them (receives posted at the same time land in the
// block's pinned halo rows), enqueues the whole part's steps, and waits for the messages while
// the device steps. The part's own halo rows are never refreshed: its block rows within `halo` of
// them come out wrong and are overwritten, device to device where the engine can, by the edge
// sessions' exact rows; the next round's edges start from the arrived halo rows and the part's
// rows next to them. The output is the same, byte for byte.
class overlapped_rank_blocks final : public block_stepper {
  public:
    overlapped_rank_blocks(const kiln::mpi::communicator& comm, rank_part& mine, engine& stepper,
                           float dt, unsigned halo_rows)
        : comm_(comm), mine_(mine), stepper_(stepper), dt_(dt), halo_(halo_rows) {}

    // Whether every rank has a block of at least 2 x halo_rows rows; the same on every rank.
    static bool fits(const kiln::mpi::distribution& cells, std::uint32_t width,
                     unsigned halo_rows) {
        if (width == 0 || std::size_t{halo_rows} * width > INT_MAX) return false;
        for (int r = 0; r < cells.ranks(); ++r)
            if (cells.count(r) / width < 2 * std::size_t{halo_rows}) return false;
        return true;
    }

    void start() override {
        comm_.agree([&] {
            row_block& block = mine_.block;
            block.start(stepper_, world_rows{mine_.rows, 0, mine_.rows.height}, dt_);
            const std::uint32_t above = block.rows_above(), below = block.rows_below();
            const std::uint32_t rows = block.part_rows, h = halo_;
            if (above > 0)
                edges_.push_back({.first_row = 0,
                                  .rows = above + 2 * h,
                                  .halo_row = 0,
                                  .own_row = above,
                                  .exact_row = above,
                                  .neighbour = comm_.rank() - 1,
                                  .arriving = block.halo_above()});
            if (below > 0)
                edges_.push_back({.first_row = rows - below - 2 * h,
                                  .rows = below + 2 * h,
                                  .halo_row = 2 * h,
                                  .own_row = 0,
                                  .exact_row = h,
                                  .neighbour = comm_.rank() + 1,
                                  .arriving = block.halo_below()});
            outgoing_.allocate(edges_.size() * h * block.width, stepper_.device());
            scratch_.resize(std::size_t{2} * h * block.width);
            for (std::size_t e = 0; e < edges_.size(); ++e) {
                edge& side = edges_[e];
                side.session =
                    stepper_.start_rows(world_rows{mine_.rows, side.first_row, side.rows}, dt_);
                side.leaving = outgoing_.cells().subspan(e * h * block.width, h * block.width);
            }
        });
    }

    double step(unsigned steps, bool last) override {
        const stopwatch round_clock;
        row_block& block = mine_.block;
        const std::size_t width = block.width;
        comm_.agree([&] {
            injected_failure(comm_);
            for (edge& side : edges_) {
                if (started_) {  // the rows the part stepped last round, and the halo arrived
                    copy_rows(*block.session, side.first_row + side.own_row, 2 * halo_,
                              *side.session, side.own_row);
                    side.session->write_rows(side.halo_row, side.arriving);
                }
                side.session->step(steps);
                if (!last) side.session->read_rows(side.exact_row, side.leaving);
            }
        });
        started_ = true;
        std::vector<MPI_Request> messages;
        if (!last) {
            const int count = static_cast<int>(std::size_t{halo_} * width);
            for (edge& side : edges_) {
                // Tag: 0 for rows going up, 1 for rows going down.
                const int up = side.neighbour < comm_.rank() ? 0 : 1;
                messages.emplace_back();
                kiln::mpi::detail::check(
                    MPI_Irecv(side.arriving.data(), count, MPI_FLOAT, side.neighbour, 1 - up,
                              comm_.get(), &messages.back()),
                    "MPI_Irecv");
                messages.emplace_back();
                kiln::mpi::detail::check(
                    MPI_Isend(side.leaving.data(), count, MPI_FLOAT, side.neighbour, up,
                              comm_.get(), &messages.back()),
                    "MPI_Isend");
            }
        }
        // The part's launches go first, so that the device steps while this thread waits for
        // the messages: one thread, since mpirun may bind a rank to one core.
        // A failure waits for the messages too, which every rank has posted, before every rank
        // hears of it: none may end with its messages in flight.
        const stopwatch part_clock;
        std::exception_ptr launch_failure;
        try {
            block.session->launch_steps(steps);
        } catch (...) {
            launch_failure = std::current_exception();
        }
        if (!messages.empty()) {
            const stopwatch wait_clock;
            kiln::mpi::detail::check(MPI_Waitall(static_cast<int>(messages.size()), messages.data(),
                                                 MPI_STATUSES_IGNORE),
                                     "MPI_Waitall");
            message_wait_seconds_ += wait_clock.seconds();
        }
        double part_seconds = 0;
        comm_.agree([&] {
            if (launch_failure) std::rethrow_exception(launch_failure);
            block.session->finish_steps();
            part_seconds = part_clock.seconds();
            for (edge& side : edges_)
                copy_rows(*side.session, side.exact_row, halo_, *block.session,
                          side.first_row + side.exact_row);
        });
        return round_clock.seconds() - part_seconds;
    }

    void exchange() override {}  // the messages went during step()

    // Time spent waiting for the messages while the part stepped.
    double message_wait_seconds() const { return message_wait_seconds_; }

  private:
    struct edge {
        std::uint32_t first_row;  // the part's row of the edge session's first row
        std::uint32_t rows;
        std::uint32_t halo_row;   // the edge's row where the neighbour's rows arrive
        std::uint32_t own_row;    // the edge's first row of the block's (2 x halo of them)
        std::uint32_t exact_row;  // the edge's first of the halo rows exact after a round
        int neighbour;
        std::span<float> arriving;   // pinned: the block's halo rows on this side
        std::span<float> leaving{};  // pinned: the exact rows, as sent
        std::unique_ptr<stepping_session> session{};
    };

    // Rows of one session into another on this rank: device to device where the engine can.
    void copy_rows(stepping_session& from, std::uint32_t first_row, std::uint32_t rows,
                   stepping_session& to, std::uint32_t target_row) {
        if (from.copy_rows_to(first_row, rows, to, target_row) != halo_move::host_rows) {
            from.wait_for_copies();
            return;
        }
        const std::span<float> cells(scratch_.data(), std::size_t{rows} * mine_.block.width);
        from.read_rows(first_row, cells);
        to.write_rows(target_row, cells);
    }

    const kiln::mpi::communicator& comm_;
    rank_part& mine_;
    engine& stepper_;
    float dt_;
    unsigned halo_;
    std::vector<edge> edges_;
    halo_storage outgoing_;
    std::vector<float> scratch_;
    bool started_ = false;
    double message_wait_seconds_ = 0;
};

// mpirun binds each of two ranks to one core unless told otherwise. The world's packing and its
// copies to the device then take turns on that core: on an H200 machine a 16384^2 world's setup
// took 1.3 s so, 0.18 s with `--bind-to none`. Said once, by rank 0, for worlds where it costs.
void note_one_core(const world_shape& w) {
    const unsigned machine = std::thread::hardware_concurrency();
    if (usable_cores() == 1 && machine > 1 && w.cell_count() >= (std::size_t{1} << 24))
        std::fprintf(stderr,
                     "%s: note: rank 0 may run on 1 of the machine's %u cores (mpirun binds ranks "
                     "to cores): the world's packing and its copies to the device take turns on "
                     "it; mpirun --bind-to none, or --map-by slot:PE=N, gives each rank more\n",
                     program, machine);
}

// Rank 0's --stats lines: the run (read: until every rank holds its rows; write: until the
// output is complete, a file renamed into place), then where the stepping's time went on rank 0
// (setup: the upload; finish: the read-back) and what the halo exchanges cost. Overlapped (with the
// time waited for the messages while the part stepped), the cost is the rounds' time beyond
// the part's own stepping, message waits longer than the part's steps counting as stepping.
void print_stats(const kiln::mpi::communicator& comm, const engine& stepper, const world_shape& w,
                 const step_command& command, unsigned halo_rows,
                 std::optional<double> message_wait_seconds, double step_seconds,
                 const stepping_totals& totals, double read_seconds, io_route read_route,
                 double write_seconds, io_route write_route) {
    const double updates = static_cast<double>(w.cell_count()) * command.steps;
    std::fprintf(stderr,
                 "%s: %s on %d ranks: %u x %u cells, %u steps in %.4f s: %s; read %.3f s (%s), "
                 "write %.3f s (%s); rank 0 on %u of %u cores\n",
                 program, stepper.description().c_str(), comm.size(), w.width, w.height,
                 command.steps, step_seconds, update_rate_text(updates, step_seconds).c_str(),
                 read_seconds, io_route_text(read_route), write_seconds, io_route_text(write_route),
                 usable_cores(), std::thread::hardware_concurrency());
    const double per_exchange = totals.exchanges > 0 ? 1e3 / totals.exchanges : 0.0;
    char what[200];
    if (message_wait_seconds) {
        std::snprintf(what, sizeof what,
                      "edge steps, device copies, reads and writes; messages waited for "
                      "%.3f ms each while the part stepped",
                      *message_wait_seconds * per_exchange);
    } else {
        std::snprintf(what, sizeof what, "device reads, messages, device writes");
    }
    std::fprintf(
        stderr,
        "%s: rank 0: setup %.3f s (upload), stepping %.4f s (%s), finish %.3f s "
        "(read-back); %u halo exchanges of %u rows in %.4f s (%.1f%% of the "
        "stepping; %.3f ms each: %s); MPI library CUDA-aware: %s (halo rows move through "
        "%s)\n",
        program, totals.setup_seconds, totals.stepping_seconds,
        update_rate_text(updates, totals.stepping_seconds).c_str(), totals.finish_seconds,
        totals.exchanges, halo_rows, totals.exchange_seconds,
        totals.stepping_seconds > 0 ? 100 * totals.exchange_seconds / totals.stepping_seconds : 0.0,
        totals.exchange_seconds * per_exchange, what,
        kiln::mpi::environment::cuda_aware() ? "yes" : "no",
        message_wait_seconds ? "pinned host memory, messages overlapped with the part's steps"
                             : "host memory");
}

int step_on_every_rank(const kiln::mpi::communicator& comm, int argc, char** argv) {
    const bool root = comm.rank() == 0;
    step_command command;
    comm.agree([&] {
        command = parse_step_command(argc, argv, step_tool::mpi);
        if (!command.help) check_device_choice(command);
    });
    if (command.help) {
        if (root) std::fputs(step_usage(step_tool::mpi).c_str(), stdout);
        return 0;
    }
    const engine_registry registry = make_engine_registry();
    if (command.list_engines) {
        if (root) list_engines(registry, command.options);
        return 0;
    }
    // The device is chosen before the input is read, so that a missing one fails fast; the
    // engine (its device's context and programs) then starts on another thread while the world
    // is read, as in step_world. Only this thread calls MPI.
    std::future<std::unique_ptr<engine>> starting;
    comm.agree([&] {
        const engine_entry& entry = chosen_engine(registry, command);
        engine_options options = command.options;
        if (entry.uses_device) {
            // One rank per GPU: the node-local rank picks among the devices the spec matches.
            const kiln::device device = kiln::mpi::local_device(comm, command.options.device);
            options.device = std::to_string(device.index());
        } else if (root && command.device_given) {
            std::fprintf(stderr, "%s: note: engine '%s' runs on the host and ignores --device\n",
                         program, entry.name.c_str());
        }
        starting =
            std::async(std::launch::async, [&entry, options] { return entry.create(options); });
    });

    std::ios::sync_with_stdio(false);
    const stopwatch read_clock;
    kiln::programs::now_doing("reading the world");
    const unsigned halo_rows = command.halo_rows > 0 ? command.halo_rows : default_halo_rows;
    rank_part mine = read_parts(comm, command, halo_rows);
    const double read_seconds = read_clock.seconds();
    const world_shape shape = mine.shape;
    if (root) note_one_core(shape);
    std::unique_ptr<engine> stepper;
    comm.agree([&] { stepper = starting.get(); });

    const bool show_progress =
        root && (command.progress == progress_choice::always ||
                 (command.progress == progress_choice::automatic && stderr_is_terminal()));
    std::optional<progress_bar> bar;
    if (show_progress)
        bar.emplace(program, command.steps, command.progress == progress_choice::always);
    const stopwatch step_clock;
    kiln::programs::now_doing("stepping the world");
    const bool overlapped = overlapped_rank_blocks::fits(mine.cells, shape.width, halo_rows);
    std::unique_ptr<block_stepper> blocks;
    const overlapped_rank_blocks* overlapping = nullptr;
    if (overlapped) {
        auto edges =
            std::make_unique<overlapped_rank_blocks>(comm, mine, *stepper, command.dt, halo_rows);
        overlapping = edges.get();
        blocks = std::move(edges);
    } else {
        blocks = std::make_unique<rank_blocks>(comm, mine, *stepper, command.dt);
    }
    progress_callback on_progress;
    if (bar) on_progress = [&bar](unsigned done) { bar->update(done); };
    stepping_totals totals = step_in_rounds(*blocks, command.steps, halo_rows, on_progress);
    const stopwatch finish_clock;
    comm.agree([&] { mine.block.read_back(mine.block_temperatures()); });
    totals.finish_seconds = finish_clock.seconds();
    const double step_seconds = step_clock.seconds();
    if (bar) bar->finish();

    const stopwatch write_clock;
    kiln::programs::now_doing("writing the world");
    const io_route write_route = write_blocks(comm, command, mine, output_calls(comm));
    const double write_seconds = write_clock.seconds();

    if (root && command.stats)
        print_stats(comm, *stepper, shape, command, halo_rows,
                    overlapping ? std::optional(overlapping->message_wait_seconds()) : std::nullopt,
                    step_seconds, totals, read_seconds, mine.read_route, write_seconds,
                    write_route);
    return 0;
}

// kiln::programs::run_program for every rank. A failure every rank agreed on is printed once,
// by rank 0 (with the failed rank's number, unless it is rank 0 or the input's), and every rank
// exits with status 1; any other failure is printed by its rank,
// which then aborts the others (MPI_Abort) rather than leave them waiting for it.
int run_on_every_rank(const kiln::mpi::communicator& comm, int argc, char** argv) {
    bool agreed = false;
    const int status = kiln::programs::run_program(program, [&] {
        try {
            return step_on_every_rank(comm, argc, argv);
        } catch (const shared_failure&) {
            agreed = true;
            if (comm.rank() != 0) return 1;
            throw;
        } catch (const kiln::mpi::rank_failure& failure) {
            agreed = true;
            if (comm.rank() != 0) return 1;
            if (failure.failed_rank() == 0) throw std::runtime_error(failure.rank_message());
            throw std::runtime_error("rank " + std::to_string(failure.failed_rank()) + ": " +
                                     failure.rank_message());
        }
    });
    if (status != 0 && !agreed && comm.size() > 1) comm.abort(status);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    // A file-size limit (ulimit -f) is one more full disk: a write past it then fails with EFBIG
    // and the usual message, the temporary file removed, instead of the signal ending the
    // process with the temporary file left behind.
    std::signal(SIGXFSZ, SIG_IGN);
    std::optional<kiln::mpi::environment> mpi;
    std::optional<kiln::mpi::communicator> comm;
    const int started = kiln::programs::run_program(program, [&] {
        mpi.emplace(argc, argv);
        comm.emplace();
        return 0;
    });
    if (started != 0) return started;
    return run_on_every_rank(*comm, argc, argv);
}
