// SPDX-License-Identifier: Apache-2.0
// The scan family's tuning (scan, select: copy_if and unique, reduce_by_key): its numbers' type,
// its keys in the tuning table (rows in src/algo/scan/scan_tuning.cpp) and its plans.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/device.hpp>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// How a look-back state holds its flag (1: aggregate, 2: inclusive prefix) and value.
enum class state_packing {
    /// Flag in the high half of a 64-bit word, the 4-byte value's bits in the low half.
    low_32_bits,
    /// Flag in the top 2 bits, a count below 2^62 in the others (stream compaction).
    count_62_bits,
    /// A uint2 pair (x below 2^30, y any): flag in the top 2 bits, x in the next 30, y in the
    /// low 32 (reduce by key with 4-byte values while its run counts stay below 2^30).
    pair_30_32_bits,
    /// A count below 2^30 in a 32-bit word, flag in the top 2 bits (the radix sort's single
    /// pass, a state per tile and digit).
    count_30_bits,
    /// Value in its own array, written before the flag (a fence between): needs a global
    /// fence that orders memory for the whole device.
    separate,
};

/// Which kernels a scan-family program holds and runs, as its plan chose them for the device
/// (plan_schedule).
enum class scan_schedule {
    /// Passes that never wait for another work-group: reduce-then-scan's three for tiles, a
    /// local scan then a fix-up for chunks. Safe on every device.
    multi_pass,
    /// One pass in which each tile or chunk waits for the prefix of those that took earlier
    /// tickets: decoupled look-back for tiles, chained chunks for chunks.
    single_pass,
};

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

/// What reduce_by_key's runs in registers keep from their loads (scan_policy::kept_run_items).
enum class run_items : std::uint8_t { none, values, values_and_keys };

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
    /// Scan family, single pass: earlier tiles each reader of the look-back reads at once and
    /// folds. Tiles combine their predecessors in a fixed order within windows of readers *
    /// lookback_depth tiles (the readers: the first sub-group where group scans shuffle, else
    /// up to 32 work-items), and a window waits for the one before it: deeper windows keep
    /// that chain ahead of the tiles, shallower ones read fewer states.
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
    /// heads reads the values again (and, where it stages its writes, the keys at heads) unless
    /// kept_run_items says otherwise (reduce_by_key_tiles.cpp).
    /// Otherwise, and where false, the tile keeps head flags and values in local memory
    /// (reduce_by_key_tiles.cpp's split tile).
    bool register_runs = false;
    /// With register_runs: what each work-item keeps in registers from its loads to its writes,
    /// rather than reading it again: nothing, its values, or its values and its keys. Keeping
    /// costs ITEMS registers for each, and so groups on a multiprocessor.
    run_items kept_run_items = run_items::none;
    /// Which kernels the program holds and runs. Not in the table: the plans set it from the
    /// device and the look-back states' packing (plan_schedule).
    scan_schedule schedule = scan_schedule::multi_pass;
    /// Items a work-group handles per tile: work_group_size * items_per_work_item.
    std::size_t tile_size() const noexcept { return work_group_size * items_per_work_item; }
    /// The numbers as text, for program cache keys: "256x16 sg32 staged d1" (" bytes",
    /// " unrolled" or " wide" for full tiles other than guarded, " runs", " chunks<bytes>",
    /// " lanes<n>", " cursor", " vectors" and " single" added).
    std::string key() const;
};

namespace algorithm {

/// Scans (and the tile pass of reduce-then-scan).
struct scan_rows {
    using tuning = scan_policy;
    static constexpr std::string_view name = "scan";
    static std::span<const tuning_row<scan_policy>> rows();
};
/// Stream compaction: copy_if and unique.
struct select_rows {
    using tuning = scan_policy;
    static constexpr std::string_view name = "select";
    static std::span<const tuning_row<scan_policy>> rows();
};
struct reduce_by_key_rows {
    using tuning = scan_policy;
    static constexpr std::string_view name = "reduce_by_key";
    static std::span<const tuning_row<scan_policy>> rows();
};
inline constexpr scan_rows scan{};
inline constexpr select_rows select{};
inline constexpr reduce_by_key_rows reduce_by_key{};

}  // namespace algorithm

