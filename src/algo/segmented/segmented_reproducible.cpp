// SPDX-License-Identifier: Apache-2.0
// The reproducible strategy (docs/reproducibility.md): floating-point sums of segments whose bits
// depend on nothing but the segments' values. A team of lanes per segment, sized by the plan
// (plan_reproducible_segments: a power of two for the mean segment, one lane on CPUs); each lane
// adds its elements to an exact accumulator (include/kiln/reproducible_reducers.hpp), whose
// states add to the same value in any grouping, so neither the team's size nor the lanes' shares
// show in the result:
// - reduce: the lanes read the segment by their stride, fold their states as a tree in local
//   memory, and the first lane rounds the team's state once into out[s];
// - scan: each lane takes a run of consecutive elements of the segment, the team scans the runs'
//   states (Hillis and Steele's log-step scan in local memory), and each lane walks its run again
//   from the runs' prefix before it, rounding every element's prefix once (emit_exact_walk:
//   floats through a certified double-double). A lane reads its element before it writes the
//   element's result, and no lane reads another's, so y may be x.
// Rounding on the device (kiln_exact_round) is the host's rounding of kiln::sum, so a segment's
// sum has kiln::sum's bits; a sum beyond the exact accumulator's range (2^973) is NaN.
#include <cstddef>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <vector>

#include "algo/tiles/exact_walk.hpp"
#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

/// Elements each lane of the reduction loads before it adds them at once.
constexpr std::size_t added_at_once = 4;

std::string combine(const std::string& a, const std::string& b) {
    return "kiln_exact_sum_combine(" + a + ", " + b + ")";
}

/// Text of the state `state` rounded once to the values' type.
std::string rounded(const segmented_shape& shape, const std::string& state) {
    return shape.value_bytes == 8 ? "kiln_exact_round(" + state + ", 53, -1022)"
                                  : "(float)kiln_exact_round(" + state + ", 24, -126)";
}

void write_reduce_body(source_builder& b, const segmented_shape& shape, const std::string& T) {
    b.line("kiln_exact_accumulator kiln_acc = kiln_exact_start();");
    b.line("ulong i = begin + lane;");
    std::vector<std::string> values;
    for (std::size_t u = 0; u < added_at_once; ++u)
        values.push_back("(double)x[i + " + std::to_string(u) + "u * " + T + "]");
    b.open("for (; i + " + std::to_string(added_at_once - 1) + "u * " + T +
           " < end; i += " + std::to_string(added_at_once) + "u * " + T + ")");
    b.line(exact_sum_add_several(b, "kiln_acc", values) + ";");
    b.close();
    b.line("for (; i < end; i += " + T + ") kiln_exact_add(&kiln_acc, (double)x[i]);");
    if (shape.team_lanes == 1) {
        b.line("if (s < segments) out[s] = " + rounded(shape, "kiln_exact_state(&kiln_acc)") + ";");
        return;
    }
    b.line("kiln_states[t] = kiln_exact_state(&kiln_acc);");
    b.local_barrier();
    b.open("for (uint width = " + T + " / 2u; width > 0u; width /= 2u)");
    b.line("if (lane < width) kiln_states[t] = " +
           combine("kiln_states[t]", "kiln_states[t + width]") + ";");
    b.local_barrier();
    b.close();
    b.line("if (lane == 0u && s < segments) out[s] = " + rounded(shape, "kiln_states[t]") + ";");
}

void write_scan_body(source_builder& b, const segmented_shape& shape, const std::string& T) {
    b.line("const ulong kiln_share = (end - begin + " + T + " - 1u) / " + T + ";");
    b.line("const ulong kiln_first = min(begin + lane * kiln_share, end);");
    b.line("const ulong kiln_last = min(kiln_first + kiln_share, end);");
    b.line("kiln_exact_accumulator kiln_acc = kiln_exact_start();");
    b.line("long4 kiln_prefix = (long4)(0);");
    if (shape.team_lanes > 1) {
        b.line(
            "for (ulong i = kiln_first; i < kiln_last; ++i) kiln_exact_add(&kiln_acc, "
            "(double)x[i]);");
        b.line("kiln_states[t] = kiln_exact_state(&kiln_acc);");
        b.local_barrier();
        b.open("for (uint shift = 1u; shift < " + T + "; shift *= 2u)");
        b.line("const long4 kiln_before = lane >= shift ? kiln_states[t - shift] : (long4)(0);");
        b.local_barrier();
        b.line("kiln_states[t] = " + combine("kiln_before", "kiln_states[t]") + ";");
        b.local_barrier();
        b.close();
        b.line("if (lane > 0u) kiln_prefix = kiln_states[t - 1u];");
    }
    emit_exact_walk(
        b,
        {.index_type = "ulong",
         .first = "kiln_first",
         .last = "kiln_last",
         .element = [](const std::string& i) { return "(double)x[" + i + "]"; },
         .store = [](const std::string& j,
                     const std::string& value) { return "out[" + j + "] = " + value + ";"; },
         .rereadable = false},
        "kiln_prefix", shape.value_bytes == 8, false);
}

std::string reproducible_segments_source(const segmented_shape& shape, const std::string& name) {
    const kernel_description kernel = segmented_kernel(name, shape);
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      T = std::to_string(shape.team_lanes) + "u";
    source_builder b;
    define_exact_rounding(b);
    b.begin_kernel(kernel.name(), shape.work_group_size);
    kernel.declare(b);
    b.begin_body();
    if (shape.team_lanes > 1) b.local_array("long4", "kiln_states", G);
    emit_team_segment(b, shape, G, T);
    if (shape.algorithm == segmented_algorithm::reduce)
        write_reduce_body(b, shape, T);
    else
        write_scan_body(b, shape, T);
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_reproducible_segments(const segmented_run& run) {
    return run_in_groups(run, "reproducible",
                         [](const segmented_shape& shape, const std::string& name) {
                             return reproducible_segments_source(shape, name);
                         });
}

}  // namespace kiln::detail
