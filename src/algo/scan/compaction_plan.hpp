// SPDX-License-Identifier: Apache-2.0
// Where stream compaction (copy_if, unique) and reduce_by_key put their results, and how unique
// compares a part's first key: planned from the layouts and the counting scan's plan alone, so
// that tests write them by hand.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <string>

namespace kiln::detail {

/// The way an algorithm's results reach its output.
enum class output_route {
    /// The kernels write the output itself.
    direct,
    /// Into scratch on the output's device, copied into the output there once the part has read
    /// its input: where the input reads the output (in place), a tile would overwrite elements
    /// that later tiles still read.
    through_scratch,
    /// Each part into scratch on its device, placed through the host once every part has read
    /// its input: several parts, or an output that is split or elsewhere.
    through_host,
};
std::string to_string(output_route route);

/// What the route depends on.
struct output_route_input {
    /// The parts the algorithm runs in (where its input lies).
    std::size_t parts = 1;
    /// The most parts an output has, and whether every output lies on the one part's device.
    std::size_t output_parts = 1;
    bool output_on_part_device = true;
    /// Whether the input reads an output.
    bool input_reads_output = false;
};
output_route plan_output_route(const output_route_input& input);

/// How one part of kiln::unique runs.
struct unique_plan {
    /// Its counting scan.
    compaction_plan counting{};
    /// Whether the host compares the part's first key with the key before the part. Chunk
    /// kernels do: their loops then walk the part's later keys, each beside the key before it,
    /// with plain vector loads, where a loop whose loads depend on whether idx is the first key
    /// gets masked loads (or gathers) from LLVM and counts several times slower. Tiles compare
    /// the first key themselves, so that the kernels GPUs run stay as they were.
    bool heads_on_host = false;
    /// direct: the kernels compact the keys in place (compaction_input::in_place), which the
    /// chained pass of the chunks by vectors and the staged tiles of decoupled look-back do, on an
    /// unsplit vector; else through scratch.
    output_route route = output_route::through_scratch;
    /// The program cache's key: the counting plan's, " in place" where the route is direct.
    std::string key() const;
};
/// For a part of a vector in `parts` parts, on a device whose chunk kernels may run their chained
/// pass (chunk_groups_make_progress) or not.
unique_plan plan_unique(const compaction_plan& counting, std::size_t parts,
                        bool chunk_groups_progress);

}  // namespace kiln::detail
