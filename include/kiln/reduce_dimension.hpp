// Reductions along one dimension of an expression viewed as a dense row-major array: row sums,
// column maxima... into a kiln::vector, with every reducer that kiln::reduce has.
//
//     kiln::vector<float> row_sums = kiln::reduce<kiln::reducers::sum>(kiln::extents{rows,
//     columns}, x, 1);
//
// Each result element is the fold of its line of elements, with the reducer's device code (so
// NaN and empty lines behave as in kiln::reduce); in order, except that on CPU devices a
// contiguous line folds in contiguous_lanes interleaved parts. The shapes:
//   - one work-item per result, walking its line (a single kernel);
//   - on GPUs, for lines that are contiguous (the last dimension reduced) and at least
//     group_line_threshold long, one work-group per result, its work-items reading
//     neighbouring elements of the line, then a tree in local memory (a single kernel);
//   - on CPU devices (chunked element-wise launches), for contiguous lines at least
//     4 * contiguous_lanes long, one work-item per result, element k folded into lane
//     k % contiguous_lanes and the lanes folded at the end: independent additions that the
//     compiler turns into vector operations, where one running fold is a chain of dependent
//     ones that takes 4 times as long on the 2-core machine;
//   - for strided lines (another dimension reduced) longer than slice_length, each line cut into
//     slices of slice_length: one work-item per (slice, result), neighbouring work-items on
//     neighbouring results of one slice (GPUs coalesce those reads), then a second kernel folds
//     each result's slices in order. Without slices a column sum of a 8192 x 8192 matrix had
//     8192 work-items only: 9% of the H100's copy bandwidth (2026-11-22). On CPU devices one
//     work-item per (slice, strip of adjacent lines) instead, folding the strip's lines side by
//     side row after row, each in order: the strip is a whole row where its states fit in
//     strip_state_bytes, so that a work-item reads one contiguous block (strip_width_for).
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/group_collectives.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/reduce.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace kiln {

/// The shape of a dense row-major array: kiln::extents{rows, columns} puts element (r, c) at
/// r * columns + c. One to three dimensions.
template <std::size_t Rank>
requires(Rank >= 1 && Rank <= 3) class extents {
  public:
    template <std::integral... S>
    requires(sizeof...(S) == Rank) constexpr extents(S... sizes)  // NOLINT: reads like braces
        : sizes_{static_cast<std::size_t>(sizes)...} {}

    constexpr std::size_t operator[](std::size_t d) const { return sizes_[d]; }
    static constexpr std::size_t rank() { return Rank; }

  private:
    std::array<std::size_t, Rank> sizes_;
};
template <std::integral... S>
extents(S...) -> extents<sizeof...(S)>;

namespace detail {

/// What a dimension reduction stores per result, by default the reducer's state itself (any and
/// all: 0 or 1 in an int32, kiln::vector having no bool).
template <class Reducer, class T>
struct dimension_output {
    using traits = typename Reducer::template on<T>;
    using type = std::conditional_t<std::is_same_v<typename traits::result, bool>, std::int32_t,
                                    typename traits::result>;
    static constexpr std::size_t count = 1;
    static std::string value(source_builder& source, const std::string& state, std::size_t) {
        return convert_value<type, typename traits::state>(source, state);
    }
};
/// The compensated sum is the running sum plus the error it carries.
template <class T>
struct dimension_output<reducers::kahan_sum, T> {
    using type = T;
    static constexpr std::size_t count = 1;
    static std::string value(source_builder&, const std::string& state, std::size_t) {
        return "(" + state + ".x + " + state + ".y)";
    }
};
/// Minima and maxima go to two vectors.
template <class T>
struct dimension_output<reducers::minmax, T> {
    using type = T;
    static constexpr std::size_t count = 2;
    static std::string value(source_builder&, const std::string& state, std::size_t k) {
        return state + (k == 0 ? ".x" : ".y");
    }
};

/// Lines at least this long, when contiguous, get a work-group each on GPUs: a shorter one would
/// leave most of a 256-item group idle. From the shape of the work, not measured yet.
inline constexpr std::size_t group_line_threshold = 64;
/// Elements per slice of a strided line: 128 cache lines (8 KiB) stay in a CPU core's L1 while
/// a work-item walks the slice for each of its results; on GPUs, slices of a 8192-long column
/// give 64 work-items per result. Chosen from that arithmetic, not tuned.
inline constexpr std::size_t slice_length = 128;

/// The most bytes of states a work-item keeps for its strip of adjacent strided lines on CPU
/// devices (line_shape::strip): 8192 floats, whole rows of most matrices, so that a work-item
/// reads one contiguous block of slice_length rows, which the prefetchers follow; strips of 16
/// to 2048 floats of a 4096-column matrix, each row's part a jump to another page, took 2-5
/// times as long on the 2-core machine (PoCL 3.1, 2026-11-25).
inline constexpr std::size_t strip_state_bytes = 32 * 1024;
/// Work-items per compute unit that the strips aim for at least, halving their width (down to
/// 16 lines) where the rows' blocks alone leave cores idle.
inline constexpr std::size_t strips_per_compute_unit = 2;

/// The most lines of a strip, for states of `state_bytes`: the size of a work-item's array of
/// states.
inline std::size_t strip_capacity(std::size_t state_bytes) {
    return std::max<std::size_t>(16, strip_state_bytes / state_bytes / 16 * 16);
}

/// The strip width for lines `inner` apart, `blocks` outer positions times slices, on a device of
/// `compute_units`: whole rows where they fit in strip_state_bytes of states and give every
/// compute unit work.
inline std::size_t strip_width_for(std::size_t inner, std::size_t blocks, std::size_t state_bytes,
                                   std::size_t compute_units) {
    std::size_t width = std::min(inner, strip_capacity(state_bytes));
    const std::size_t wanted = std::max<std::size_t>(compute_units, 1) * strips_per_compute_unit;
    while (width > 16 && blocks * ((inner + width - 1) / width) < wanted)
        width = std::max<std::size_t>(16, (width / 2 + 15) / 16 * 16);
    return width;
}

/// Accumulators a work-item keeps for its contiguous line on CPU devices (line_shape::lanes):
/// element k goes to lane k % contiguous_lanes, and the lanes fold in order at the end, so that
/// the line's additions are independent vector operations rather than one dependent chain.
inline constexpr std::size_t contiguous_lanes = 32;

enum class line_shape { item, group, slice, strip, lanes };

template <class Reducer, expression_node Value, line_shape Shape>
class dimension_reduction {
  public:
    using traits = typename Reducer::template on<typename Value::value_type>;
    using state = typename traits::state;
    using output = dimension_output<Reducer, typename Value::value_type>;
    using result_vector = kiln::vector<typename output::type>;

    explicit dimension_reduction(Value value) : value_(std::move(value)) {}

    /// Reduces lines of `length` elements `inner` apart into `results` (for slices: states of
    /// `slices` slices per line into `partials`, slice-major).
    void run(const queue& q, std::size_t length, std::size_t inner,
             const std::array<result_vector*, output::count>& results, std::size_t slices = 1,
             const buffer<std::byte>* partials = nullptr) const {
        const std::size_t n = results[0]->size();
        const generated_kernel& kernel = cache_for<dimension_reduction>().get(
            q.device(), "kiln_reduce_dimension",
            [this](loop_style style) { return source(style); });
        argument_list args(0, 0);
        args.scalar<std::uint64_t>(n);
        args.scalar<std::uint64_t>(length);
        args.scalar<std::uint64_t>(inner);
        std::size_t width = 1;
        if constexpr (Shape == line_shape::strip)
            width = strip_width_for(inner, n / inner * slices, sizeof(state),
                                    q.device().properties().compute_units);
        if constexpr (Shape == line_shape::slice || Shape == line_shape::strip) {
            args.scalar<std::uint64_t>(slices);
            args.buffer(*partials);
            if constexpr (Shape == line_shape::strip) args.scalar<std::uint64_t>(width);
        } else {
            for (auto* result : results) args.buffer(result->part(0));
        }
        if constexpr (Shape == line_shape::group) args.local<state>(kernel.work_group_size());
        args.scalar(traits::identity());
        value_.collect(args);
        const std::size_t items = Shape == line_shape::group ? n * kernel.work_group_size()
                                  : Shape == line_shape::strip
                                      ? n / inner * ((inner + width - 1) / width) * slices
                                      : n * slices;
        kernel.launch(q, kernel.groups_for(items), std::move(args).take());
    }

    std::string source(loop_style style) const {
        source_builder b;
        generator g(b);
        const std::string s = opencl_type_name<state>();
        b.begin_kernel("kiln_reduce_dimension");
        g.parameter("ulong", "n");
        g.parameter("ulong", "kiln_length");
        g.parameter("ulong", "kiln_inner");
        if constexpr (Shape == line_shape::slice || Shape == line_shape::strip) {
            g.parameter("ulong", "kiln_slices");
            g.parameter("global " + s + "*", "kiln_partials");
            if constexpr (Shape == line_shape::strip) g.parameter("ulong", "kiln_strip_width");
        } else {
            for (std::size_t k = 0; k < output::count; ++k)
                g.parameter("global " + opencl_type_name<typename output::type>() + "*",
                            "kiln_out" + std::to_string(k));
        }
        if constexpr (Shape == line_shape::group) g.parameter("local " + s + "*", "kiln_scratch");
        g.parameter(s, "kiln_identity");
        const std::string mapped = traits::map(b, value_.generate(g));
        b.begin_body();
        const auto fold_line = [&](const std::string& first, const std::string& step,
                                   const std::string& end) {
            b.line(s + " kiln_acc = kiln_identity;");
            b.open("for (ulong kiln_k = " + first + "; kiln_k < " + end + "; kiln_k += " + step +
                   ")");
            b.line("const ulong idx = kiln_base + kiln_k * kiln_inner;");
            for (const auto& statement : g.statements()) b.line(statement);
            b.line("kiln_acc = " + traits::combine(b, "kiln_acc", mapped) + ";");
            b.close();
        };
        const auto store = [&](const std::string& acc) {
            for (std::size_t k = 0; k < output::count; ++k)
                b.line("kiln_out" + std::to_string(k) +
                       "[kiln_line] = " + output::value(b, acc, k) + ";");
        };
        if constexpr (Shape == line_shape::group) {
            // Every work-item of a group walks the same lines, so the barriers are uniform.
            b.line("const uint lid = " + b.local_id() + ";");
            b.open("for (ulong kiln_line = " + b.group_id() +
                   "; kiln_line < n; kiln_line += " + b.group_count() + ")");
            b.line("const ulong kiln_base = kiln_line * kiln_length;");
            fold_line("lid", "(ulong)get_local_size(0)", "kiln_length");
            b.line("kiln_scratch[lid] = kiln_acc;");
            group_collectives(b).reduce_in_place("kiln_scratch", "lid", b.local_size(),
                                                 [&](const std::string& x, const std::string& y) {
                                                     return traits::combine(b, x, y);
                                                 });
            b.open("if (lid == 0)");
            store("kiln_scratch[0]");
            b.close();
            b.local_barrier();  // kiln_scratch[0] is read before the next line overwrites it
            b.close();
        } else if constexpr (Shape == line_shape::strip) {
            // Item i is slice i / strips of strip i % strips: kiln_strip_width adjacent lines of
            // one outer position (the last of each narrower), folded side by side row after row,
            // each in order: independent folds that the compiler turns into vector operations.
            const std::string most = std::to_string(strip_capacity(sizeof(state)));
            b.line(
                "const ulong kiln_per_outer = (kiln_inner + kiln_strip_width - 1) / "
                "kiln_strip_width;");
            b.line("const ulong kiln_strips = n / kiln_inner * kiln_per_outer;");
            b.open_element_loop(b.declare_element_range(style, "kiln_strips * kiln_slices"),
                                "kiln_item");
            b.line("const ulong kiln_strip = kiln_item % kiln_strips;");
            b.line("const ulong kiln_slice = kiln_item / kiln_strips;");
            b.line("const ulong kiln_outer = kiln_strip / kiln_per_outer;");
            b.line("const ulong kiln_column = (kiln_strip % kiln_per_outer) * kiln_strip_width;");
            b.line("const ulong kiln_base = kiln_outer * kiln_length * kiln_inner + kiln_column;");
            b.line("const ulong kiln_first = kiln_slice * " + std::to_string(slice_length) + ";");
            b.line("const ulong kiln_end = min(kiln_length, kiln_first + " +
                   std::to_string(slice_length) + ");");
            b.line(
                "const uint kiln_width = (uint)min(kiln_strip_width, kiln_inner - kiln_column);");
            b.line(s + " kiln_accs[" + most + "];");
            b.line(
                "for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j) kiln_accs[kiln_j] = "
                "kiln_identity;");
            b.open("for (ulong kiln_k = kiln_first; kiln_k < kiln_end; ++kiln_k)");
            b.open("for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j)");
            b.line("const ulong idx = kiln_base + kiln_k * kiln_inner + kiln_j;");
            for (const auto& statement : g.statements()) b.line(statement);
            b.line("kiln_accs[kiln_j] = " + traits::combine(b, "kiln_accs[kiln_j]", mapped) + ";");
            b.close();
            b.close();
            b.line("for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j)");
            b.line(
                "    kiln_partials[kiln_slice * n + kiln_outer * kiln_inner + kiln_column + "
                "kiln_j] = kiln_accs[kiln_j];");
            b.close();
        } else if constexpr (Shape == line_shape::lanes) {
            const std::string w = std::to_string(contiguous_lanes);
            b.open_element_loop(b.declare_element_range(style, "n"), "kiln_line");
            b.line("const ulong kiln_base = kiln_line * kiln_length;");
            b.line(s + " kiln_accs[" + w + "];");
            b.line("for (uint kiln_j = 0; kiln_j < " + w +
                   "; ++kiln_j) kiln_accs[kiln_j] = " + "kiln_identity;");
            b.line("const ulong kiln_whole = kiln_length / " + w + " * " + w + ";");
            b.open("for (ulong kiln_k = 0; kiln_k < kiln_whole; kiln_k += " + w + ")");
            b.open("for (uint kiln_j = 0; kiln_j < " + w + "; ++kiln_j)");
            b.line("const ulong idx = kiln_base + kiln_k + kiln_j;");
            for (const auto& statement : g.statements()) b.line(statement);
            b.line("kiln_accs[kiln_j] = " + traits::combine(b, "kiln_accs[kiln_j]", mapped) + ";");
            b.close();
            b.close();
            b.open("for (ulong kiln_k = kiln_whole; kiln_k < kiln_length; ++kiln_k)");
            b.line("const ulong idx = kiln_base + kiln_k;");
            for (const auto& statement : g.statements()) b.line(statement);
            b.line("kiln_accs[kiln_k - kiln_whole] = " +
                   traits::combine(b, "kiln_accs[kiln_k - kiln_whole]", mapped) + ";");
            b.close();
            b.line(s + " kiln_acc = kiln_accs[0];");
            b.line("for (uint kiln_j = 1; kiln_j < " + w + "; ++kiln_j) kiln_acc = " +
                   traits::combine(b, "kiln_acc", "kiln_accs[kiln_j]") + ";");
            store("kiln_acc");
            b.close();
        } else if constexpr (Shape == line_shape::slice) {
            // Item i is slice i / n of line i % n: neighbouring items, neighbouring lines.
            b.open_element_loop(b.declare_element_range(style, "n * kiln_slices"), "kiln_item");
            b.line("const ulong kiln_line = kiln_item % n;");
            b.line("const ulong kiln_first = (kiln_item / n) * " + std::to_string(slice_length) +
                   ";");
            b.line(
                "const ulong kiln_base = (kiln_line / kiln_inner) * kiln_length * kiln_inner + "
                "kiln_line % kiln_inner;");
            fold_line("kiln_first", "1",
                      "min(kiln_length, kiln_first + " + std::to_string(slice_length) + ")");
            b.line("kiln_partials[kiln_item] = kiln_acc;");
            b.close();
        } else {
            b.open_element_loop(b.declare_element_range(style, "n"), "kiln_line");
            b.line(
                "const ulong kiln_base = (kiln_line / kiln_inner) * kiln_length * kiln_inner + "
                "kiln_line % kiln_inner;");
            fold_line("0", "1", "kiln_length");
            store("kiln_acc");
            b.close();
        }
        b.end_kernel();
        return b.str();
    }

  private:
    Value value_;
};

/// The second kernel of sliced lines: each result folds its slices' states in order.
template <class Reducer, class T>
class slice_fold {
  public:
    using traits = typename Reducer::template on<T>;
    using state = typename traits::state;
    using output = dimension_output<Reducer, T>;

    static event run(
        const queue& q, std::size_t slices, const buffer<std::byte>& partials,
        const std::array<kiln::vector<typename output::type>*, output::count>& results) {
        const generated_kernel& kernel = cache_for<slice_fold>().get(
            q.device(), "kiln_fold_slices", [](loop_style style) { return source(style); });
        argument_list args(0, 0);
        args.scalar<std::uint64_t>(results[0]->size());
        args.scalar<std::uint64_t>(slices);
        args.buffer(partials);
        for (auto* result : results) args.buffer(result->part(0));
        return kernel.launch(q, kernel.groups_for(results[0]->size()), std::move(args).take());
    }

    static std::string source(loop_style style) {
        source_builder b;
        const std::string s = opencl_type_name<state>();
        b.begin_kernel("kiln_fold_slices");
        b.parameter("ulong n");
        b.parameter("ulong kiln_slices");
        b.parameter("global const " + s + "* kiln_partials");
        for (std::size_t k = 0; k < output::count; ++k)
            b.parameter("global " + opencl_type_name<typename output::type>() + "* kiln_out" +
                        std::to_string(k));
        b.begin_body();
        b.open_element_loop(b.declare_element_range(style, "n"), "kiln_line");
        b.line(s + " kiln_acc = kiln_partials[kiln_line];");
        b.open("for (ulong kiln_s = 1; kiln_s < kiln_slices; ++kiln_s)");
        b.line("kiln_acc = " +
               traits::combine(b, "kiln_acc", "kiln_partials[kiln_s * n + kiln_line]") + ";");
        b.close();
        for (std::size_t k = 0; k < output::count; ++k)
            b.line("kiln_out" + std::to_string(k) +
                   "[kiln_line] = " + output::value(b, "kiln_acc", k) + ";");
        b.close();
        b.end_kernel();
        return b.str();
    }
};

/// Throws invalid_argument_error, naming the extents, where the product of those that are not 0
/// overflows size_t: the elements, or with a 0 extent the results of the other dimensions,
/// would wrap to a count that passes the size checks.
template <std::size_t Rank>
void check_extents_product(const std::string& call, const extents<Rank>& shape) {
    std::size_t product = 1;
    for (std::size_t d = 0; d < Rank; ++d) {
        if (shape[d] == 0) continue;
        if (product > std::numeric_limits<std::size_t>::max() / shape[d]) {
            std::string named = "{";
            for (std::size_t e = 0; e < Rank; ++e)
                named += (e ? ", " : "") + std::to_string(shape[e]);
            throw invalid_argument_error(call, "extents " + named +
                                                   "} hold more than 2^64 - 1 elements or "
                                                   "results (their product overflows)");
        }
        product *= shape[d];
    }
}

template <class Reducer, std::size_t Rank, class E>
auto reduce_along(const std::optional<kiln::queue>& on_queue, const extents<Rank>& shape,
                  const E& e, std::size_t dimension) {
    const std::string call = "kiln::reduce along a dimension";
    auto node = as_node(e);
    using output = dimension_output<Reducer, typename decltype(node)::value_type>;
    if (dimension >= Rank)
        throw invalid_argument_error(call, "dimension " + std::to_string(dimension) +
                                               " of an array of " + std::to_string(Rank) +
                                               " dimensions");
    check_extents_product(call, shape);
    std::size_t elements = 1, outer = 1, inner = 1;
    for (std::size_t d = 0; d < Rank; ++d) {
        elements *= shape[d];
        if (d < dimension) outer *= shape[d];
        if (d > dimension) inner *= shape[d];
    }
    operand_check check(call);
    if (on_queue) check.on_queue(*on_queue);
    node.check(check);
    check.sized(elements, "the extents");
    const layout parts = check.launch_layout();
    if (parts.size() > 1) throw invalid_argument_error(call, "split vectors are not supported");
    // With no elements there are no parts, but lines of no elements still have results.
    const std::optional<kiln::queue> statement_queue =
        parts.empty() ? check.first_queue() : std::optional<kiln::queue>(parts[0].queue);
    if (!statement_queue)
        throw invalid_argument_error(call, "nothing in the statement says which device to run on");
    const queue& q = *statement_queue;
    const std::size_t length = shape[dimension];

    using result_vector = kiln::vector<typename output::type>;
    std::array<result_vector, output::count> results;
    std::array<result_vector*, output::count> targets;
    for (std::size_t k = 0; k < output::count; ++k) {
        results[k] = result_vector(q, outer * inner);
        targets[k] = &results[k];
    }
    using node_type = decltype(node);
    if (outer * inner > 0) {
        if (inner > 1 && length > slice_length) {
            const std::size_t slices = (length + slice_length - 1) / slice_length;
            using state = typename Reducer::template on<typename node_type::value_type>::state;
            temporary_lease partials =
                temporary_pool::acquire(q, slices * outer * inner * sizeof(state));
            if (launch_policy_for(q.device()).loop == loop_style::chunked)
                dimension_reduction<Reducer, node_type, line_shape::strip>(node).run(
                    q, length, inner, targets, slices, &partials.bytes());
            else
                dimension_reduction<Reducer, node_type, line_shape::slice>(node).run(
                    q, length, inner, targets, slices, &partials.bytes());
            partials.release_after(q, slice_fold<Reducer, typename node_type::value_type>::run(
                                          q, slices, partials.bytes(), targets));
        } else if (inner == 1 && length >= group_line_threshold &&
                   launch_policy_for(q.device()).loop == loop_style::strided) {
            dimension_reduction<Reducer, node_type, line_shape::group>(node).run(q, length, inner,
                                                                                 targets);
        } else if (inner == 1 && length >= 4 * contiguous_lanes &&
                   launch_policy_for(q.device()).loop == loop_style::chunked) {
            dimension_reduction<Reducer, node_type, line_shape::lanes>(node).run(q, length, inner,
                                                                                 targets);
        } else {
            dimension_reduction<Reducer, node_type, line_shape::item>(node).run(q, length, inner,
                                                                                targets);
        }
    }
    if constexpr (output::count == 1)
        return std::move(results[0]);
    else
        return std::make_pair(std::move(results[0]), std::move(results[1]));
}

}  // namespace detail

/// Reduces `e`, viewed as a dense row-major array of `shape`, along `dimension`: the result has
/// one element per position of the other dimensions, in row-major order. With
/// `extents{rows, columns}`, dimension 1 gives row results (`rows` elements) and dimension 0
/// column results (`columns` elements). A kiln::vector of the reducer's result type (minmax: a
/// pair of vectors; any and all: 0 or 1 as std::int32_t), on the expression's device. Single-device
/// expressions only. Extents whose product overflows size_t (0 extents left out) throw
/// invalid_argument_error naming them.
template <class Reducer, std::size_t Rank, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const extents<Rank>& shape, const E& e, std::size_t dimension) {
    return detail::reduce_along<Reducer>(std::nullopt, shape, e, dimension);
}
/// The same on an explicit queue, for expressions without vectors (element_index).
template <class Reducer, std::size_t Rank, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const kiln::queue& q, const extents<Rank>& shape, const E& e, std::size_t dimension) {
    return detail::reduce_along<Reducer>(q, shape, e, dimension);
}

}  // namespace kiln
#pragma GCC visibility pop
