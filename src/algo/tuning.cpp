// The algorithms' tuning table, device matching, the forward-progress flag and test overrides.
#include <algorithm>
#include <array>
#include <cctype>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/error.hpp>
#include <mutex>
#include <string>
#include <utility>

#include "algo/fft/fft_steps.hpp"
#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

using enum algorithm;
constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};
// Through CUDA or NVIDIA's OpenCL alike: the platform or vendor name says NVIDIA.
constexpr device_class nvidia_gpus{std::nullopt, device_type::gpu, "nvidia", 0, 0};
constexpr device_class nvidia_cuda{backend_kind::cuda, device_type::gpu, "nvidia", 0, 0};

constexpr scan_policy policy(std::size_t work_group_size, std::size_t items_per_work_item,
                             std::size_t lookback_depth = 1) {
    return {.work_group_size = work_group_size,
            .items_per_work_item = items_per_work_item,
            .lookback_depth = lookback_depth};
}

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

/// By chunks of one work-item each (the policies' chunk_bytes).
template <class Tuning>
constexpr Tuning chunks(Tuning p, std::size_t chunk_bytes) {
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

/// Radix sort by key: values in a local array of their own, beside the keys.
constexpr radix_sort_tuning values_beside_keys(radix_sort_tuning p) {
    p.values_beside_keys = true;
    return p;
}

constexpr stencil_tuning stencil(std::size_t work_group_size, std::size_t items_per_work_item) {
    return {.work_group_size = work_group_size, .items_per_work_item = items_per_work_item};
}

/// 2-D stencils by strips (stencil_2d_streaming.hpp): groups `group_columns` wide walk down
/// `strip_rows` output rows, `rows_per_step` of them between two barriers.
constexpr stencil_tuning strips(std::size_t group_columns, std::size_t strip_rows,
                                std::size_t rows_per_step) {
    return {.work_group_size = group_columns,
            .items_per_work_item = rows_per_step,
            .strip_rows = strip_rows};
}

constexpr fft_tuning fft_passes(std::size_t work_group_size, std::size_t items_per_work_item) {
    return {.work_group_size = work_group_size, .items_per_work_item = items_per_work_item};
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

/// The earlier compaction kernels: each work-item writes its own kept elements.
constexpr scan_policy direct_writes(scan_policy p) {
    p.staged_writes = false;
    return p;
}

// Each row's provenance names where its numbers were measured and the docs/benchmarks.md
// section (by its heading) that holds the figures; rows "not measured" say why they hold.
// clang-format off
constexpr std::array table{
    // --- scan (also the tile pass of reduce-then-scan) ---------------------------------------
    tuning_row{scan, nvidia_cuda, full_tiles(policy(128, 32, 1), tile_access::unrolled),
               "H100, CUDA, bench/algo scans of 2^28 beside CUB, 7 shapes, 2026-11-25; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{scan, nvidia_gpus, full_tiles(policy(128, 32, 1), tile_access::wide),
               "H100, NVIDIA's OpenCL, bench/algo scans of 2^28 beside CUB, 7 shapes, 2026-11-25; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{scan, any_gpu, policy(256, 8),
               "not measured: half the NVIDIA tile, for GPUs with less local memory"},
    tuning_row{scan, any_cpu, lanes(chunks(policy(16, 64), 256 * 1024), 8),
               "PoCL 3.1, 2 cores (Zen 5), 2^20-2^26, chunks of 64-512 KiB, 2026-11-25; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{scan, any_device, policy(64, 4), "not measured: small and safe"},
    // --- stream compaction (copy_if, unique) ---------------------------------------------------
    tuning_row{select, nvidia_cuda, full_tiles(policy(128, 32), tile_access::unrolled),
               "H100, CUDA, bench/algo copy_if of 2^28 int32 beside CUB, 2026-11-23; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{select, nvidia_gpus, full_tiles(policy(128, 32), tile_access::unrolled),
               "H100, NVIDIA's OpenCL, bench/algo copy_if of 2^28 int32 beside CUB, 2026-11-23; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{select, any_gpu, policy(256, 8), "not measured: as the generic GPU scan row"},
    tuning_row{select, any_cpu, vector_writes(chunks(direct_writes(policy(16, 64)), 256 * 1024)),
               "PoCL 3.1, 2 cores (Zen 5), vectors, count staging, chunks of 64-512 KiB, "
               "2026-11-25; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{select, any_device, policy(64, 4), "not measured: small and safe"},
    // --- reduce_by_key -------------------------------------------------------------------------
    tuning_row{reduce_by_key, nvidia_cuda, register_runs(policy(256, 16, 1)),
               "H100, CUDA, bench/algo 2^26 int32 runs of 1-1024, runs staged, 10 shapes, "
               "2026-11-25; docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{reduce_by_key, nvidia_gpus, register_runs(policy(256, 16, 1)),
               "H100, NVIDIA's OpenCL, bench/algo 2^26 int32, runs staged, 8 shapes, 2026-11-25; "
               "docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{reduce_by_key, any_gpu, policy(256, 4), "not measured"},
    tuning_row{reduce_by_key, any_cpu, lanes(chunks(policy(16, 64), 256 * 1024), 16),
               "PoCL 3.1, 2 cores (Zen 5), runs of 1-1024, lanes 16, chunks of 64-512 KiB, "
               "2026-11-25; docs/benchmarks.md, ## Algorithms (scan, reduce_by_key, copy_if)"},
    tuning_row{reduce_by_key, any_device, policy(64, 4), "not measured: small and safe"},
    // --- radix sort (items for 4-byte keys alone; plan_radix_sort scales them for wider elements)
    tuning_row{radix_sort, nvidia_cuda, radix(384, 20, 8, true),
               "H100, CUDA, sort_bench 28 beside CUB, 2026-11-23; docs/benchmarks.md, ## Sorting"},
    tuning_row{radix_sort, nvidia_gpus, values_beside_keys(radix(256, 20, 8, true)),
               "H100, NVIDIA's OpenCL (256 items at most), sort_bench 28 beside CUB, 2026-11-23; "
               "docs/benchmarks.md, ## Sorting"},
    tuning_row{radix_sort, any_gpu, radix(256, 8, 8, false),
               "not measured: 4-bit rounds (no known ballots), about 32 KB of local memory"},
    tuning_row{radix_sort, any_cpu, chunks(radix(64, 8, 8, false), 64 * 1024),
               "PoCL, 2 and 16 cores, uint32 2^24 against std::sort, 2026-11-23; "
               "docs/benchmarks.md, ## Sorting"},
    tuning_row{radix_sort, any_device, radix(64, 4, 4, false), "not measured: small and safe"},
    // --- merge sort (comparator sorts): work-group size = first run length ---------------------
    tuning_row{merge_sort, any_gpu, merge_sort_tuning{256},
               "not tuned: 256-key runs sorted in local memory"},
    tuning_row{merge_sort, any_device, merge_sort_tuning{64},
               "not tuned: a run costs G^2 comparisons, so G stays small"},
    // --- stencils (include/kiln/stencil.hpp): outputs per work-item; 2-D tiles are 32 columns
    // wide and work_group_size / 32 * items rows high, 2-D strips work_group_size columns wide --
    tuning_row{stencil_1d, nvidia_gpus, stencil(128, 8),
               "H100, CUDA, stencil_bench --sweep, 5-point over 2^26 floats, 2026-11-22; "
               "docs/benchmarks.md, ## Stencils"},
    tuning_row{stencil_1d, any_gpu, stencil(256, 4), "not measured: as NVIDIA"},
    tuning_row{stencil_1d, any_cpu, chunks(stencil(1, 1), 16 * 1024),
               "PoCL 3.1, 2 cores, stencil_bench against tiles and per element, 2026-11-24; "
               "docs/benchmarks.md, ## Stencils"},
    tuning_row{stencil_1d, any_device, stencil(64, 4), "not measured: small and safe"},
    tuning_row{stencil_2d, nvidia_gpus, strips(256, 128, 8),
               "H100, CUDA and NVIDIA OpenCL, stencil_bench --sweep, 4096^2, 2026-11-25; "
               "docs/benchmarks.md, ## Stencils"},
    tuning_row{stencil_2d, any_gpu, stencil(256, 4),
               "not measured: the tiles NVIDIA ran before the strips"},
    tuning_row{stencil_2d, any_cpu, chunks(stencil(1, 1), 16 * 1024),
               "PoCL 3.1, 2 cores, stencil_bench against tiles and per element, 2026-11-24; "
               "docs/benchmarks.md, ## Stencils"},
    tuning_row{stencil_2d, any_device, stencil(64, 4), "not measured: small and safe"},
    // --- FFT passes: at most G work-items and G x I complex floats of local memory per group ---
    tuning_row{fft, nvidia_cuda, fft_passes(256, 64),
               "H100, CUDA (16384-point lines in dynamic shared memory), fft_bench, 2026-11-22; "
               "docs/benchmarks.md, ## FFT"},
    tuning_row{fft, nvidia_gpus, fft_passes(256, 16),
               "H100, NVIDIA's OpenCL (4096-point lines in 48 KiB), fft_bench, 2026-11-22; "
               "docs/benchmarks.md, ## FFT"},
    tuning_row{fft, any_gpu, fft_passes(256, 8),
               "not measured: half the NVIDIA tile (16 KiB), for GPUs with less local memory"},
    tuning_row{fft, any_cpu, fft_passes(64, 16),
               "not measured: CPU passes take no local memory, GPU kernels forced in tests do"},
    tuning_row{fft, any_device, fft_passes(64, 16), "not measured: small and safe"},
};
// clang-format on
static_assert(std::all_of(table.begin(), table.end(),
                          [](const tuning_row& row) {
                              return row_tuning_fits(row.for_algorithm, row.policy);
                          }),
              "a row's numbers are of its algorithm's type");

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::mutex override_mutex;
std::array<std::optional<row_tuning>, 8> policy_overrides;
std::optional<bool> progress_override;
std::optional<fft_pipeline_policy> pipeline_override;
bool local_memory_group_scans = false;

const tuning_row* first_row(algorithm a, const device_properties& props) {
    for (const auto& row : table)
        if (row.for_algorithm == a && matches(row.devices, props)) return &row;
    return nullptr;
}

bool scoped_local_memory_group_scans_alive() {
    std::lock_guard lock(override_mutex);
    return local_memory_group_scans;
}

}  // namespace

std::string_view to_string(algorithm a) noexcept {
    switch (a) {
        case scan:
            return "scan";
        case select:
            return "select";
        case reduce_by_key:
            return "reduce_by_key";
        case radix_sort:
            return "radix_sort";
        case merge_sort:
            return "merge_sort";
        case stencil_1d:
            return "stencil_1d";
        case stencil_2d:
            return "stencil_2d";
        case fft:
            return "fft";
    }
    return "?";
}

std::span<const tuning_row> tuning_table() {
    return table;
}

std::size_t sub_group_size_of(const device_properties& props) {
    const bool nvidia = lower(props.vendor).find("nvidia") != std::string::npos ||
                        props.backend == backend_kind::cuda;
    return nvidia && props.type == device_type::gpu ? 32 : 0;
}

bool matches(const device_class& c, const device_properties& props) {
    if (c.backend && *c.backend != props.backend) return false;
    if (c.type && *c.type != props.type) return false;
    if (!c.vendor.empty()) {
        const std::string wanted = lower(c.vendor);
        if (lower(props.vendor).find(wanted) == std::string::npos &&
            lower(props.platform).find(wanted) == std::string::npos)
            return false;
    }
    if (c.min_compute_capability > 0 &&
        (props.backend != backend_kind::cuda ||
         props.compute_capability_major * 10 + props.compute_capability_minor <
             c.min_compute_capability))
        return false;
    return c.sub_group_size == 0 || c.sub_group_size == sub_group_size_of(props);
}

const tuning_row* tuning_row_for(algorithm a, const device& dev) {
    {
        std::lock_guard lock(override_mutex);
        if (policy_overrides[static_cast<std::size_t>(a)]) return nullptr;
    }
    return first_row(a, dev.properties());
}

std::string scan_policy::key() const {
    return std::to_string(work_group_size) + "x" + std::to_string(items_per_work_item) + " sg" +
           std::to_string(sub_group_size) + (staged_writes ? " staged" : " direct") + " " +
           target.key() + " d" + std::to_string(lookback_depth) +
           (full_tiles == tile_access::unrolled ? " unrolled"
            : full_tiles == tile_access::wide   ? " wide"
                                                : "") +
           (ballot_flags ? "" : " bytes") + (register_runs ? " runs" : "") +
           (chunk_bytes ? " chunks" + std::to_string(chunk_bytes) : "") +
           (chunk_lanes ? " lanes" + std::to_string(chunk_lanes) : "") +
           (chunk_cursor_writes ? " cursor" : "") + (chunk_vector_writes ? " vectors" : "");
}

std::string stencil_tuning::key() const {
    return std::to_string(work_group_size) + "x" + std::to_string(items_per_work_item) +
           (chunk_bytes ? " runs" + std::to_string(chunk_bytes) : "") +
           (strip_rows ? " strips" + std::to_string(strip_rows) : "");
}

namespace {

template <class Tuning>
std::optional<Tuning> override_of(algorithm a) {
    const std::optional<row_tuning>& forced = policy_overrides[static_cast<std::size_t>(a)];
    return forced && std::holds_alternative<Tuning>(*forced)
               ? std::optional<Tuning>(std::get<Tuning>(*forced))
               : std::nullopt;
}

}  // namespace

target_features plan_target(const device_properties& props, const tuning_overrides& overrides) {
    target_features target = target_features_for(props);
    if (overrides.local_memory_group_scans) target.sub_group_size = 0;
    return target;
}

std::size_t group_scan_sub_group_size(const target_features& target, std::size_t work_group_size) {
    const std::size_t size = target.shuffles ? target.sub_group_size : 0;
    return size > 0 && work_group_size % size == 0 ? size : 0;
}

std::size_t group_scan_sub_group_size(const device& dev, std::size_t work_group_size) {
    tuning_overrides local;
    local.local_memory_group_scans = scoped_local_memory_group_scans_alive();
    return group_scan_sub_group_size(plan_target(dev.properties(), local), work_group_size);
}

tuning_overrides overrides_in_force(algorithm a) {
    std::lock_guard lock(override_mutex);
    return {.scan_family = override_of<scan_policy>(a),
            .radix_sort = override_of<radix_sort_tuning>(a),
            .merge_sort = override_of<merge_sort_tuning>(a),
            .stencil = override_of<stencil_tuning>(a),
            .fft = override_of<fft_tuning>(a),
            .groups_make_progress = progress_override,
            .local_memory_group_scans = local_memory_group_scans,
            .fft_pipeline = pipeline_override,
            .fft_length_kernels = fft_length_kernels_forced()};
}

template <class Tuning>
Tuning row_tuning_for(algorithm a, const device_properties& props,
                      const std::optional<Tuning>& forced) {
    if (!row_tuning_fits(a, Tuning{}))
        throw invalid_argument_error("kiln::detail::row_tuning_for",
                                     "not the tuning type of " + std::string(to_string(a)));
    if (forced) return *forced;
    if (const tuning_row* row = first_row(a, props)) return std::get<Tuning>(row->policy);
    throw invalid_argument_error(
        "kiln::detail::row_tuning_for",
        "no tuning row for " + std::string(to_string(a)) + " on " + props.name);
}
template scan_policy row_tuning_for(algorithm, const device_properties&,
                                    const std::optional<scan_policy>&);
template radix_sort_tuning row_tuning_for(algorithm, const device_properties&,
                                          const std::optional<radix_sort_tuning>&);
template merge_sort_tuning row_tuning_for(algorithm, const device_properties&,
                                          const std::optional<merge_sort_tuning>&);
template stencil_tuning row_tuning_for(algorithm, const device_properties&,
                                       const std::optional<stencil_tuning>&);
template fft_tuning row_tuning_for(algorithm, const device_properties&,
                                   const std::optional<fft_tuning>&);

scan_policy plan_policy(algorithm a, const device_properties& props,
                        const tuning_overrides& overrides) {
    scan_policy chosen = row_tuning_for(a, props, overrides.scan_family);
    chosen.target = plan_target(props, overrides);
    chosen.sub_group_size = chosen.sub_group_scans
                                ? group_scan_sub_group_size(chosen.target, chosen.work_group_size)
                                : 0;
    return chosen;
}

scan_policy policy_for(algorithm a, const device& dev) {
    return plan_policy(a, dev.properties(), overrides_in_force(a));
}

radix_sort_tuning radix_sort_tuning_for(const device& dev) {
    return row_tuning_for(algorithm::radix_sort, dev.properties(),
                          overrides_in_force(algorithm::radix_sort).radix_sort);
}

bool groups_make_progress(const device& dev) {
    {
        std::lock_guard lock(override_mutex);
        if (progress_override) return *progress_override;
    }
    return device_quirks_for(dev.properties()).groups_make_progress;
}

scoped_fft_pipeline_policy::scoped_fft_pipeline_policy(fft_pipeline_policy policy)
    : override_(pipeline_override, policy, override_mutex) {}

bool chunk_groups_make_progress(const device& dev) {
    const device_quirks quirks = device_quirks_for(dev.properties());
    bool progress = quirks.groups_make_progress || quirks.groups_run_on_threads;
    {
        std::lock_guard lock(override_mutex);
        if (progress_override) progress = *progress_override;
    }
    return progress && quirks.global_fence_orders_device;
}

bool global_fence_orders_device(const device& dev) {
    // Not overridable: a test that forces look-back must not run it where it is wrong.
    return device_quirks_for(dev.properties()).global_fence_orders_device;
}

namespace {

/// Where scoped_algorithm_policy keeps `a`'s override, once `tuning` is checked to be a's type.
std::optional<row_tuning>& override_slot(algorithm a, const row_tuning& tuning) {
    if (!row_tuning_fits(a, tuning))
        throw invalid_argument_error("kiln::detail::scoped_algorithm_policy",
                                     "not the tuning type of " + std::string(to_string(a)));
    return policy_overrides[static_cast<std::size_t>(a)];
}

}  // namespace

scoped_algorithm_policy::scoped_algorithm_policy(algorithm a, scan_policy policy)
    : override_(override_slot(a, policy), policy, override_mutex) {}

scoped_algorithm_policy::scoped_algorithm_policy(radix_sort_tuning policy)
    : override_(override_slot(radix_sort, policy), policy, override_mutex) {}

scoped_algorithm_policy::scoped_algorithm_policy(merge_sort_tuning policy)
    : override_(override_slot(merge_sort, policy), policy, override_mutex) {}

scoped_algorithm_policy::scoped_algorithm_policy(algorithm a, stencil_tuning policy)
    : override_(override_slot(a, policy), policy, override_mutex) {}

scoped_algorithm_policy::scoped_algorithm_policy(fft_tuning policy)
    : override_(override_slot(fft, policy), policy, override_mutex) {}

scoped_local_memory_group_scans::scoped_local_memory_group_scans()
    : override_(local_memory_group_scans, true, override_mutex) {}

scoped_forward_progress::scoped_forward_progress(bool value)
    : override_(progress_override, value, override_mutex) {}

}  // namespace kiln::detail
