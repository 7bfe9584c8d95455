// The look-back state of the scan family's single-pass kernels, as CUB's ScanTileState: where
// each tile's (or chunk's) state lives in the scratch, how its flag and value are packed, and the
// code that publishes a state, reads one and waits for one. Every look-back of the family goes
// through it: the tile kernels' (both loops of single_pass_lookback.cpp) and the chained chunk
// kernel's (scan_chunks.cpp).
#pragma once

#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {

/// A state's flag is 0 until its owner publishes its aggregate (1), then its inclusive prefix
/// (2); the value is the aggregate or the prefix the flag names.
class lookback_state {
  public:
    /// The kernel's pointers: flag words of `word_type` (the packed value beside the flag where
    /// the packing allows), and the aggregates and prefixes where values are kept apart.
    struct arrays {
        std::string word_type, states, aggregates, prefixes;
    };

    /// States of values of `op` packed as `packing` (which op's value type must allow).
    lookback_state(const scan_operation& op, state_packing packing, arrays names);

    /// The tile kernels' states, packed as `op` says: 64-bit words in scan_scratch_layout's
    /// states region, values kept apart in its aggregates and prefixes.
    static lookback_state for_tiles(const scan_operation& op);
    /// The chunk kernels' states (chunk_scan_scratch_layout): 32-bit flags, values apart in
    /// kiln_totals and kiln_prefixes.
    static lookback_state for_chunks(const scan_operation& op);
    /// Declares the tile kernels' pointer to the states, at `layout`'s states offset.
    void declare_pointer(source_builder& b, const scan_scratch_layout<ulong_text>& layout) const;

    /// Publishes `value` with `flag` (1: aggregate, 2: inclusive prefix) as the state at `index`.
    /// Packed states are one 64-bit word, stored at once: no fence needed. Values kept apart are
    /// written first and the flag after them, released.
    void publish(source_builder& b, const std::string& index, const std::string& value,
                 int flag) const;

    // The tile kernels read states as volatile words, which skip GPUs' non-coherent L1.
    /// A volatile load of state word `k`.
    std::string load(const std::string& k) const;
    /// The flag of state word `word`.
    std::string flag_of(const std::string& word) const;
    /// Declares `value`, the value of state `k` whose word `word` has been read with its flag
    /// (`flag`) seen.
    void read_value(source_builder& b, const std::string& k, const std::string& word) const;
    /// With `word` and `flag` declared: reads state `k` until it is published.
    void poll_until_published(source_builder& b, const std::string& k) const;
    /// The same for a word read earlier, whose flag is in `flag`: reads again while it is 0.
    void poll_while_unpublished(source_builder& b, const std::string& k) const;

    // The chunk kernels read flags by acquire loads, the values apart after them.
    /// With `flag` declared: waits until state `k` is published.
    void acquire_until_published(source_builder& b, const std::string& k) const;
    /// The value of state `k`, published with `flag`.
    std::string published_value(const std::string& k) const;

  private:
    const scan_operation& op_;
    state_packing packing_;
    arrays names_;
};

}  // namespace kiln::detail
