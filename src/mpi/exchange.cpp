// SPDX-License-Identifier: Apache-2.0
// Distributions of a range over ranks, and the MPI collectives that move parts of it.
#include <algorithm>
#include <climits>
#include <kiln/mpi/exchange.hpp>
#include <string>

namespace kiln::mpi {
namespace {

int mpi_count(std::size_t count, const char* call) {
    if (count > INT_MAX)
        throw kiln::invalid_argument_error(
            call, std::to_string(count) + " elements exceed MPI's int counts");
    return static_cast<int>(count);
}

element_range intersect(element_range a, element_range b) {
    const std::size_t first = std::max(a.first, b.first);
    const std::size_t last = std::min(a.last, b.last);
    return first < last ? element_range{first, last} : element_range{};
}

void check_count(const char* call, const char* what, std::size_t expected, std::size_t got) {
    if (expected != got)
        throw kiln::invalid_argument_error(call, std::string(what) + " has " + std::to_string(got) +
                                                     " elements, expected " +
                                                     std::to_string(expected));
}

/// Counts and displacements of every rank's block, for the v-collectives.
struct block_layout {
    std::vector<int> counts, displacements;
    block_layout(const distribution& d, const char* call) {
        for (int r = 0; r < d.ranks(); ++r) {
            counts.push_back(mpi_count(d.count(r), call));
            displacements.push_back(mpi_count(d.begin(r), call));
        }
    }
};

void check_ranks(const communicator& comm, const distribution& d, const char* call) {
    if (d.ranks() != comm.size())
        throw kiln::invalid_argument_error(call, "the distribution has " +
                                                     std::to_string(d.ranks()) + " blocks for " +
                                                     std::to_string(comm.size()) + " ranks");
}

// What scatter and gather check before moving anything (the whole range counts only at the
// root), then where each rank's block lies.
block_layout checked_blocks(const communicator& comm, const distribution& d, int root,
                            std::size_t all_count, std::size_t mine_count, const char* call) {
    check_ranks(comm, d, call);
    if (comm.rank() == root) check_count(call, "the whole range", d.size(), all_count);
    check_count(call, "this rank's block", d.count(comm.rank()), mine_count);
    return block_layout(d, call);
}

}  // namespace

distribution::distribution(const std::vector<std::size_t>& counts) {
    for (const std::size_t count : counts) offsets_.push_back(offsets_.back() + count);
}

distribution::distribution(const communicator& comm, std::size_t local_count) {
    std::vector<unsigned long long> counts(static_cast<std::size_t>(comm.size()));
    const unsigned long long mine = local_count;
    detail::check(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, counts.data(), 1,
                                MPI_UNSIGNED_LONG_LONG, comm.get()),
                  "MPI_Allgather");
    for (const unsigned long long count : counts) offsets_.push_back(offsets_.back() + count);
}

distribution distribution::even(std::size_t n, int ranks) {
    if (ranks < 1)
        throw kiln::invalid_argument_error("kiln::mpi::distribution::even",
                                           "needs at least one rank, got " + std::to_string(ranks));
    const auto parts = static_cast<std::size_t>(ranks);
    std::vector<std::size_t> counts;
    for (std::size_t r = 0; r < parts; ++r) counts.push_back(n / parts + (r < n % parts ? 1 : 0));
    return distribution(counts);
}

range_exchange::range_exchange(const communicator& comm, distribution d,
                               std::vector<element_range> wanted)
    : comm_(comm), distribution_(std::move(d)), wanted_(std::move(wanted)) {
    check_ranks(comm_, distribution_, "kiln::mpi::range_exchange");
    if (wanted_.size() != static_cast<std::size_t>(comm_.size()))
        throw kiln::invalid_argument_error("kiln::mpi::range_exchange",
                                           "one wanted range per rank is needed");
    for (const element_range& range : wanted_)
        if (range.first > range.last || range.last > distribution_.size())
            throw kiln::invalid_argument_error(
                "kiln::mpi::range_exchange",
                "wanted range [" + std::to_string(range.first) + ", " + std::to_string(range.last) +
                    ") is not within the " + std::to_string(distribution_.size()) + " elements");
}

range_exchange range_exchange::halo(const communicator& comm, distribution d, std::size_t before,
                                    std::size_t after) {
    std::vector<element_range> wanted;
    for (int r = 0; r < d.ranks(); ++r) {
        if (d.count(r) == 0) {
            wanted.emplace_back();
            continue;
        }
        wanted.push_back({d.begin(r) - std::min(before, d.begin(r)),
                          d.end(r) + std::min(after, d.size() - d.end(r))});
    }
    return range_exchange(comm, std::move(d), std::move(wanted));
}

std::vector<element_range> range_exchange::sent_ranges() const {
    const element_range mine{distribution_.begin(comm_.rank()), distribution_.end(comm_.rank())};
    std::vector<element_range> sent;
    for (int r = 0; r < comm_.size(); ++r) {
        if (r == comm_.rank()) continue;
        const element_range part = intersect(mine, wanted_[static_cast<std::size_t>(r)]);
        if (part.size() > 0) sent.push_back({part.first - mine.first, part.last - mine.first});
    }
    return sent;
}

