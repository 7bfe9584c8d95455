// SPDX-License-Identifier: Apache-2.0
// Stencils: 1-D convolutions and user-defined non-linear stencils as terms of vector
// expressions, and 2-D stencils over row-major grids.
//
//     kiln::stencil<float> S(q, {1, -2, 1}, 1);  // coefficients for x[i - 1], x[i], x[i + 1]
//     y = x * S;                                 // y[i] = x[i-1] - 2 x[i] + x[i+1]
//     y = 2 * x - 0.5 * (x * S);                 // any expression, still one kernel
//
// Element i of x * S is the sum over k of S[k] * x[clamp(i + k - center, 0, n - 1)]: positions
// before the first element read the first, positions past the last read the last. Alone on the
// right of an assignment, a stencil runs its own kernel, through local-memory tiles or, on CPU
// devices, runs of outputs walked by single work-items (stencil_on_cpu.hpp); inside a larger
// expression each element reads its neighbours from global memory. On a split vector each
// part first fetches the few elements it reaches in its neighbours' parts.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_lanes.hpp>
#include <kiln/detail/algo/stencil_on_cpu.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/detail/algo/stencil_windows.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <vector>

namespace kiln {

/// The coefficients of a 1-D stencil on one device; `center` is the coefficient of x[i].
template <stencil_value T>
class stencil {
  public:
    /// Copies the coefficients to q's device; invalid_argument_error for none, or a center
    /// that is not one of them.
    stencil(const queue& q, std::span<const T> coefficients, std::size_t center)
        : queue_(q), width_(coefficients.size()), center_(center) {
        if (coefficients.empty())
            throw invalid_argument_error("kiln::stencil", "a stencil needs coefficients");
        if (center >= coefficients.size())
            throw invalid_argument_error(
                "kiln::stencil", "center " + std::to_string(center) + " is not one of the " +
                                     std::to_string(coefficients.size()) + " coefficients");
        host_coefficients_.assign(coefficients.begin(), coefficients.end());
        coefficients_ = kiln::buffer<T>(q, coefficients);
    }
    /// The same from listed coefficients: stencil(q, {1, -2, 1}, 1).
    stencil(const queue& q, std::initializer_list<T> coefficients, std::size_t center)
        : stencil(q, std::span<const T>(coefficients.begin(), coefficients.size()), center) {}

    std::size_t width() const noexcept { return width_; }    ///< the number of coefficients
    std::size_t center() const noexcept { return center_; }  ///< the coefficient of x[i]
    /// The queue it was made on.
    const kiln::queue& queue() const noexcept { return queue_; }
    /// The coefficients on the queue's device.
    const kiln::buffer<T>& coefficients() const noexcept { return coefficients_; }
    /// The coefficients on `q`'s device: the stencil's own buffer there, else a copy (split
    /// vectors' other devices).
    kiln::buffer<T> coefficients_on(const kiln::queue& q) const {
        if (q.device() == queue_.device()) return coefficients_;
        return kiln::buffer<T>(q, host_coefficients_);
    }

  private:
    kiln::queue queue_;
    std::size_t width_, center_;
    std::vector<T> host_coefficients_;
    kiln::buffer<T> coefficients_;
};

namespace detail {

/// What a 1-D stencil node reads of x in one launch: x's part, its halos, and where it ends.
template <stencil_value T>
class stencil_operand {
  public:
    stencil_operand(const kiln::vector<T>& x, stencil_reach reach) : x_(&x), reach_(reach) {}

