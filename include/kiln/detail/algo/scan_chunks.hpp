// SPDX-License-Identifier: Apache-2.0
// The scan's CPU strategy: one work-item per chunk of consecutive elements.
//
// CPU devices run a work-group's items one after another on one core, so the tile kernels'
// barriers, local-memory group scans and thousands of small groups cost more there than the
// scan itself. Here each chunk (scan_policy::chunk_bytes of values, which a core's cache
// holds) is one work-group of one work-item that scans it in a plain loop, then combines the
// prefix of the chunks before it with its results in a second loop over the same elements, still
// in its cache, which the device compiler vectorises:
//
//   kiln_chunk_scan_chained  (n, [out], temp, has_carry, carry, input...): one pass. Chunks take
//       tickets as they start and each waits only for chunks that took earlier tickets, through
//       a flag per chunk (1: its own total is published, 2: its inclusive prefix is): devices
//       whose started groups keep running (scan_tuning.hpp's plan_schedule).
//   kiln_chunk_scan_local    (n, [out], temp, has_carry, carry, input...) then
//   kiln_chunk_scan_fix      (n, [out], temp, has_carry, carry, input...): two passes anywhere
//       else; the second folds the totals of the chunks before its own.
//
// A program holds the kernels of its plan's schedule only (scan_policy::schedule).
//
// Same parameters as the tile kernels (scan_kernel_description), so the host binds them alike,
// and the total of the part lands at the tile layout's total_offset().
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/runtime/device.hpp>
#include <string>
#include <vector>

namespace kiln::detail {

/// Elements per chunk for values of `value_bytes` under `policy` (chunk_bytes > 0): a multiple
/// of 16, at least 16.
std::size_t chunk_elements(const scan_policy& policy, std::size_t value_bytes);

/// The chunk kernels' scratch for `chunks` chunks of values of `value_bytes`: the ticket
/// counter, the part's total, a flag per chunk, then each chunk's total and each chunk's
/// inclusive prefix. Only the counter and the flags need zeroing. Computed over Number as
/// scan_scratch_layout is: std::size_t for the host's allocation, ulong_text for the kernels'
/// pointers.
template <class Number = std::size_t>
struct chunk_scan_scratch_layout {
    Number chunks;
    std::size_t value_bytes;

