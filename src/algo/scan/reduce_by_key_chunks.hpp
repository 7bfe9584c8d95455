// SPDX-License-Identifier: Apache-2.0
// reduce_by_key's loops in the chunk kernels (scan_chunks.hpp), element by element
// (reduce_by_key_chunks.cpp); its loops by vectors (reduce_by_key_lane_chunks.cpp) share their
// reduce and walk the elements after the last whole vector with them.
#pragma once

#include <kiln/detail/algo/scan_chunks.hpp>
#include <string>

#include "scan_chunk_writer.hpp"

namespace kiln::detail {

class run_loops : public chunk_loops<reduce_by_key_input> {
  public:
    run_loops(const scan_operation& pairs, const value_combine& combine)
        : pairs_(pairs), combine_(combine) {}

    bool writes_out() const override { return false; }

    /// Counts the chunk's heads into kiln_runs and combines the values since its last head into
    /// kiln_open: the pair kiln_segment(runs, open), which the look-back combines.
    void reduce(source_builder& b, const reduce_by_key_input& input) const override;

    /// From the runs and open value before the chunk, writes each run's key at its head, the run
    /// before's value there too, and the last run's value at the part's end.
    void finish(source_builder& b, const reduce_by_key_input& input) const override;

  protected:
    /// reduce's loops: declares kiln_runs (the chunk's heads) and kiln_open (the values combined
    /// since its last head, or since its first element where it has none).
    virtual void runs_and_open(source_builder& b, const reduce_by_key_input& input) const;
    /// Declares kiln_runs, 1 where the chunk's first element is a head (the input's head, which
    /// knows about the chunks and parts before), else 0.
    void first_head(source_builder& b, const reduce_by_key_input& input) const;
    /// Declares kiln_key_before and kiln_key_at (keys at `at` - 1 and `at`, each in its own
    /// scope, since the input's statements declare names) and returns whether a run begins at
    /// `at` (not the chunk's first element).
    static std::string head_at(source_builder& b, const reduce_by_key_input& input,
                               const std::string& at);
    /// Sets kiln_open to the values of elements `from`.. end - 1 combined.
    void open_from(source_builder& b, const reduce_by_key_input& input,
                   const std::string& from) const;
    /// finish's state: kiln_runs (runs begun), kiln_open (the open run's value) and kiln_had
    /// (whether a run is open) from the prefix, then the chunk's first element, whose head is
    /// the input's (it knows about the chunks and parts before), which leaves its key in
    /// kiln_previous.
    void open_runs(source_builder& b, const reduce_by_key_input& input) const;
    /// Elements `from`.. end - 1, each compared with kiln_previous, the key before `from`.
    void run_elements(source_builder& b, const reduce_by_key_input& input,
                      const std::string& from) const;
    /// Writes the part's last run's value where the chunk ends the part.
    void close_runs(source_builder& b) const;

    std::string combine(source_builder& b, const std::string& x, const std::string& y) const {
        return combine_(b, x, y);
    }

  private:
    /// Adds to kiln_runs the heads among elements `from`.. end - 1 (compared with the key before
    /// each).
    void count_heads(source_builder& b, const reduce_by_key_input& input,
                     const std::string& from) const;
    /// One element's step, after its statements, with kiln_x its value, kiln_key its key and
    /// kiln_head 1 where a run begins.
    void run_step(source_builder& b) const;

    const scan_operation& pairs_;
    const value_combine& combine_;
};

}  // namespace kiln::detail
