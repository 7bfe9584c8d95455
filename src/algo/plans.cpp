// The plans (include/kiln/detail/algo/plans.hpp): from a device's properties and the element types
// to each algorithm's shape, and the tables that are not rows of tuning.hpp's table.
#include <algorithm>
#include <array>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/plans.hpp>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/target_features.hpp>
#include <string_view>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};
constexpr device_class nvidia_opencl{backend_kind::opencl, device_type::gpu, "nvidia", 0, 0};

struct fft_pipeline_row {
    device_class devices;
    fft_pipeline_policy policy;
    std::string_view provenance;
};

// clang-format off
constexpr std::array fft_pipeline_table{
    fft_pipeline_row{nvidia_opencl,
                     {.chunk_bytes = 1u << 20, .slots = 16, .lag = 4, .streaming = true, .fine = true},
                     "H100 under NVIDIA's OpenCL, fft_bench KILN_FFT_PIPELINE sweeps of 1024 x 16384, "
                     "2026-11-23; docs/benchmarks.md, ## FFT"},
};

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

struct elementwise_row {
    device_class devices;
    launch_policy policy;
    std::string_view provenance;
    std::string_view vector_bytes_provenance;
};
// CPU devices (PoCL) run a group's work-items as a loop that PoCL vectorises across them, which
// over chunks of one work-item each makes gathers: groups of one leave the chunk's own loop to the
// vectoriser, and 16 groups per core balance the load. Their chunks step 64 bytes at a time where
// the statement has a vector form: PoCL's scalar maths built-ins run an order of magnitude slower
// than its vector ones, which the vectoriser does not call. GPUs: 256-item groups, up to 16 per
// compute unit, two full waves of an SM of 2048 resident threads, the strided loop keeping accesses
// coalesced; 1-D stencils in expressions there take the stencil windows (width and centre
// constants, the 16-byte loop kept), whose run-time form left the wide loop for the element loop
// at 63-67% of copy on the H100, the windows at 88-90% (2026-11-25, stencil_bench).
constexpr std::array elementwise_table{
    elementwise_row{any_cpu, {loop_style::chunked, 1, 16, 64},
                    "PoCL 5 on 16 cores and PoCL 3.1 on 2, a copy of 2^24 ints against memcpy, "
                    "2026-11-24; docs/benchmarks.md, ## Vector expressions",
                    "float16, as the CPU runs of user stencils alone (stencil_on_cpu.cpp: 3.3x "
                    "one host thread on 2 cores, where the same body per element ran at 0.21x, "
                    "2026-11-24)"},
    elementwise_row{any_device, {loop_style::strided, 256, 16, 0, true},
                    "H200, bench/expr over 2^28 floats, 2026-11-21; docs/benchmarks.md, ## Vector "
                    "expressions",
                    "none: strided loops have no vector form"},
};
// clang-format on

/// Items per work-item are given for 4-byte values; 8-byte ones halve them, so that a tile takes
/// the same local memory.
scan_policy for_value_bytes(scan_policy policy, std::size_t value_bytes) {
    if (value_bytes > 4 && policy.items_per_work_item > 1) policy.items_per_work_item /= 2;
    return policy;
}

fft_pass_limits fft_passes(const fft_tuning& policy, const device_properties& props,
                           bool double_precision, bool length_kernels_forced) {
    const std::size_t element_bytes = double_precision ? 16 : 8;
    // The policy counts complex floats (8 bytes). The device's limit is the hard one: on CUDA
    // the opt-in one, since passes take their local memory as an argument (dynamic shared
    // memory). Lines take 1/16 more for padding.
    const std::size_t bytes =
        std::max<std::size_t>(props.local_memory_bytes, props.shared_memory_per_block_bytes);
    const std::size_t elements = std::max<std::size_t>(
        std::min(policy.tile_size() * 8 / element_bytes, bytes * 15 / 16 / element_bytes), 16);
    const std::size_t max_group = std::max<std::size_t>(props.max_work_group_size, 1);
    const std::size_t group = std::clamp<std::size_t>(policy.work_group_size, 1, max_group);
    // PoCL takes about half a second to compile each local-memory pass kernel (barriers): on
    // CPUs, passes of one radix each without local memory (the caches serve any order) need
    // at most 36 small kernels per precision, where kernels per pass length would need one
    // for every length used. Tests can force the per-length kernels, laid out as on GPUs.
    const bool radix_per_pass = props.type != device_type::gpu && !length_kernels_forced;
    return {.local_bytes = bytes,
            .local_elements = elements,
            // Short lines: as many as give each of the policy's work-items one radix-16
            // butterfly.
            .group_elements = std::min(group * fft_radices[0], elements),
            .work_group_size = group,
            .max_work_group_size = max_group,
            // GPUs read global memory in 32-byte sectors; CPUs through caches, where any order
            // serves.
            .coalesced_lines = radix_per_pass ? 1 : std::max<std::size_t>(32 / element_bytes, 1),
            .double_precision = double_precision,
            .radix_per_pass = radix_per_pass};
}

