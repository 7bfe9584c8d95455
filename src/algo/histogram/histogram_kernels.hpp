// What the histogram module's strategies share: the shape of a program (its key), the slots
// every kernel takes for the input and its binning, the bin of an element as kernel text, and
// the program of a shape with the binding of those slots.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/algo/histogram.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>
#include <vector>

#include "histogram_plan.hpp"

namespace kiln::detail {

/// Everything a histogram program's text depends on.
struct histogram_shape {
    histogram_strategy strategy = histogram_strategy::local_atomics;
    histogram_binning binning = histogram_binning::even;
    std::string value_type = "float";
    bool floating = true, is_signed = true;
    bool counts_signed = false;
    /// The atomics strategies' group size and loads in flight per work-item; local_atomics'
    /// copies of the histogram (cpu_chunks: all 1).
    std::size_t work_group_size = 1, unroll = 1, copies = 1;
    /// The input expression's type (histogram_input::expression).
    std::string expression;

    /// "histogram local_atomics even float floating signed counts uint g256 u4 c8 <expression>",
    /// for the program cache.
    std::string key() const;
    std::string counts_type() const { return counts_signed ? "int" : "uint"; }
};
histogram_shape histogram_shape_of(const histogram_input& input, const histogram_plan& plan);

/// Adds the slots of every kernel that reads the input: n (the part's elements), bins, the
/// binning's bounds (even: lo, hi and scale, of the values' type for floating-point values,
/// else lo and hi as long and span as ulong), then the input's parameters.
void input_slots(kernel_description& kernel, const histogram_shape& shape);

/// Defines kiln_histogram_bin in `b` and declares kernel's parameters with the input's; returns
/// the code of element `idx`. Call after begin_kernel.
element_input declare_histogram_kernel(source_builder& b, const kernel_description& kernel,
                                       const histogram_shape& shape,
                                       const std::function<element_input(source_builder&)>& input);
/// The bin of `value` as kernel text: bins (the parameter) where it is not counted.
std::string histogram_bin(const histogram_shape& shape, const std::string& value);
/// Lines that compute `unroll` bins, b0 .. b<unroll - 1>, of the elements at `first` + u
/// `step`, bins where past n.
void emit_element_bins(source_builder& b, const histogram_shape& shape, const element_input& x,
                       const std::string& first, const std::string& step);
/// Lines that add b0 .. b<unroll - 1> to their counters, `counter(bin)` being a counter's
/// address, by atomic_add of values of `type`: one atomic per run of equal bins (CUB's run-length
/// accumulation), so that skewed data, all in one bin, take one atomic per work-item and step.
void emit_counted_runs(source_builder& b, const histogram_shape& shape,
                       const std::function<std::string(const std::string& bin)>& counter,
                       const std::string& type);

/// The program of `kernels`, written by `write` on a miss, under shape.key().
const algorithm_program& histogram_program(
    const device& dev, const histogram_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write);
/// `kernel` with input_slots bound for part `part` of the input (n: its elements).
kernel_binding bind_input(const algorithm_program& program, const std::string& kernel,
                          const histogram_shape& shape, const histogram_input& input,
                          std::size_t part);

/// Each strategy, a file each, adds part `part` of the input to counts on `q` after `after`, and
/// returns its last event.
event run_local_atomics_histogram(const queue& q, const histogram_input& input,
                                  const histogram_plan& plan, std::size_t part, const event& after);
event run_global_atomics_histogram(const queue& q, const histogram_input& input,
                                   const histogram_plan& plan, std::size_t part,
                                   const event& after);
event run_cpu_chunks_histogram(const queue& q, const histogram_input& input,
                               const histogram_plan& plan, std::size_t part, const event& after);

}  // namespace kiln::detail
