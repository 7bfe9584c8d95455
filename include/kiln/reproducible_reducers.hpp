// SPDX-License-Identifier: Apache-2.0
// The reducers of kiln's reproducible mode (include/kiln/runtime/determinism.hpp): a sum whose
// bits do not depend on the order of its additions, and minimum and maximum that order -0
// below +0. kiln::reduce (so kiln::sum, minimum and maximum) and kiln::mpi::reduce take them in
// that mode; reduce_async names them itself.
//
// The exact sum, docs/reproducibility.md in full: bin b's grid is 2^(32 b - 1074), and it holds
// elements below 2^(32 b - 1043), half the next bin's grid. A work-item
// keeps three bins under the largest element it has seen and rounds each element onto them (to
// nearest, ties to even, with fixed rounders, so the digits depend on the element and the bins
// alone). Bins hold whole multiples of their grids, so their sums are exact in any order; states
// (64-bit digits of bins top, top - 1, top - 2) add bin by bin, the lower state's digits below
// the higher's three bins dropped, as every grouping drops them. The host rounds once.
#pragma once
#pragma GCC visibility push(default)

#include <cmath>
#include <cstdint>
#include <kiln/detail/source_builder.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/half.hpp>
#include <kiln/vector_types.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {
namespace detail {

/// An exact sum's state, as OpenCL C's long4: x, y and z the digits of bins top, top - 1 and
/// top - 2; w holds top + 1 (0: no finite element yet) in bits 0-7 and exact_sum_flags above.
using exact_sum_state = vec<std::int64_t, 4>;

/// The bits of exact_sum_state::w that hold top + 1; exact_sum_flags lie above them.
inline constexpr std::int64_t exact_sum_top_mask = 255;

/// The bits of exact_sum_state::w above the top bin.
enum exact_sum_flags : std::int64_t {
    exact_sum_nan = 1 << 8,            ///< a NaN element
    exact_sum_plus_infinity = 1 << 9,  ///< a +inf element
    exact_sum_minus_infinity = 1 << 10,
    /// A double of magnitude 2^973 or more, beyond the bins' range (DBL_MAX is about 2^1024).
    exact_sum_out_of_range = 1 << 11,
};

/// Defines the device helpers in `source`: the work-item's running bins
/// (kiln_exact_accumulator: kiln_exact_start, kiln_exact_add, kiln_exact_state), and
/// kiln_exact_sum_combine of two states; and turns off contraction of a * b + c for the whole
/// program: a product must be rounded on every device before it is summed.
void define_exact_sum(source_builder& source);
/// Defines, beside define_exact_sum's helpers, those a scan or a sparse product needs to round
/// on the device: kiln_exact_state_of (one value's state, as a fresh accumulator's after adding
/// it), kiln_exact_peek (an accumulator's state, the accumulator left as it is),
/// kiln_exact_resume (an accumulator that goes on from a state) and kiln_exact_round(state,
/// precision, lowest_normal_exponent) (the state's value rounded once, as round_exact_sum_to_float
/// and round_exact_sum_to_double round it, to a double that the type of that precision holds
/// exactly; NaN where the state is out of range).
void define_exact_rounding(source_builder& source);
/// The statement adding `values` (texts of doubles) to the accumulator `acc` at once, defining
/// its helper for that many values in `source`.
std::string exact_sum_add_several(source_builder& source, const std::string& acc,
                                  const std::vector<std::string>& values);
/// The device's combination, on the host.
exact_sum_state combine_exact_sums(const exact_sum_state& a, const exact_sum_state& b);
///@{
/// The state's value rounded once to nearest (ties to even); NaN and infinities as IEEE sums
/// give them. Throws invalid_argument_error for exact_sum_out_of_range.
float round_exact_sum_to_float(const exact_sum_state& s);
double round_exact_sum_to_double(const exact_sum_state& s);
///@}

/// The NaN every reproducible result that is NaN carries, whatever the inputs' payloads.
template <class T>
T canonical(T value) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(value)) return std::numeric_limits<T>::quiet_NaN();
    return value;
}

}  // namespace detail

