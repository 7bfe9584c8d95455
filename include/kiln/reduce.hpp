// SPDX-License-Identifier: Apache-2.0
// Reductions of vector expressions to one value: sum, Kahan sum, min, max, minmax, count, any, all.
//
// Two stages. On the device, each work-group folds its share of the elements (independent
// accumulators per work-item, for memory-level parallelism, then a tree in local memory) into
// one partial result: the module in src/algo/reduce/ plans and runs it from the device's tuning
// row. On the host, the partials of every group and every device part are folded in order. The
// expression is evaluated inside the first stage: no temporary vector.
//
// Semantics with special values (documented in docs/vector.md):
//   sum, kahan_sum  IEEE: NaN if any element is NaN or if +inf and -inf both occur; +-inf
//                   otherwise when one occurs. An empty range sums to 0.
//   minimum/maximum NaN elements are ignored (IEEE fmin/fmax); NaN only if every element is NaN
//                   or the range is empty (integers: the type's max / lowest when empty).
//   count           elements that are not zero; NaN counts (it is not equal to zero).
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/detail/element_inputs.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/determinism.hpp>
#include <kiln/runtime/event.hpp>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

/// Sums accumulate narrow integers in 64 bits (and bools, i.e. conditions, as counts).
template <class T>
using sum_type_t = std::conditional_t<
    std::is_same_v<T, bool>, std::uint64_t,
    std::conditional_t<std::is_integral_v<T>,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>, T>>;

/// Helpers for reducers whose state is a pair_state (float2, double2...).
template <class T>
std::string pair_helper(source_builder& source, std::string_view helper) {
    const std::string t = opencl_type_name<T>();
    const std::string p = t + "2";
    source.define("pair_" + t, p + " kiln_pair_" + t + "(" + t + " a, " + t + " b) { " + p +
                                   " r; r.x = a; r.y = b; return r; }\n" + p + " kiln_pair_same_" +
                                   t + "(" + t + " a) { return kiln_pair_" + t + "(a, a); }\n");
    return "kiln_" + std::string(helper) + "_" + t;
}

template <class T>
constexpr bool is_floating_v = std::is_floating_point_v<T>;

/// A reducer's traits whose map and combine texts hold for OpenCL C vectors of states, lane by
/// lane (lane_wise), so that a chunked loop may fold several elements per step.
template <class Traits>
concept lane_wise_reducer = requires {
    requires Traits::lane_wise;
};

}  // namespace detail

