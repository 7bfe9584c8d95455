// The GPU strategy for longer segments: a team of lanes per segment (a power of two, up to the
// whole group), the lanes reading the segment by their stride so that neighbouring lanes load
// neighbouring elements, then folding their results in local memory (CUB's warp-per-segment
// for medium segments, block-per-segment for long ones). The plan sizes the teams from the
// segments' mean length.
#include <string>

#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* kernel_name = "kiln_segmented_reduce_teams";

kernel_description team_kernel(const segmented_shape& shape) {
    kernel_description kernel(kernel_name);
    segment_slots(kernel, shape);
    return kernel;
}

std::string write(const segmented_shape& shape, const segmented_input& input) {
    const kernel_description kernel = team_kernel(shape);
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      T = std::to_string(shape.team_lanes) + "u";
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array(shape.value_type, "kiln_partials", G);
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint lane = t % " + T + ";");
    b.line("const ulong s = (ulong)get_group_id(0) * (" + G + " / " + T + ") + t / " + T + ";");
    // Teams past the last segment fold nothing but still reach every barrier.
    b.line("ulong begin = 0, end = 0;");
    b.open("if (s < segments)");
    emit_segment_bounds(b, shape, "s");
    b.close();
    emit_fold(b, shape, input, "begin + lane", T);
    b.line("kiln_partials[t] = acc;");
    b.local_barrier();
    b.open("for (uint width = " + T + " / 2u; width > 0u; width /= 2u)");
    b.line("if (lane < width) kiln_partials[t] = " +
           input.combine(b, "kiln_partials[t]", "kiln_partials[t + width]") + ";");
    b.local_barrier();
    b.close();
    b.line("if (lane == 0u && s < segments) out[s] = kiln_partials[t];");
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_team_per_segment(const queue& q, const segmented_input& input, const segmented_plan& plan,
                           const buffer<std::byte>& status, const event& after) {
    const segmented_shape shape = segmented_shape_of(segmented_algorithm::reduce, input, plan);
    const algorithm_program& program = segmented_program(
        q.device(), shape, [&] { return std::vector{team_kernel(shape)}; },
        [&] { return write(shape, input); });
    return program.bind(bind_segments(program, kernel_name, input, status))
        .launch(q, plan.groups * shape.work_group_size, shape.work_group_size, {}, after);
}

}  // namespace kiln::detail