void range_exchange::run_bytes(const void* owned, std::size_t owned_count, void* wanted,
                               std::size_t wanted_count, std::size_t element_bytes) const {
    const char* call = "kiln::mpi::range_exchange::run";
    const int me = comm_.rank();
    check_count(call, "the owned block", distribution_.count(me), owned_count);
    check_count(call, "the wanted range", this->wanted().size(), wanted_count);
    const element_range mine{distribution_.begin(me), distribution_.end(me)};
    const auto ranks = static_cast<std::size_t>(comm_.size());
    std::vector<int> send_counts(ranks), send_offsets(ranks), receive_counts(ranks),
        receive_offsets(ranks);
    for (int r = 0; r < comm_.size(); ++r) {
        if (r == me) continue;  // this rank's own block stays where the caller has it
        const auto k = static_cast<std::size_t>(r);
        const element_range sent = intersect(mine, wanted_[k]);
        send_counts[k] = mpi_count(sent.size(), call);
        send_offsets[k] = mpi_count(sent.size() > 0 ? sent.first - mine.first : 0, call);
        const element_range theirs{distribution_.begin(r), distribution_.end(r)};
        const element_range received = intersect(theirs, this->wanted());
        receive_counts[k] = mpi_count(received.size(), call);
        receive_offsets[k] =
            mpi_count(received.size() > 0 ? received.first - this->wanted().first : 0, call);
    }
    const auto type = detail::element_type(element_bytes);
    detail::check(
        MPI_Alltoallv(owned, send_counts.data(), send_offsets.data(), type.get(), wanted,
                      receive_counts.data(), receive_offsets.data(), type.get(), comm_.get()),
        "MPI_Alltoallv");
}

namespace detail {

void scatter_bytes(const communicator& comm, const distribution& d, int root, const void* all,
                   std::size_t all_count, void* mine, std::size_t mine_count,
                   std::size_t element_bytes) {
    const char* call = "kiln::mpi::scatter";
    const block_layout blocks = checked_blocks(comm, d, root, all_count, mine_count, call);
    const auto type = element_type(element_bytes);
    check(MPI_Scatterv(all, blocks.counts.data(), blocks.displacements.data(), type.get(), mine,
                       blocks.counts[static_cast<std::size_t>(comm.rank())], type.get(), root,
                       comm.get()),
          "MPI_Scatterv");
}

void gather_bytes(const communicator& comm, const distribution& d, int root, const void* mine,
                  std::size_t mine_count, void* all, std::size_t all_count,
                  std::size_t element_bytes) {
    const char* call = "kiln::mpi::gather";
    const block_layout blocks = checked_blocks(comm, d, root, all_count, mine_count, call);
    const auto type = element_type(element_bytes);
    check(MPI_Gatherv(mine, blocks.counts[static_cast<std::size_t>(comm.rank())], type.get(), all,
                      blocks.counts.data(), blocks.displacements.data(), type.get(), root,
                      comm.get()),
          "MPI_Gatherv");
}

ghost_plan plan_ghosts(const communicator& comm, const distribution& columns,
                       std::vector<std::uint64_t> ghosts) {
    const char* call = "kiln::mpi::sparse_matrix";
    check_ranks(comm, columns, call);
    const auto ranks = static_cast<std::size_t>(comm.size());
    ghost_plan plan;
    plan.ghosts = std::move(ghosts);
    plan.receive_counts.resize(ranks);
    plan.receive_offsets.resize(ranks);
    for (int r = 0; r < comm.size(); ++r) {
        const auto k = static_cast<std::size_t>(r);
        const auto from =
            std::lower_bound(plan.ghosts.begin(), plan.ghosts.end(), columns.begin(r));
        const auto to = std::lower_bound(plan.ghosts.begin(), plan.ghosts.end(), columns.end(r));
        plan.receive_counts[k] = mpi_count(static_cast<std::size_t>(to - from), call);
        plan.receive_offsets[k] =
            mpi_count(static_cast<std::size_t>(from - plan.ghosts.begin()), call);
    }
    plan.send_counts.resize(ranks);
    check(MPI_Alltoall(plan.receive_counts.data(), 1, MPI_INT, plan.send_counts.data(), 1, MPI_INT,
                       comm.get()),
          "MPI_Alltoall");
    plan.send_offsets.resize(ranks);
    std::size_t total = 0;
    for (std::size_t k = 0; k < ranks; ++k) {
        plan.send_offsets[k] = mpi_count(total, call);
        total += static_cast<std::size_t>(plan.send_counts[k]);
    }
    plan.send_indices.resize(total);
    check(MPI_Alltoallv(plan.ghosts.data(), plan.receive_counts.data(), plan.receive_offsets.data(),
                        MPI_UINT64_T, plan.send_indices.data(), plan.send_counts.data(),
                        plan.send_offsets.data(), MPI_UINT64_T, comm.get()),
          "MPI_Alltoallv");
    // Asked for by global column; sent from this rank's block.
    for (std::uint64_t& index : plan.send_indices) index -= columns.begin(comm.rank());
    return plan;
}

void exchange_ghosts(const communicator& comm, const ghost_plan& plan, const void* send,
                     void* receive, std::size_t element_bytes) {
    const auto type = element_type(element_bytes);
    check(MPI_Alltoallv(send, plan.send_counts.data(), plan.send_offsets.data(), type.get(),
                        receive, plan.receive_counts.data(), plan.receive_offsets.data(),
                        type.get(), comm.get()),
          "MPI_Alltoallv");
}

}  // namespace detail
}  // namespace kiln::mpi