/// Reducers: each says, for an element type T, what it accumulates (`state`), how an element
/// becomes a state (`map`, device), how two states combine (`combine`, device and host), and what
/// the final state means (`finish`).
namespace reducers {

/// The sum, in a type that holds it: 64-bit integers for integers (32-bit ones sum without
/// overflow), float for half and bfloat16, and T itself otherwise.
struct sum {
    /// The protocol every reducer's `on<T>` follows, for elements of type T.
    template <class T>
    requires detail::number<T>
    struct on {
        using state = detail::sum_type_t<T>;  ///< what partial results hold
        using result = state;                 ///< what finish() returns
        /// combine's text adds OpenCL C vectors of floating-point states lane by lane.
        static constexpr bool lane_wise = std::is_floating_point_v<state>;
        /// The state of no elements: combining it with any state gives that state.
        static state identity() { return state{}; }
        /// OpenCL C text that turns an element (the text `value`) into a state; helper functions
        /// it needs are defined in `source`.
        static std::string map(detail::source_builder& source, const std::string& value) {
            return detail::convert_value<state, T>(source, value);
        }
        /// OpenCL C text that combines two states (the texts `a` and `b`), associatively.
        static std::string combine(detail::source_builder& source, const std::string& a,
                                   const std::string& b) {
            if constexpr (detail::is_complex_v<state>)
                return detail::complex_helper<state>(source, "cadd") + "(" + a + ", " + b + ")";
            else
                return "(" + a + " + " + b + ")";
        }
        /// The same combination on the host, for the partial results of each work-group.
        static state combine(const state& a, const state& b) { return a + b; }
        /// The result a state stands for.
        static result finish(const state& s) { return s; }
    };
};

/// Compensated summation (Kahan-Babuska-Neumaier): the rounding error of every addition is
/// carried along in a second number, so the result is nearly independent of the number of
/// elements and of the order in which partial sums meet.
struct kahan_sum {
    /// Floating-point elements only; the members as in reducers::sum::on.
    template <class T>
    requires detail::is_floating_v<T>
    struct on {
        using state = detail::pair_state<T>;    ///< (running sum, the rounding error it has lost)
        using result = T;                       ///< the sum with its error added back
        static state identity() { return {}; }  ///< zero sum, zero error
        /// The element as a sum with no error.
        static std::string map(detail::source_builder& source, const std::string& value) {
            return detail::pair_helper<T>(source, "pair") + "(" + value + ", 0)";
        }
        /// Adds the sums by Knuth's two-sum, carrying both errors and the new one.
        static std::string combine(detail::source_builder& source, const std::string& a,
                                   const std::string& b) {
            const std::string t = detail::opencl_type_name<T>();
            const std::string pair = detail::pair_helper<T>(source, "pair");
            // Knuth's two-sum gives the exact error of s = a.x + b.x. Once the sum is infinite
            // or NaN the error is meaningless (inf - inf): drop it, so that the result is the
            // plain sum's inf or NaN.
            source.define("kahan_" + t,
                          t + "2 kiln_kahan_" + t + "(" + t + "2 a, " + t + "2 b) {\n    const " +
                              t + " s = a.x + b.x;\n    const " + t +
                              " b_part = s - a.x;\n    const " + t +
                              " error = (a.x - (s - b_part)) + (b.x - b_part);\n    return " +
                              pair + "(s, isfinite(s) ? a.y + b.y + error : 0);\n}\n");
            return "kiln_kahan_" + t + "(" + a + ", " + b + ")";
        }
        /// The two-sum on the host, as the device text does it.
        static state combine(const state& a, const state& b) {
            const T s = a.first + b.first;
            const T b_part = s - a.first;
            const T error = (a.first - (s - b_part)) + (b.first - b_part);
            return {s, std::isfinite(s) ? a.second + b.second + error : T(0)};
        }
        /// The sum corrected by the error it carried.
        static result finish(const state& s) { return s.first + s.second; }
    };
};

/// The minimum (Maximum = false) or maximum of real elements; floating-point NaNs are ignored
/// (fmin, fmax) unless every element is NaN. Used as reducers::minimum and reducers::maximum.
template <bool Maximum>
struct extremum {
    /// Real elements but bool; the members as in reducers::sum::on.
    template <class T>
    requires detail::real_number<T> &&(!std::is_same_v<T, bool>)struct on {
        using state = T;   ///< the extremum so far
        using result = T;  ///< the extremum
        /// fmin, fmax, min and max take OpenCL C vectors lane by lane.
        static constexpr bool lane_wise = true;
        /// NaN for floating point (which fmin and fmax pass over), else the type's far end.
        static state identity() {
            if constexpr (detail::is_floating_v<T>)
                return std::numeric_limits<T>::quiet_NaN();
            else
                return Maximum ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        }
        /// The element itself.
        static std::string map(detail::source_builder&, const std::string& value) { return value; }
        /// fmin or fmax for floating point, min or max for integers.
        static std::string combine(detail::source_builder&, const std::string& a,
                                   const std::string& b) {
            const char* name =
                detail::is_floating_v<T> ? (Maximum ? "fmax" : "fmin") : (Maximum ? "max" : "min");
            return std::string(name) + "(" + a + ", " + b + ")";
        }
        /// std::fmin / std::fmax or std::min / std::max, as on the device.
        static state combine(const state& a, const state& b) {
            if constexpr (detail::is_floating_v<T>)
                return Maximum ? std::fmax(a, b) : std::fmin(a, b);
            else
                return Maximum ? std::max(a, b) : std::min(a, b);
        }
        /// The extremum (NaN for no elements, or only NaNs, in floating point).
        static result finish(const state& s) { return s; }
    };
};
using minimum = extremum<false>;  ///< the smallest element
using maximum = extremum<true>;   ///< the largest element

/// Minimum and maximum in one pass.
struct minmax {
    /// Real elements but bool; the members as in reducers::sum::on.
    template <class T>
    requires detail::real_number<T> &&(!std::is_same_v<T, bool>)struct on {
        using state = detail::pair_state<T>;  ///< (minimum, maximum) so far
        using result = std::pair<T, T>;       ///< (minimum, maximum)
        /// Both extrema's identities.
        static state identity() { return {minimum::on<T>::identity(), maximum::on<T>::identity()}; }
        /// The element as both its own minimum and maximum.
        static std::string map(detail::source_builder& source, const std::string& value) {
            return detail::pair_helper<T>(source, "pair_same") + "(" + value + ")";
        }
        /// The smaller minimum and the larger maximum, lane by lane.
        static std::string combine(detail::source_builder& source, const std::string& a,
                                   const std::string& b) {
            const std::string t = detail::opencl_type_name<T>();
            const std::string pair = detail::pair_helper<T>(source, "pair");
            const std::string low = detail::is_floating_v<T> ? "fmin" : "min";
            const std::string high = detail::is_floating_v<T> ? "fmax" : "max";
            source.define("minmax_" + t, t + "2 kiln_minmax_" + t + "(" + t + "2 a, " + t +
                                             "2 b) { return " + pair + "(" + low + "(a.x, b.x), " +
                                             high + "(a.y, b.y)); }\n");
            return "kiln_minmax_" + t + "(" + a + ", " + b + ")";
        }
        /// The minima combined as reducers::minimum does, the maxima as reducers::maximum.
        static state combine(const state& a, const state& b) {
            return {minimum::on<T>::combine(a.first, b.first),
                    maximum::on<T>::combine(a.second, b.second)};
        }
        /// The pair (minimum, maximum).
        static result finish(const state& s) { return {s.first, s.second}; }
    };
};

/// Number of elements that are not zero (of a condition: how many hold).
struct count {
    /// Real elements; the members as in reducers::sum::on.
    template <class T>
    requires detail::real_number<T>
    struct on {
        using state = std::uint64_t;           ///< elements counted so far
        using result = std::uint64_t;          ///< elements not zero
        static state identity() { return 0; }  ///< none counted
        /// 1 where the element is not zero, else 0.
        static std::string map(detail::source_builder&, const std::string& value) {
            return "((ulong)((" + value + ") != 0))";
        }
        /// The counts added.
        static std::string combine(detail::source_builder&, const std::string& a,
                                   const std::string& b) {
            return "(" + a + " + " + b + ")";
        }
        /// The counts added, on the host.
        static state combine(const state& a, const state& b) { return a + b; }
        /// The count itself.
        static result finish(const state& s) { return s; }
    };
};

/// Whether any (All = false) or every (All = true) element is not zero.
template <bool All>
struct quantifier {
    /// Real elements; the members as in reducers::sum::on.
    template <class T>
    requires detail::real_number<T>
    struct on {
        using state = std::int32_t;  ///< 1 where the answer so far is yes, else 0
        using result = bool;         ///< the answer
        /// Yes for every element of none (All), no for any element of none.
        static state identity() { return All ? 1 : 0; }
        /// 1 where the element is not zero, else 0.
        static std::string map(detail::source_builder&, const std::string& value) {
            return "((" + value + ") != 0)";
        }
        /// The answers joined by `&` (All) or `|`.
        static std::string combine(detail::source_builder&, const std::string& a,
                                   const std::string& b) {
            return "(" + a + (All ? " & " : " | ") + b + ")";
        }
        /// The answers joined on the host.
        static state combine(const state& a, const state& b) { return All ? (a & b) : (a | b); }
        /// The state as a bool.
        static result finish(const state& s) { return s != 0; }
    };
};
using any_of = quantifier<false>;  ///< whether any element is not zero
using all_of = quantifier<true>;   ///< whether every element is not zero

}  // namespace reducers

