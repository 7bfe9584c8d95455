// SPDX-License-Identifier: Apache-2.0
// The sort family's tuning rows (radix sort, merge sort) and its plans.
#include <algorithm>
#include <array>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/error.hpp>
#include <string>

#include "runtime/device_quirks.hpp"
#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

/// Radix sort rows. Named fields: the policy grew a field between two others once, and
/// positional rows then set another flag where they meant multi_split (the NVIDIA row ranked
/// in rounds from then on, unmeasured, instead of by the multi-split it was measured with).
constexpr radix_sort_tuning radix(std::size_t work_group_size, std::size_t items_per_work_item,
                                  unsigned radix_bits, bool multi_split) {
    return {.work_group_size = work_group_size,
            .items_per_work_item = items_per_work_item,
            .radix_bits = radix_bits,
            .multi_split = multi_split};
}

/// By chunks of one work-item each (radix_sort_tuning::chunk_bytes).
constexpr radix_sort_tuning chunks(radix_sort_tuning p, std::size_t chunk_bytes) {
    p.chunk_bytes = chunk_bytes;
    return p;
}

/// At most `count` registers a work-item, `with_values` for sorts by key (NVIDIA GPUs:
/// radix_sort_tuning::register_limit).
constexpr radix_sort_tuning registers(radix_sort_tuning p, unsigned count,
                                      unsigned with_values = 0) {
    p.register_limit = count;
    p.register_limit_with_values = with_values;
    return p;
}

using radix_row = tuning_row<radix_sort_tuning>;
using merge_row = tuning_row<merge_sort_tuning>;

// Each row's provenance names where its numbers were measured and the docs/benchmarks.md
// section (by its heading) that holds the figures; rows "not measured" say why they hold.
// clang-format off
// Items for 4-byte keys alone; plan_radix_sort scales them for wider elements.
constexpr std::array radix_sort_table{
    radix_row{nvidia_cuda, registers(radix(384, 20, 8, true), 56),
              "H100, CUDA, sort_bench 28 beside CUB, 2026-11-23, 56 registers (3 groups a "
              "multiprocessor, not 2) 2026-11-26; docs/benchmarks.md, ## Sorting"},
    radix_row{nvidia_gpus, registers(radix(384, 19, 8, true), 56, 80),
              "H100, NVIDIA's OpenCL, sort_bench 28 --sweep beside CUB, 2026-11-27: 56 "
              "registers for keys, 80 with values; docs/benchmarks.md, ## Sorting"},
    radix_row{any_gpu, radix(256, 8, 8, false),
              "not measured: 4-bit rounds (no known ballots), about 32 KB of local memory"},
    radix_row{any_cpu, chunks(radix(64, 8, 8, false), 64 * 1024),
              "PoCL, 2 and 16 cores, uint32 2^24 against std::sort, 2026-11-23; "
              "docs/benchmarks.md, ## Sorting"},
    radix_row{any_device, radix(64, 4, 4, false), "not measured: small and safe"},
};

// Comparator sorts: work-group size = first run length.
constexpr std::array merge_sort_table{
    merge_row{any_gpu, merge_sort_tuning{256}, "not tuned: 256-key runs sorted in local memory"},
    merge_row{any_device, merge_sort_tuning{64},
              "not tuned: a run costs G^2 comparisons, so G stays small"},
};
// clang-format on

}  // namespace

std::span<const tuning_row<radix_sort_tuning>> algorithm::radix_sort_rows::rows() {
    return radix_sort_table;
}
std::span<const tuning_row<merge_sort_tuning>> algorithm::merge_sort_rows::rows() {
    return merge_sort_table;
}