/// One of the scan family's algorithms, which share its tuning type.
template <class Family>
concept scan_family_member =
    tuning_family<Family> && std::same_as<typename Family::tuning, scan_policy>;

/// The family's policy on a device of `props`: the row's (or the forced) numbers, with its
/// target features and sub_group_size set from the device.
template <scan_family_member Family>
scan_policy plan_policy(Family, const device_properties& props,
                        const tuning_overrides<Family>& overrides = {});
/// plan_policy on `dev` under the overrides in force.
template <scan_family_member Family>
scan_policy policy_for(Family family, const device& dev) {
    return plan_policy(family, dev.properties(), overrides_in_force<Family>());
}

/// The schedule for `policy` (its chunk_bytes saying chunks or tiles) on a device of `props`
/// whose look-back states are packed as `packing`: single_pass where earlier work-groups make
/// progress (the overrides' groups_make_progress, else the device's quirks; chunks also where
/// groups run on threads of their own) and the states need no device-wide fence or the device
/// has one (chunks always publish a value apart from its flag); else multi_pass.
scan_schedule plan_schedule(const device_properties& props, const shared_overrides& overrides,
                            const scan_policy& policy, state_packing packing);
/// The packing of a scan's look-back states for values of `value_bytes`: one word with the flag
/// for 4-byte values, else apart (make_scan_operation's).
state_packing scan_state_packing(std::size_t value_bytes);

/// Scans (reduce_by_key below): the row's policy, items per work-item halved for 8-byte values
/// so that a tile takes the same local memory, and the schedule for scan_state_packing.
/// reduce_by_key's schedule is left to its caller, which knows the packing (reduce_by_key.cpp); its
/// runs in registers write directly where the device's local memory cannot stage them
/// (staged_writes cleared).
scan_policy plan_scan(const device_properties& props, std::size_t value_bytes,
                      const tuning_overrides<algorithm::scan_rows>& overrides = {});
scan_policy plan_reduce_by_key(
    const device_properties& props, std::size_t value_bytes,
    const tuning_overrides<algorithm::reduce_by_key_rows>& overrides = {});

/// How one part of a stream compaction (copy_if, unique) is done: the tuning, the count's width
/// and the count it starts from.
struct compaction_plan {
    scan_policy policy;
    /// 32-bit counts (uint, one-word look-back states with the flag in the high half) where the
    /// part's counts stay below 2^31 and the tiles stage their writes or chunks are used; else
    /// 64-bit counts (62 bits beside the flag).
    bool narrow = false;
    /// The count before the part's first element (0 but under scoped_compaction_count_base).
    std::uint64_t base = 0;
    std::string count_type() const { return narrow ? "uint" : "ulong"; }
    /// The program cache's key: the fields the kernels are written from (base travels as the
    /// scan's carry argument).
    std::string key() const { return policy.key() + (narrow ? " u32" : " u64"); }
};
/// Tiles hold a count and (staged) a value per element, so 8-byte counts or values halve the
/// items per work-item, as plan_scan does; the schedule follows the count's packing.
compaction_plan plan_compaction(const device_properties& props, std::size_t value_bytes,
                                std::size_t n, std::uint64_t count_base,
                                const tuning_overrides<algorithm::select_rows>& overrides = {});

// The plans under the overrides in force, for the callers that hold a device.
inline scan_policy plan_scan(const device& dev, std::size_t value_bytes) {
    return plan_scan(dev.properties(), value_bytes, overrides_in_force<algorithm::scan_rows>());
}
inline scan_policy plan_reduce_by_key(const device& dev, std::size_t value_bytes) {
    return plan_reduce_by_key(dev.properties(), value_bytes,
                              overrides_in_force<algorithm::reduce_by_key_rows>());
}

}  // namespace kiln::detail
#pragma GCC visibility pop