template <class Reducer, class T>
concept reducer_for = requires {
    typename Reducer::template on<T>;
};

/// A reduction on its way: the device work is enqueued, get() waits and returns the result.
template <class Traits>
class pending_reduction {
  public:
    using state = typename Traits::state;         ///< the reducer's state (see get_state)
    using result_type = typename Traits::result;  ///< what get() returns

    pending_reduction() = default;
    /// Moves the outstanding parts; the moved-from reduction has none.
    pending_reduction(pending_reduction&&) noexcept = default;
    /// Waits for this reduction's own outstanding reads, then takes `other`'s parts.
    pending_reduction& operator=(pending_reduction&& other) noexcept {
        finish_reads();
        parts_ = std::move(other.parts_);
        return *this;
    }
    /// Waits for outstanding reads: their host memory lives here.
    ~pending_reduction() { finish_reads(); }

    /// Waits for the device and combines the partial results of every part.
    result_type get() { return Traits::finish(get_state()); }
    /// The same before `finish`: the combined state, for combining further (across MPI ranks).
    state get_state() {
        // OpenCL may hold enqueued work until a flush or a blocking call on its queue: without
        // this, the other devices' kernels could wait while the host blocks on the first part.
        // Split over several devices, every read is enqueued before the host waits for any: one
        // blocking read per device in turn would add a round trip each. Reads land in pinned
        // memory, which the device writes directly: a read into ordinary host memory goes
        // through the driver's staging buffer (about 10 us more on CUDA for a few KiB).
        const bool read_all_then_wait = parts_.size() > 1;
        std::vector<std::byte*> landed(parts_.size());
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            part_result& part = parts_[k];
            if (!part.read_on_get) continue;
            const std::size_t bytes = part.host.size() * sizeof(state);
            landed[k] = detail::thread_pinned_scratch(part.queue.device(), k, bytes);
            // The pooled block may be longer than this launch's partials.
            if (read_all_then_wait)
                part.read = part.partials.bytes().storage().read_bytes(part.queue, 0, landed[k],
                                                                       bytes, part.launch, false);
        }
        if (read_all_then_wait)
            for (const auto& part : parts_) part.queue.flush();
        std::vector<state> partials;
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            part_result& part = parts_[k];
            if (part.read_on_get && !read_all_then_wait)
                part.partials.bytes().storage().read_bytes(
                    part.queue, 0, landed[k], part.host.size() * sizeof(state), part.launch, true);
            else
                part.read.wait();
            if (landed[k] != nullptr)
                std::memcpy(part.host.data(), landed[k], part.host.size() * sizeof(state));
            partials.insert(partials.end(), part.host.begin(), part.host.end());
        }
        release_buffers();
        // Pairwise, so that rounding errors grow with the logarithm of the number of partials
        // (thousands on a large GPU), not linearly.
        for (std::size_t width = 1; width < partials.size(); width *= 2)
            for (std::size_t i = 0; i + width < partials.size(); i += 2 * width)
                partials[i] = Traits::combine(partials[i], partials[i + width]);
        return partials.empty() ? Traits::identity() : partials[0];
    }
    /// The reads of the partial results, one per device part: done means get() will not block.
    std::vector<event> events() const {
        std::vector<event> all;
        for (const auto& part : parts_) all.push_back(part.read_on_get ? part.launch : part.read);
        return all;
    }
    /// The reduction kernels' launches, one per device part (device times on profiled queues).
    std::vector<event> kernel_events() const {
        std::vector<event> all;
        for (const auto& part : parts_) all.push_back(part.launch);
        return all;
    }

    /// How the partial results come to the host.
    enum class read_mode {
        /// Right after the launch, asynchronously: events() tells when get() will not block.
        enqueued,
        /// By get() itself, a blocking read: for a result wanted at once, since an asynchronous
        /// read into ordinary host memory costs a driver callback (tens of microseconds on CUDA)
        /// that a blocking read does not.
        on_get,
    };

    /// Used by kiln::reduce_async: partials of one part, read after `launch` into host memory.
    void add_part(const kiln::queue& q, detail::temporary_lease partials, std::size_t count,
                  const event& launch, read_mode mode) {
        part_result part{std::move(partials),      std::vector<state>(count), {}, launch, q,
                         mode == read_mode::on_get};
        if (!part.read_on_get)
            part.read = part.partials.bytes().storage().read_bytes(
                q, 0, part.host.data(), count * sizeof(state), launch, false);
        part.partials.release_after(q, part.read_on_get ? part.launch : part.read);
        parts_.push_back(std::move(part));
    }

  private:
    struct part_result {
        detail::temporary_lease partials;
        std::vector<state> host;  // moving the vector keeps its storage, which the read targets
        event read;
        event launch;
        kiln::queue queue;
        bool read_on_get = false;
    };

    void finish_reads() noexcept {
        for (auto& part : parts_) {
            try {
                // Not read yet: the kernel may still write the partials that go back to the pool.
                // A read of get() may still be landing in the thread's scratch.
                (part.read ? part.read : part.launch).wait();
            } catch (
                ...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; get() reports
            }
        }
        release_buffers();
        parts_.clear();
    }
    /// Returns the device buffers for reuse; the host copies and the events stay.
    void release_buffers() noexcept {
        for (auto& part : parts_) part.partials = {};
    }

    std::vector<part_result> parts_;
};