    /// The parameters' names.
    struct names {
        std::string xs, before, after, m, at_start, at_end;
        /// The leading arguments of kiln_stencil_load (all but the halo's length and the
        /// position): "xs, before, after, m, at_start, at_end".
        std::string load_arguments() const {
            return xs + ", " + before + ", " + after + ", " + m + ", " + at_start + ", " + at_end;
        }
    };
    /// Declares the parameters.
    names generate(generator& g) const {
        const std::string pointer = "global const " + opencl_type_name<T>() + "*";
        names n{g.new_name(), g.new_name(), g.new_name(), g.new_name(), g.new_name(), g.new_name()};
        g.parameter(pointer, n.xs);
        g.parameter(pointer, n.before);
        g.parameter(pointer, n.after);
        g.parameter("long", n.m);
        g.parameter("uint", n.at_start);
        g.parameter("uint", n.at_end);
        return n;
    }
    /// In a lane pass with stencil windows: the private window of this lane's step, which lane 0
    /// declares and fills (define_stencil_window), lane k's outputs starting at window[k].
    std::string step_window(generator& g, const names& n, std::size_t width,
                            std::size_t center) const {
        const std::string t = opencl_type_name<T>(), window = n.xs + "_window";
        const unsigned lanes = g.lanes();
        if (*g.lane() == 0) {
            const std::string fill = define_stencil_window(g.source, t, width, center, lanes);
            g.step_statement(t + " " + window + "[" + std::to_string(width + lanes - 1) + "];");
            g.step_statement(fill + "(" + n.load_arguments() + ", (long)(" + std::to_string(lanes) +
                             " * kiln_j), " + window + ");");
        }
        return window + " + " + std::to_string(*g.lane());
    }
    void collect(argument_list& args) const {
        const part_halo<T> halo = exchange_stencil_halo(*x_, args.part(), reach_);
        args.buffer(x_->part(args.part()));
        args.buffer(halo.before);
        args.buffer(halo.after);
        args.scalar<std::int64_t>(static_cast<std::int64_t>(x_->layout()[args.part()].size));
        args.scalar<std::uint32_t>(halo.at_start);
        args.scalar<std::uint32_t>(halo.at_end);
    }
    void check(operand_check& c) const {
        c.elementwise(x_->layout(), x_->size());
        c.read_elsewhere(x_->layout(), "a stencil");
    }
    const kiln::vector<T>& x() const noexcept { return *x_; }
    stencil_reach reach() const noexcept { return reach_; }

  private:
    const kiln::vector<T>* x_;
    stencil_reach reach_;
};

/// y = node (a stencil of x), one launch per part of x: through the tiled kernel, through runs of
/// one work-item each where the tuning has chunk_bytes (CPU devices, stencil_on_cpu.hpp), or
/// through the per-element kernel where its work_group_size is 0. `coefficients` is null for
/// user-defined stencils; `shape`'s tuning is each part's device's (plan_stencil).
template <stencil_value T, class Node>
void assign_tiled_1d(const Node& node, const stencil_operand<T>& operand, kiln::vector<T>& y,
                     const tiled_1d_shape& shape, const stencil<T>* coefficients) {
    const std::string call = "kiln::stencil";
    const kiln::vector<T>& x = operand.x();
    // Tiles are written while other tiles still read x.
    if (&x == &y)
        throw invalid_argument_error(call,
                                     "the target is the stencil's operand (x = x * S); write "
                                     "into another vector");
    operand_check check(call);
    vector_terminal<T>(y).check(check);
    operand.check(check);
    const layout parts = check.launch_layout();
    if (!parts.empty() && plan_stencil(parts[0].queue.device(), 1).work_group_size == 0)
        return assign(vector_terminal<T>(y), node, "kiln::vector assignment");
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (parts[k].size == 0) continue;
        const device dev = parts[k].queue.device();
        tiled_1d_shape part_shape = shape;
        part_shape.tuning = plan_stencil(dev, 1);
        const bool runs = part_shape.tuning.chunk_bytes != 0;
        const algorithm_program& built =
            runs ? stencil_runs_program(dev, part_shape) : tiled_stencil_program(dev, part_shape);
        const part_halo<T> halo = exchange_stencil_halo(x, k, operand.reach());
        kernel_binding args = built.binding(runs ? "kiln_stencil_1d_runs" : "kiln_stencil_1d");
        args.scalar("m", std::uint64_t{parts[k].size})
            .buffer("xs", x.part(k))
            .buffer("before", halo.before)
            .buffer("after", halo.after)
            .scalar("at_start", static_cast<std::uint32_t>(halo.at_start))
            .scalar("at_end", static_cast<std::uint32_t>(halo.at_end))
            .buffer("y", y.part(k))
            .buffer("c", coefficients ? coefficients->coefficients_on(parts[k].queue) : x.part(k));
        if (runs)
            launch_stencil_runs(built, parts[k].queue, parts[k].size, sizeof(T), part_shape.tuning,
                                std::move(args));
        else
            launch_tiled_stencil_1d(built, parts[k].queue, parts[k].size, part_shape,
                                    std::move(args));
    }
}

/// x * S at element idx of a launch.
template <stencil_value T>
class stencil_node : public expression_tag {
  public:
    using value_type = T;
    static constexpr bool vector_form = true;
    // Lane passes under stencil windows read x through the step's window; elsewhere (scans'
    // lanes) each lane is the element form at its own idx.
    static constexpr std::size_t contiguous_width = sizeof(T);
    stencil_node(const kiln::vector<T>& x, const stencil<T>& s)
        : operand_(x, {s.center(), s.width() - 1 - s.center()}), stencil_(&s) {}

