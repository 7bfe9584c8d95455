// SPDX-License-Identifier: Apache-2.0
// Reductions and inclusive scans of segments of a vector: kiln::segmented_reduce and
// kiln::segmented_inclusive_scan.
//
//     kiln::segmented_reduce(x, offsets, sums);  // sums[i] = x[offsets[i]] + ... +
//                                                //           x[offsets[i + 1] - 1]
//     kiln::segmented_reduce(x, offsets, peaks, kiln::reducers::maximum{});
//     kiln::segmented_inclusive_scan(x, offsets, x);  // running sums restarting at each segment
//
// offsets has out.size() + 1 entries (CUB's DeviceSegmentedReduce convention, with the begin
// and end offsets of segment i at i and i + 1; for the scan, the segments' count + 1), starting
// at 0, never decreasing and ending at most at x.size(); elements past the last offset belong
// to no segment. An empty segment reduces to the operation's identity: 0 for sums, +inf
// (integers: the type's max) for minimum, -inf (the type's lowest) for maximum. x, offsets and
// out are vectors on one device. Bad offsets are an invalid_argument_error naming the first bad
// entry, found by the kernels themselves (each segment checks its two offsets), so the check
// costs no pass over the offsets; out is then left unspecified. docs/algorithms.md, "Segmented
// reductions and scans", gives the strategies the module in src/algo/segmented/ plans for each
// device.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/algo/segment_offsets.hpp>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/reduce.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace kiln {

namespace detail {

/// The value an empty segment reduces to under Op: its identity, so that a segment's result
/// does not depend on how it is split among work-items.
template <class Op, class T>
struct segmented_identity;
template <class T>
struct segmented_identity<reducers::sum, T> {
    static constexpr T value = T(0);
};
template <class T>
struct segmented_identity<reducers::minimum, T> {
    static constexpr T value = std::numeric_limits<T>::has_infinity
                                   ? std::numeric_limits<T>::infinity()
                                   : std::numeric_limits<T>::max();
};
template <class T>
struct segmented_identity<reducers::maximum, T> {
    static constexpr T value = std::numeric_limits<T>::has_infinity
                                   ? -std::numeric_limits<T>::infinity()
                                   : std::numeric_limits<T>::lowest();
};

/// kiln::segmented_reduce's and kiln::segmented_inclusive_scan's arguments, their types erased:
/// run_segmented_reduce and run_segmented_inclusive_scan (src/algo/segmented/) check them and
/// run the strategy the device's plan chooses.
struct segmented_input {
    const char* call = "kiln::segmented_reduce";
    /// The output's name in messages: out (one value per segment) or y (one per element).
    const char* out_name = "out";
    /// The values' and the offsets' OpenCL C types.
    std::string value_type, offset_type;
    std::size_t value_bytes = 0, offset_bytes = 0;
    bool offsets_signed = false;
    /// The operation: its name in program keys, its text, and its identity (a scalar of
    /// value_type).
    std::string operation;
    std::function<std::string(source_builder&, const std::string&, const std::string&)> combine;
    kernel_argument identity;
    /// A floating-point sum in reproducible mode: every segment's values summed exactly and
    /// rounded once per result (the segmented module's reproducible strategy).
    bool reproducible_sum = false;
    std::size_t elements = 0, offset_count = 0, out_size = 0;
    /// offset_count - 1, or 0 where there are no offsets (which the checks reject).
    std::size_t segments = 0;
    /// Each vector's parts; its memory where it lies in one part.
    const layout *x_parts = nullptr, *offsets_parts = nullptr, *out_parts = nullptr;
    kernel_argument x_memory, offsets_memory, out_memory;
    /// Where run_segmented_reduce reads the offsets it names in an error; the output's memory,
    /// which must not be the offsets' (the kernels read them while they write out), nor x's for
    /// the reduction (a segment's value lands where other segments' elements may lie); x's.
    const buffer_storage *offsets_storage = nullptr, *out_storage = nullptr, *x_storage = nullptr;
};

/// Throws invalid_argument_error where `input` cannot run or its offsets are bad (the latter
/// found by the reduction itself); otherwise overwrites out with the segments' reductions.
/// Returns once out is written.
void run_segmented_reduce(const segmented_input& input);
/// The same checks, out (y) of x's size; then overwrites y's elements in segments with the
/// segments' inclusive scans.
void run_segmented_inclusive_scan(const segmented_input& input);

template <class T, class O, class Op>
segmented_input segmented_input_of(const vector<T>& x, const vector<O>& offsets,
                                   const vector<T>& out) {
    segmented_input input;
    input.value_type = opencl_type_name<T>();
    input.offset_type = opencl_type_name<O>();
    input.value_bytes = sizeof(T);
    input.offset_bytes = sizeof(O);
    input.offsets_signed = std::is_signed_v<O>;
    mode_operation operation = operation_in_current_mode<Op, T>();
    input.operation = std::move(operation.key);
    input.combine = std::move(operation.combine);
    input.reproducible_sum = std::is_same_v<Op, reducers::sum> && std::is_floating_point_v<T> &&
                             current_determinism() == determinism::reproducible;
    input.identity = make_argument(segmented_identity<Op, T>::value);
    input.elements = x.size();
    input.offset_count = offsets.size();
    input.out_size = out.size();
    input.segments = offsets.size() > 0 ? offsets.size() - 1 : 0;
    input.x_parts = &x.layout();
    input.offsets_parts = &offsets.layout();
    input.out_parts = &out.layout();
    if (x.part_count() == 1) {
        input.x_memory = make_argument(x.part(0));
        input.x_storage = &x.part(0).storage();
    }
    if (offsets.part_count() == 1) {
        input.offsets_memory = make_argument(offsets.part(0));
        input.offsets_storage = &offsets.part(0).storage();
    }
    if (out.part_count() == 1) {
        input.out_memory = make_argument(out.part(0));
        input.out_storage = &out.part(0).storage();
    }
    return input;
}

}  // namespace detail

