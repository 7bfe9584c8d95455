// SPDX-License-Identifier: Apache-2.0
// The GPU strategy: privatized histograms in local memory (CUB's DeviceHistogram, Merrill's
// block histograms), so that most atomics stay within the group.
//
// Each group zeroes `copies` copies of the histogram in local memory, walks the input by the
// grid's stride (16-byte loads where the input allows) counting each work-item's elements of a
// step into copy t % copies by a local atomic per run of equal bins (work-items of a warp spread
// over the copies, and runs merge equal bins, so that skewed data, all in one bin, contend
// less), then adds each bin of the copies' sum to counts by one global atomic. The plan
// launches a few groups per compute unit, so the merge costs groups x bins atomics whatever the
// input's size.
#include <string>

#include "histogram_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* local_atomics_kernel_name = "kiln_histogram_local";

kernel_description local_atomics_kernel(const histogram_shape& shape) {
    kernel_description kernel(local_atomics_kernel_name);
    kernel.global(shape.counts_type(), "counts").local("uint", "kiln_bins");
    queue_slot(kernel, shape);
    input_slots(kernel, shape);
    return kernel;
}

std::string write_local_atomics_source(const histogram_shape& shape, const histogram_input& input) {
    const std::string G = std::to_string(shape.work_group_size) + "u",
                      C = std::to_string(shape.copies) + "u";
    const kernel_description kernel = local_atomics_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name(), shape.work_group_size);
    const histogram_element x = declare_histogram_kernel(b, kernel, shape, input);
    b.begin_body();
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("for (uint i = t; i < " + C + " * bins; i += " + G + ") kiln_bins[i] = 0;");
    b.local_barrier();
    // Copy c of bin i at i * copies + c: the copies of one bin lie in separate banks, so that
    // skewed data, whose work-items all add to one bin, spread over banks instead of queueing
    // on one (copy-major, 256 bins apart, they would all share a bank).
    b.line("const uint mine = t % " + C + ";");
    emit_histogram_walk(
        b, shape, x,
        [&](const std::string& bin) { return "&kiln_bins[" + bin + " * " + C + " + mine]"; },
        "uint");
    b.local_barrier();
    b.open("for (uint i = t; i < bins; i += " + G + ")");
    b.line("uint total = 0;");
    b.line("for (uint c = 0; c < " + C + "; ++c) total += kiln_bins[i * " + C + " + c];");
    b.line("if (total != 0) atomic_add(&counts[i], (" + shape.counts_type() + ")total);");
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_local_atomics_histogram(const queue& q, const histogram_input& input,
                                  const histogram_plan& plan, std::size_t part,
                                  const event& after) {
    const histogram_shape shape = histogram_shape_of(input, plan);
    const algorithm_program& program = histogram_program(
        q.device(), shape, [&] { return std::vector{local_atomics_kernel(shape)}; },
        [&] { return write_local_atomics_source(shape, input); });
    kernel_binding args = bind_input(program, local_atomics_kernel_name, shape, input, part);
    args.argument("counts", input.counts_memory);
    args.local("kiln_bins", shape.copies * input.bins * sizeof(std::uint32_t));
    return launch_walk(q, program, std::move(args), shape, plan, after);
}

}  // namespace kiln::detail
