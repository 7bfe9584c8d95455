// Tuning of the algorithm kernels as data: a policy per algorithm and device class, of the
// algorithm's own type (scan_policy for the scan family, radix_sort_tuning, and so on).
//
// A policy's numbers become compile-time constants of the generated kernels (work-group size
// through reqd_work_group_size, items per work-item, radix bits, local tile sizes), so they are
// part of every algorithm program's cache key. The table in src/algo/tuning.cpp is read from the
// top: the first row whose device class matches wins, rows run from specific (a backend, vendor
// and compute capability) to generic (any GPU, any CPU, anything), which is the fallback chain,
// and every row says in one line where its numbers were measured (docs/benchmarks.md, by
// section). The plans (plans.hpp) turn a row and a device's properties into each algorithm's
// shape.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/scoped_override.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace kiln::detail {

enum class algorithm {
    scan,
    select,
    reduce_by_key,
    radix_sort,
    merge_sort,
    stencil_1d,
    stencil_2d,
    fft
};
std::string_view to_string(algorithm a) noexcept;

/// How the scan family's tile kernels move tiles that are full (every tile but a part's last)
/// between global and local memory; a part's last tile always goes through guarded loops.
enum class tile_access {
    /// Loops over the work-item's items, each element behind a bounds check: what the last
    /// tile needs, and what compilers were left to unroll and schedule.
    guarded,
    /// Unrolled loops without bounds checks, so that every load of the tile can be in flight at
    /// once; the work-items' own runs of items are scanned by unrolled loops too.
    unrolled,
    /// As unrolled, with 16-byte loads and stores (four 4-byte or two 8-byte elements) where
    /// the input can be read so (vectors and elementwise expressions of them, see generator's
    /// lane passes) and the values are scalars; other inputs take the guarded loops.
    wide,
};

/// The scan family's rows (scan, select, reduce_by_key).
struct scan_policy {
    std::size_t work_group_size = 256;
    std::size_t items_per_work_item = 8;
    /// Sub-group size within which group scans shuffle; 0: they go through local memory. Not in
    /// the table: policy_for sets it from the device (group_scan_sub_group_size).
    std::size_t sub_group_size = 0;
    /// Stream compaction: tiles gather their kept elements in local memory and write them at
    /// once, coalesced, with 32-bit counts where the sizes allow. false: each work-item writes
    /// its own kept elements, with 64-bit counts (the earlier kernels, kept for CPU devices and
    /// so that bench/algo compares both in one run). reduce_by_key's runs in registers
    /// (register_runs): tiles gather their runs in local memory and write them at once; false:
    /// each work-item writes its own.
    bool staged_writes = true;
    /// What the generated code may rely on (its device vocabulary, ballots, shuffles). Not in
    /// the table: policy_for sets it from the device (target_features_for).
    target_features target{};
    /// Scan family, look-back within a sub-group (where group scans shuffle): earlier tiles
    /// each lane reads at once, so that one window covers sub_group_size * lookback_depth.
    std::size_t lookback_depth = 1;
    /// 0 for the tile kernels (the GPU shape); else the chunk kernels (the CPU shape:
    /// scan_chunks.hpp): one work-item per chunk of about this many bytes of values, walked in
    /// plain loops. The tile fields then serve only where a test clears chunk_bytes to run the
    /// tiles.
    std::size_t chunk_bytes = 0;
    /// Scans in chunks, of scalars under lanewise operations (scan_operation::lanewise): walk
    /// each chunk by vectors of this many lanes, scanned in registers (scan_chunk_lanes.cpp);
    /// reduce_by_key in chunks, of integer sums: the same, each run's sum a difference of
    /// prefix sums (reduce_by_key_lane_chunks.cpp); 0, or other operations: element by element.
    std::size_t chunk_lanes = 0;
    /// Stream compaction in chunks: kept elements written at a cursor without branches
    /// (compaction_chunks.cpp); false: behind a branch per element.
    bool chunk_cursor_writes = false;
    /// Stream compaction in chunks: kept elements gathered by vectors of 8, put first by a
    /// permutation from a table and written whole at a cursor (compaction_vector_chunks.cpp),
    /// whatever chunk_cursor_writes says.
    bool chunk_vector_writes = false;
    /// Scan family: how full tiles are loaded and stored.
    tile_access full_tiles = tile_access::guarded;
    /// Compaction and reduce_by_key, where sub-groups of 32 exist (and at most 32 items per
    /// work-item): each sub-group's 32 consecutive 0/1 flags become one word by a ballot. false:
    /// the tile holds one byte per flag, as on devices without sub-groups.
    bool ballot_flags = true;
    /// Scan family: group scans and the look-back within sub-groups where the device has them
    /// (warp shuffles, inline PTX on NVIDIA's OpenCL). false: through local memory, with the
    /// window look-back, which some kernels run faster.
    bool sub_group_scans = true;
    /// reduce_by_key, with full_tiles wide, at most 64 items per work-item, values read as
    /// 16-byte loads allow (vectors and elementwise expressions of them) and keys as wide as
    /// the values: each work-item reads its ITEMS consecutive keys and values straight from
    /// global memory into registers (16-byte loads for full tiles), finds heads against the key
    /// before each, and reduces its runs there before one group scan; its walk that writes at
    /// heads reads the values again rather than keeping them (reduce_by_key_tiles.cpp).
    /// Otherwise, and where false, the tile keeps head flags and values in local memory
    /// (reduce_by_key_tiles.cpp's split tile).
    bool register_runs = false;
    /// Items a work-group handles per tile: work_group_size * items_per_work_item.
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
    /// The numbers as text, for program cache keys: "256x16 sg32 staged d1" (" bytes",
    /// " unrolled" or " wide" for full tiles other than guarded, " runs", " chunks<bytes>",
    /// " lanes<n>", " cursor" and " vectors" added).
    std::string key() const;
};