namespace reducers {

/// The sum, exact up to a fixed grid below the largest element and rounded once: the same bits
/// for any order of the elements, on any device and any split. Elements whose sum is float or
/// double (float, double, half, bfloat16); the members as in reducers::sum::on.
struct reproducible_sum {
    /// Elements of type T; the members as in reducers::sum::on, and a work-item accumulator.
    template <class T>
    requires std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>
    struct on {
        /// double for doubles, float otherwise (reducers::sum's result).
        using result = std::conditional_t<std::is_same_v<T, double>, double, float>;
        using state = detail::exact_sum_state;  ///< three bins' 64-bit digits, top and flags
        /// The top bin's 64-bit digits hold this many elements' (each at most 2^31) in any order.
        static constexpr std::size_t max_elements = std::size_t{1} << 31;
        /// No element: no digits, no top bin yet.
        static state identity() { return state{0}; }
        /// The element in double, exact for every float.
        static std::string map(detail::source_builder& source, const std::string& value) {
            return "(double)" + detail::convert_value<result, T>(source, value);
        }
        /// Work-items add elements to running bins (kiln_exact_accumulator), which become states
        /// at the end: the bins' extraction is a few additions per element.
        static std::string accumulator_type() { return "kiln_exact_accumulator"; }
        /// A work-item's fresh accumulator, as text.
        static std::string start_accumulator(detail::source_builder& source) {
            detail::define_exact_sum(source);
            return "kiln_exact_start()";
        }
        /// What map gives: OpenCL C's double.
        static std::string accumulated_type() { return "double"; }
        /// The statement adding several mapped elements to accumulator `acc` at once: their
        /// roundings are independent, their digits summed before they meet the bins.
        static std::string accumulate_several(detail::source_builder& source,
                                              const std::string& acc,
                                              const std::vector<std::string>& values) {
            return detail::exact_sum_add_several(source, acc, values);
        }
        /// The statement adding a mapped element `value` to accumulator `acc`.
        static std::string accumulate(detail::source_builder& source, const std::string& acc,
                                      const std::string& value) {
            detail::define_exact_sum(source);
            return "kiln_exact_add(&" + acc + ", " + value + ")";
        }
        /// The state of accumulator `acc`, as text.
        static std::string accumulator_state(detail::source_builder& source,
                                             const std::string& acc) {
            detail::define_exact_sum(source);
            return "kiln_exact_state(&" + acc + ")";
        }
        /// Two states added bin by bin, as text.
        static std::string combine(detail::source_builder& source, const std::string& a,
                                   const std::string& b) {
            detail::define_exact_sum(source);
            return "kiln_exact_sum_combine(" + a + ", " + b + ")";
        }
        /// The same on the host.
        static state combine(const state& a, const state& b) {
            return detail::combine_exact_sums(a, b);
        }
        /// The digits rounded once.
        static result finish(const state& s) {
            if constexpr (std::is_same_v<result, double>)
                return detail::round_exact_sum_to_double(s);
            else
                return detail::round_exact_sum_to_float(s);
        }
    };
};

/// The minimum (Maximum = false) or maximum of floating-point elements as IEEE 754-2019's
/// minimumNumber and maximumNumber: NaNs ignored, -0 below +0, so that no order of the
/// elements changes the result's bits; NaN (one NaN, whatever the inputs') only for no
/// elements or only NaNs.
template <bool Maximum>
struct reproducible_extremum {
    /// Floating-point elements; the members as in reducers::sum::on.
    template <class T>
    requires std::is_floating_point_v<T>
    struct on {
        using state = T;   ///< the extremum so far
        using result = T;  ///< the extremum
        /// NaN, which fmin and fmax pass over.
        static state identity() { return std::numeric_limits<T>::quiet_NaN(); }
        /// The element itself.
        static std::string map(detail::source_builder&, const std::string& value) { return value; }
        /// The operand that wins, as text.
        static std::string combine(detail::source_builder& source, const std::string& a,
                                   const std::string& b) {
            const std::string t = detail::opencl_type_name<T>();
            const std::string name =
                std::string(Maximum ? "kiln_max_number_" : "kiln_min_number_") + t;
            // fmin and fmax pass NaNs over; of two equal operands (+0 and -0 among them) the
            // one whose sign wins is taken, so that no order changes the bits.
            const std::string chosen = Maximum ? "signbit(a) ? b : a" : "signbit(a) ? a : b";
            source.define(name, t + " " + name + "(" + t + " a, " + t +
                                    " b) {\n    return a == b ? (" + chosen +
                                    ") : " + (Maximum ? "fmax" : "fmin") + "(a, b);\n}\n");
            return name + "(" + a + ", " + b + ")";
        }
        /// The same on the host.
        static state combine(const state& a, const state& b) {
            if (a == b) return (std::signbit(a) == Maximum) ? b : a;
            return Maximum ? std::fmax(a, b) : std::fmin(a, b);
        }
        /// The extremum, any NaN as quiet_NaN().
        static result finish(const state& s) { return detail::canonical(s); }
    };
};
using reproducible_minimum = reproducible_extremum<false>;  ///< minimumNumber
using reproducible_maximum = reproducible_extremum<true>;   ///< maximumNumber

}  // namespace reducers
}  // namespace kiln
#pragma GCC visibility pop
