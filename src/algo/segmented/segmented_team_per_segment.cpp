// The GPU strategy for medium segments: a team of lanes per segment (a power of two, up to the
// whole group; CUB's warp-per-segment, or block-per-segment where the team is the group). The
// plan sizes the teams from the segments' mean length. Both algorithms share the frame (each
// team's segment and bounds, every team reaching every barrier) and differ in the body:
// - reduce: the lanes read the segment by their stride, so that neighbouring lanes load
//   neighbouring elements, then fold their results in local memory;
// - scan: the team walks the segment a tile of `lanes` elements at a time, scans each tile in
//   local memory (Hillis and Steele's log-step scan) and adds the carry of the tiles before;
//   every team of a group runs as many tiles as the group's longest segment needs. Each lane
//   reads its element before it writes the element's result, so y may be x.
// A segment scans or reduces at one group's pace at most: long ones take flat_tiles.
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

void write_reduce_body(source_builder& b, const segmented_shape& shape,
                       const segmented_input& input, const std::string& T) {
    emit_fold(b, shape, input, "begin + lane", T);
    emit_team_fold(b, input, T);
    b.line("if (lane == 0u && s < segments) out[s] = kiln_partials[t];");
}

void write_scan_body(source_builder& b, const segmented_shape& shape, const segmented_input& input,
                     const std::string& T) {
    const std::string& v = shape.value_type;
    b.line("const uint last_lane = t - lane + " + T + " - 1u;");
    // The group's tile count: its longest segment's, so that every team reaches every barrier.
    b.line("if (t == 0u) kiln_tiles[0] = 0u;");
    b.local_barrier();
    b.line("if (lane == 0u) atomic_max(&kiln_tiles[0], (uint)((end - begin + " + T + " - 1u) / " +
           T + "));");
    b.local_barrier();
    b.line("const uint tiles = kiln_tiles[0];");
    b.line(v + " carry = identity;");
    b.open("for (uint tile = 0u; tile < tiles; ++tile)");
    b.line("const ulong i = begin + (ulong)tile * " + T + " + lane;");
    b.line("kiln_partials[t] = i < end ? x[i] : identity;");
    b.local_barrier();
    b.open("for (uint shift = 1u; shift < " + T + "; shift *= 2u)");
    b.line("const " + v + " before = lane >= shift ? kiln_partials[t - shift] : identity;");
    b.local_barrier();
    b.line("kiln_partials[t] = " + input.combine(b, "before", "kiln_partials[t]") + ";");
    b.local_barrier();
    b.close();
    b.line("if (i < end) out[i] = " + input.combine(b, "carry", "kiln_partials[t]") + ";");
    b.line("carry = " + input.combine(b, "carry", "kiln_partials[last_lane]") + ";");
    // The next tile overwrites the tile only once every lane has read its last lane.
    b.local_barrier();
    b.close();
}

std::string team_per_segment_source(const segmented_shape& shape, const segmented_input& input,
                                    const std::string& name) {
    const kernel_description kernel = segmented_kernel(name, shape);
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      T = std::to_string(shape.team_lanes) + "u";
    const bool reduce = shape.algorithm == segmented_algorithm::reduce;
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(shape.value_type, "kiln_partials", G);
    if (!reduce) b.local_array("uint", "kiln_tiles", "1");
    emit_team_segment(b, shape, G, T);
    if (reduce)
        write_reduce_body(b, shape, input, T);
    else
        write_scan_body(b, shape, input, T);
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_team_per_segment(const segmented_run& run) {
    return run_in_groups(run, "teams", [&](const segmented_shape& shape, const std::string& name) {
        return team_per_segment_source(shape, run.input, name);
    });
}

}  // namespace kiln::detail