/// Radix sort rows; plan_radix_sort turns one into the sort's shape (radix_sort_policy).
struct radix_sort_tuning {
    std::size_t work_group_size = 256;
    /// For 4-byte keys alone; plan_radix_sort scales them down for wider elements.
    std::size_t items_per_work_item = 8;
    unsigned radix_bits = 8;
    /// Rank each tile by a sub-group multi-split (every sub-group of 32 work-items counts its
    /// keys per digit, peers found by ballots, or through local memory where the device has no
    /// sub-groups) instead of counting rounds of 4 bits per work-item.
    bool multi_split = false;
    /// Sorts by key with the multi-split: each tile's values are loaded as its keys take their
    /// places and ranked into a local array of their own, then leave with their keys. false:
    /// they follow in a second round through the keys' array once the keys have left (as
    /// Onesweep does; half the local memory). Either way a tile of pairs holds as many items as
    /// a tile of keys; plan_radix_sort keeps to the second round where both arrays would pass
    /// CUDA's 48 KB.
    bool values_beside_keys = false;
    /// 0 for the tile kernels (the GPU shape); else the chunk kernels (the CPU shape,
    /// radix_chunks.cpp): one work-item per chunk of at least this many bytes of keys, at most
    /// 4 chunks per compute unit.
    std::size_t chunk_bytes = 0;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
};

/// Merge sort (comparator sorts) rows: the work-group size is the first run length, each run
/// sorted in local memory at G^2 comparisons.
struct merge_sort_tuning {
    std::size_t work_group_size = 256;
};

/// Stencil rows (include/kiln/stencil.hpp): outputs per work-item of a tile in local memory.
/// 1-D: work_group_size 0 chooses the per-element kernel. 2-D: tiles are
/// stencil_2d_tile_columns wide and work_group_size / stencil_2d_tile_columns *
/// items_per_work_item rows high.
struct stencil_tuning {
    std::size_t work_group_size = 256;
    std::size_t items_per_work_item = 4;
    /// Not 0: the CPU shape (stencil_on_cpu.hpp), groups of one work-item each walking a run of
    /// at least this many bytes of outputs; the tile fields then serve only where a test clears
    /// it.
    std::size_t chunk_bytes = 0;
    /// 2-D, where not 0 and chunk_bytes is 0: the streaming kernel (stencil_2d_streaming.hpp),
    /// each group work_group_size adjacent columns wide walking down a strip of this many
    /// output rows, items_per_work_item rows between two barriers.
    std::size_t strip_rows = 0;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
    /// "128x8" (" runs16384" or " strips64" added), for program cache keys: the fields are
    /// compile-time constants of the kernels, or choose the kernel.
    std::string key() const;
};