namespace detail {

struct reduce_tuning;

/// kiln::reduce's arguments, their types erased: run_reduction (src/algo/reduce/) plans and
/// launches the reduction of each part on its device.
struct reduce_input {
    /// The reducer's state: its OpenCL C type, its bytes on the host and its identity.
    std::string state_type;
    std::size_t state_bytes = 0;
    kernel_argument identity;
    /// The reducer and the expression, which with state_type determine the generated text.
    std::string reducer, expression;
    /// Declares the expression's kernel parameters and returns element `idx` mapped to a state.
    std::function<element_input(source_builder&)> declare;
    /// Elements per 16-byte load where the expression reads 16-bit (8) or FP8 (16) vectors only,
    /// else 1.
    std::size_t wide_load_lanes = 1;
    /// Where wide_load_lanes > 1, called after declare: the mapped element as lanes of 16-byte
    /// loads, the first at an index that is a multiple of wide_load_lanes.
    std::function<wide_input(source_builder&)> declare_wide;
    /// Whether a chunked loop may fold several elements per step (reduce_tuning::vector_lanes
    /// picks how many): inputs of 16-bit or FP8 vectors whose every node has a vector form, under a
    /// reducer that is lane_wise over float states.
    bool has_vector_form = false;
    /// Where has_vector_form, called after declare: the mapped elements idx .. idx + width - 1
    /// as one OpenCL C vector of `width` states (2, 4, 8 or 16).
    std::function<element_input(source_builder&, unsigned width)> declare_vector;
    /// Two states combined, as text.
    std::function<std::string(source_builder&, const std::string&, const std::string&)> combine;
    /// Where the reducer folds a work-item's elements into one accumulator of its own rather
    /// than into states (reducers::reproducible_sum's running bins): the accumulator's OpenCL C
    /// type, the mapped elements' type, the text of a fresh one, the statement that adds a
    /// mapped element to `acc`, the statement that adds several (a step of the tuning's
    /// `accumulators` elements), and the text of its state.
    struct accumulator_form {
        std::string type, value_type;
        std::function<std::string(source_builder&)> start;
        std::function<std::string(source_builder&, const std::string& acc,
                                  const std::string& value)>
            add;
        std::function<std::string(source_builder&, const std::string& acc,
                                  const std::vector<std::string>& values)>
            add_several;
        std::function<std::string(source_builder&, const std::string& acc)> state;
    };
    std::optional<accumulator_form> accumulator;
    /// The expression's arguments for part `part`, which begins at element `begin`.
    std::function<std::vector<kernel_argument>(std::size_t part, std::size_t begin)> arguments;
    /// Where the expression's elements lie.
    layout parts;
};

/// One part's launch: `groups` partial states in `partials`, written by `launch` on `queue`.
struct reduction_launch {
    kiln::queue queue;
    temporary_lease partials;
    std::size_t groups = 0;
    event launch;
};
/// Launches the reduction of every part of `input` that has elements, each on its device's
/// tuning (reduce_tuning_for).
std::vector<reduction_launch> run_reduction(const reduce_input& input);
/// The program run_reduction builds for `input` under `tuning` (tests and the CUDA translation
/// tests read it; no device needed).
std::string reduce_program_source(const reduce_input& input, const reduce_tuning& tuning);

/// `value` as the input of a reduction by Reducer, `variant` its operand_check's kernel_variant;
/// without parts, which the caller sets (a program's text needs none).
template <class Reducer, expression_node Value>
reduce_input reduce_input_of(const Value& value, std::string_view variant = {}) {
    using traits = typename Reducer::template on<typename Value::value_type>;
    using state = typename traits::state;
    reduce_input input;
    input.state_type = opencl_type_name<state>();
    input.state_bytes = sizeof(state);
    input.identity = make_argument(static_cast<device_scalar_t<state>>(traits::identity()));
    input.reducer = typeid(traits).name();
    input.expression = typeid(Value).name() + (";" + std::string(variant));
    input.declare = [value](source_builder& b) {
        generator g(b);
        const std::string element = value.generate(g);
        const std::string mapped = traits::map(b, element);
        return element_input{.statements = g.statements(), .value = mapped};
    };
    // 16-bit and FP8 elements 2 or 1 bytes at a time stay short of the copy bandwidth on GPUs.
    // Wider elements keep their loads: independent ones per accumulator already keep enough
    // bytes in flight.
    if constexpr (width_of<Value>() == 1 || width_of<Value>() == 2) {
        static constexpr unsigned lanes = 16 / width_of<Value>();
        input.wide_load_lanes = lanes;
        input.declare_wide = [value](source_builder& b) {
            wide_input wide;
            std::vector<generator> passes;
            passes.reserve(lanes);
            for (unsigned lane = 0; lane < lanes; ++lane) {
                generator& pass = passes.emplace_back(b, lane, lanes);
                const std::string mapped = traits::map(b, value.generate(pass));
                wide.lanes.push_back({pass.statements(), mapped});
            }
            for (const auto& load : passes.front().wide_loads())
                wide.loads.push_back({load.name, load.wide_type});
            return wide;
        };
    }
    // CPU devices convert 16-bit and FP8 elements a vector at a time in the chunked loop's vector
    // form: one by one, each through vload_half or kiln's helpers, they stay scalar.
    if constexpr ((width_of<Value>() == 1 || width_of<Value>() == 2) && has_vector_form<Value>() &&
                  std::is_same_v<typename Value::value_type, float> &&
                  std::is_same_v<state, float> && lane_wise_reducer<traits>) {
        input.has_vector_form = true;
        input.declare_vector = [value](source_builder& b, unsigned width) {
            generator vectors(b, generator::vector_pass{width});
            const std::string mapped = traits::map(b, value.generate(vectors));
            return element_input{.statements = vectors.statements(), .value = mapped};
        };
    }
    input.combine = [](source_builder& b, const std::string& x, const std::string& y) {
        return traits::combine(b, x, y);
    };
    if constexpr (requires { traits::accumulator_type(); })
        input.accumulator = reduce_input::accumulator_form{
            .type = traits::accumulator_type(),
            .value_type = traits::accumulated_type(),
            .start = [](source_builder& b) { return traits::start_accumulator(b); },
            .add = [](source_builder& b, const std::string& acc,
                      const std::string& value) { return traits::accumulate(b, acc, value); },
            .add_several =
                [](source_builder& b, const std::string& acc,
                   const std::vector<std::string>& values) {
                    return traits::accumulate_several(b, acc, values);
                },
            .state = [](source_builder& b,
                        const std::string& acc) { return traits::accumulator_state(b, acc); }};
    input.arguments = [value](std::size_t part, std::size_t begin) {
        argument_list args(part, begin);
        value.collect(args);
        return std::move(args).take();
    };
    return input;
}

template <class Reducer, class E>
auto start_reduction(const std::optional<kiln::queue>& q, const E& e, std::string call,
                     bool result_wanted_now) {
    const auto node = as_node(e);
    using traits = typename Reducer::template on<typename decltype(node)::value_type>;
    using read_mode = typename pending_reduction<traits>::read_mode;
    operand_check check(call);
    if (q) check.on_queue(*q);
    node.check(check);
    reduce_input input = reduce_input_of<Reducer>(node, check.kernel_variant());
    input.parts = check.launch_layout();
    if constexpr (requires { traits::max_elements; }) {
        std::size_t elements = 0;
        for (const part_extent& part : input.parts) elements += part.size;
        if (elements > traits::max_elements)
            throw invalid_argument_error(
                call, "this reduction takes at most " + std::to_string(traits::max_elements) +
                          " elements; the expression has " + std::to_string(elements));
    }
    pending_reduction<traits> pending;
    for (reduction_launch& part : run_reduction(input))
        pending.add_part(part.queue, std::move(part.partials), part.groups, part.launch,
                         result_wanted_now ? read_mode::on_get : read_mode::enqueued);
    return pending;
}

/// The reducer that kiln::reduce runs in place of Reducer, for elements of T, in reproducible
/// mode: Reducer itself where its result has the same bits in any order (integers, counts).
template <class Reducer, class T>
struct reproducible_form {
    using type = Reducer;
};
template <class T>
requires reducer_for<reducers::reproducible_sum, T> && is_floating_v<sum_type_t<T>>
struct reproducible_form<reducers::sum, T> {
    using type = reducers::reproducible_sum;
};
template <class T>
requires is_floating_v<T>
struct reproducible_form<reducers::minimum, T> {
    using type = reducers::reproducible_minimum;
};
template <class T>
requires is_floating_v<T>
struct reproducible_form<reducers::maximum, T> {
    using type = reducers::reproducible_maximum;
};
template <class Reducer, class T>
using reproducible_form_t = typename reproducible_form<Reducer, T>::type;

/// `run.template operator()<R>()` for the reducer R of the current mode: Reducer, or its
/// reproducible form over elements of T in reproducible mode.
template <class Reducer, class T, class Run>
auto run_in_current_mode(Run&& run) {
    using reproducible = reproducible_form_t<Reducer, T>;
    if constexpr (!std::is_same_v<reproducible, Reducer>)
        if (current_determinism() == determinism::reproducible)
            return run.template operator()<reproducible>();
    return run.template operator()<Reducer>();
}

/// kiln::reduce: Reducer's result, or its reproducible form's in reproducible mode.
template <class Reducer, class E>
auto reduce_in_current_mode(const std::optional<kiln::queue>& q, const E& e) {
    return run_in_current_mode<Reducer, expression_value_t<E>>(
        [&]<class R>() { return start_reduction<R>(q, e, "kiln::reduce", true).get(); });
}

}  // namespace detail