    static constexpr std::size_t ticket_offset() { return 0; }
    static constexpr std::size_t total_offset() { return scan_scratch_layout<>::total_offset(); }
    static constexpr std::size_t flags_offset() { return 128; }
    static constexpr std::size_t alignment = 16;
    static Number aligned(const Number& bytes) {
        return (bytes + (alignment - 1)) / alignment * alignment;
    }
    Number totals_offset() const {
        return Number(flags_offset()) + aligned(chunks * std::size_t{4});
    }
    Number prefixes_offset() const { return totals_offset() + aligned(chunks * value_bytes); }
    Number bytes() const { return prefixes_offset() + aligned(chunks * value_bytes); }
    Number zeroed_bytes() const { return totals_offset(); }
};

/// The chunk kernels, which take the tile kernels' parameters (scan_kernel_description).
namespace chunk_scan_kernel {
inline constexpr const char* chained = "kiln_chunk_scan_chained";
inline constexpr const char* local = "kiln_chunk_scan_local";
inline constexpr const char* fix = "kiln_chunk_scan_fix";
}  // namespace chunk_scan_kernel
/// The chunk kernels `schedule` runs, in launch order (single_pass: the chained one;
/// multi_pass: local, then fix).
std::vector<const char*> chunk_scan_kernel_names(scan_schedule schedule);
/// The chunk kernels of a program for `op` under `schedule` (`scatter`: a scattering program).
std::vector<kernel_description> chunk_scan_kernels(const scan_operation& op, bool scatter,
                                                   scan_schedule schedule);

// Each program below holds the kernels of `schedule` only (chunk_scan_kernel_names).

/// A scan's chunk kernels for chunks of `chunk` elements, element by element.
std::string chunk_scan_program_source(const scan_operation& op,
                                      const declare_input<element_input>& input, std::size_t chunk,
                                      scan_schedule schedule, bool exclusive);

/// Whether scans under `op` may walk chunks by vectors of `lanes` (scan_policy::chunk_lanes):
/// lanewise operations on scalars, 2 to 16 lanes.
bool chunk_lanes_apply(const scan_operation& op, std::size_t lanes);

/// The chunk kernels of a scan walking each chunk by vectors of `lanes`
/// (scan_chunk_lanes.cpp) where chunk_lanes_apply: a first loop only reduces the chunk, and after
/// the look-back a second one scans it again vector by vector, in registers, and writes `out`.
std::string chunk_lane_scan_program_source(const scan_operation& op,
                                           const declare_input<element_input>& input,
                                           std::size_t chunk, scan_schedule schedule,
                                           bool exclusive, std::size_t lanes);

/// The kernel parameters through which stream compaction's programs write their kept elements
/// (compaction.hpp declares them): element r of the part (counted from its first) goes to
/// out[r] while r < capacity.
struct compaction_outputs {
    static constexpr const char* out = "kiln_out";
    static constexpr const char* capacity = "kiln_capacity";
};

/// Stream compaction's chunk kernels writing at a cursor without branches
/// (compaction_chunks.cpp), over `count` (the counts' sum): the input's kept_value is what is
/// written through compaction_outputs' parameters.
std::string compaction_chunk_program_source(const scan_operation& count,
                                            const declare_input<compaction_input>& input,
                                            std::size_t chunk, scan_schedule schedule);
/// Stream compaction's chunk kernels writing by vectors of 8 at a cursor
/// (compaction_vector_chunks.cpp): each vector's kept elements put first by a permutation from a
/// table, the vector stored whole, and the elements after the last whole vector that fits the
/// chunk's results and the capacity written one by one behind a branch.
std::string compaction_vector_chunk_program_source(const scan_operation& count,
                                                   const declare_input<compaction_input>& input,
                                                   std::size_t chunk, scan_schedule schedule);
/// Stream compaction's chunk kernels writing element by element, behind a branch: a first loop
/// over the chunk counts its kept elements, and after the look-back a second one evaluates them
/// again and runs the input's scatter code per element with the tile kernels' names (x, running,
/// before, had, idx).
std::string compaction_scatter_chunk_program_source(const scan_operation& count,
                                                    const declare_input<compaction_input>& input,
                                                    std::size_t chunk, scan_schedule schedule);

/// `combine(a, b)` of an operation on plain values, as text (operation_traits::combine).
using value_combine =
    std::function<std::string(source_builder&, const std::string&, const std::string&)>;

/// reduce_by_key's chunk kernels, over `pairs` (segment_operation: runs begun, the open run's
/// value) for the look-back between chunks. Of the input they read the value, the keys and, for
/// a chunk's first element, the head. Within a chunk the loops compare neighbouring keys, count
/// runs and combine plain values with `combine`, and write each run's key and value at the run's
/// head through run_outputs' parameters (the last run's value at the part's end).
std::string reduce_by_key_chunk_program_source(const scan_operation& pairs,
                                               const value_combine& combine,
                                               const declare_input<reduce_by_key_input>& input,
                                               std::size_t chunk, scan_schedule schedule);
/// The same for integer values under a sum, the finish walking each chunk by vectors of `lanes`
/// (2 to 16; reduce_by_key_lane_chunks.cpp): prefix sums of each vector in registers, each run's
/// sum their difference, written at the heads.
std::string reduce_by_key_prefix_chunk_program_source(
    const scan_operation& pairs, const value_combine& combine,
    const declare_input<reduce_by_key_input>& input, std::size_t chunk, scan_schedule schedule,
    std::size_t lanes);

}  // namespace kiln::detail
#pragma GCC visibility pop