    std::string generate(generator& g) const {
        if (g.vector_width()) return generate_vector(g);
        g.note_neighbour_reads();
        if (g.stencil_windows() && stencil_->width() <= max_window_width)
            return generate_windowed(g);
        const std::string t = opencl_type_name<T>();
        const std::string function = "kiln_stencil_" + t;
        const std::string load = define_stencil_load(g.source, t);
        // Away from the part's ends one contiguous window, with no halo to consult.
        g.source.define(function,
                        t + " " + function + "(global const " + t + "* xs, global const " + t +
                            "* before, global const " + t +
                            "* after, long m, uint at_start, uint at_end, " + "global const " + t +
                            "* c, long width, long center, long i) {\n    " + t +
                            " sum = 0;\n"
                            "    if (i >= center && i + width - center <= m) {\n"
                            "        global const " +
                            t +
                            "* w = xs + (i - center);\n"
                            "        for (long k = 0; k < width; ++k) sum += c[k] * w[k];\n"
                            "        return sum;\n    }\n"
                            "    for (long k = 0; k < width; ++k)\n        sum += c[k] * " +
                            load +
                            "(xs, before, center, after, i + k - center, m, at_start, at_end);\n"
                            "    return sum;\n}\n");
        const std::string x = operand_.generate(g).load_arguments();
        const std::string c = g.new_name(), width = g.new_name(), center = g.new_name();
        g.parameter("global const " + t + "*", c);
        g.parameter("long", width);
        g.parameter("long", center);
        return function + "(" + x + ", " + c + ", " + width + ", " + center + ", (long)idx)";
    }
    void collect(argument_list& args) const {
        operand_.collect(args);
        args.buffer(stencil_->coefficients_on(operand_.x().layout()[args.part()].queue));
        args.scalar<std::int64_t>(static_cast<std::int64_t>(stencil_->width()));
        args.scalar<std::int64_t>(static_cast<std::int64_t>(stencil_->center()));
    }
    void check(operand_check& c) const {
        operand_.check(c);
        c.kernel_variant("stencil " + std::to_string(stencil_->width()) + " " +
                         std::to_string(stencil_->center()));
    }

    /// y = x * S alone: tiles or runs (assign_tiled_1d).
    void assign_to(kiln::vector<T>& y) const {
        const tiled_1d_shape shape{
            opencl_type_name<T>(), stencil_->width(), stencil_->center(), "", {}};
        assign_tiled_1d(*this, operand_, y, shape, stencil_);
    }

  private:
    /// Wider stencils keep the run-time form (lane by lane in the wide loop): their unrolled taps
    /// and window would take more registers than a work-item has.
    static constexpr std::size_t max_window_width = 32;

    /// Width and centre as constants (the statement's kernel variant), the coefficients read
    /// into registers once per work-item: the same parameters as the run-time form.
    std::string generate_windowed(generator& g) const {
        const std::string t = opencl_type_name<T>();
        const std::size_t width = stencil_->width(), center = stencil_->center();
        const auto x = operand_.generate(g);
        const std::string c = g.new_name();
        g.parameter("global const " + t + "*", c);
        g.parameter("long", g.new_name());
        g.parameter("long", g.new_name());
        std::string coefficients;
        for (std::size_t k = 0; k < width; ++k) {
            const std::string name = c + "_" + std::to_string(k);
            coefficients += ", " + name;
            if (!g.lane())
                g.prologue("const " + t + " " + name + " = " + c + "[" + std::to_string(k) + "];");
        }
        if (g.lane())
            return define_stencil_taps(g.source, t, width) + "(" +
                   operand_.step_window(g, x, width, center) + coefficients + ")";
        return define_stencil_element(g.source, t, width, center) + "(" + x.load_arguments() +
               coefficients + ", (long)idx)";
    }

