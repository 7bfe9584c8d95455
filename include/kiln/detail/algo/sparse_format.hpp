// SPDX-License-Identifier: Apache-2.0
// How kiln stores a sparse matrix on a device: the formats, row-length statistics and the rule.
//
// The format is chosen once, when the matrix is built, from its row lengths and the device:
//   - csr_scalar: one work-item per row over the CSR arrays, a contiguous block of rows each
//     (the CPU's format before csr_chunked; only forced now, to compare and test);
//   - csr_chunked: CPUs. The rows cut once, on the host, into a few chunks per core at equal
//     shares of entries plus rows (a power-law matrix's long rows do not unbalance the cores);
//     a work-item (a work-group of one) walks its chunk's rows serially, carrying the row pointer
//     from row to row, with no barrier and no local memory (src/algo/sparse/spmv_on_cpu.cpp);
//   - ell: rows padded to the longest one and stored column-major, one work-item per row. GPUs,
//     for short rows of nearly equal length (stencil matrices): neighbouring work-items read
//     neighbouring entries, so every load is coalesced, and no row pointers are read;
//   - sliced_ell: CPUs, for the same matrices. The rows cut into slices of `lanes` rows (SELL-C,
//     C = lanes, rows not sorted), each slice padded to its longest row and stored column-major
//     on its own, so that one step reads an entry of every row of the slice from contiguous
//     memory (ELL's arrays, a whole column apart per step, alias in the cache at power-of-two
//     row counts). A work-item walks a chunk of slices with the slice's rows written out side by
//     side, which the compiler turns into SIMD across rows: no loop per row, no row pointers
//     (src/algo/sparse/spmv_sliced_ell.cpp);
//   - csr_vector: a team of `lanes` work-items (a power of two) per row, which reduce their
//     partial sums in local memory. GPUs, for long rows (hundreds of entries on average); the team
//     is as wide as the mean row, so that long rows do not serialise on one work-item and short
//     rows waste few lanes; rows far longer than the team (a power-law matrix's few huge rows) are
//     each reduced by a whole work-group instead, so that they do not hold up the end of the
//     launch;
//   - csr_adaptive: the rows cut into blocks (built on the host once) that each fill one
//     work-group: its work-items read the block's entries side by side (coalesced, several loads
//     in flight each), keep the products in local memory, then sum each row's products there with
//     as many work-items per row as the block's row count leaves. A row too long for a block is a
//     block of its own, reduced by the whole group. GPUs, for irregular rows of short or middling
//     mean length (power laws); csr_vector keeps the matrices of long rows.
// The thresholds are data, in src/algo/sparse/sparse_rules.cpp (plan_spmv), with where they came
// from.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/detail/scoped_override.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {

enum class sparse_format { csr_scalar, csr_vector, ell, csr_adaptive, csr_chunked, sliced_ell };
std::string_view to_string(sparse_format format) noexcept;

struct row_statistics {
    std::size_t rows = 0, nonzeros = 0, longest = 0;
    std::size_t columns = 0;  ///< the matrix's (set by check_csr)
    double mean() const noexcept { return rows == 0 ? 0.0 : double(nonzeros) / double(rows); }
};

/// What the rule decided for one matrix on one device.
struct sparse_layout {
    sparse_format format = sparse_format::csr_scalar;
    unsigned lanes = 1;         ///< csr_vector: work-items per row; sliced_ell: rows per slice
    std::size_t ell_width = 0;  ///< ell: entries per row after padding
    std::size_t work_group_size = 128;  ///< csr_vector, csr_adaptive: work-items per group
    /// csr_vector: rows with more entries go to a whole work-group each (0: none do).
    std::size_t long_row = 0;
    /// csr_adaptive: entries of one block (a multiple of the group size: the loads each
    /// work-item has in flight), and the most products one work-item adds up for its row.
    std::size_t block_entries = 0, lane_entries = 0;
    /// csr_chunked, sliced_ell: chunks of rows or slices (0: the device's compute units times the
    /// rule's chunks per compute unit).
    std::size_t chunks = 0;
    /// The product program's share of the cache key: every field the generated kernel is
    /// written from. ell_width (a kernel argument), lane_entries and chunks (which only cut the
    /// rows on the host) are left out, so that matrices differing only there share a program.
    std::string key() const;
};