/// FFT pass rows: at most work_group_size work-items and tile_size() complex floats of local
/// memory per group (plan_fft's fft_pass_limits).
struct fft_tuning {
    std::size_t work_group_size = 64;
    std::size_t items_per_work_item = 16;
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
};

/// A row's numbers, of its algorithm's type (row_tuning_fits says which).
using row_tuning =
    std::variant<scan_policy, radix_sort_tuning, merge_sort_tuning, stencil_tuning, fft_tuning>;

/// Which devices a row applies to; unset fields match every device.
struct device_class {
    std::optional<backend_kind> backend;
    std::optional<device_type> type;
    std::string_view vendor;         ///< case-insensitive substring of the vendor or platform name
    int min_compute_capability = 0;  ///< major * 10 + minor (CUDA devices)
    std::size_t sub_group_size = 0;  ///< 0: any
};

struct tuning_row {
    algorithm for_algorithm;
    device_class devices;
    row_tuning policy;
    std::string_view provenance;  ///< where the numbers were measured, or why they were chosen
};

/// Whether `tuning` is of `a`'s type (the table is checked at compile time, overrides when set).
constexpr bool row_tuning_fits(algorithm a, const row_tuning& tuning) noexcept {
    switch (a) {
        case algorithm::scan:
        case algorithm::select:
        case algorithm::reduce_by_key:
            return std::holds_alternative<scan_policy>(tuning);
        case algorithm::radix_sort:
            return std::holds_alternative<radix_sort_tuning>(tuning);
        case algorithm::merge_sort:
            return std::holds_alternative<merge_sort_tuning>(tuning);
        case algorithm::stencil_1d:
        case algorithm::stencil_2d:
            return std::holds_alternative<stencil_tuning>(tuning);
        case algorithm::fft:
            return std::holds_alternative<fft_tuning>(tuning);
    }
    return false;
}

/// The table, in the order it is searched.
std::span<const tuning_row> tuning_table();
bool matches(const device_class& c, const device_properties& props);
/// The sub-group (warp) size kiln assumes for a device: 32 on NVIDIA GPUs, else 0 (unknown).
std::size_t sub_group_size_of(const device_properties& props);

/// plan_policy on `dev` under the overrides in force (a: scan, select or reduce_by_key).
scan_policy policy_for(algorithm a, const device& dev);
/// The radix sort's row on `dev` (or the override in force), before plan_radix_sort scales it.
radix_sort_tuning radix_sort_tuning_for(const device& dev);
/// The row policy_for takes, for diagnostics (nullptr under a test override).
const tuning_row* tuning_row_for(algorithm a, const device& dev);

/// Whether work-groups that took lower ticket-ordered ids (a global atomic counter, read at the
/// start of each group) always make progress while later groups wait for them: what a
/// single-pass scan with decoupled look-back needs. From the device's quirks; overridable in
/// tests.
bool groups_make_progress(const device& dev);
/// Whether the scan's chained chunk kernel (scan_chunks.hpp) may run on `dev`: chunks that took
/// earlier tickets keep running while later ones wait, as on GPUs that promise forward progress
/// and on CPU devices, whose work-groups run start to end on threads of their own or one after
/// another (scoped_forward_progress overrides this too), and a global fence orders a chunk's
/// published values before its flag.
bool chunk_groups_make_progress(const device& dev);
/// Whether mem_fence(CLK_GLOBAL_MEM_FENCE) orders a work-item's global writes for every
/// work-group of the device, as look-back states kept apart from their flag need. From the
/// device's quirks.
bool global_fence_orders_device(const device& dev);

/// The sub-group size algorithms' group scans may shuffle within on `dev` for groups of
/// `work_group_size` (the target's, target_features::sub_group_size, where it divides them), 0
/// where they go through local memory.
std::size_t group_scan_sub_group_size(const device& dev, std::size_t work_group_size);

/// Test-only: while alive, policies' targets have no sub-group size, so group scans and the radix
/// multi-split take their local-memory paths on every device, and tests run both paths where a
/// device has sub-groups.
class scoped_local_memory_group_scans {
  public:
    scoped_local_memory_group_scans();

  private:
    scoped_override<bool> override_;
};

