// SPDX-License-Identifier: Apache-2.0
// kiln::mpi::sparse_matrix: rows split over the ranks; a product exchanges only the elements of
// x that each rank's rows read from other ranks' blocks.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/mpi/communicator.hpp>
#include <kiln/mpi/exchange.hpp>
#include <kiln/mpi/vector.hpp>
#include <kiln/sparse.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::mpi {

/// A sparse matrix whose rows are split over the ranks: each rank holds its block of rows as
/// CSR with global column indices, and multiplies a kiln::mpi::vector distributed as
/// `columns`. Before each product every rank receives, in one MPI_Alltoallv, only the
/// elements of x its rows read outside its own block (staged through host memory).
template <sparse_value T>
class sparse_matrix {
  public:
    /// Collective. `row_pointers` (this rank's rows + 1 entries, from 0), `column_indices`
    /// (global, below columns.size()) and `values` are this rank's rows; ranks may own none.
    /// Bad arrays on any rank throw rank_failure on every rank.
    template <std::integral Index>
    sparse_matrix(const communicator& comm, const kiln::queue& q, distribution columns,
                  std::span<const Index> row_pointers, std::span<const Index> column_indices,
                  std::span<const T> values)
        : comm_(comm), queue_(q), columns_(std::move(columns)) {
        const std::size_t first = columns_.begin(comm.rank()), last = columns_.end(comm.rank());
        std::vector<std::uint64_t> ghosts;
        comm.agree([&] {
            if (row_pointers.empty())
                throw kiln::invalid_argument_error("kiln::mpi::sparse_matrix",
                                                   "row_pointers needs rows + 1 entries");
            for (const Index column : column_indices) {
                if (column < 0 || static_cast<std::uint64_t>(column) >= columns_.size())
                    throw kiln::invalid_argument_error(
                        "kiln::mpi::sparse_matrix",
                        "column " + std::to_string(column) + " is outside the " +
                            std::to_string(columns_.size()) + " columns");
                const auto global = static_cast<std::uint64_t>(column);
                if (global < first || global >= last) ghosts.push_back(global);
            }
            std::sort(ghosts.begin(), ghosts.end());
            ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
        });
        plan_ = detail::plan_ghosts(comm, columns_, std::move(ghosts));
        rows_ = row_pointers.size() - 1;
        if (!plan_.send_indices.empty())
            send_indices_ = kiln::vector<std::uint64_t>(q, plan_.send_indices);
        comm.agree([&] {
            if (rows_ == 0) return;
            // Local columns: this rank's block first, then the ghosts in plan order.
            std::vector<std::uint32_t> local_columns;
            for (const Index column : column_indices) {
                const auto global = static_cast<std::uint64_t>(column);
                local_columns.push_back(static_cast<std::uint32_t>(
                    global >= first && global < last
                        ? global - first
                        : (last - first) + static_cast<std::size_t>(
                                               std::lower_bound(plan_.ghosts.begin(),
                                                                plan_.ghosts.end(), global) -
                                               plan_.ghosts.begin())));
            }
            const std::vector<std::uint32_t> local_pointers(row_pointers.begin(),
                                                            row_pointers.end());
            local_.emplace(q, rows_, (last - first) + plan_.ghosts.size(), local_pointers,
                           local_columns, values);
        });
    }

    /// This rank's rows.
    std::size_t local_rows() const noexcept { return rows_; }
    /// The columns this rank reads from other ranks' blocks of x.
    std::size_t ghost_count() const noexcept { return plan_.ghosts.size(); }

    /// Collective: y = A * x, where x is distributed as the matrix's columns and y's parts hold
    /// each rank's rows.
    void multiply(const vector<T>& x, vector<T>& y) const {
        const kiln::vector<T>& mine = x.local();
        if (!(x.distribution() == columns_) || y.local().size() != rows_ || mine.part_count() != 1)
            throw kiln::invalid_argument_error(
                "kiln::mpi::sparse_matrix::multiply",
                "x must be distributed as the columns (on one device per rank), y as the rows");
        std::vector<T> outgoing(plan_.send_indices.size());
        if (!outgoing.empty()) {
            kiln::vector<T> gathered(queue_, outgoing.size());
            gathered = kiln::permutation(send_indices_)(mine);
            gathered.read(outgoing);
        }
        std::vector<T> ghosts(plan_.ghosts.size());
        detail::exchange_ghosts(comm_, plan_, outgoing.data(), ghosts.data(), sizeof(T));
        if (rows_ == 0) return;
        kiln::vector<T> widened(queue_, mine.size() + ghosts.size());
        if (!mine.empty()) mine.part(0).copy_to(queue_, 0, widened.part(0), 0, mine.size());
        if (!ghosts.empty()) widened.part(0).write(queue_, mine.size(), std::span<const T>(ghosts));
        y.local() = *local_ * widened;
    }

  private:
    communicator comm_;
    kiln::queue queue_;
    distribution columns_;
    std::size_t rows_ = 0;
    detail::ghost_plan plan_;
    kiln::vector<std::uint64_t> send_indices_;
    std::optional<kiln::sparse_matrix<T>> local_;
};

}  // namespace kiln::mpi
#pragma GCC visibility pop
