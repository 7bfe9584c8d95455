// SPDX-License-Identifier: Apache-2.0
// The sparse format rule, applied to a matrix's rows (its numbers: plan_spmv, sparse_rules.cpp).
#include <algorithm>
#include <cstdint>
#include <kiln/detail/algo/sparse_format.hpp>
#include <limits>
#include <mutex>

namespace kiln::detail {
namespace {

std::mutex override_mutex;
std::optional<sparse_layout> layout_override;

unsigned lanes_for(double mean, unsigned max_lanes) {
    unsigned lanes = 2;
    while (lanes < max_lanes && lanes < mean) lanes *= 2;
    return lanes;
}

}  // namespace

std::string_view to_string(sparse_format format) noexcept {
    switch (format) {
        case sparse_format::csr_scalar:
            return "csr_scalar";
        case sparse_format::csr_vector:
            return "csr_vector";
        case sparse_format::ell:
            return "ell";
        case sparse_format::csr_adaptive:
            return "csr_adaptive";
        case sparse_format::csr_chunked:
            return "csr_chunked";
        case sparse_format::sliced_ell:
            return "sliced_ell";
    }
    return "unknown";
}

sparse_layout choose_sparse_layout(const row_statistics& rows,
                                   std::span<const std::uint32_t> row_pointers, const device& dev,
                                   std::size_t value_bytes) {
    const sparse_rule& rule = plan_spmv(dev.properties());
    const std::size_t default_chunks = std::max<std::size_t>(1, dev.properties().compute_units) *
                                       std::max<std::size_t>(1, rule.chunks_per_compute_unit);
    {
        std::lock_guard lock(override_mutex);
        if (layout_override) {
            sparse_layout forced = *layout_override;
            forced.ell_width = rows.longest;
            if ((forced.format == sparse_format::csr_chunked ||
                 forced.format == sparse_format::sliced_ell) &&
                forced.chunks == 0)
                forced.chunks = default_chunks;
            return forced;
        }
    }
    sparse_layout layout;
    layout.work_group_size = rule.work_group_size;
    if (rule.chunks_per_compute_unit > 0) {
        layout.format = sparse_format::csr_chunked;
        layout.chunks = default_chunks;
        if (rule.slice_rows > 0 && rows.columns <= sliced_max_columns) {
            // The padded entries are indexed in 32 bits on the device.
            const double padded = double(slice_offsets(rule.slice_rows, row_pointers).back());
            if (padded <= rule.ell_max_padding * double(rows.nonzeros) &&
                padded < double(std::numeric_limits<std::uint32_t>::max())) {
                layout.format = sparse_format::sliced_ell;
                layout.lanes = rule.slice_rows;
            }
        }
        return layout;
    }
    if (rule.max_lanes <= 1) return layout;
    const double padded = double(rows.longest) * double(rows.rows);
    if (rows.longest <= rule.ell_max_width &&
        padded <= rule.ell_max_padding * double(rows.nonzeros)) {
        layout.format = sparse_format::ell;
        layout.ell_width = rows.longest;
    } else if (rows.mean() < rule.adaptive_max_mean) {
        layout.format = sparse_format::csr_adaptive;
        layout.work_group_size = rule.adaptive_group;
        // Fewer entries per block where the products would not fit in local memory (complex
        // double: 16 bytes each), beside the group's partial sums and row starts.
        const std::size_t local = dev.properties().local_memory_bytes;
        std::size_t items = rule.adaptive_items;
        while (items > 1 && (items + 1) * layout.work_group_size * value_bytes +
                                    4 * (layout.work_group_size + 1) >
                                local)
            items /= 2;
        layout.block_entries = items * layout.work_group_size;
        layout.lane_entries = rule.adaptive_lane_entries;
    } else {
        layout.format = sparse_format::csr_vector;
        layout.lanes = lanes_for(rows.mean(), rule.max_lanes);
        layout.long_row =
            std::max<std::size_t>(layout.lanes * rule.long_row_passes, layout.work_group_size);
    }
    return layout;
}

std::vector<std::uint32_t> adaptive_blocks(const sparse_layout& layout,
                                           std::span<const std::uint32_t> row_pointers) {
    const std::size_t rows = row_pointers.size() - 1, group = layout.work_group_size;
    std::vector<std::uint32_t> long_blocks, blocks;
    const auto add = [&](std::vector<std::uint32_t>& to, std::size_t first, std::size_t end) {
        to.insert(to.end(), {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(end),
                             row_pointers[first], row_pointers[end]});
    };
    for (std::size_t first = 0; first < rows;) {
        const std::size_t first_length = row_pointers[first + 1] - row_pointers[first];
        if (first_length > layout.block_entries) {
            add(long_blocks, first, first + 1);
            ++first;
            continue;
        }
        // Rows join the block while their products fit, each row has a work-item, and no
        // work-item adds more than lane_entries products: the rows' work-items split the group,
        // so the more rows, the fewer work-items sum the longest one.
        std::size_t end = first + 1, longest = first_length;
        while (end < rows && end - first < group) {
            const std::size_t length = row_pointers[end + 1] - row_pointers[end];
            const std::size_t candidate = std::max(longest, length);
            std::size_t lanes = 1;
            while (lanes * 2 * (end - first + 1) <= group) lanes *= 2;
            if (row_pointers[end + 1] - row_pointers[first] > layout.block_entries ||
                (candidate + lanes - 1) / lanes > layout.lane_entries)
                break;
            longest = candidate;
            ++end;
        }
        add(blocks, first, end);
        first = end;
    }
    long_blocks.insert(long_blocks.end(), blocks.begin(), blocks.end());
    return long_blocks;
}

scoped_sparse_layout::scoped_sparse_layout(sparse_layout layout)
    : override_(layout_override, layout, override_mutex) {}

std::string sparse_layout::key() const {
    return std::string(to_string(format)) + ":" + std::to_string(lanes) + ":" +
           std::to_string(work_group_size) + ":" + std::to_string(long_row) + ":" +
           std::to_string(block_entries);
}

}  // namespace kiln::detail