    /// Outputs idx .. idx + width - 1 of the interior, whose windows lie inside the part: the
    /// element form's interior sum, lane by lane.
    std::string generate_vector(generator& g) const {
        const std::string t = opencl_type_name<T>(), v = g.value_type(t);
        const std::string function = "kiln_stencil_" + v;
        const std::string lanes = std::to_string(*g.vector_width());
        g.source.define(
            function,
            v + " " + function + "(global const " + t + "* xs, global const " + t +
                "* c, long width, long center, long i) {\n    " + v +
                " sum = 0;\n    for (long k = 0; k < width; ++k) sum += " + "c[k] * vload" + lanes +
                "(0, xs + (i + k - center));\n    return sum;\n}\n");
        const auto x = operand_.generate(g);
        const std::string c = g.new_name(), width = g.new_name(), center = g.new_name();
        g.vector_bounds(center, x.m + " - " + width + " + " + center + " + 1");
        return function + "(" + x.xs + ", " + c + ", " + width + ", " + center + ", (long)idx)";
    }

    stencil_operand<T> operand_;
    const stencil<T>* stencil_;
};

/// name(x) for a KILN_STENCIL_OPERATOR: element idx is the user's body over a window of x.
template <class Definition>
class operator_stencil_node : public expression_tag {
  public:
    using value_type = typename Definition::value_type;
    static constexpr std::size_t width = Definition::stencil_width;
    static constexpr std::size_t center = Definition::stencil_center;
    // Bodies that mean the same over vectors (body_runs_in_lanes); others decline.
    static constexpr bool vector_form = true;
    // As stencil_node's.
    static constexpr std::size_t contiguous_width = sizeof(value_type);
    explicit operator_stencil_node(const kiln::vector<value_type>& x)
        : operand_(x, {center, width - 1 - center}) {}

    std::string generate(generator& g) const {
        if (g.vector_width()) return generate_vector(g);
        g.note_neighbour_reads();
        if (g.lane() && g.stencil_windows()) return generate_lane(g);
        const std::string t = opencl_type_name<value_type>();
        const std::string function =
            "kiln_stencil_op_" + std::string(Definition::operator_name) + "_" + t;
        const std::string load = define_stencil_load(g.source, t);
        const std::string w = std::to_string(width), c = std::to_string(center);
        // The window is copied to private memory first, so that the body reads plain x[k].
        g.source.define(
            function, t + " " + function + "(global const " + t + "* xs, global const " + t +
                          "* before, global const " + t +
                          "* after, long m, uint at_start, uint at_end, long i) {\n    " + t +
                          " window[" + w + "];\n    for (long k = 0; k < " + w +
                          "; ++k)\n        window[k] = " + load + "(xs, before, " + c +
                          ", after, i + k - " + c + ", m, at_start, at_end);\n    const " + t +
                          "* x = window + " + c + ";\n    return (" + Definition::body + ");\n}\n");
        return function + "(" + operand_.generate(g).load_arguments() + ", (long)idx)";
    }
    void collect(argument_list& args) const { operand_.collect(args); }
    void check(operand_check& c) const { operand_.check(c); }

    /// y = name(x) alone: tiles or runs (assign_tiled_1d).
    void assign_to(kiln::vector<value_type>& y) const {
        const tiled_1d_shape shape{
            opencl_type_name<value_type>(), width, center, Definition::body, {}};
        assign_tiled_1d(*this, operand_, y, shape,
                        static_cast<const stencil<value_type>*>(nullptr));
    }

