// SPDX-License-Identifier: Apache-2.0
// Assignment of expressions: one fused kernel per statement, several results per kernel (tie).
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/target_features.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/expr/fused.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/runtime/determinism.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

template <class T>
class vector_terminal;

/// Nodes that can be written: vectors and views. written_layout() is the layout of the vector
/// they write, which identifies it (operand_check::written).
template <class T>
concept target_node = expression_node<T> && requires(const T& t, generator& g) {
    { t.generate_target(g) } -> std::same_as<std::string>;
    { t.written_layout() } -> std::same_as<const layout&>;
};

/// The member of each element a target stores: "" (the whole element) unless it is a member's.
template <target_node Target>
std::string written_member(const Target& target) {
    if constexpr (requires { target.written_member(); })
        return target.written_member();
    else
        return {};
}

/// Targets[i] = Values[i] for every i and every element, in one kernel. All values are computed
/// before any target is stored, so tie(x, y) = std::make_tuple(y, x) swaps.
template <class Targets, class Values>
class assignment {
  public:
    static constexpr std::size_t count = std::tuple_size_v<Targets>;

    assignment(Targets targets, Values values)
        : targets_(std::move(targets)), values_(std::move(values)) {}

    /// `call`, a literal, names the statement in error messages.
    void run(const char* call) const {
        operand_check check(call);
        std::apply([&](const auto&... t) { (t.check(check), ...); }, targets_);
        std::apply([&](const auto&... v) { (v.check(check), ...); }, values_);
        // Reproducible mode compiles the kernel without contraction (source): a kernel of its
        // own, which joins no fused group, whose text has no contraction.
        const bool reproducible = current_determinism() == determinism::reproducible;
        if (reproducible) check.kernel_variant("reproducible");
        std::apply([&](const auto&... t) { (check.written(t.written_layout()), ...); }, targets_);
        if constexpr (count > 1)
            std::apply(
                [&](const auto&... t) {
                    check.written_once({{&t.written_layout(), written_member(t)}...});
                },
                targets_);
        const layout& parts = check.launch_layout();
        if (fused_group* group = active_fused_group();
            group && check.elementwise_only() && joins(*group, parts)) {
            hold(*group, held(parts[0]), parts[0]);
            return;
        }
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const part_extent& part = parts[k];
            if (part.size == 0) continue;
            argument_list args(k, part.begin);
            args.scalar<std::uint64_t>(part.size);
            std::apply([&](const auto&... t) { (t.collect(args), ...); }, targets_);
            std::apply([&](const auto&... v) { (v.collect(args), ...); }, values_);
            packed_arguments passed(part.queue.device());
            for (const kernel_argument& arg : args.arguments()) passed.add(arg);
            const generated_kernel& kernel = cache_for<assignment>().get(
                part.queue.device(), "kiln_assign",
                [&](const launch_policy& policy) {
                    return source(policy, target_features_for(part.queue.device()), &passed,
                                  reproducible);
                },
                passed.variant(check.kernel_variant()));
            passed.pass(args.arguments_to_change());
            kernel.launch(part.queue, kernel.groups_for(part.size), args.arguments());
        }
    }

    /// This statement's share of a fused kernel: its values in registers, then its stores.
    fused_fragment fused_source(generator& g) const {
        const body b = generate_body(g);
        fused_fragment fragment;
        fragment.lines = g.statements();
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (fused_value<I>(g, b, fragment), ...);
            (fragment.lines.push_back(store<I>(b, fragment.kept[I])), ...);
        }
        (std::make_index_sequence<count>{});
        // Only registers of what the vector keeps stand for its memory in later statements.
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((keeps_register<I>() ? void() : fragment.kept[I].clear()), ...);
        }
        (std::make_index_sequence<count>{});
        return fragment;
    }

    /// The kernel's text for `target`; `passed` says how its launch passes its arguments (each
    /// as declared where null). `reproducible` (kiln::determinism::reproducible): no a * b + c
    /// contracted into one rounding, so that every device rounds the same operations.
    std::string source(const launch_policy& policy, const target_features& target,
                       const packed_arguments* passed = nullptr, bool reproducible = false) const {
        const loop_style style = policy.loop;
        const element_rules rules = element_rules_for(policy, target, reproducible);
        source_builder builder;
        if (!rules.contraction) builder.turn_off_contraction();
        generator g(builder);
        g.follow(rules);
        g.set_stencil_windows(policy.stencil_windows);
        builder.begin_kernel("kiln_assign");
        g.parameter("ulong", "n");
        body element = generate_body(g);
        if (passed) passed->declare(builder);
        builder.begin_body();
        for (const auto& line : g.prologue()) builder.line(line);
        const unsigned lanes = style == loop_style::chunked ? vector_lanes(policy.vector_bytes) : 0;
        // Only statements with a vector form instantiate it: its stores need one of every target.
        if constexpr (vector_form) {
            if (lanes > 1) {
                generator vectors(builder, generator::vector_pass{lanes});
                vectors.follow(rules);
                const body vector_body = generate_body(vectors);
                if (!vectors.vector_declined()) {
                    emit_vector_chunk(builder, lanes, vectors, vector_body, g.statements(),
                                      element);
                    builder.end_kernel();
                    return builder.str();
                }
            }
        }
        if (style == loop_style::strided && wide_lanes > 1 &&
            (policy.stencil_windows || !g.neighbour_reads())) {
            // GPUs: each work-item moves 16 bytes per vector per iteration (4 floats, 8 halves);
            // one wide access instead of several narrow ones is what brings a streaming kernel
            // to the copy bandwidth. The n % lanes elements left over go through the element
            // loop below.
            const std::string lanes = std::to_string(wide_lanes);
            builder.line("const ulong kiln_wide_n = n / " + lanes + ";");
            builder.open(
                "for (ulong kiln_j = (ulong)get_global_id(0); kiln_j < kiln_wide_n; "
                "kiln_j += (ulong)get_global_size(0))");
            std::vector<generator> lane_generators;
            std::vector<body> lane_bodies;
            lane_generators.reserve(wide_lanes);
            for (unsigned lane = 0; lane < wide_lanes; ++lane) {
                lane_generators.emplace_back(builder, lane, wide_lanes);
                lane_generators.back().follow(rules);
                lane_generators.back().set_stencil_windows(policy.stencil_windows);
                lane_bodies.push_back(generate_body(lane_generators.back()));
            }
            for (const auto& load : lane_generators[0].wide_loads())
                builder.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                             load.wide_type + "*)" + load.name + ")[kiln_j];");
            for (const auto& statement : lane_generators[0].step_statements())
                builder.line(statement);
            for (const auto& store : lane_generators[0].wide_stores())
                builder.line(store.wide_type + " " + store.name + "_out;");
            for (unsigned lane = 0; lane < wide_lanes; ++lane) {
                builder.open("");
                builder.line("const ulong idx = " + lanes + " * kiln_j + " + std::to_string(lane) +
                             ";");
                emit(builder, lane_generators[lane].statements(), lane_bodies[lane]);
                builder.close();
            }
            for (const auto& store : lane_generators[0].wide_stores())
                builder.line("((global " + store.wide_type + "*)" + store.name +
                             ")[kiln_j] = " + store.name + "_out;");
            builder.close();
            builder.open_element_loop({"kiln_wide_n * " + lanes + " + (ulong)get_global_id(0)", "n",
                                       "(ulong)get_global_size(0)"},
                                      "idx");
        } else {
            builder.open_element_loop(builder.declare_element_range(style, "n"), "idx");
        }
        emit(builder, g.statements(), element);
        builder.end_kernel();
        return builder.str();
    }

  private:
    template <std::size_t I>
    using target_type = typename std::tuple_element_t<I, Targets>::value_type;
    template <std::size_t I>
    using value_type = typename std::tuple_element_t<I, Values>::value_type;

    /// Elements per wide access (16 bytes), or 1 when the statement cannot be widened.
    static constexpr unsigned wide_lanes = [] {
        constexpr std::size_t width = [] {
            std::size_t w = any_width;
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((w = combine_widths(w, width_of<std::tuple_element_t<I, Targets>>())), ...);
                ((w = combine_widths(w, width_of<std::tuple_element_t<I, Values>>())), ...);
            }
            (std::make_index_sequence<count>{});
            return w;
        }();
        return width == 0 || width == any_width ? 1u : static_cast<unsigned>(16 / width);
    }();

    /// What one element's statement stores where, and under which conditions ("" for always);
    /// in a lane pass, its targets are components of the wide stores.
    struct body {
        std::array<std::string, count> stores, values, guards;
        bool in_lanes = false;
    };
    body generate_body(generator& g) const {
        body b;
        b.in_lanes = g.lane().has_value();
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((b.stores[I] = std::get<I>(targets_).generate_target(g),
              b.guards[I] = g.take_store_guard()),
             ...);
            ((b.values[I] = convert_value<target_type<I>, value_type<I>>(
                  g.source, std::get<I>(values_).generate(g))),
             ...);
        }
        (std::make_index_sequence<count>{});
        return b;
    }
    /// The statement as a fused group holds it: a copy, its arguments and the vectors it uses.
    held_statement held(const part_extent& part) const {
        argument_list args(0, part.begin, argument_list::identify_vectors{});
        std::apply([&](const auto&... t) { (t.collect(args), ...); }, targets_);
        std::apply([&](const auto&... v) { (v.collect(args), ...); }, values_);
        held_statement statement;
        statement.argument_vectors = args.take_argument_vectors();
        statement.arguments = std::move(args).take();
        reuse_vector_list(statement.written, count);
        std::apply([&](const auto&... t) { statement.written = {&t.written_layout()...}; },
                   targets_);
        statement.statement = make_held_statement<fused_assignment>(*this);
        return statement;
    }
    class fused_assignment final : public fused_statement {
      public:
        explicit fused_assignment(const assignment& statement) : statement_(statement) {}
        const std::type_info& type() const noexcept override { return typeid(assignment); }
        fused_fragment generate(generator& g) const override { return statement_.fused_source(g); }

      private:
        assignment statement_;
    };

    /// Whether target I's register holds what its vector keeps: a whole element of a vector
    /// that stores its values as computed (a half vector rounds them; a member is a part).
    template <std::size_t I>
    static constexpr bool keeps_register() {
        using T = target_type<I>;
        return std::is_same_v<std::tuple_element_t<I, Targets>, vector_terminal<T>> &&
               std::is_arithmetic_v<T>;
    }
    /// Target I's value into its register: through kiln_rounded_* for floating-point values, so
    /// that no contraction joins it to a later statement (fused_fragment::rounded).
    template <std::size_t I>
    static void fused_value(generator& g, const body& b, fused_fragment& fragment) {
        using T = target_type<I>;
        const std::string name = g.local_name("r" + std::to_string(I));
        fragment.registers.push_back(opencl_type_name<T>() + " " + name + ";");
        std::string value = b.values[I];
        if constexpr (std::is_floating_point_v<T>) {
            fragment.rounded.push_back(opencl_type_name<T>());
            value = "kiln_rounded_" + opencl_type_name<T>() + "(" + value + ")";
        }
        fragment.lines.push_back(name + " = " + value + ";");
        fragment.kept.push_back(name);
    }
    static void emit(source_builder& builder, const std::vector<std::string>& statements,
                     const body& b) {
        for (const auto& statement : statements) builder.line(statement);
        if constexpr (count == 1) {
            builder.line(store<0>(b, b.values[0]));
        } else {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                (builder.line("const " + opencl_type_name<target_type<I>>() + " result" +
                              std::to_string(I) + " = " + b.values[I] + ";"),
                 ...);
                (builder.line(store<I>(b, "result" + std::to_string(I))), ...);
            }
            (std::make_index_sequence<count>{});
        }
    }
    /// Target I's store of `value`: an assignment, or a conversion where the target keeps
    /// another type than it computes with (half, bfloat16); behind the target's guard where it
    /// has one (a permutation's bounds).
    template <std::size_t I>
    static std::string store(const body& b, const std::string& value) {
        using storage = storage_of_t<std::tuple_element_t<I, Targets>>;
        const std::string statement = [&] {
            // Only targets with wide accesses (width_of) have lane passes.
            if constexpr (requires { typename storage::lane_storage; })
                if (b.in_lanes) return storage::lane_storage::store(b.stores[I], value);
            return storage::store(b.stores[I], value);
        }();
        return b.guards[I].empty() ? statement : "if (" + b.guards[I] + ") " + statement;
    }

    /// Whether the statement has a vector form: every target and value of one floating-point
    /// type (as computed: half's is float), and every node with a vector form.
    static constexpr bool vector_form = []<std::size_t... I>(std::index_sequence<I...>) {
        return (vector_forms_of<target_type<0>, std::tuple_element_t<I, Targets>,
                                std::tuple_element_t<I, Values>>() &&
                ...);
    }
    (std::make_index_sequence<count>{});
    /// Elements per step of the chunked loop's vector form under `vector_bytes`: an OpenCL C
    /// vector width (2, 4, 8 or 16), or 0 where the statement has none.
    static unsigned vector_lanes(std::size_t vector_bytes) {
        if constexpr (!vector_form)
            return 0;
        else
            return vector_lanes_for(vector_bytes, sizeof(target_type<0>));
    }

    /// The chunked loop in vector form: each work-item's chunk (a multiple of `lanes` elements)
    /// steps `lanes` elements at a time over the elements that every node's vector form
    /// computes (a stencil's interior), and finishes the elements before and after them with
    /// the element loop.
    static void emit_vector_chunk(source_builder& builder, unsigned lanes, const generator& vectors,
                                  const body& vector_body,
                                  const std::vector<std::string>& statements, const body& element) {
        builder.declare_element_range(loop_style::chunked, "n", lanes);
        const std::string w = std::to_string(lanes);
        const auto element_loop = [&](const std::string& from, const std::string& to) {
            builder.open_element_loop({from, to, "1"}, "idx");
            emit(builder, statements, element);
            builder.close();
        };
        if (vectors.vector_firsts().empty()) {
            builder.line("const ulong kiln_vector_begin = kiln_begin;");
            builder.line("const ulong kiln_vector_end = kiln_begin + (kiln_end - kiln_begin) / " +
                         w + " * " + w + ";");
        } else {
            // Ternaries rather than max() and min(), as in declare_element_range.
            builder.line("long kiln_lowest = (long)kiln_begin, kiln_limit = (long)kiln_end;");
            for (const auto& first : vectors.vector_firsts())
                builder.line("kiln_lowest = kiln_lowest > (" + first + ") ? kiln_lowest : (" +
                             first + ");");
            for (const auto& end : vectors.vector_ends())
                builder.line("kiln_limit = kiln_limit < (" + end + ") ? kiln_limit : (" + end +
                             ");");
            builder.line(
                "const ulong kiln_vector_begin = kiln_lowest < (long)kiln_end ? (ulong)kiln_lowest "
                ": kiln_end;");
            builder.line(
                "const ulong kiln_vector_end = kiln_limit > (long)kiln_vector_begin ? "
                "kiln_vector_begin + (ulong)(kiln_limit - (long)kiln_vector_begin) / " +
                w + " * " + w + " : kiln_vector_begin;");
            element_loop("kiln_begin", "kiln_vector_begin");
        }
        builder.open_element_loop({"kiln_vector_begin", "kiln_vector_end", w}, "kiln_step");
        builder.line("const ulong idx = kiln_step;");
        for (const auto& statement : vectors.statements()) builder.line(statement);
        std::string condition;
        for (const auto& c : vectors.vector_conditions())
            condition += (condition.empty() ? "" : " && ") + c;
        if (!condition.empty()) builder.open("if (" + condition + ")");
        const std::string type = vectors.value_type(opencl_type_name<target_type<0>>());
        for (std::size_t i = 0; i < count; ++i)
            builder.line("const " + type + " result" + std::to_string(i) + " = " +
                         vector_body.values[i] + ";");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (builder.line(storage_of_t<std::tuple_element_t<I, Targets>>::vector_store(
                 lanes, "result" + std::to_string(I), vector_body.stores[I])),
             ...);
        }
        (std::make_index_sequence<count>{});
        if (!condition.empty()) {
            builder.close();
            // The step's elements one by one, each its own idx.
            builder.open("else");
            builder.open("for (ulong kiln_lane = 0; kiln_lane < " + w + "; ++kiln_lane)");
            builder.line("const ulong idx = kiln_step + kiln_lane;");
            emit(builder, statements, element);
            builder.close();
            builder.close();
        }
        builder.close();
        element_loop("kiln_vector_end", "kiln_end");
    }

    Targets targets_;
    Values values_;
};

