// SPDX-License-Identifier: Apache-2.0
// The scan family's tuning rows (scan, select, reduce_by_key) and its plans.
#include <algorithm>
#include <array>
#include <kiln/detail/algo/scan_tuning.hpp>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

constexpr scan_policy policy(std::size_t work_group_size, std::size_t items_per_work_item,
                             std::size_t lookback_depth = 1) {
    return {.work_group_size = work_group_size,
            .items_per_work_item = items_per_work_item,
            .lookback_depth = lookback_depth};
}

/// By chunks of one work-item each (scan_policy::chunk_bytes).
constexpr scan_policy chunks(scan_policy p, std::size_t chunk_bytes) {
    p.chunk_bytes = chunk_bytes;
    return p;
}

/// Scans in chunks walked by vectors of `lanes` (scan_policy::chunk_lanes).
constexpr scan_policy lanes(scan_policy p, std::size_t lanes) {
    p.chunk_lanes = lanes;
    return p;
}

/// Compaction in chunks writing by vectors (scan_policy::chunk_vector_writes).
constexpr scan_policy vector_writes(scan_policy p) {
    p.chunk_vector_writes = true;
    return p;
}

/// Full tiles of the scan family moved by `access` (a part's last tile stays guarded).
constexpr scan_policy full_tiles(scan_policy p, tile_access access) {
    p.full_tiles = access;
    return p;
}

/// reduce_by_key's runs in registers (see scan_policy::register_runs), which reads full
/// tiles through 16-byte loads.
constexpr scan_policy register_runs(scan_policy p) {
    p.register_runs = true;
    p.full_tiles = tile_access::wide;
    return p;
}

/// reduce_by_key's runs in registers keeping `items` from their loads to their writes.
constexpr scan_policy kept(scan_policy p, run_items items) {
    p.kept_run_items = items;
    return p;
}

/// The earlier compaction kernels: each work-item writes its own kept elements.
constexpr scan_policy direct_writes(scan_policy p) {
    p.staged_writes = false;
    return p;
}

using row = tuning_row<scan_policy>;

// Each row's provenance names where its numbers were measured and the docs/benchmarks.md
// section (by its heading) that holds the figures; rows "not measured" say why they hold.
// clang-format off
constexpr std::array scan_table{
    // scans, also the tile pass of reduce-then-scan
    row{nvidia_cuda, full_tiles(policy(128, 32, 1), tile_access::unrolled),
        "H100, CUDA, bench/algo scans of 2^28 beside CUB, 7 shapes, 2026-11-25; "
        "docs/benchmarks.md, ## Scan family"},
    row{nvidia_gpus, full_tiles(policy(128, 32, 1), tile_access::wide),
        "H100, NVIDIA's OpenCL, bench/algo scans of 2^28 beside CUB, 7 shapes, 2026-11-25; "
        "docs/benchmarks.md, ## Scan family"},
    row{any_gpu, policy(256, 8),
        "not measured: half the NVIDIA tile, for GPUs with less local memory"},
    row{any_cpu, lanes(chunks(policy(16, 64), 256 * 1024), 8),
        "PoCL 3.1, 2 cores (Zen 5), 2^20-2^26, chunks of 64-512 KiB, 2026-11-25; "
        "docs/benchmarks.md, ## Scan family"},
    row{any_device, policy(64, 4), "not measured: small and safe"},
};

// stream compaction: copy_if, unique
constexpr std::array select_table{
    row{nvidia_cuda, full_tiles(policy(256, 32), tile_access::unrolled),
        "H100, CUDA, bench/algo copy_if and unique of 2^28 int32 beside CUB, 4 shapes, "
        "2026-11-27; docs/benchmarks.md, ## Scan family"},
    row{nvidia_gpus, full_tiles(policy(256, 32), tile_access::unrolled),
        "H100, NVIDIA's OpenCL, bench/algo copy_if, unique 2^28 int32 beside CUB, 4 "
        "shapes, 2026-11-27; docs/benchmarks.md, ## Scan family"},
    row{any_gpu, policy(256, 8), "not measured: as the generic GPU scan row"},
    row{any_cpu, vector_writes(chunks(direct_writes(policy(16, 64)), 256 * 1024)),
        "PoCL 3.1, 2 cores (Zen 5), vectors, count staging, chunks of 64-512 KiB, "
        "2026-11-25; "
        "docs/benchmarks.md, ## Scan family"},
    row{any_device, policy(64, 4), "not measured: small and safe"},
};

constexpr std::array reduce_by_key_table{
    row{nvidia_cuda, kept(register_runs(policy(256, 16, 1)), run_items::values),
        "H100, CUDA, bench/algo 2^26 int32 runs of 1-1024, 6 shapes (CUB's 256x18: 256x20), "
        "2026-11-28; docs/benchmarks.md, ## Scan family"},
    row{nvidia_gpus, kept(register_runs(policy(256, 16, 1)), run_items::values),
        "H100, NVIDIA's OpenCL, bench/algo 2^26 int32 runs of 1-1024, values kept, 3 shapes, "
        "2026-11-28; docs/benchmarks.md, ## Scan family"},
    row{any_gpu, policy(256, 4), "not measured"},
    row{any_cpu, lanes(chunks(policy(16, 64), 256 * 1024), 16),
        "PoCL 3.1, 2 cores (Zen 5), runs of 1-1024, lanes 16, chunks of 64-512 KiB, "
        "2026-11-25; docs/benchmarks.md, ## Scan family"},
    row{any_device, policy(64, 4), "not measured: small and safe"},
};
// clang-format on