/// Test-only: while alive, every device uses `policy` for its algorithm (`a`, where several
/// share the type; invalid_argument_error where `a` is not one of them). Restores the previous
/// state when destroyed. Not thread-safe with algorithms running on other threads.
class scoped_algorithm_policy {
  public:
    /// a: scan, select or reduce_by_key.
    scoped_algorithm_policy(algorithm a, scan_policy policy);
    explicit scoped_algorithm_policy(radix_sort_tuning policy);
    explicit scoped_algorithm_policy(merge_sort_tuning policy);
    /// a: stencil_1d or stencil_2d.
    scoped_algorithm_policy(algorithm a, stencil_tuning policy);
    explicit scoped_algorithm_policy(fft_tuning policy);

  private:
    scoped_override<std::optional<row_tuning>> override_;
};

/// FFT lines of two passes through local memory done by one kernel in chunks, the data between
/// the passes in a ring that stays in the L2 cache (fft_pipeline_kernel): chunk_bytes of lines
/// per chunk, `slots` chunks in the ring, second passes `lag` chunks behind the first (1 to
/// slots - 1). chunk_bytes 0: not used. `target`: whose fences and streaming accesses the kernel
/// calls (set from the device, not the table).
struct fft_pipeline_policy {
    std::size_t chunk_bytes = 0, slots = 0, lag = 1;
    bool streaming = false;  ///< fft_pipeline_kernel::streaming
    bool fine = false;       ///< fft_pipeline_kernel::fine
    target_features target{};
};

/// The test overrides (the scoped_* classes below, and the FFT's scoped_fft_length_kernels) as
/// plain data. Plans read them from their arguments, never from global state, so that a test of
/// a plan leaves them empty or writes them by hand.
struct tuning_overrides {
    // scoped_algorithm_policy, for the plan's algorithm.
    std::optional<scan_policy> scan_family;  ///< scan, select or reduce_by_key
    std::optional<radix_sort_tuning> radix_sort;
    std::optional<merge_sort_tuning> merge_sort;
    std::optional<stencil_tuning> stencil;  ///< the plan's dimensions
    std::optional<fft_tuning> fft;
    std::optional<bool> groups_make_progress;         ///< scoped_forward_progress
    bool local_memory_group_scans = false;            ///< scoped_local_memory_group_scans
    std::optional<fft_pipeline_policy> fft_pipeline;  ///< scoped_fft_pipeline_policy
    bool fft_length_kernels = false;                  ///< scoped_fft_length_kernels
};
/// The overrides in scope now, for algorithm `a`.
tuning_overrides overrides_in_force(algorithm a);

/// `a`'s numbers on a device of `props`: `forced` (an override) where set, else the first
/// matching row's. What every plan starts from; throws invalid_argument_error where no row
/// matches or Tuning is not `a`'s type.
template <class Tuning>
Tuning row_tuning_for(algorithm a, const device_properties& props,
                      const std::optional<Tuning>& forced);

/// The scan family's (a: scan, select or reduce_by_key) policy on a device of `props`:
/// row_tuning_for's, with its target features and sub_group_size set from the device.
scan_policy plan_policy(algorithm a, const device_properties& props,
                        const tuning_overrides& overrides = {});

/// What the generated code may use on a device of `props`: its target features, with no
/// sub-group size under the local_memory_group_scans override.
target_features plan_target(const device_properties& props, const tuning_overrides& overrides);
/// The sub-group size group scans of `work_group_size` work-items may shuffle within on
/// `target` (its sub_group_size, where it divides the group and shuffles exist), else 0.
std::size_t group_scan_sub_group_size(const target_features& target, std::size_t work_group_size);
/// plan_fft's pipeline on `dev` under the overrides in force.
fft_pipeline_policy fft_pipeline_policy_for(const device& dev);

/// Test and benchmark only: while alive, fft_pipeline_policy_for answers `policy` (its
/// target still from the device) wherever the pipeline may run.
class scoped_fft_pipeline_policy {
  public:
    explicit scoped_fft_pipeline_policy(fft_pipeline_policy policy);

  private:
    scoped_override<std::optional<fft_pipeline_policy>> override_;
};

/// Test-only: while alive, groups_make_progress answers `value` for every device, e.g. to run
/// the look-back path on a device where it is safe but not promised. Restores when destroyed.
class scoped_forward_progress {
  public:
    explicit scoped_forward_progress(bool value);

  private:
    scoped_override<std::optional<bool>> override_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
