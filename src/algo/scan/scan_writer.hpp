// The scan program's writer, shared by scan_tile.cpp (tiles) and scan_kernels.cpp (kernels).
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {

/// Writes the scan family's kernels (scan_kernels.hpp) into one builder, under one operation and
/// policy: the tile code (scan_tile.cpp) and the kernels, look-back and state words
/// (scan_kernels.cpp).
class scan_writer {
  public:
    /// Where a tile keeps its elements' 0/1 flags (none: the tile holds whole values).
    enum class flag_storage { none, bytes, ballots };

    scan_writer(source_builder& b, const scan_operation& op, const algorithm_policy& policy,
                bool exclusive, bool scatter);

    std::string combine(const std::string& a, const std::string& b);

    /// Kernel header and the pointers into the scratch lease.
    element_text begin(const std::string& name, bool with_out, const declare_input* input);

    /// Local arrays of a tile kernel (OpenCL C wants them at kernel scope). A compaction's
    /// counts and a flag-and-payload input's flags (see element_text::compose) are 0 or 1 per
    /// element: the tile keeps them as bits, one word per 32 elements, each written by a
    /// sub-group ballot where sub-groups of 32 exist, else as bytes (converted on read), padded
    /// by one word per 32 words so that work-items reading their ITEMS consecutive bytes fall on
    /// different banks. Either leaves room for more groups per compute unit beside the staged
    /// kept values or payloads.
    void declare_tile_arrays(const element_text& element);

    /// The 0/1 flag of this work-item's item `j` (counted from its first), at tile index `item`.
    std::string flag_at(const element_text& element, const std::string& j,
                        const std::string& item) const;

    /// The tile's scanned input at this work-item's item `j`, as the scan's type; `item` is its
    /// index in the tile (by default first + j).
    std::string tile_at(const element_text& element, const std::string& j,
                        std::string item = {}) const;

    /// Loads tile `tile` (coalesced, through the expression), scans each work-item's items and
    /// the work-items' totals; leaves `aggregate`, the tile's combination.
    void load_and_scan(const element_text& element);

    /// Each work-item loads its ITEMS elements WG apart, behind bounds checks where `guarded`.
    void load_elements(const element_text& element, bool guarded);

    /// A full tile through 16-byte loads: each work-item its ITEMS / lanes loads, WG apart,
    /// each giving `lanes` consecutive elements. The padding puts a pad slot only every 2^s
    /// elements, a multiple of the lanes, so a load's elements stay consecutive in the tile.
    void load_wide(const element_text& element);

    /// `kiln_my_flags`: bit j is the flag of this work-item's item j (none past `count`).
    void gather_flags(flag_storage flags);

    /// Writes the tile's results given its prefix (tile_has_prefix, tile_prefix).
    void store(const element_text& element);
    /// `running` and `have`: what comes before this work-item's first item, from the tile's
    /// prefix and the group scan (what store and store_runs begin with).
    void declare_running_prefix();

    void store_elements(bool guarded);

    /// A full tile through 16-byte stores of `lanes` consecutive results each.
    void store_wide(std::size_t lanes);

    /// Compaction: each work-item moves its kept values to their rank in the tile (through
    /// registers, since ranks fall on other work-items' items), then the group writes the tile's
    /// kept values in order, neighbouring work-items to neighbouring elements.
    void store_compaction(const element_text& element);

    /// reduce_by_key with its runs in registers (scan_runs.cpp): the tile's local arrays, the
    /// load and per-work-item reduction of runs (as load_and_scan), and the writes (as store).
    bool register_runs(const element_text& element) const;
    void declare_run_arrays(const element_text& element);
    void load_runs(const element_text& element);
    void store_runs(const element_text& element);
    /// Writes the code of one item given its value's and key's texts (j: its index among the
    /// work-item's items, idx: in the input).
    using item_writer = std::function<void(const std::string& value, const std::string& key)>;
    /// A full tile's items read through 16-byte loads (wide input), keys too where asked.
    void wide_items(const element_text& element, bool with_keys, const item_writer& item);
    /// A work-item's `count` items element by element (a part's last tile).
    void guarded_items(const element_text& element, const item_writer& item);
    /// Sets head bit j from kiln_key and the key before it; kiln_key becomes kiln_previous.
    void note_head(const element_text& element);
    std::string heads_type() const;

    void lookback_kernel(const declare_input& input);

    /// The look-back through local memory: KILN_WINDOW work-items read the states of as many
    /// earlier tiles at once (waiting for each to be published), then work-item 0 folds them
    /// from the nearest back to the first inclusive prefix; the window moves back until one is
    /// found.
    void window_lookback_loop();

    bool sub_group_lookback() const;

    /// The look-back within the first sub-group (warp), with no group barrier inside: each lane
    /// reads KILN_DEPTH consecutive earlier states at once (lane 0 the nearest), waits for them
    /// to be published and folds them back to the first inclusive prefix it meets; a ballot finds
    /// the nearest lane that met one, and a shuffle reduction combines the lanes up to it, older
    /// lanes as the earlier operands. The window moves back until some lane met an inclusive
    /// prefix (tile 0 always publishes one). A fold by one work-item through local memory cost
    /// two barriers and a serial loop per window, while later tiles waited.
    void sub_group_lookback_loop();

    /// Reduce-then-scan's tile kernels begin alike: one tile per work-group, `tile` its
    /// index, loaded and scanned (load_and_scan).
    element_text begin_group_tile_kernel(const std::string& name, const declare_input& input);
    void reduce_kernel(const declare_input& input);

    /// One work-group walks the tile aggregates in chunks of WG, carrying the running prefix.
    void spine_kernel();

    void downsweep_kernel(const declare_input& input);

  private:
    /// Scans `value` across the group in kiln_scan; returns where the results lie.
    std::string group_scan(const std::string& value);

    /// Full tiles through `fast` (where not empty), a part's last tile through `guarded`.
    void by_fullness(const std::function<void()>& fast, const std::function<void()>& guarded);

    /// Whether full tiles scan each work-item's items in unrolled loops (any fast tile access).
    bool unrolled_items() const;

    /// Whether full tiles load through 16-byte loads: asked for, and the input allows it.
    bool wide_input(const element_text& element) const;

    /// Results per 16-byte store of full tiles, or 1 for element stores: scalar values of 4 or
    /// 8 bytes, where asked for.
    std::size_t wide_store_lanes() const;

    /// Stream compaction staging its kept values, its counts held as flags.
    bool byte_counts(const element_text& element) const;

    /// A scattering input given as a flag and a payload, its tile split in two arrays.
    bool split_tile(const element_text& element) const;

    flag_storage flags_of(const element_text& element) const;

    /// Whether each work-item gathers its items' flags in one register word (kiln_my_flags),
    /// counts them at once and tests them from there when it stages its kept values. Split tiles
    /// read their flags where they use them: a register more across the look-back cost the
    /// reduce_by_key kernel 8 registers (32 to 40 at 128x16, ptxas -v for sm_90).
    bool register_flags(const element_text& element) const;

    /// The flag of a state word.
    std::string flag_of(const std::string& word) const;

    /// `value`: the value of tile k, whose state word has been read (and its flag seen).
    void read_value(const std::string& k, const std::string& word);

    /// Publishes `value` with `flag` (1: aggregate, 2: inclusive prefix) for this tile. Packed
    /// states are one 64-bit word, stored at once: no fence needed. Wider values are written
    /// first and the flag after them, behind a fence.
    void publish(const std::string& value, int flag);

    source_builder& b_;
    const scan_operation& op_;
    const algorithm_policy& policy_;
    std::string t_;
    bool exclusive_;
    bool scatter_;
    std::string scanned_at_;  // where the group scan left its results in kiln_scan
    std::string kept_type_;   // what staged scatters gather
};

}  // namespace kiln::detail