/// The numbers the rule uses, with where they came from.
struct sparse_rule {
    /// ELL is used when the padded size is at most this many times the non-zeros...
    double ell_max_padding = 1.25;
    /// ...and the longest row has at most this many entries.
    std::size_t ell_max_width = 32;
    /// csr_vector teams are at most this wide (a warp on NVIDIA GPUs).
    unsigned max_lanes = 32;
    std::size_t work_group_size = 128;
    /// csr_vector: rows longer than this many passes of their team go to a whole work-group.
    std::size_t long_row_passes = 16;
    /// Rows that are not ELL's: csr_adaptive while the mean row has fewer entries than this,
    /// csr_vector for longer rows (which fill blocks on their own).
    double adaptive_max_mean = 0;
    /// csr_adaptive: group size, entries per work-item in a block, products per work-item.
    std::size_t adaptive_group = 256, adaptive_items = 4, adaptive_lane_entries = 32;
    /// csr_chunked for every matrix where this is not 0: chunks of rows per compute unit...
    std::size_t chunks_per_compute_unit = 0;
    /// ...or, where this is not 0, sliced_ell with slices of this many rows for the matrices
    /// whose padded slices hold at most ell_max_padding times the non-zeros (and that have at
    /// most sliced_max_columns columns).
    unsigned slice_rows = 0;
    std::string_view provenance;
};
/// The rule's numbers for a device (choose_sparse_layout applies them per matrix), in
/// src/algo/sparse/sparse_rules.cpp.
const sparse_rule& plan_spmv(const device_properties& props);

/// Counts row lengths from CSR row pointers (validated before: monotone, first 0).
template <class Index>
row_statistics statistics_of(std::span<const Index> row_pointers) {
    row_statistics s;
    s.rows = row_pointers.size() - 1;
    s.nonzeros = static_cast<std::size_t>(row_pointers.back());
    for (std::size_t r = 0; r < s.rows; ++r) {
        const auto length = static_cast<std::size_t>(row_pointers[r + 1] - row_pointers[r]);
        if (length > s.longest) s.longest = length;
    }
    return s;
}

/// The rule: see the top of this file. `value_bytes` is the size of one matrix value (the local
/// memory csr_adaptive needs per entry); `row_pointers` are the matrix's (sliced_ell's padding).
sparse_layout choose_sparse_layout(const row_statistics& rows,
                                   std::span<const std::uint32_t> row_pointers, const device& dev,
                                   std::size_t value_bytes);

/// csr_adaptive's blocks: [first row, end row, first entry, end entry) each, in launch order (the
/// blocks of one long row first, so that they do not finish last).
std::vector<std::uint32_t> adaptive_blocks(const sparse_layout& layout,
                                           std::span<const std::uint32_t> row_pointers);

/// csr_chunked's chunks: `chunks` + 1 row numbers, chunk k being rows [k-th, (k + 1)-th), cut
/// where the entries plus the rows before a row reach k shares of the matrix's entries plus rows.
std::vector<std::uint32_t> row_chunks(std::size_t chunks,
                                      std::span<const std::uint32_t> row_pointers);

/// sliced_ell marks padding with this column index, so its matrices have at most this many
/// columns: the kernel reads x[0] for padding and does not add it, and its gathers take 32-bit
/// indices.
inline constexpr std::uint32_t sliced_padding_column = 0x80000000u;
inline constexpr std::size_t sliced_max_columns = sliced_padding_column;

/// sliced_ell's slices of `slice_rows` rows: slice k's first entry (the padded entries of the
/// slices before it) for k = 0 .. slices, the last one the padded size; a slice's width is its
/// entries over slice_rows. The last slice is padded with rows past the matrix's end.
std::vector<std::uint64_t> slice_offsets(std::size_t slice_rows,
                                         std::span<const std::uint32_t> row_pointers);

/// A sliced_ell matrix back in CSR (make_inline's text reads CSR and ELL only): fills
/// `row_pointers` and returns, per CSR entry, its slot in the sliced arrays.
std::vector<std::uint32_t> csr_slots_of_slices(std::size_t slice_rows, std::size_t rows,
                                               std::span<const std::uint32_t> offsets,
                                               std::span<const std::uint32_t> padded_columns,
                                               std::vector<std::uint32_t>& row_pointers);

/// Test-only: while alive, every matrix built uses `layout` whatever its rows and device (the
/// ELL width is still the longest row), so that tests run every format on every device.
class scoped_sparse_layout {
  public:
    explicit scoped_sparse_layout(sparse_layout layout);

  private:
    scoped_override<std::optional<sparse_layout>> override_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
