// SPDX-License-Identifier: Apache-2.0
// The sparse layouts the SpMV tests force: every format, with the shapes each rule sets and
// awkward ones.
#pragma once

#include <kiln/sparse.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::test {

using kiln::detail::sparse_format;
using kiln::detail::sparse_layout;

/// csr_adaptive as the GPU rule sets it (groups of 256, blocks of 1024 entries, at most 8
/// products per work-item), and small: groups of 64, blocks of 128 entries, 4 products per
/// work-item, so that small matrices have rows longer than a block and blocks of every kind.
inline const sparse_layout adaptive_gpu{sparse_format::csr_adaptive, 1, 0, 256, 0, 1024, 8};
inline const sparse_layout adaptive_small{sparse_format::csr_adaptive, 1, 0, 64, 0, 128, 4};

/// csr_chunked as the CPU rule sets it (groups of one, 16 chunks per compute unit), in 3 chunks
/// (rows longer than a chunk's share) and in groups of 4 with more chunks than rows.
inline const sparse_layout chunked_cpu{sparse_format::csr_chunked, 1, 0, 1};
inline const sparse_layout chunked_few{sparse_format::csr_chunked, 1, 0, 1, 0, 0, 0, 3};
inline const sparse_layout chunked_many{sparse_format::csr_chunked, 1, 0, 4, 0, 0, 0, 100000};

/// sliced_ell as the CPU rule sets it (slices of 32 rows, four vectors of lanes), in 3 chunks of
/// slices of 8 (one vector), and in slices of 13 (a vector and 5 single lanes; row counts rarely
/// a multiple) in groups of 4 with more chunks than slices.
inline const sparse_layout sliced_cpu{sparse_format::sliced_ell, 32, 0, 1};
inline const sparse_layout sliced_few{sparse_format::sliced_ell, 8, 0, 1, 0, 0, 0, 3};
inline const sparse_layout sliced_odd{sparse_format::sliced_ell, 13, 0, 4, 0, 0, 0, 100000};

/// The rule's choice, then every format forced, with csr_vector teams of 2 and 32 lanes, and
/// of 4 lanes with rows of more than 100 entries reduced by a whole group of 64.
inline std::vector<std::optional<sparse_layout>> every_layout() {
    return {std::nullopt,
            sparse_layout{sparse_format::csr_scalar, 1, 0, 128},
            sparse_layout{sparse_format::ell, 1, 0, 128},
            sparse_layout{sparse_format::csr_vector, 2, 0, 64},
            sparse_layout{sparse_format::csr_vector, 32, 0, 128},
            sparse_layout{sparse_format::csr_vector, 4, 0, 64, 100},
            adaptive_gpu,
            adaptive_small,
            chunked_cpu,
            chunked_few,
            chunked_many,
            sliced_cpu,
            sliced_few,
            sliced_odd};
}

inline std::string describe(const std::optional<sparse_layout>& layout) {
    if (!layout) return "the rule's choice";
    return std::string(kiln::detail::to_string(layout->format)) + " lanes " +
           std::to_string(layout->lanes) + " group " + std::to_string(layout->work_group_size) +
           " long rows over " + std::to_string(layout->long_row) + " blocks of " +
           std::to_string(layout->block_entries) + " chunks " + std::to_string(layout->chunks);
}

}  // namespace kiln::test