  private:
    /// This lane's output: the body over the step's window.
    std::string generate_lane(generator& g) const {
        const std::string t = opencl_type_name<value_type>();
        const std::string function =
            "kiln_stencil_op_" + std::string(Definition::operator_name) + "_" + t + "_body";
        g.source.define(function, t + " " + function + "(const " + t + "* x) {\n    return (" +
                                      Definition::body + ");\n}\n");
        const auto x = operand_.generate(g);
        return function + "(" + operand_.step_window(g, x, width, center) + " + " +
               std::to_string(center) + ")";
    }

    /// Outputs idx .. idx + lanes - 1 of the interior: the body over vectors, x[k] being the
    /// vector of the lanes' neighbours at k, as the CPU runs of y = name(x) alone compute it.
    std::string generate_vector(generator& g) const {
        const std::string t = opencl_type_name<value_type>(), v = g.value_type(t);
        const auto x = operand_.generate(g);
        if (!body_runs_in_lanes(Definition::body, t)) {
            g.decline_vector_form();
            return "";
        }
        const std::string function =
            "kiln_stencil_op_" + std::string(Definition::operator_name) + "_" + v;
        const std::string w = std::to_string(width), c = std::to_string(center);
        g.source.define(
            function, v + " " + function + "(global const " + t + "* xs, long i) {\n    " + v +
                          " window[" + w + "];\n    for (long k = 0; k < " + w +
                          "; ++k)\n        window[k] = vload" + std::to_string(*g.vector_width()) +
                          "(0, xs + (i + k - " + c + "));\n    const " + v + "* x = window + " + c +
                          ";\n    return (" + Definition::body + ");\n}\n");
        // The body's built-ins need finite lanes (generator::vector_condition).
        g.source.define(function + "_finite", "int " + function + "_finite(global const " + t +
                                                  "* xs, long i) {\n    for (long k = 0; k < " + w +
                                                  "; ++k)\n        if (!all(isfinite(vload" +
                                                  std::to_string(*g.vector_width()) +
                                                  "(0, xs + (i + k - " + c +
                                                  "))))) return 0;\n    return 1;\n}\n");
        g.vector_condition(function + "_finite(" + x.xs + ", (long)idx)");
        g.vector_bounds(c, x.m + " - " + std::to_string(width - 1 - center));
        return function + "(" + x.xs + ", (long)idx)";
    }

    stencil_operand<value_type> operand_;
};

}  // namespace detail

/// The stencil applied to every element of x (clamped at the ends), as an expression.
template <stencil_value T>
detail::stencil_node<T> operator*(const vector<T>& x, const stencil<T>& s) {
    return {x, s};
}

/// What KILN_STENCIL_OPERATOR defines: called on a vector, an expression.
template <class Definition>
struct stencil_operator {
    static_assert(stencil_value<typename Definition::value_type>,
                  "a stencil operator's type is float or double");
    static_assert(Definition::stencil_width > 0 &&
                      Definition::stencil_center < Definition::stencil_width,
                  "a stencil operator's center is one of its width's positions");
    /// The operator applied to every element of `x`, a term of vector expressions.
    detail::operator_stencil_node<Definition> operator()(
        const vector<typename Definition::value_type>& x) const {
        return detail::operator_stencil_node<Definition>(x);
    }
};

}  // namespace kiln

/// A user-defined stencil `name`, at namespace scope: `y = name(x)` sets y[i] to `body` (OpenCL C)
/// in which x[k] is x[clamp(i + k, 0, n - 1)] for k from -center to width - 1 - center.
///
///     KILN_STENCIL_OPERATOR(coupling, float, 3, 1, sin(x[0] - x[-1]) + sin(x[0] - x[1]));
#define KILN_STENCIL_OPERATOR(name, type, width, center, ...)                        \
    struct name##_kiln_stencil_definition {                                          \
        using value_type = type;                                                     \
        static constexpr std::size_t stencil_width = width, stencil_center = center; \
        static constexpr const char* operator_name = #name;                          \
        static constexpr const char* body = #__VA_ARGS__;                            \
    };                                                                               \
    inline constexpr ::kiln::stencil_operator<name##_kiln_stencil_definition> name {}

#include <kiln/stencil_2d.hpp>
#pragma GCC visibility pop