template <class Target, class Value>
concept assignable_to = target_node<Target> && expression_operand<Value> &&
    storable_as<typename Target::value_type, beside_value_t<Value, typename Target::value_type>>;

/// target = value (a scalar value takes the target's type).
template <target_node Target, class Value>
requires assignable_to<Target, Value>
void assign(const Target& target, const Value& value, const char* call) {
    auto node = as_node_beside<typename Target::value_type>(value);
    assignment<std::tuple<Target>, std::tuple<decltype(node)>>({target}, {std::move(node)})
        .run(call);
}

template <class Target>
auto as_target(const Target& target) {
    if constexpr (target_node<Target>)
        return target;
    else
        return terminal_for<Target>::make(target);
}

template <class X>
concept target_like = target_node<X> ||
    (has_terminal<X>&& target_node<decltype(terminal_for<X>::make(std::declval<const X&>()))>);

/// What kiln::tie returns: several targets assigned together from a tuple of expressions.
template <target_node... Targets>
class tied_targets {
  public:
    explicit tied_targets(Targets... targets) : targets_(std::move(targets)...) {}

    template <class... Values>
    requires(sizeof...(Values) == sizeof...(Targets)) &&
        (assignable_to<Targets, Values> && ...) const tied_targets& operator=(
            const std::tuple<Values...>& values) const {
        auto nodes = std::apply(
            [](const auto&... v) {
                return [&]<std::size_t... I>(std::index_sequence<I...>) {
                    return std::make_tuple(
                        as_node_beside<
                            typename std::tuple_element_t<I, std::tuple<Targets...>>::value_type>(
                            v)...);
                }
                (std::index_sequence_for<Values...>{});
            },
            values);
        assignment<std::tuple<Targets...>, decltype(nodes)>(targets_, std::move(nodes))
            .run("kiln::tie assignment");
        return *this;
    }

  private:
    std::tuple<Targets...> targets_;
};

}  // namespace detail

/// Several results from one kernel:
///
///     kiln::tie(sum, difference) = std::make_tuple(x + y, x - y);
///
/// Every value is computed before any target is written. The targets (vectors or views) must
/// have the same size and split over devices, and each write a vector of its own: tie(a, a), or
/// two views of one vector, throws invalid_argument_error.
template <class... Targets>
requires(sizeof...(Targets) >= 1) && (detail::target_like<std::remove_cvref_t<Targets>> && ...) &&
    (!std::is_const_v<std::remove_reference_t<Targets>> && ...) auto tie(Targets&&... targets) {
    return detail::tied_targets<decltype(detail::as_target(targets))...>(
        detail::as_target(targets)...);
}

}  // namespace kiln
#pragma GCC visibility pop