/// The operations a segmented reduction takes: those with an identity for empty segments.
template <class Op, class T>
concept segmented_operation = detail::operation_for<Op, T> && requires {
    detail::segmented_identity<Op, T>::value;
};

/// out[i] = op over x[offsets[i] .. offsets[i + 1]), in the strategy's order (float sums round
/// accordingly: docs/algorithms.md); the operation's identity where the segment is empty. In
/// reproducible mode (kiln::scoped_determinism) a float or double sum is the segment's exact sum
/// rounded once, with kiln::sum's bits on every device (NaN where it passes the exact sum's range,
/// 2^973), and minima and maxima are reducers::reproducible_minimum's and maximum's.
template <detail::scan_value T, segment_offset O, class Op = reducers::sum>
requires segmented_operation<Op, T>
void segmented_reduce(const vector<T>& x, const vector<O>& offsets, const vector<T>& out, Op = {}) {
    detail::run_segmented_reduce(detail::segmented_input_of<T, O, Op>(x, offsets, out));
}

/// y[k] = x[offsets[i]] op ... op x[k] for k in segment i, [offsets[i], offsets[i + 1]): the
/// scan restarts at every segment. y has x's size and may be x itself; its elements past the
/// last offset are left as they are. In reproducible mode a float or double sum's every prefix is
/// the exact one rounded once, as kiln::inclusive_scan's.
template <detail::scan_value T, segment_offset O, class Op = reducers::sum>
requires segmented_operation<Op, T>
void segmented_inclusive_scan(const vector<T>& x, const vector<O>& offsets, const vector<T>& y,
                              Op = {}) {
    detail::segmented_input input = detail::segmented_input_of<T, O, Op>(x, offsets, y);
    input.call = "kiln::segmented_inclusive_scan";
    input.out_name = "y";
    detail::run_segmented_inclusive_scan(input);
}

}  // namespace kiln
#pragma GCC visibility pop
