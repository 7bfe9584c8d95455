// SPDX-License-Identifier: Apache-2.0
// sliced_ell, the CPU's product for rows of nearly equal length (include/kiln/detail/algo/
// sparse_format.hpp): the slices' offsets, the way back to CSR, and the kernel in which one
// work-item walks a chunk of slices, the rows of a slice side by side.
#include <algorithm>
#include <kiln/algo/sparse_product.hpp>
#include <kiln/detail/algo/sparse_format.hpp>

#include "sparse_product_kernel.hpp"

namespace kiln::detail {
namespace {

/// Real values keep eight lanes' sums in one OpenCL vector, whose components the vectoriser packs
/// into full-width loads, gathers and multiply-adds; left as separate scalars, its packing split
/// them unevenly (8 + 4 + 2 + 2 lanes of 16, with scalar loads for the last ones).
constexpr std::size_t lanes_per_vector = 8;

}  // namespace

std::vector<std::uint64_t> slice_offsets(std::size_t slice_rows,
                                         std::span<const std::uint32_t> row_pointers) {
    const std::size_t rows = row_pointers.size() - 1;
    std::vector<std::uint64_t> offsets{0};
    for (std::size_t first = 0; first < rows; first += slice_rows) {
        const std::size_t end = std::min(rows, first + slice_rows);
        std::uint64_t longest = 0;
        for (std::size_t r = first; r < end; ++r)
            longest = std::max<std::uint64_t>(longest, row_pointers[r + 1] - row_pointers[r]);
        offsets.push_back(offsets.back() + longest * slice_rows);
    }
    return offsets;
}

std::vector<std::uint32_t> csr_slots_of_slices(std::size_t slice_rows, std::size_t rows,
                                               std::span<const std::uint32_t> offsets,
                                               std::span<const std::uint32_t> padded_columns,
                                               std::vector<std::uint32_t>& row_pointers) {
    // A row's entries fill its first slots; padding follows them.
    std::vector<std::uint32_t> slots;
    row_pointers.assign(1, 0);
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t slice = r / slice_rows;
        for (std::size_t slot = offsets[slice] + r % slice_rows;
             slot < offsets[slice + 1] && padded_columns[slot] != sliced_padding_column;
             slot += slice_rows)
            slots.push_back(static_cast<std::uint32_t>(slot));
        row_pointers.push_back(static_cast<std::uint32_t>(slots.size()));
    }
    return slots;
}

void emit_sliced_ell(source_builder& b, const sparse_layout& layout,
                     const sparse_kernel_text& text) {
    const std::size_t lanes = layout.lanes;
    const std::string width = std::to_string(lanes);
    // Complex values (an add function) are vectors already: one scalar per lane.
    const std::size_t vectors = text.add.empty() ? lanes / lanes_per_vector : 0;
    const std::size_t in_vectors = vectors * lanes_per_vector;
    const std::string vector_type = text.type + std::to_string(lanes_per_vector);
    const auto lane_sum = [&](std::size_t lane) {
        return lane < in_vectors ? "kiln_lanes_" + std::to_string(lane / lanes_per_vector) + ".s" +
                                       std::to_string(lane % lanes_per_vector)
                                 : "kiln_lane_" + std::to_string(lane);
    };
    b.open(
        "for (ulong kiln_chunk = get_global_id(0); kiln_chunk < kiln_work_count; kiln_chunk += "
        "get_global_size(0))");
    b.line("const ulong kiln_slices_end = kiln_work[kiln_chunk + 1];");
    // kiln_row_pointers holds the slices' offsets: a slice's end is the next one's beginning.
    b.line("ulong kiln_begin = kiln_row_pointers[kiln_work[kiln_chunk]];");
    b.open(
        "for (ulong kiln_slice = kiln_work[kiln_chunk]; kiln_slice < kiln_slices_end; "
        "++kiln_slice)");
    b.line("const ulong kiln_end = kiln_row_pointers[kiln_slice + 1];");
    for (std::size_t v = 0; v < vectors; ++v)
        b.line(vector_type + " kiln_lanes_" + std::to_string(v) + " = (" + vector_type + ")(" +
               text.zero + ");");
    for (std::size_t lane = in_vectors; lane < lanes; ++lane)
        b.line(text.type + " " + lane_sum(lane) + " = " + text.zero + ";");
    // A step reads entry k of every row of the slice: the same statements once per lane, in
    // straight lines that the vectoriser packs across lanes (contiguous loads of columns and
    // values, a gather of x). A padding slot reads x[0] and is not added: a slice has padding
    // only if a row of it has an entry, so the matrix has a column.
    b.open("for (ulong kiln_at = kiln_begin; kiln_at < kiln_end; kiln_at += " + width + ")");
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        b.open("");
        b.line("const ulong kiln_entry = kiln_at + " + std::to_string(lane) + ";");
        b.line("const uint kiln_stored = kiln_columns[kiln_entry];");
        b.line("const uint kiln_column = kiln_stored & 0x7fffffffu;");
        b.line(text.type + " kiln_sum = " + lane_sum(lane) + ";");
        for (const auto& line : text.entry) b.line(line);
        b.line(lane_sum(lane) + " = kiln_stored > 0x7fffffffu ? " + lane_sum(lane) +
               " : kiln_sum;");
        b.close();
    }
    b.close();
    b.line("kiln_begin = kiln_end;");
    b.line("const ulong kiln_first_row = kiln_slice * " + width + ";");
    // The last slice may run past the matrix's last row; the others store every lane unguarded.
    const auto emit_rows = [&](bool guarded) {
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            b.open("");
            b.line("const ulong kiln_row = kiln_first_row + " + std::to_string(lane) + ";");
            b.line("const " + text.type + " kiln_sum = " + lane_sum(lane) + ";");
            if (guarded) b.open("if (kiln_row < n)");
            for (const auto& line : text.row) b.line(line);
            if (guarded) b.close();
            b.close();
        }
    };
    b.open("if (kiln_first_row + " + width + " <= n)");
    emit_rows(false);
    b.close_with("else");
    b.open("");
    emit_rows(true);
    b.close();
    b.close();
    b.close();
}

}  // namespace kiln::detail
