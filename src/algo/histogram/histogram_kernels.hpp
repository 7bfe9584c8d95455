// SPDX-License-Identifier: Apache-2.0
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
    /// The atomics strategies' group size, loads in flight per work-item and elements per load
    /// (more than 1: 16-byte loads); local_atomics' copies of the histogram (cpu_chunks: all 1
    /// but copies, its rows per chunk).
    std::size_t work_group_size = 1, unroll = 1, lanes = 1, copies = 1;
    /// The atomics strategies: an atomic per element rather than per run of equal bins, and
    /// (16-byte loads only) each step's loads issued a step ahead (histogram_tuning's).
    bool single_adds = false, load_ahead = false;
    /// The atomics strategies: steps a group claims at a time from kiln_queue; 0: none, the
    /// grid's stride.
    std::size_t claimed_steps = 0;
    /// Even bins of floating-point values over a span so small that bins / (hi - lo) overflows
    /// their type: each x - lo is first multiplied by a power of two, `magnify`, that brings the
    /// span near 1 (histogram_shape_of). Other spans keep the kernel without it.
    bool magnified = false;
    /// The input expression's type (histogram_input::expression).
    std::string expression;

    /// "histogram local_atomics even float floating signed counts uint g256 u4 l4 c8
    /// <expression>", " single", " ahead", " q<claimed_steps>" and " magnified" before the
    /// expression where they hold, for the program cache.
    std::string key() const;
    std::string counts_type() const { return counts_signed ? "int" : "uint"; }
};
histogram_shape histogram_shape_of(const histogram_input& input, const histogram_plan& plan);

/// Adds kiln_queue, the counter of claimed steps (a uint that starts at 0), where the shape's
/// groups claim steps; launch_walk binds it.
void queue_slot(kernel_description& kernel, const histogram_shape& shape);
/// Adds the slots of every kernel that reads the input: n (the part's elements), bins, the
/// binning's bounds (even: lo, hi and scale, of the values' type for floating-point values, and
/// magnify where the shape is magnified; else lo and hi as long and span as ulong), then the
/// input's parameters.
void input_slots(kernel_description& kernel, const histogram_shape& shape);

/// An element of the input as kernel text: `element` at any `idx`, and where the shape reads
/// 16-byte loads, `wide`'s lanes.
struct histogram_element {
    element_input element;
    wide_input wide;
};

/// Defines kiln_histogram_bin in `b` and declares kernel's parameters with the input's; returns
/// the code of element `idx`, also as lanes of 16-byte loads where shape.lanes > 1. Call after
/// begin_kernel.
histogram_element declare_histogram_kernel(source_builder& b, const kernel_description& kernel,
                                           const histogram_shape& shape,
                                           const histogram_input& input);
/// The bin of `value` as kernel text: bins (the parameter) where it is not counted.
std::string histogram_bin(const histogram_shape& shape, const std::string& value);
/// The atomics strategies' walk over the input: every work-item steps through it by the grid's
/// stride (or, where shape.claimed_steps, through the steps its group claims from kiln_queue,
/// declared there in local memory), issuing shape.unroll loads (of shape.lanes elements each)
/// before it counts their elements, and adds each run of equal bins among them to `counter(bin)` (a
/// counter's address) by one atomic_add of `type` (CUB's run-length accumulation: skewed data, all
/// in one bin, take one atomic per work-item and step; shape.single_adds: an atomic per element).
/// Where the loads are 16 bytes wide, the n % lanes elements past the last whole load are counted
/// by the first work-items, one each, and where shape.load_ahead, each step's loads are issued
/// before the step before them counts its elements.
void emit_histogram_walk(source_builder& b, const histogram_shape& shape,
                         const histogram_element& x,
                         const std::function<std::string(const std::string& bin)>& counter,
                         const std::string& type);

/// The program of `kernels`, written by `write` on a miss, under shape.key().
const algorithm_program& histogram_program(
    const device& dev, const histogram_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write);
/// Launches `args`, a walk's kernel, in plan.groups groups on `q` after `after`; where
/// shape.claimed_steps, with a counter zeroed for kiln_queue first.
event launch_walk(const queue& q, const algorithm_program& program, kernel_binding args,
                  const histogram_shape& shape, const histogram_plan& plan, const event& after);
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
