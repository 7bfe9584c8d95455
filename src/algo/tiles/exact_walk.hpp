// SPDX-License-Identifier: Apache-2.0
// A work-item's walk of its run of elements from an exact state (reproducible mode,
// docs/reproducibility.md), writing every element's prefix rounded once: written once for the
// reproducible scan's tiles and the segmented module's reproducible scan. Doubles walk the exact
// accumulator (kiln_exact_add, then kiln_exact_round of its state). Floats walk a double-double
// first and keep its float where the prefix, within the walk's error bound, lies strictly between
// that float's midpoints; ties, near-ties, zeros, overflow and elements that would raise the bins
// send the walk to the exact accumulator, caught up from where it last left it, for one element,
// after which the walk takes the fast path again from the accumulator's state.
#pragma once

#include <functional>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {

/// Where a walk's run lies and how it reads and writes it (kernel texts).
struct exact_walk_run {
    /// The index type and the run's first element and end.
    std::string index_type = "uint", first, last;
    /// The element at index `i`, as a double.
    std::function<std::string(const std::string& i)> element;
    /// The statement writing `value` as element `j`'s prefix.
    std::function<std::string(const std::string& j, const std::string& value)> store;
    /// Whether elements stay readable after their prefixes are written (false where they may be
    /// the same memory): then the exact accumulator catches up only when the fast path fails;
    /// otherwise it takes every element beside the fast path.
    bool rereadable = true;
};

/// Lines that set the accumulator kiln_acc (declared) to the state `prefix` (a long4 text) and
/// walk `run`, writing each element's inclusive prefix, or (exclusive) the prefix before it, as
/// a double (double_values) or a float, rounded once.
void emit_exact_walk(source_builder& b, const exact_walk_run& run, const std::string& prefix,
                     bool double_values, bool exclusive);

}  // namespace kiln::detail
