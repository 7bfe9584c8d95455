// SPDX-License-Identifier: Apache-2.0
// csr_chunked, the CPU's sparse product (include/kiln/detail/algo/sparse_format.hpp): the rows cut
// into chunks on the host, and the kernel in which one work-item walks a chunk.
#include <algorithm>
#include <kiln/algo/sparse_product.hpp>
#include <kiln/detail/algo/sparse_format.hpp>

#include "sparse_product_kernel.hpp"

namespace kiln::detail {
namespace {

/// Rows of at most this many entries take the branch-free path: most rows of a power-law matrix
/// are that short, and more slots slowed rows of 5 (docs/dev/benchmark-notes.md, ## Sparse
/// matrices).
constexpr std::size_t short_row_slots = 4;

}  // namespace

std::vector<std::uint32_t> row_chunks(std::size_t chunks,
                                      std::span<const std::uint32_t> row_pointers) {
    const std::size_t rows = row_pointers.size() - 1;
    // A row costs its entries and itself (its pointer, its result, the loop around it): the
    // cost of the rows before r, row_pointers[r] + r, grows with r, so each cut is a binary
    // search.
    const double total = double(row_pointers[rows]) + double(rows);
    std::vector<std::uint32_t> cuts(chunks + 1, static_cast<std::uint32_t>(rows));
    cuts[0] = 0;
    for (std::size_t k = 1; k < chunks; ++k) {
        const double share = total * double(k) / double(chunks);
        std::size_t low = cuts[k - 1], high = rows;
        while (low < high) {
            const std::size_t middle = low + (high - low) / 2;
            if (double(row_pointers[middle]) + double(middle) < share)
                low = middle + 1;
            else
                high = middle;
        }
        cuts[k] = static_cast<std::uint32_t>(low);
    }
    return cuts;
}

void emit_csr_chunked(source_builder& b, const sparse_kernel_text& text) {
    const auto lines = [&](const std::vector<std::string>& block) {
        for (const auto& line : block) b.line(line);
    };
    const std::string slots = std::to_string(short_row_slots);
    b.line("const ulong kiln_nonzeros = kiln_row_pointers[n];");
    b.open(
        "for (ulong kiln_chunk = get_global_id(0); kiln_chunk < kiln_work_count; kiln_chunk += "
        "get_global_size(0))");
    b.line("const ulong kiln_rows_end = kiln_work[kiln_chunk + 1];");
    // Each row pointer is read once: a row's end is the next row's beginning.
    b.line("ulong kiln_begin = kiln_row_pointers[kiln_work[kiln_chunk]];");
    b.open("for (ulong kiln_row = kiln_work[kiln_chunk]; kiln_row < kiln_rows_end; ++kiln_row)");
    b.line("const ulong kiln_end = kiln_row_pointers[kiln_row + 1];");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    // Short rows without a loop: a loop's exit at an irregular row length is a mispredicted
    // branch per row. Every slot reads an entry of the matrix (past the row's end, the next
    // rows' or the last one), and a slot past the end is not added.
    b.open("if (kiln_end - kiln_begin <= " + slots + " && kiln_nonzeros > 0)");
    b.line(text.type + " kiln_short = " + text.zero + ";");
    for (std::size_t k = 0; k < short_row_slots; ++k) {
        const std::string slot = "kiln_begin + " + std::to_string(k);
        b.open("");
        b.line(text.type + " kiln_sum = " + text.zero + ";");
        b.line("const ulong kiln_entry = " + slot + " < kiln_nonzeros ? " + slot +
               " : kiln_nonzeros - 1;");
        b.line("const uint kiln_column = kiln_columns[kiln_entry];");
        lines(text.entry);
        b.line("kiln_short = " + slot + " < kiln_end ? " +
               (text.add.empty() ? "kiln_short + kiln_sum" : text.add + "(kiln_short, kiln_sum)") +
               " : kiln_short;");
        b.close();
    }
    b.line("kiln_sum = kiln_short;");
    b.close_with("else");
    b.open("for (ulong kiln_entry = kiln_begin; kiln_entry < kiln_end; ++kiln_entry)");
    b.line("const uint kiln_column = kiln_columns[kiln_entry];");
    lines(text.entry);
    b.close();
    b.line("kiln_begin = kiln_end;");
    b.open("");
    lines(text.row);
    b.close();
    b.close();
    b.close();
}

}  // namespace kiln::detail
