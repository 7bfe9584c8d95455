// SPDX-License-Identifier: Apache-2.0
// What the scan family's kernels read from their input, one description per algorithm: a scan's
// values (scan_input), stream compaction's kept elements (compaction_input) and reduce_by_key's
// keys and values (reduce_by_key_input). Each algorithm's writers (tile_program.hpp's tiles,
// scan_chunk_writer.hpp's chunk loops) read only their own; the parts they share, the tile
// loader among them, take element_input and wide_input.
//
// Texts are OpenCL C, evaluated inside the kernel with `idx` the element's index in the input.
#pragma once
#pragma GCC visibility push(default)

#include <functional>
#include <kiln/detail/element_inputs.hpp>
#include <kiln/detail/source_builder.hpp>
#include <string>
#include <vector>

namespace kiln::detail {

/// A scan's input: the values it scans, also as lanes of 16-byte loads where full tiles read
/// them so.
struct scan_input {
    element_input element{};
    wide_input wide{};
};

/// Stream compaction's input (copy_if, unique): whether each element is kept, counted by the
/// scan, and how a kept element is written.
struct compaction_input {
    /// The element's count, as the scan's type: 1 where it is kept, else 0.
    element_input keep{};
    /// The kept element's type and text, for the writers that write it themselves: tiles that
    /// stage their kept elements (scan_policy::staged_writes), chunks that write at a cursor
    /// (scan_policy::chunk_cursor_writes, chunk_vector_writes); compaction_outputs names their
    /// parameters.
    std::string kept_type{};
    std::string kept_value{};
    /// For the others: code run for each element, with `idx` its index, `x` its count and
    /// `running` its inclusive count, that writes it where kept.
    std::function<void(source_builder&)> scatter{};
    /// unique: where not empty, the element is kept where its kept_value differs from the one
    /// before it (what `keep` says element by element, for the other writers), and this text,
    /// 0 or 1, says whether the part's first element is kept. Tiles that stage their kept
    /// elements then read each one once (compaction_tiles.cpp).
    std::string first_kept{};
    /// Whether the output is the input itself (unique in place; with the part's first key kept
    /// on the host, output element r is key r + 1). Two writers run such a program, each reading
    /// every element of its chunk or tile before it publishes its count, so that none writes where
    /// another has still to read: the chained kernel of the chunks by vectors
    /// (compaction_vector_chunks.cpp), which stages the whole chunk, and the staged tiles of
    /// decoupled look-back, which hold their kept keys in local memory. A tile writes below its
    /// own end (a count never passes its index) once every tile before it has published, so only
    /// after they have read their keys; the one key of another tile that it reads, the last
    /// before it, is overwritten only where no key before it was dropped, and then by itself.
    bool in_place = false;
};

/// reduce_by_key's input: a scan of (runs begun, open run's value) pairs over keys and values.
/// The tiles keep each pair's head flag as a byte or bit beside its value, not as a pair, and
/// `pair(head, value)` rebuilds it where it is read.
struct reduce_by_key_input {
    /// The value at `idx`, of `value_type`, also as lanes of 16-byte loads where the tiles may
    /// keep runs in registers (scan_policy::register_runs).
    element_input value{};
    std::string value_type{};
    wide_input wide{};
    /// Whether the element at `idx` begins a run (0 or 1), knowing the parts before. Where the
    /// tile keeps runs in registers, or in the chunk kernels, only each work-item's or chunk's
    /// first element evaluates it, the others' heads coming from the keys.
    std::string head{};
    /// The keys' type and the text of the key at `idx`, which `scatter` reads as `kiln_key`
    /// (compilers sink the load into the branch that writes it).
    std::string key_type{};
    std::string key{};
    /// The keys' array, of which `key` is element `idx` read as it is (the keys' slot): what loops
    /// by vectors read with one load.
    std::string keys_array{};
    /// The scan's pair of a head and a value, as text.
    std::function<std::string(const std::string& head, const std::string& value)> pair{};
    /// Of a pair, as text: the runs it has begun (a ulong), and the open run's value (of
    /// value_type). The tiles write runs through them and run_outputs' parameters.
    std::function<std::string(const std::string& pair)> runs_begun{};
    std::function<std::string(const std::string& pair)> open_value{};
};

/// The kernel parameters through which reduce_by_key's programs write their runs: run r (counted
/// from the first run of the whole call) goes to slot r - run_base of the two arrays while
/// r < capacity. Declared by the input (reduce_by_key.hpp); the tile kernels
/// (reduce_by_key_tiles.cpp) and the chunk kernels (reduce_by_key_chunks.cpp) write them.
struct run_outputs {
    static constexpr const char* keys = "kiln_out_keys";
    static constexpr const char* values = "kiln_out_values";
    static constexpr const char* capacity = "kiln_capacity";
    static constexpr const char* run_base = "kiln_run_base";
};

/// Declares the input's kernel parameters (after the kernel's own) and returns its description,
/// Input being the algorithm's (scan_input, compaction_input, reduce_by_key_input); called once
/// per kernel that reads the input.
template <class Input>
using declare_input = std::function<Input(source_builder&)>;

}  // namespace kiln::detail
#pragma GCC visibility pop
