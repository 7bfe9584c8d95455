// SPDX-License-Identifier: Apache-2.0
// The look-back state of single-pass kernels, as CUB's ScanTileState: where each tile's (or
// chunk's) state lives, how its flag and value are packed, and the code that publishes a state,
// reads one, waits for one and walks back over earlier ones. Every decoupled look-back goes
// through it: the scan family's tile kernels (both loops of scan/single_pass_lookback.cpp), its
// chained chunk kernel (scan/scan_chunks.cpp) and the radix sort's single pass
// (sort/radix_onesweep.cpp).
#pragma once

#include <functional>
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

    /// States of values of `value_type` (`components` of them in a vector type, else 1) packed
    /// as `packing` (which the value type must allow).
    lookback_state(std::string value_type, unsigned components, state_packing packing,
                   arrays names);

    /// The tile kernels' states, packed as `op` says: 64-bit words in scan_scratch_layout's
    /// states region, values kept apart in its aggregates and prefixes.
    static lookback_state for_tiles(const scan_operation& op);
    /// The tile kernels' window states (scan/single_pass_lookback.cpp), packed as the tiles':
    /// words in scan_scratch_layout's window states region, values kept apart in its window
    /// aggregates and prefixes.
    static lookback_state for_windows(const scan_operation& op);
    /// The chunk kernels' states (chunk_scan_scratch_layout): 32-bit flags, values apart in
    /// kiln_totals and kiln_prefixes.
    static lookback_state for_chunks(const scan_operation& op);
    /// Counts below 2^30, each packed with its flag in a 32-bit word of `states`.
    static lookback_state for_counts(std::string states);
    /// Declares the kernel's pointer to the states and, where values are kept apart and their
    /// offsets given, to their aggregates and prefixes, at these offsets (text) into `kiln_temp`.
    struct offsets {
        std::string states, aggregates, prefixes;
    };
    void declare_pointers(source_builder& b, const offsets& at) const;

    /// Publishes `value` with `flag` (1: aggregate, 2: inclusive prefix) as the state at `index`.
    /// Packed states are one word, stored at once: no fence needed. Values kept apart are
    /// written first and the flag after them, released.
    void publish(source_builder& b, const std::string& index, const std::string& value,
                 int flag) const;
    /// Publishes `value` as an inclusive prefix where `is_prefix` holds, else as an aggregate:
    /// one store either way, so packed states only.
    void publish_prefix_if(source_builder& b, const std::string& is_prefix,
                           const std::string& index, const std::string& value) const;

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
    /// The same for a word read earlier, whose flag is in `flag`: reads again until state `k`
    /// holds its inclusive prefix (flag 2).
    void poll_until_prefix(source_builder& b, const std::string& k) const;
    /// Declares `word` (from `first_read`, state `k`'s word as read earlier) and `flag`, reads
    /// again while it is unpublished, then declares `value`.
    void read_once_published(source_builder& b, const std::string& k,
                             const std::string& first_read) const;

    /// A serial walk back: `counter`, of `counter_type`, counts down from `from` over the states
    /// before it, and `index(k)` is the index of the state that `k` names.
    struct walk {
        std::string counter_type, counter, from;
        std::function<std::string(const std::string& k)> index;
    };
    /// Visits the states `w` walks over, nearest first, each once it is published, and stops
    /// after the first inclusive prefix: `fold(value)` writes the statements that fold the
    /// state's value (text) into the caller's running value.
    void walk_back(source_builder& b, const walk& w,
                   const std::function<void(const std::string& value)>& fold) const;

  private:
    /// The bits of `flag` in a packed word.
    std::string flag_bits(int flag) const;
    /// `value` as the bits beside the flag in a packed word.
    std::string packed_value(const std::string& value) const;
    /// The value in packed word `word`, as one expression.
    std::string value_in(const std::string& word) const;
    /// With `flag` declared: waits until state `k`'s flag is published, acquired.
    void acquire_until_published(source_builder& b, const std::string& k) const;
    /// The value of state `k`, published with `flag`.
    std::string published_value(const std::string& k) const;

    std::string value_type_;
    unsigned components_;
    state_packing packing_;
    arrays names_;
};

}  // namespace kiln::detail
