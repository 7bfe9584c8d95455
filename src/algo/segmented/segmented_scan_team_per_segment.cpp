// The scan's GPU strategy for longer segments: a team of lanes per segment (a power of two, up
// to the whole group) walks it a tile of `lanes` elements at a time, scans each tile in local
// memory (Hillis and Steele's log-step scan) and adds the carry of the tiles before. Every
// team of a group runs as many tiles as the group's longest segment needs, so that all reach
// every barrier. Each lane reads its element before it writes the element's result, so y may
// be x. Long segments scan at a group's pace, one tile at a time: the single-pass look-back of
// kiln's scan family would spread them over groups (not done yet; docs/algorithms.md).
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* kernel_name = "kiln_segmented_scan_teams";

kernel_description team_kernel(const segmented_shape& shape) {
    kernel_description kernel(kernel_name);
    segment_slots(kernel, shape);
    return kernel;
}

std::string write(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = team_kernel(shape);
    const std::string& v = shape.value_type;
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      T = std::to_string(shape.team_lanes) + "u";
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(v, "kiln_tile", G);
    b.local_array("uint", "kiln_tiles", "1");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint lane = t % " + T + ";");
    b.line("const uint last_lane = t - lane + " + T + " - 1u;");
    b.line("const ulong s = (ulong)get_group_id(0) * (" + G + " / " + T + ") + t / " + T + ";");
    b.line("ulong begin = 0, end = 0;");
    b.open("if (s < segments)");
    emit_segment_bounds(b, shape, "s");
    b.close();
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
    b.line("kiln_tile[t] = i < end ? x[i] : identity;");
    b.local_barrier();
    b.open("for (uint shift = 1u; shift < " + T + "; shift *= 2u)");
    b.line("const " + v + " before = lane >= shift ? kiln_tile[t - shift] : identity;");
    b.local_barrier();
    b.line("kiln_tile[t] = " + input.combine(b, "before", "kiln_tile[t]") + ";");
    b.local_barrier();
    b.close();
    b.line("if (i < end) out[i] = " + input.combine(b, "carry", "kiln_tile[t]") + ";");
    b.line("carry = " + input.combine(b, "carry", "kiln_tile[last_lane]") + ";");
    // The next tile overwrites the tile only once every lane has read its last lane.
    b.local_barrier();
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_team_per_segment_scan(const queue& q, const segmented_input& input,
                                const segmented_plan& plan, const buffer<std::byte>& status,
                                const event& after) {
    const segmented_shape shape =
        segmented_shape_of(segmented_algorithm::inclusive_scan, input, plan);
    const algorithm_program& program = segmented_program(
        q.device(), shape, [&] { return std::vector{team_kernel(shape)}; },
        [&] { return write(shape, input); });
    return program.bind(bind_segments(program, kernel_name, input, status))
        .launch(q, plan.groups * shape.work_group_size, shape.work_group_size, {}, after);
}

}  // namespace kiln::detail