/// Starts reducing the expression on the devices of its vectors; get() on the result waits.
/// It runs the reducer it names in either determinism mode (its result's type depends on it):
/// reduce_async<reducers::reproducible_sum> is the reproducible sum.
template <class Reducer, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce_async(const E& e) {
    return detail::start_reduction<Reducer>(std::nullopt, e, "kiln::reduce", false);
}
/// The same on an explicit queue, for expressions without vectors (element_index with a size).
template <class Reducer, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce_async(const kiln::queue& q, const E& e) {
    return detail::start_reduction<Reducer>(q, e, "kiln::reduce", false);
}
///@{
/// Reduces the expression by `Reducer` (one of kiln::reducers) and waits for the result; the
/// queue form is for expressions without vectors (element_index with a size). In reproducible
/// mode (kiln::scoped_determinism) floating-point sums, minima and maxima run
/// reducers::reproducible_sum, reproducible_minimum and reproducible_maximum.
template <class Reducer, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const E& e) {
    return detail::reduce_in_current_mode<Reducer>(std::nullopt, e);
}
template <class Reducer, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const kiln::queue& q, const E& e) {
    return detail::reduce_in_current_mode<Reducer>(q, e);
}
///@}

// clang-format off
///@{
/// Sum of the elements (narrow integers and conditions accumulate in 64 bits); the queue form
/// is for expressions without vectors, as for every reduction below.
template <vector_expression E> requires reducer_for<reducers::sum, expression_value_t<E>>
auto sum(const E& e) { return reduce<reducers::sum>(e); }
template <vector_expression E> requires reducer_for<reducers::sum, expression_value_t<E>>
auto sum(const kiln::queue& q, const E& e) { return reduce<reducers::sum>(q, e); }
///@}
///@{
/// Compensated sum of a floating-point expression.
template <vector_expression E> requires reducer_for<reducers::kahan_sum, expression_value_t<E>>
auto kahan_sum(const E& e) { return reduce<reducers::kahan_sum>(e); }
template <vector_expression E> requires reducer_for<reducers::kahan_sum, expression_value_t<E>>
auto kahan_sum(const kiln::queue& q, const E& e) { return reduce<reducers::kahan_sum>(q, e); }
///@}
///@{
/// Smallest element, NaNs ignored.
template <vector_expression E> requires reducer_for<reducers::minimum, expression_value_t<E>>
auto minimum(const E& e) { return reduce<reducers::minimum>(e); }
template <vector_expression E> requires reducer_for<reducers::minimum, expression_value_t<E>>
auto minimum(const kiln::queue& q, const E& e) { return reduce<reducers::minimum>(q, e); }
///@}
///@{
/// Largest element, NaNs ignored.
template <vector_expression E> requires reducer_for<reducers::maximum, expression_value_t<E>>
auto maximum(const E& e) { return reduce<reducers::maximum>(e); }
template <vector_expression E> requires reducer_for<reducers::maximum, expression_value_t<E>>
auto maximum(const kiln::queue& q, const E& e) { return reduce<reducers::maximum>(q, e); }
///@}
///@{
/// {smallest, largest} in one pass.
template <vector_expression E> requires reducer_for<reducers::minmax, expression_value_t<E>>
auto minmax(const E& e) { return reduce<reducers::minmax>(e); }
template <vector_expression E> requires reducer_for<reducers::minmax, expression_value_t<E>>
auto minmax(const kiln::queue& q, const E& e) { return reduce<reducers::minmax>(q, e); }
///@}
///@{
/// How many elements are not zero.
template <vector_expression E> requires reducer_for<reducers::count, expression_value_t<E>>
auto count(const E& e) { return reduce<reducers::count>(e); }
template <vector_expression E> requires reducer_for<reducers::count, expression_value_t<E>>
auto count(const kiln::queue& q, const E& e) { return reduce<reducers::count>(q, e); }
///@}
///@{
/// Whether any element is not zero.
template <vector_expression E> requires reducer_for<reducers::any_of, expression_value_t<E>>
bool any(const E& e) { return reduce<reducers::any_of>(e); }
template <vector_expression E> requires reducer_for<reducers::any_of, expression_value_t<E>>
bool any(const kiln::queue& q, const E& e) { return reduce<reducers::any_of>(q, e); }
///@}
///@{
/// Whether every element is not zero (true for no elements).
template <vector_expression E> requires reducer_for<reducers::all_of, expression_value_t<E>>
bool all(const E& e) { return reduce<reducers::all_of>(e); }
template <vector_expression E> requires reducer_for<reducers::all_of, expression_value_t<E>>
bool all(const kiln::queue& q, const E& e) { return reduce<reducers::all_of>(q, e); }
///@}
// clang-format on

}  // namespace kiln
#pragma GCC visibility pop