/// Items per work-item are given for 4-byte values; 8-byte ones halve them, so that a tile takes
/// the same local memory.
scan_policy for_value_bytes(scan_policy policy, std::size_t value_bytes) {
    if (value_bytes > 4 && policy.items_per_work_item > 1) policy.items_per_work_item /= 2;
    return policy;
}

}  // namespace

std::span<const tuning_row<scan_policy>> algorithm::scan_rows::rows() {
    return scan_table;
}
std::span<const tuning_row<scan_policy>> algorithm::select_rows::rows() {
    return select_table;
}
std::span<const tuning_row<scan_policy>> algorithm::reduce_by_key_rows::rows() {
    return reduce_by_key_table;
}

std::string scan_policy::key() const {
    return std::to_string(work_group_size) + "x" + std::to_string(items_per_work_item) + " sg" +
           std::to_string(sub_group_size) + (staged_writes ? " staged" : " direct") + " " +
           target.key() + " d" + std::to_string(lookback_depth) +
           (full_tiles == tile_access::unrolled ? " unrolled"
            : full_tiles == tile_access::wide   ? " wide"
                                                : "") +
           (ballot_flags ? "" : " bytes") + (register_runs ? " runs" : "") +
           (kept_run_items == run_items::values            ? " kept values"
            : kept_run_items == run_items::values_and_keys ? " kept values and keys"
                                                           : "") +
           (chunk_bytes ? " chunks" + std::to_string(chunk_bytes) : "") +
           (chunk_lanes ? " lanes" + std::to_string(chunk_lanes) : "") +
           (chunk_cursor_writes ? " cursor" : "") + (chunk_vector_writes ? " vectors" : "") +
           (schedule == scan_schedule::single_pass ? " single" : "");
}

template <scan_family_member Family>
scan_policy plan_policy(Family, const device_properties& props,
                        const tuning_overrides<Family>& overrides) {
    scan_policy chosen = tuning_table<Family>::tuning_for(props, overrides.tuning);
    chosen.target = plan_target(props, overrides);
    chosen.sub_group_size = chosen.sub_group_scans
                                ? group_scan_sub_group_size(chosen.target, chosen.work_group_size)
                                : 0;
    return chosen;
}
template scan_policy plan_policy(algorithm::scan_rows, const device_properties&,
                                 const tuning_overrides<algorithm::scan_rows>&);
template scan_policy plan_policy(algorithm::select_rows, const device_properties&,
                                 const tuning_overrides<algorithm::select_rows>&);
template scan_policy plan_policy(algorithm::reduce_by_key_rows, const device_properties&,
                                 const tuning_overrides<algorithm::reduce_by_key_rows>&);

scan_schedule plan_schedule(const device_properties& props, const shared_overrides& overrides,
                            const scan_policy& policy, state_packing packing) {
    const device_quirks quirks = device_quirks_for(props);
    // The fence is never overridden: a test that forces progress must not run a single pass
    // where its states could be read torn.
    const bool fence = quirks.global_fence_orders_device;
    bool single;
    if (policy.chunk_bytes)
        single = overrides.groups_make_progress.value_or(quirks.groups_make_progress ||
                                                         quirks.groups_run_on_threads) &&
                 fence;
    else
        single = overrides.groups_make_progress.value_or(quirks.groups_make_progress) &&
                 (packing != state_packing::separate || fence);
    return single ? scan_schedule::single_pass : scan_schedule::multi_pass;
}

state_packing scan_state_packing(std::size_t value_bytes) {
    return value_bytes == 4 ? state_packing::low_32_bits : state_packing::separate;
}

scan_policy plan_scan(const device_properties& props, std::size_t value_bytes,
                      const tuning_overrides<algorithm::scan_rows>& overrides) {
    scan_policy policy =
        for_value_bytes(plan_policy(algorithm::scan, props, overrides), value_bytes);
    policy.schedule = plan_schedule(props, overrides, policy, scan_state_packing(value_bytes));
    return policy;
}

scan_policy plan_reduce_by_key(const device_properties& props, std::size_t value_bytes,
                               const tuning_overrides<algorithm::reduce_by_key_rows>& overrides) {
    scan_policy policy =
        for_value_bytes(plan_policy(algorithm::reduce_by_key, props, overrides), value_bytes);
    // Runs in registers stage their writes in a padded tile of keys, then of values (keys as
    // wide as the values, one array), beside the group scan's pairs; where the device's local
    // memory cannot hold them, each work-item writes its own runs.
    if (policy.register_runs && policy.staged_writes) {
        const std::size_t staged_bytes = value_bytes * policy.tile_size() * 17 / 16 +
                                         2 * policy.work_group_size * 2 * value_bytes;
        if (staged_bytes > props.local_memory_bytes) policy.staged_writes = false;
    }
    return policy;
}

compaction_plan plan_compaction(const device_properties& props, std::size_t value_bytes,
                                std::size_t n, std::uint64_t count_base,
                                const tuning_overrides<algorithm::select_rows>& overrides) {
    compaction_plan plan{plan_policy(algorithm::select, props, overrides), false, count_base};
    plan.narrow = (plan.policy.staged_writes || plan.policy.chunk_bytes) &&
                  plan.base + n < (std::uint64_t{1} << 31);
    plan.policy =
        for_value_bytes(plan.policy, std::max<std::size_t>(plan.narrow ? 4 : 8, value_bytes));
    // Counts share a word with their flag, whatever their width (compaction_program's packing).
    plan.policy.schedule =
        plan_schedule(props, overrides, plan.policy,
                      plan.narrow ? state_packing::low_32_bits : state_packing::count_62_bits);
    return plan;
}

}  // namespace kiln::detail