radix_sort_policy plan_radix_sort(const device_properties& props, std::size_t key_bytes,
                                  bool floating_keys, std::size_t value_bytes, std::size_t n,
                                  const tuning_overrides<algorithm::radix_sort_rows>& overrides) {
    const radix_sort_tuning policy =
        tuning_table<algorithm::radix_sort_rows>::tuning_for(props, overrides.tuning);
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
    // 16-bit keys take the 4-byte keys' tile, as CUB's register scaling does (twice the items
    // would take twice the registers; no longer tile measured faster on either NVIDIA backend
    // once their registers were held: docs/dev/benchmark-notes.md, ## Sorting), and with values
    // never more local memory than 4-byte keys. Scaled items round to the nearest (a row's 19 items
    // give 8-byte keys 10, which sorted uint64 keys faster than 9 under NVIDIA's OpenCL: 0.91x
    // CUB against 0.86x, H100, 2026-11-27); the checks below take fewer where they do not fit.
    const std::size_t key_tile_bytes = std::max<std::size_t>(4, key_bytes);
    const std::size_t tile_bytes =
        plan.multi_split ? std::max(key_tile_bytes, value_bytes) : key_tile_bytes + value_bytes;
    plan.items_per_work_item = static_cast<unsigned>(
        std::max<std::size_t>(1, (policy.items_per_work_item * 4 + tile_bytes / 2) / tile_bytes));
    // Group scans shuffle within sub-groups, but not through inline PTX: the sort was measured
    // there ranking with ballots and scanning through local memory.
    plan.sub_group_size = plan.target.vocabulary != vocabulary_target::inline_ptx
                              ? group_scan_sub_group_size(plan.target, policy.work_group_size)
                              : 0;
    // match.any where the kernels reach NVIDIA's warps: through inline PTX, or the CUDA prelude
    // on compute capability 7.0 and later. The multi-split ranks by it where it ranks by ballots,
    // the histogram's aggregation finds peers by it.
    const bool nvidia_warps = plan.target.ballot && plan.target.sub_group_size == 32 &&
                              (plan.target.vocabulary == vocabulary_target::inline_ptx ||
                               (plan.target.vocabulary == vocabulary_target::cuda_prelude &&
                                props.compute_capability_major >= 7));
    plan.match_any = policy.match_any && nvidia_warps;
    // Only NVIDIA's compilers take -cl-nv-maxrregcount: kiln's CUDA backend, and its OpenCL
    // (the inline PTX target), where kiln writes the limit into the program's PTX since the
    // driver leaves kernels of a required group size alone (opencl_register_limit.hpp). A tile
    // of pairs holds its values' registers too, so it takes a limit of its own: the CUDA row's
    // 56 lost there (H100, 2^28 uint32 pairs: 10.39 ms against 9.89 uncapped, 2026-11-26).
    const bool nvidia_compiler = plan.target.vocabulary == vocabulary_target::inline_ptx ||
                                 plan.target.vocabulary == vocabulary_target::cuda_prelude;
    plan.register_limit = !nvidia_compiler   ? 0
                          : value_bytes == 0 ? policy.register_limit
                                             : policy.register_limit_with_values;
    // The tile kernels' local memory within the device's, and within the 48 KB of static local
    // memory that CUDA grants without opting in: values in an array of their own where they
    // fit (a 384 x 20 tile of uint pairs would take 60 KB), and fewer items where the tile does
    // not (rounds hold keys, values and 16 counters per work-item: the NVIDIA row's 384 x 10
    // pairs would take 63 KB).
    const std::size_t local_limit = std::min<std::size_t>(
        props.local_memory_bytes != 0 ? props.local_memory_bytes : 48 * 1024, 48 * 1024);
    radix_sort_shape tile{.keys = {.bytes = key_bytes},
                          .value_bytes = value_bytes,
                          .radix_bits = plan.radix_bits,
                          .work_group_size = plan.work_group_size,
                          .items_per_work_item = plan.items_per_work_item,
                          .multi_split = plan.multi_split,
                          .ballots = plan.ballots,
                          .values_beside_keys = true};
    plan.values_beside_keys = policy.values_beside_keys && plan.multi_split && value_bytes != 0 &&
                              radix_tile_local_bytes(tile) <= local_limit;
    tile.values_beside_keys = plan.values_beside_keys;
    while (!plan.chunks && tile.items_per_work_item > 1 &&
           radix_tile_local_bytes(tile) > local_limit)
        --tile.items_per_work_item;
    if (!plan.chunks && radix_tile_local_bytes(tile) > local_limit)
        throw invalid_argument_error(
            "kiln::sort", "a radix sort tile of " + std::to_string(plan.work_group_size) +
                              " work-items needs " + std::to_string(radix_tile_local_bytes(tile)) +
                              " bytes of local memory, more than " + std::to_string(local_limit));
    plan.items_per_work_item = tile.items_per_work_item;
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
    // (docs/dev/benchmark-notes.md, ## Sorting).
    plan.histogram_groups_per_compute_unit = 8;
    // The histogram's copies within 32 KB of counters (8192 words, whatever the key width, so
    // that 16-bit keys' two passes take as many copies as the group has sub-groups).
    const unsigned bins = tile.passes() * tile.radix();
    plan.histogram = policy.histogram;
    // Peers are found among 32 consecutive work-items.
    plan.histogram.aggregated = policy.histogram.aggregated && tile.histogram_group() % 32 == 0;
    plan.histogram.copies = std::clamp(
        policy.histogram.copies != 0 ? policy.histogram.copies : tile.histogram_group() / 32, 1u,
        std::max(1u, 8192u / bins));
    // The fault was seen in the tile strategy; the chunk strategy is trusted (docs/sorting.md).
    plan.floats_sorted_on_host =
        floating_keys && quirks.float_radix_sort_unreliable && policy.chunk_bytes == 0;
    return plan;
}

merge_sort_tuning plan_merge_sort(const device_properties& props,
                                  const tuning_overrides<algorithm::merge_sort_rows>& overrides) {
    return tuning_table<algorithm::merge_sort_rows>::tuning_for(props, overrides.tuning);
}

}  // namespace kiln::detail
