// SPDX-License-Identifier: Apache-2.0
// Which rank owns which elements of a distributed range, and moving ranges of it between ranks.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/mpi/communicator.hpp>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::mpi {

/// Contiguous blocks of a range of elements in rank order: rank r owns [begin(r), end(r)).
/// Blocks may differ in size, and may be empty.
class distribution {
  public:
    distribution() = default;
    /// From every rank's count, which every rank passes alike (no communication).
    explicit distribution(const std::vector<std::size_t>& counts);
    /// Collective: each rank passes the count it owns.
    distribution(const communicator& comm, std::size_t local_count);
    /// n elements over `ranks` blocks as even as can be (the first n % ranks one longer).
    static distribution even(std::size_t n, int ranks);

    /// The number of blocks (ranks).
    int ranks() const noexcept { return static_cast<int>(offsets_.size()) - 1; }
    /// Elements in all blocks.
    std::size_t size() const noexcept { return offsets_.back(); }
    /// The first element of `rank`'s block; std::out_of_range for a rank it has not.
    std::size_t begin(int rank) const { return offsets_.at(static_cast<std::size_t>(rank)); }
    /// One past the last element of `rank`'s block.
    std::size_t end(int rank) const { return offsets_.at(static_cast<std::size_t>(rank) + 1); }
    /// The size of `rank`'s block.
    std::size_t count(int rank) const { return end(rank) - begin(rank); }

    /// The same blocks.
    friend bool operator==(const distribution&, const distribution&) = default;

  private:
    std::vector<std::size_t> offsets_{0};
};

/// A global range [first, last) of elements.
struct element_range {
    std::size_t first = 0;  ///< the first element
    std::size_t last = 0;   ///< one past the last element
    /// last - first.
    std::size_t size() const noexcept { return last - first; }
    /// The same bounds.
    friend bool operator==(const element_range&, const element_range&) = default;
};

/// A plan that gives every rank a range of the distributed elements it wants (typically its
/// block and the halo around it), from whichever ranks own them: one MPI_Alltoallv per run,
/// in which every rank sends only the elements others want and receives only those it wants.
class range_exchange {
  public:
    /// `wanted[r]` is the range rank r wants, the same list on every rank (no communication).
    range_exchange(const communicator& comm, distribution d, std::vector<element_range> wanted);
    /// The halo of a stencil: every rank that owns elements wants its block widened by `before`
    /// elements before it and `after` after it, clipped to the range; ranks that own nothing
    /// want nothing.
    static range_exchange halo(const communicator& comm, distribution d, std::size_t before,
                               std::size_t after);

    /// The range this rank receives.
    const element_range& wanted() const noexcept { return wanted_[comm_.rank()]; }
    /// The ranges of this rank's block that other ranks want, in the block's own indices: what
    /// a caller staging its block through host memory needs to copy out before run().
    std::vector<element_range> sent_ranges() const;

    /// Collective: `owned` holds this rank's block (only the sent ranges are read); `wanted`
    /// (wanted().size() elements) receives the range this rank wants, except the elements this
    /// rank owns itself, which are left as they are (the caller has them already).
    template <class T>
    requires std::is_trivially_copyable_v<T>
    void run(std::span<const T> owned, std::span<T> wanted) const {
        run_bytes(owned.data(), owned.size(), wanted.data(), wanted.size(), sizeof(T));
    }

  private:
    void run_bytes(const void* owned, std::size_t owned_count, void* wanted,
                   std::size_t wanted_count, std::size_t element_bytes) const;

    communicator comm_;
    distribution distribution_;
    std::vector<element_range> wanted_;
};

namespace detail {

/// MPI_Scatterv / MPI_Gatherv of elements of `element_bytes` bytes by the distribution's
/// blocks: `all` is the whole range on `root` (ignored elsewhere), `mine` this rank's block.
void scatter_bytes(const communicator& comm, const distribution& d, int root, const void* all,
                   std::size_t all_count, void* mine, std::size_t mine_count,
                   std::size_t element_bytes);
void gather_bytes(const communicator& comm, const distribution& d, int root, const void* mine,
                  std::size_t mine_count, void* all, std::size_t all_count,
                  std::size_t element_bytes);

/// Who sends which elements of x to whom so that each rank gets the columns its rows read
/// outside its own block (its ghosts).
struct ghost_plan {
    std::vector<std::uint64_t> ghosts;  // global columns, sorted, hence grouped by owner
    std::vector<int> receive_counts, receive_offsets;  // per rank, into ghosts
    std::vector<std::uint64_t> send_indices;           // into this rank's block, by destination
    std::vector<int> send_counts, send_offsets;        // per rank, into send_indices
};

/// Collective (an MPI_Alltoall and an MPI_Alltoallv): `ghosts` are the global columns this
/// rank reads from other ranks' blocks of `columns`, sorted and without repeats.
ghost_plan plan_ghosts(const communicator& comm, const distribution& columns,
                       std::vector<std::uint64_t> ghosts);

/// Collective: the elements at plan.send_indices (in `send`, in that order) to the ranks that
/// read them, and this rank's ghosts into `receive`.
void exchange_ghosts(const communicator& comm, const ghost_plan& plan, const void* send,
                     void* receive, std::size_t element_bytes);

}  // namespace detail

/// Collective: rank `root`'s `all` (d.size() elements there; ignored elsewhere) split into
/// every rank's `mine` (its block).
template <class T>
requires std::is_trivially_copyable_v<T>
void scatter(const communicator& comm, const distribution& d, std::span<const T> all,
             std::span<T> mine, int root = 0) {
    detail::scatter_bytes(comm, d, root, all.data(), all.size(), mine.data(), mine.size(),
                          sizeof(T));
}

/// Collective: every rank's `mine` (its block) gathered in order into rank `root`'s `all`
/// (d.size() elements there; ignored elsewhere).
template <class T>
requires std::is_trivially_copyable_v<T>
void gather(const communicator& comm, const distribution& d, std::span<const T> mine,
            std::span<T> all, int root = 0) {
    detail::gather_bytes(comm, d, root, mine.data(), mine.size(), all.data(), all.size(),
                         sizeof(T));
}

}  // namespace kiln::mpi
#pragma GCC visibility pop