/// Lines of two passes in one kernel whose groups wait for earlier groups' signals: the groups
/// must make progress, and kiln_fence_acq_rel must order the data before the signal.
fft_pipeline_policy fft_pipeline(const device_properties& props,
                                 const tuning_overrides& overrides) {
    const target_features target = target_features_for(props);
    const bool progress =
        overrides.groups_make_progress.value_or(device_quirks_for(props).groups_make_progress);
    if (!progress || !target.device_fence) return {};
    fft_pipeline_policy chosen;
    if (overrides.fft_pipeline)
        chosen = *overrides.fft_pipeline;
    else
        for (const fft_pipeline_row& row : fft_pipeline_table)
            if (matches(row.devices, props)) {
                chosen = row.policy;
                break;
            }
    chosen.target = target;
    return chosen;
}

}  // namespace

scan_policy plan_scan(const device_properties& props, std::size_t value_bytes,
                      const tuning_overrides& overrides) {
    return for_value_bytes(plan_policy(algorithm::scan, props, overrides), value_bytes);
}

scan_policy plan_reduce_by_key(const device_properties& props, std::size_t value_bytes,
                               const tuning_overrides& overrides) {
    scan_policy policy =
        for_value_bytes(plan_policy(algorithm::reduce_by_key, props, overrides), value_bytes);
    // Runs in registers stage their writes in a padded tile of keys and one of values (keys as
    // wide as the values), beside the group scan's pairs; where the device's local memory cannot
    // hold them, each work-item writes its own runs.
    if (policy.register_runs && policy.staged_writes) {
        const std::size_t staged_bytes = 2 * value_bytes * policy.tile_size() * 17 / 16 +
                                         2 * policy.work_group_size * 2 * value_bytes;
        if (staged_bytes > props.local_memory_bytes) policy.staged_writes = false;
    }
    return policy;
}

compaction_plan plan_compaction(const device_properties& props, std::size_t value_bytes,
                                std::size_t n, std::uint64_t count_base,
                                const tuning_overrides& overrides) {
    compaction_plan plan{plan_policy(algorithm::select, props, overrides), false, count_base};
    plan.narrow = (plan.policy.staged_writes || plan.policy.chunk_bytes) &&
                  plan.base + n < (std::uint64_t{1} << 31);
    plan.policy =
        for_value_bytes(plan.policy, std::max<std::size_t>(plan.narrow ? 4 : 8, value_bytes));
    return plan;
}

