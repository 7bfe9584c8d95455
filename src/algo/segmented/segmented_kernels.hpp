// What the segmented module's strategies share: the shape of a program (its key), the slots
// every kernel takes, a segment's bounds with the check of its offsets, a lane's fold of its
// elements as kernel text, and the program of a shape with the binding of those slots.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/algo/segmented.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>
#include <vector>

#include "segmented_plan.hpp"

namespace kiln::detail {

/// What a segmented program computes per segment.
enum class segmented_algorithm { reduce, inclusive_scan };

/// Everything a segmented program's text depends on.
struct segmented_shape {
    segmented_algorithm algorithm = segmented_algorithm::reduce;
    segmented_strategy strategy = segmented_strategy::team_per_segment;
    std::string value_type = "float", offset_type = "uint";
    std::size_t value_bytes = 4;  ///< value_type's, which it determines
    /// The operation's name (segmented_input::operation).
    std::string operation = "sum";
    /// The GPU strategies' group size and lanes per segment; every strategy's accumulators per
    /// work-item.
    std::size_t work_group_size = 1, team_lanes = 1, unroll = 1;

    /// "segmented reduce team_per_segment float offsets uint sum g256 t32 u4", for the program
    /// cache.
    std::string key() const;
};
segmented_shape segmented_shape_of(segmented_algorithm algorithm, const segmented_input& input,
                                   const segmented_plan& plan);

/// Adds the slots every segmented kernel takes: x, offsets, out (y for scans; it may be x),
/// status (the first segment
/// whose offsets are bad, atomic_min'd), identity, n (x's elements) and segments.
void segment_slots(kernel_description& kernel, const segmented_shape& shape);

/// Lines that set `begin` and `end` (ulongs the caller declared 0) to segment `s`'s bounds where
/// its offsets are good (offsets[0] is 0, offsets[s] <= offsets[s + 1] <= n), else report s in
/// status and leave the segment empty, so that bad offsets never index x. Every segment checks its
/// own pair, so that a launch that visits every segment checks them all.
void emit_segment_bounds(source_builder& b, const segmented_shape& shape, const std::string& s);

/// Lines that declare `acc` as the fold, by the input's operation from the identity, of the
/// elements first, first + step, ... below end (kernel expressions): shape.unroll accumulators,
/// whose loads are all issued before any is combined, then combined into one.
void emit_fold(source_builder& b, const segmented_shape& shape, const segmented_input& input,
               const std::string& first, const std::string& step);

/// Lines that write the inclusive scan of the elements begin .. end - 1 to out, one after
/// another: each element is read before its result is written, so out may be x.
void emit_sequential_scan(source_builder& b, const segmented_shape& shape,
                          const segmented_input& input);

/// The program of `kernels`, written by `write` on a miss, under shape.key().
const algorithm_program& segmented_program(
    const device& dev, const segmented_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write);
/// `kernel` with segment_slots bound; `status` is a uint the caller set to UINT_MAX.
kernel_binding bind_segments(const algorithm_program& program, const std::string& kernel,
                             const segmented_input& input, const buffer<std::byte>& status);

/// Each strategy, a file each, reduces every segment into out on `q` after `after`, and
/// returns its last event.
event run_thread_per_segment(const queue& q, const segmented_input& input,
                             const segmented_plan& plan, const buffer<std::byte>& status,
                             const event& after);
event run_team_per_segment(const queue& q, const segmented_input& input, const segmented_plan& plan,
                           const buffer<std::byte>& status, const event& after);
event run_cpu_chunks_segmented(const queue& q, const segmented_input& input,
                               const segmented_plan& plan, const buffer<std::byte>& status,
                               const event& after);

/// The scan's strategies, a file each: every segment's inclusive scan into out.
event run_thread_per_segment_scan(const queue& q, const segmented_input& input,
                                  const segmented_plan& plan, const buffer<std::byte>& status,
                                  const event& after);
event run_team_per_segment_scan(const queue& q, const segmented_input& input,
                                const segmented_plan& plan, const buffer<std::byte>& status,
                                const event& after);
event run_cpu_chunks_segmented_scan(const queue& q, const segmented_input& input,
                                    const segmented_plan& plan, const buffer<std::byte>& status,
                                    const event& after);

}  // namespace kiln::detail
