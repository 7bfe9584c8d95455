// SPDX-License-Identifier: Apache-2.0
// The sparse format rule's numbers per device (plan_spmv), each with where it was measured.
#include <kiln/detail/algo/sparse_format.hpp>

namespace kiln::detail {
namespace {

// clang-format off
constexpr sparse_rule gpu_sparse_rule{
    .ell_max_padding = 1.25, .ell_max_width = 32, .max_lanes = 32, .work_group_size = 128,
    .long_row_passes = 16, .adaptive_max_mean = 512, .adaptive_group = 256, .adaptive_items = 4,
    .adaptive_lane_entries = 8,
    .provenance = "H100 under CUDA, bench/algo/spmv_bench and forced layouts, 2026-11-22; "
                  "docs/benchmarks.md, ## Sparse matrices"};
// csr_chunked: a work-item walks a chunk of rows cut at equal shares of the work, the plain CSR
// loop that caches and prefetchers handle best, in groups of one. Matrices whose slices of 32
// rows pad the entries by at most a quarter (the GPU's ELL bound, not measured on CPUs) take
// sliced_ell: the slice's rows side by side in SIMD lanes (16 slower, 64 within noise of 32).
constexpr sparse_rule cpu_sparse_rule{
    .ell_max_padding = 1.25, .ell_max_width = 0, .max_lanes = 1, .work_group_size = 1,
    .long_row_passes = 0, .adaptive_max_mean = 0, .adaptive_group = 0, .adaptive_items = 0,
    .adaptive_lane_entries = 0, .chunks_per_compute_unit = 16, .slice_rows = 32,
    .provenance = "PoCL 3.1 on 2 cores, spmv_bench with KILN_SPMV_FORMATS against csr_scalar, "
                  "then sliced_ell:16,32,64, 2026-11-25; docs/benchmarks.md, ## Sparse matrices"};
// clang-format on

}  // namespace

const sparse_rule& plan_spmv(const device_properties& props) {
    return props.type == device_type::gpu ? gpu_sparse_rule : cpu_sparse_rule;
}

}  // namespace kiln::detail