radix_sort_policy plan_radix_sort(const device_properties& props, std::size_t key_bytes,
                                  bool floating_keys, std::size_t value_bytes, std::size_t n,
                                  const tuning_overrides& overrides) {
    const radix_sort_tuning policy =
        row_tuning_for(algorithm::radix_sort, props, overrides.radix_sort);
    const device_quirks quirks = device_quirks_for(props);
    radix_sort_policy plan;
    plan.work_group_size = static_cast<unsigned>(policy.work_group_size);
    plan.chunk_bytes = policy.chunk_bytes;
    plan.chunks = policy.chunk_bytes != 0;
    plan.multi_split = !plan.chunks && policy.multi_split && plan.work_group_size % 32 == 0;
    plan.target = plan_target(props, overrides);
    plan.ballots = plan.multi_split && plan.target.ballot && plan.target.sub_group_size == 32;
    // The quirk is about ranking tiles in rounds; the multi-split ranks a digit at once, and
    // chunks rank nothing.
    plan.radix_bits = !plan.multi_split && !plan.chunks && quirks.multi_round_radix_rank_miscompiled
                          ? std::min(policy.radix_bits, 4u)
                          : policy.radix_bits;
    // The tile lives in local memory: items are set for 4-byte keys alone and scaled down for
    // wider elements, to stay within the 48 KB of static local memory that CUDA grants without
    // opting in. The multi-split holds keys, then values, in one array (or in two where they
    // fit, below); rounds hold both.
    // 16-bit keys alone keep the 4-byte keys' tile, as CUB's register scaling does: twice the
    // items would take twice the registers.
    const std::size_t tile_bytes = std::max<std::size_t>(
        4, plan.multi_split ? std::max(key_bytes, value_bytes) : key_bytes + value_bytes);
    plan.items_per_work_item = static_cast<unsigned>(
        std::max<std::size_t>(1, policy.items_per_work_item * 4 / tile_bytes));
    // Group scans shuffle within sub-groups, but not through inline PTX: the sort was measured
    // there ranking with ballots and scanning through local memory.
    plan.sub_group_size = plan.target.vocabulary != vocabulary_target::inline_ptx
                              ? group_scan_sub_group_size(plan.target, policy.work_group_size)
                              : 0;
    // Values in an array of their own where the tile's local memory stays within CUDA's 48 KB
    // (a 384 x 20 tile of uint pairs would take 60 KB): the keys' array (which the sub-group
    // counters share), the values', and at most the group scan's 2 words per work-item, the
    // lane digits' one (without ballots) and 16 bytes per digit (start, end, run).
    const std::size_t g = plan.work_group_size, items = g * plan.items_per_work_item,
                      r = std::size_t{1} << plan.radix_bits;
    const std::size_t beside_bytes =
        std::max(items * key_bytes, g / 32 * r * 4) + items * value_bytes + 12 * g + 16 * r + 16;
    plan.values_beside_keys = policy.values_beside_keys && plan.multi_split && value_bytes != 0 &&
                              beside_bytes <= 48 * 1024;
    // One pass per digit with decoupled look-back where work-groups that started earlier are
    // sure to make progress; the status words hold 30-bit counts.
    const bool progress = overrides.groups_make_progress.value_or(quirks.groups_make_progress);
    plan.single_pass = !plan.chunks && progress && n < (std::size_t{1} << 30);
    // With 256-item groups and about 26 KB of local memory each, 4 chunks keep an H100 SM half
    // full (1024 of 2048 threads) while the chunks stay long enough that carrying digit offsets
    // from tile to tile, not the per-group histogram work, dominates; PoCL runs one group per
    // core at a time, and 4 per core balance the load.
    plan.chunks_per_compute_unit = 4;
    // 8 histogram groups of 256 work-items (32 KB of counters each on NVIDIA GPUs) per compute
    // unit: a partial second wave on an H100 (6 fill one), measured a little faster than 6
    // (docs/benchmarks.md, ## Sorting).
    plan.histogram_groups_per_compute_unit = 8;
    // The fault was seen in the tile strategy; the chunk strategy is trusted (docs/sorting.md).
    plan.floats_sorted_on_host =
        floating_keys && quirks.float_radix_sort_unreliable && policy.chunk_bytes == 0;
    return plan;
}

merge_sort_tuning plan_merge_sort(const device_properties& props,
                                  const tuning_overrides& overrides) {
    return row_tuning_for(algorithm::merge_sort, props, overrides.merge_sort);
}

stencil_tuning plan_stencil(const device_properties& props, unsigned dimensions,
                            const tuning_overrides& overrides) {
    if (dimensions == 1) return row_tuning_for(algorithm::stencil_1d, props, overrides.stencil);
    stencil_tuning policy = row_tuning_for(algorithm::stencil_2d, props, overrides.stencil);
    policy.work_group_size =
        std::max(stencil_2d_tile_columns,
                 policy.work_group_size / stencil_2d_tile_columns * stencil_2d_tile_columns);
    return policy;
}

fft_policy plan_fft(const device_properties& props, bool double_precision,
                    const tuning_overrides& overrides) {
    return {.passes = fft_passes(row_tuning_for(algorithm::fft, props, overrides.fft), props,
                                 double_precision, overrides.fft_length_kernels),
            .pipeline = fft_pipeline(props, overrides),
            .step_work_group_size = 64};
}

fft_pipeline_policy fft_pipeline_policy_for(const device& dev) {
    return fft_pipeline(dev.properties(), overrides_in_force(algorithm::fft));
}

const sparse_rule& plan_spmv(const device_properties& props) {
    return props.type == device_type::gpu ? gpu_sparse_rule : cpu_sparse_rule;
}

launch_policy plan_elementwise_launch(const device_properties& props) {
    for (const elementwise_row& row : elementwise_table)
        if (matches(row.devices, props)) return row.policy;
    return {};
}

}  // namespace kiln::detail
