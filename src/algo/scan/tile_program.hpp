// SPDX-License-Identifier: Apache-2.0
// What the scan family's tile kernels share, and the interface between an algorithm's tiles and
// the strategies that schedule them.
//
// A program holds the kernels of the one strategy its policy's schedule names (the plan chose it
// for the device): the single pass with decoupled look-back (single_pass_lookback.cpp) or
// reduce-then-scan (reduce_then_scan.cpp). Each strategy writes its kernels' frame and the prefixes
// between tiles, and asks the algorithm's tile_algorithm (scan_tiles.cpp, compaction_tiles.cpp,
// reduce_by_key_tiles.cpp) to load and scan a tile and to store it given its prefix.
#pragma once

#include <functional>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/detail/source_builder.hpp>
#include <memory>
#include <string>

#include "algo/lookback_state.hpp"
#include "algo/tiles/tile_load.hpp"

namespace kiln::detail {

/// One algorithm's tiles, one work-group per tile.
class tile_algorithm {
  public:
    virtual ~tile_algorithm() = default;
    /// Whether the kernels take an `out` array (scans) or write through the input's own
    /// parameters (scattering programs).
    virtual bool writes_out() const = 0;
    /// Declares the input's kernel parameters (after the kernel's own) and keeps its text for the
    /// kernel being written.
    virtual void declare_parameters(source_builder& b) = 0;
    /// The local arrays (OpenCL C wants them at kernel scope), then `lid`.
    virtual void declare_arrays() = 0;
    /// Loads tile `tile` and scans it: leaves `base`, `valid`, `first`, `count` and `aggregate`,
    /// the tile's combination.
    virtual void load_and_scan() = 0;
    /// Writes the tile's results given its prefix (tile_has_prefix, tile_prefix).
    virtual void store() = 0;
};

/// The frame every tile kernel of one program shares: the builder, the operation and policy,
/// the constants, the pointers into the scratch (scan_scratch_layout), and the steps that more
/// than one algorithm's tiles take.
class tile_program {
  public:
    tile_program(source_builder& b, const scan_operation& op, const scan_policy& policy);

    source_builder& b;
    const scan_operation& op;
    const scan_policy& policy;
    /// The scan's value type.
    const std::string t;
    /// The tiles' states: each tile's aggregate.
    const lookback_state state;
    /// The single pass's window states: each window's aggregate, then its inclusive prefix.
    const lookback_state windows;

    std::string combine(const std::string& x, const std::string& y);

    /// Kernel header (scan_kernel_description, then `input`'s parameters where given: kernels
    /// without an input, the spine, take no `out` either) and the pointers into the scratch
    /// lease.
    void begin(const char* name, tile_algorithm* input);

    /// Scans `value` across the group in kiln_scan; returns where the results lie.
    std::string group_scan(const std::string& value);

    /// Full tiles through `fast` (where not empty), a part's last tile through `guarded`.
    void by_fullness(const std::function<void()>& fast, const std::function<void()>& guarded);
    /// Whether full tiles scan each work-item's items in unrolled loops (any fast tile access).
    bool unrolled_items() const;
    /// What the tile parts (algo/tiles/) write into: this kernel's builder and its loops.
    tile_frame frame() { return {b, unrolled_items()}; }

    /// `base` (the tile's first index) and `valid` (its elements).
    void tile_bounds();
    /// `first` (this work-item's first item in the tile) and `count` (its items).
    void item_bounds();
    /// Folds this work-item's items into `acc`: `first` its first item's text (the tile's first
    /// where it has none), `item_j` item j's.
    void scan_items(const std::string& first, const std::string& item_j);
    /// `aggregate`, the tile's combination, from the group scan's results at `scanned`.
    void aggregate(const std::string& scanned);
    /// `running` and `have`: what comes before this work-item's first item, from the tile's
    /// prefix and the group scan's results at `scanned`.
    void running_prefix(const std::string& scanned);
    /// The per-element scatter of compaction and reduce_by_key: from running_prefix, each of the
    /// work-item's `count` items gets its value `x` (`item_j`, item j's text), `before` (the
    /// inclusive result before it, where `had`) and `running` (its own), then `scatter` writes
    /// with `idx` its index in the input; `in_item` first declares what the scatter reads.
    void scatter_items(const std::string& scanned, const std::string& item_j,
                       const std::function<void()>& in_item,
                       const std::function<void(source_builder&)>& scatter);
};

/// Makes an algorithm's tiles within a program.
using tile_algorithm_maker = std::function<std::unique_ptr<tile_algorithm>(tile_program&)>;
/// The kernels of policy.schedule's strategy (scan_kernel_names) for one algorithm.
std::string tile_program_source(const scan_operation& op, const scan_policy& policy,
                                const tile_algorithm_maker& make);

// The strategies.
/// kiln_scan_lookback: one pass, each tile waiting for the prefix of the tiles before it.
void write_single_pass_kernel(tile_program& program, tile_algorithm& algorithm);
/// kiln_scan_reduce, kiln_scan_spine and kiln_scan_downsweep: three passes, no waiting.
void write_reduce_then_scan_kernels(tile_program& program, tile_algorithm& algorithm);

// The algorithms' tiles.
std::unique_ptr<tile_algorithm> scan_tiles(tile_program& program,
                                           const declare_input<scan_input>& input, bool exclusive);
std::unique_ptr<tile_algorithm> compaction_tiles(tile_program& program,
                                                 const declare_input<compaction_input>& input);
std::unique_ptr<tile_algorithm> reduce_by_key_tiles(
    tile_program& program, const declare_input<reduce_by_key_input>& input);

}  // namespace kiln::detail
