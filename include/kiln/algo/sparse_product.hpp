// SPDX-License-Identifier: Apache-2.0
// Internals of kiln::sparse_matrix (include/kiln/sparse.hpp): its device storage and CSR checks,
// the halo exchange of split matrices, and the statements a product A * x builds: one kernel for
// target = f(A * x), make_inline's expression node, and the operators that grow a statement.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/detail/algo/sparse_format.hpp>
#include <kiln/detail/element_storage.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/expr/assign.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/expr/operators.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <kiln/runtime/determinism.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <memory>
#include <mutex>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace kiln {

/// Element types of kiln::sparse_matrix. kiln::half and kiln::bfloat16 values are multiplied and
/// added in float, and their products are float (docs/sparse.md).
template <class T>
concept sparse_value =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::complex<float>> ||
    std::same_as<T, std::complex<double>> || detail::is_binary16_v<T>;

/// Defined in include/kiln/sparse.hpp; the statements below only hold pointers to it.
template <sparse_value T>
class sparse_matrix;

namespace detail {

/// Device arrays of one matrix, in the format the rule chose: CSR (row pointers, columns,
/// values), ELL (columns and values, column-major, rows padded with no_column) or sliced ELL
/// (the slices' offsets in row_pointers, then each slice's columns and values, column-major, rows
/// padded with sliced_padding_column).
template <class T>
struct sparse_storage {
    static constexpr std::uint32_t no_column = 0xffffffffu;
    sparse_layout layout;
    kiln::buffer<std::uint32_t> row_pointers, columns;
    kiln::buffer<T> values;
    /// sliced_ell: the CSR arrays that make_inline's text reads (it reads CSR and ELL, one text
    /// whatever the matrix), made from the slices on the first inlined product (inline_csr).
    struct csr_arrays {
        std::once_flag made;
        kiln::buffer<std::uint32_t> row_pointers, columns;
        kiln::buffer<T> values;
    };
    std::shared_ptr<csr_arrays> inlined = std::make_shared<csr_arrays>();
    /// What the groups share out: csr_vector's rows longer than layout.long_row (each reduced by
    /// a whole work-group), csr_adaptive's blocks (four words each, see adaptive_blocks),
    /// csr_chunked's cuts between chunks (work_count + 1 row numbers, see row_chunks), sliced_ell's
    /// (slice numbers).
    kiln::buffer<std::uint32_t> work;
    std::size_t work_count = 0;
};

/// Checks host CSR arrays and returns the row lengths' statistics; throws
/// invalid_argument_error naming the first problem.
template <class Index>
row_statistics check_csr(std::size_t rows, std::size_t columns, std::span<const Index> row_pointers,
                         std::span<const Index> column_indices, std::size_t values) {
    const auto fail = [](const std::string& why) {
        throw invalid_argument_error("kiln::sparse_matrix", why);
    };
    // Rows first: rows + 1 must not wrap to 0, and work lists hold row numbers in 32 bits.
    if (rows >= std::numeric_limits<std::uint32_t>::max())
        fail(std::to_string(rows) +
             " rows: more than 2^32 - 2 rows are not supported (32-bit device indices)");
    if (row_pointers.size() != rows + 1)
        fail("row_pointers has " + std::to_string(row_pointers.size()) +
             " entries, rows + 1 = " + std::to_string(rows + 1) + " expected");
    if (row_pointers[0] != 0) fail("row_pointers[0] is not 0 (indices are 0-based)");
    for (std::size_t r = 0; r < rows; ++r)
        if (row_pointers[r + 1] < row_pointers[r])
            fail("row_pointers decreases at row " + std::to_string(r));
    const auto nonzeros = static_cast<std::size_t>(row_pointers[rows]);
    if (column_indices.size() != nonzeros || values != nonzeros)
        fail("row_pointers[rows] = " + std::to_string(nonzeros) + " but there are " +
             std::to_string(column_indices.size()) + " column indices and " +
             std::to_string(values) + " values");
    if (nonzeros >= std::numeric_limits<std::uint32_t>::max() ||
        columns >= std::numeric_limits<std::uint32_t>::max())
        fail("more than 2^32 - 2 non-zeros or columns: 64-bit device indices are not supported");
    for (std::size_t k = 0; k < nonzeros; ++k)
        if (column_indices[k] < 0 || static_cast<std::size_t>(column_indices[k]) >= columns)
            fail("column index " + std::to_string(column_indices[k]) + " (entry " +
                 std::to_string(k) + ") is outside [0, " + std::to_string(columns) + ")");
    row_statistics stats = statistics_of(row_pointers);
    stats.columns = columns;
    return stats;
}

// Instantiated in the library for the element types it supports; the template says it is exported
// because the visibility pragma around public headers does not reach template instantiations.
template <class T>
[[gnu::visibility("default")]] sparse_storage<T> make_storage(
    const queue& q, const row_statistics& stats, std::span<const std::uint32_t> row_pointers,
    std::span<const std::uint32_t> columns, std::span<const T> values);

/// A sliced_ell matrix's CSR arrays (sparse_storage::inlined), made on first use from the
/// device's slices.
template <class T>
[[gnu::visibility("default")]] const typename sparse_storage<T>::csr_arrays& inline_csr(
    const sparse_storage<T>& storage, const queue& q, std::size_t rows);

/// One device's share of a split matrix: its rows, with columns renumbered so that its own part
/// of x comes first (0 .. own columns - 1) and the elements of other parts it reads (the halo,
/// sorted global indices) after.
struct split_part_plan {
    std::size_t entries_begin = 0, entries = 0;
    std::vector<std::uint32_t> row_pointers, column_indices;
    std::vector<std::uint64_t> halo;
};
std::vector<split_part_plan> plan_split(const layout& row_parts, const layout& column_parts,
                                        std::span<const std::uint32_t> row_pointers,
                                        std::span<const std::uint32_t> column_indices);

/// The kernel that gathers a part's halo elements on their owner (exchange_halo) for values of
/// OpenCL C type `value_type`, which is all its source is written from.
struct halo_gather_key {
    static constexpr const char* kernel_name = "kiln_halo_gather";
    std::string value_type;
    /// Its parameters: n, indices (into the owner's part), x (the owner's part), out.
    kernel_description kernel() const;
    std::string key() const;
};

/// The halo elements one device receives from another before each product of a split matrix.
struct halo_transfer {
    std::size_t owner = 0, offset = 0;          ///< from part `owner`, to halo[offset...]
    kiln::buffer<std::uint32_t> owner_indices;  ///< indices within the owner's part
    std::size_t count = 0;
};

/// Copies x's part of `part` and the halo it needs from the other parts into one buffer on
/// the part's device (gathering on each owner, through the host between devices).
template <class T>
[[gnu::visibility("default")]] kiln::buffer<T> exchange_halo(
    const kiln::vector<T>& x, std::size_t part, std::size_t own, std::size_t halo,
    const std::vector<halo_transfer>& transfers);

/// Where the product's value stands in the statement's element-wise part.
template <class T>
class product_value_node : public expression_tag {
  public:
    using value_type = T;
    std::string generate(generator&) const { return "kiln_product"; }
    void collect(argument_list&) const {}
    void check(operand_check&) const {}
};

/// What the kernel does per entry and per row, as lines of OpenCL C: `entry` sees kiln_entry
/// (the entry's index in the value array) and kiln_column and adds to kiln_sum; `row` sees
/// kiln_row and the finished kiln_sum.
struct sparse_kernel_text {
    std::string type, zero, add;  ///< add: a function name, or empty for +
    std::vector<std::string> entry, row;
};
/// One product kernel's launch, its types erased: run_sparse_product
/// (src/algo/sparse/sparse_product.cpp) builds its program and launches it.
struct sparse_product_input {
    /// The statement's type with its target and its element-wise part's type (typeid names),
    /// which decide the generated text, and the matrix's values' OpenCL C type.
    std::string statement, result, value_type;
    /// The matrix's storage (sparse_storage): its layout, rows, work list's length and arrays.
    sparse_layout layout;
    std::size_t rows = 0, work_count = 0;
    kernel_argument row_pointers, columns, values, work;
    /// Declares the statement's expressions (the operand, the target, the element-wise part)
    /// after the kernel's own parameters and returns what the kernel does per entry and per row.
    std::function<sparse_kernel_text(source_builder&)> declare_statement;
    /// The statement's expressions' arguments, in the order they declared their parameters.
    std::vector<kernel_argument> statement_arguments;
};
/// Launches the product `input` describes on `q`.
void run_sparse_product(const queue& q, const sparse_product_input& input);

/// A split product's operand on one device: its part of x followed by its halo.
template <class T>
class halo_operand_node : public expression_tag {
  public:
    using value_type = T;
    explicit halo_operand_node(const kiln::buffer<T>* values) : values_(values) {}
    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        g.parameter("global const " + opencl_type_name<T>() + "*", name);
        return name + "[idx]";
    }
    void collect(argument_list& args) const { args.buffer(*values_); }
    void check(operand_check&) const {}

  private:
    const kiln::buffer<T>* values_;
};

/// target = result, where result is an element-wise expression of the rows in which the product
/// A * x stands as product_value_node<computed_t<T>>.
template <sparse_value T, class X, class Result>
class sparse_statement {
  public:
    sparse_statement(const sparse_matrix<T>& matrix, X x, Result result,
                     const kiln::vector<T>* plain_x = nullptr)
        : matrix_(&matrix), x_(std::move(x)), result_(std::move(result)), plain_x_(plain_x) {}

    /// The same product inside another element-wise part: how operators grow a statement.
    template <class NewResult>
    sparse_statement<T, X, NewResult> with(NewResult result) const {
        return {*matrix_, x_, std::move(result), plain_x_};
    }
    const Result& result() const noexcept { return result_; }

    template <vector_value Target>
    requires storable_as<Target, typename Result::value_type>
    void assign_to(kiln::vector<Target>& target) const {
        const std::string call = "kiln::sparse_matrix product";
        // Rows are written while other rows still read x: x = A * x would read new values.
        if (static_cast<const void*>(plain_x_) == static_cast<const void*>(&target))
            throw invalid_argument_error(call,
                                         "the target is the product's operand (x = A * x); "
                                         "write into another vector");
        if (matrix_->is_split()) {
            // A 16-bit matrix's operand is a float expression: no vector of the matrix's type
            // to split like its columns.
            if constexpr (is_binary16_v<T>)
                throw invalid_argument_error(
                    call, "split matrices of half or bfloat16 values are not supported yet");
            else
                return assign_split(target, call);
        }
        const queue& q = matrix_->queue();
        operand_check columns(call + " operand");
        x_.check(columns);
        columns.sized(matrix_->columns(), "the matrix's columns");
        columns.on_queue(q);
        const layout column_parts = columns.launch_layout();
        operand_check rows(call);
        const vector_terminal<Target> target_node(target);
        target_node.check(rows);
        result_.check(rows);
        rows.sized(matrix_->rows(), "the matrix's rows");
        rows.on_queue(q);
        rows.read_elsewhere(columns, "the sparse product's operand");
        rows.written(target.layout());
        const layout row_parts = rows.launch_layout();
        // Empty operands have no part at all; a matrix without columns still has rows (zeros).
        if (column_parts.size() > 1 || row_parts.size() > 1)
            throw invalid_argument_error(call, "split vectors are not supported yet");
        if (matrix_->rows() == 0) return;
        launch_part(q, target_node, argument_list(0, 0));
    }

    /// Launches the product of this statement's matrix on `q`, the rest of the statement taking
    /// its arguments for the part `args` names.
    template <vector_value Target>
    void launch_part(const queue& q, const vector_terminal<Target>& target_node,
                     argument_list args) const {
        const sparse_storage<T>& storage = matrix_->storage();
        x_.collect(args);
        target_node.collect(args);
        result_.collect(args);
        const bool reproducible =
            !is_complex_v<T> && current_determinism() == determinism::reproducible;
        run_sparse_product(
            q, {.statement = typeid(sparse_statement<T, X, vector_terminal<Target>>).name() +
                             std::string(reproducible ? " reproducible" : ""),
                .result = typeid(Result).name(),
                .value_type = opencl_type_name<T>(),
                .layout = storage.layout,
                .rows = matrix_->rows(),
                .work_count = storage.work_count,
                .row_pointers = make_argument(storage.row_pointers),
                .columns = make_argument(storage.columns),
                .values = make_argument(storage.values),
                .work = make_argument(storage.work),
                .declare_statement =
                    [&](source_builder& b) {
                        return statement_text<Target>(b, target_node, reproducible);
                    },
                .statement_arguments = std::move(args).take()});
    }

    /// Declares the statement's expressions in `b` and returns the kernel's lines around them.
    /// `reproducible` (kiln::determinism::reproducible, real values): each product's exact state
    /// (include/kiln/reproducible_reducers.hpp) summed into the row's, which every format
    /// combines exactly, the row's sum then rounded once; so no format or device shows in the
    /// bits.
    template <vector_value Target>
    sparse_kernel_text statement_text(source_builder& b, const vector_terminal<Target>& target,
                                      bool reproducible) const {
        generator g(b);
        // 16-bit values load as float, and the sums are float.
        using sum_type = computed_t<T>;
        const std::string t = opencl_type_name<sum_type>();
        const std::string x_value =
            convert_value<sum_type, typename X::value_type>(b, x_.generate(g));
        const std::size_t x_statements = g.statements().size();
        const std::string store = target.generate_target(g);
        const std::string result =
            convert_value<Target, typename Result::value_type>(b, result_.generate(g));

        std::string zero = "(" + t + ")0", add, multiply;
        if constexpr (is_complex_v<T>) {
            zero = complex_helper<T>(b, "cmake") + "(0, 0)";
            add = complex_helper<T>(b, "cadd");
            multiply = complex_helper<T>(b, "cmul");
        }
        std::string row_sum = "kiln_sum";
        if constexpr (!is_complex_v<T>) {
            if (reproducible) {
                define_exact_rounding(b);
                zero = "(long4)(0)";
                add = "kiln_exact_sum_combine";
                row_sum = std::is_same_v<sum_type, double>
                              ? "kiln_exact_round(kiln_sum, 53, -1022)"
                              : "(float)kiln_exact_round(kiln_sum, 24, -126)";
            }
        }
        sparse_kernel_text text{
            reproducible ? "long4" : t, zero, add, {"const ulong idx = kiln_column;"}, {}};
        for (std::size_t k = 0; k < x_statements; ++k) text.entry.push_back(g.statements()[k]);
        const std::string value = element_storage<T>::load("kiln_values", "kiln_entry");
        std::string term = multiply.empty() ? value + " * " + x_value
                                            : multiply + "(" + value + ", " + x_value + ")";
        // The product rounded in the values' type (contraction is off), then its state.
        if (reproducible) term = "kiln_exact_state_of((double)(" + value + " * " + x_value + "))";
        text.entry.push_back(add.empty() ? "kiln_sum += " + term + ";"
                                         : "kiln_sum = " + add + "(kiln_sum, " + term + ");");
        text.row = {"const ulong idx = kiln_row;",
                    "const " + t + " kiln_product = " + row_sum + ";"};
        for (std::size_t k = x_statements; k < g.statements().size(); ++k)
            text.row.push_back(g.statements()[k]);
        text.row.push_back(store + " = " + result + ";");
        return text;
    }

  private:
    template <vector_value Target>
    void assign_split(kiln::vector<Target>& target, const std::string& call) const {
        const auto fail = [&](const std::string& why) { throw invalid_argument_error(call, why); };
        if (!plain_x_)
            fail(
                "the operand of a split matrix's product must be a kiln::vector of the "
                "matrix's type");
        const auto same = [](const layout& a, const layout& b) {
            if (a.size() != b.size()) return false;
            for (std::size_t k = 0; k < a.size(); ++k)
                if (a[k].begin != b[k].begin || a[k].size != b[k].size ||
                    a[k].queue.device() != b[k].queue.device())
                    return false;
            return true;
        };
        if (!same(plain_x_->layout(), matrix_->column_parts()))
            fail("the operand must be split over the matrix's devices like a vector of its " +
                 std::to_string(matrix_->columns()) + " columns");
        operand_check rows(call);
        const vector_terminal<Target> target_node(target);
        target_node.check(rows);
        result_.check(rows);
        rows.sized(matrix_->rows(), "the matrix's rows");
        if (!same(rows.launch_layout(), matrix_->row_parts()))
            fail("the result must be split over the matrix's devices like its rows");
        for (std::size_t k = 0; k < matrix_->row_parts().size(); ++k) {
            const part_extent& part = matrix_->row_parts()[k];
            if (part.size == 0) continue;
            const kiln::buffer<T> operand =
                exchange_halo(*plain_x_, k, matrix_->column_parts()[k].size, matrix_->halo_size(k),
                              matrix_->transfers(k));
            sparse_statement<T, halo_operand_node<T>, Result>(
                matrix_->block(k), halo_operand_node<T>(&operand), result_)
                .launch_part(part.queue, target_node, argument_list(k, part.begin));
        }
    }

    const sparse_matrix<T>* matrix_;
    X x_;
    Result result_;
    const kiln::vector<T>* plain_x_;
};

/// A * x: not an expression by itself (it cannot be evaluated element by element), but a term
/// that a vector assignment accepts alone or added to an element-wise expression.
template <sparse_value T, class X>
class sparse_product {
  public:
    sparse_product(const sparse_matrix<T>& matrix, X x, const kiln::vector<T>* plain_x = nullptr)
        : matrix_(&matrix), x_(std::move(x)), plain_x_(plain_x) {}

    template <class Result>
    sparse_statement<T, X, Result> with(Result result) const {
        return {*matrix_, x_, std::move(result), plain_x_};
    }
    template <vector_value Target>
    requires storable_as<Target, computed_t<T>>
    void assign_to(kiln::vector<Target>& target) const {
        with(product_value_node<computed_t<T>>{}).assign_to(target);
    }
    const sparse_matrix<T>& matrix() const noexcept { return *matrix_; }
    const X& operand() const noexcept { return x_; }

  private:
    const sparse_matrix<T>* matrix_;
    X x_;
    const kiln::vector<T>* plain_x_;
};

/// make_inline(A * x): row idx of the product, computed by the work-item that needs it with
/// one loop over the row (CSR) or its padded slots (ELL); an ordinary expression node, float for
/// 16-bit values.
template <sparse_value T, class X>
class inline_product_node : public expression_tag {
  public:
    using value_type = computed_t<T>;
    explicit inline_product_node(const sparse_product<T, X>& product)
        : matrix_(&product.matrix()), x_(product.operand()) {}

    std::string generate(generator& g) const {
        const std::string t = opencl_type_name<value_type>();
        const std::string pointers = g.new_name(), columns = g.new_name(), values = g.new_name(),
                          width = g.new_name(), rows = g.new_name();
        g.parameter("global const uint*", pointers);
        g.parameter("global const uint*", columns);
        g.parameter("global const " + opencl_type_name<T>() + "*", values);
        g.parameter("ulong", width);
        g.parameter("ulong", rows);
        const std::size_t statements = g.statements().size();
        const std::string x =
            convert_value<value_type, typename X::value_type>(g.source, x_.generate(g));
        if (g.statements().size() != statements)
            throw invalid_argument_error("kiln::make_inline",
                                         "the operand of an inlined product cannot contain "
                                         "kiln::temporary");
        // Every local is suffixed with the first parameter's name, unique in the kernel.
        const std::string sum = "kiln_inline_" + pointers, k = "kiln_k_" + pointers,
                          entry = "kiln_e_" + pointers, first = "kiln_first_" + pointers,
                          count = "kiln_count_" + pointers, step = "kiln_step_" + pointers;
        std::string zero = "(" + t + ")0",
                    term = element_storage<T>::load(values, entry) + " * " + x;
        std::string accumulate = sum + " += " + term + ";";
        if constexpr (is_complex_v<T>) {
            zero = complex_helper<T>(g.source, "cmake") + "(0, 0)";
            term =
                complex_helper<T>(g.source, "cmul") + "(" + values + "[" + entry + "], " + x + ")";
            accumulate =
                sum + " = " + complex_helper<T>(g.source, "cadd") + "(" + sum + ", " + term + ");";
        }
        // ELL (width > 0, its slots per row plus one, so that a matrix without entries is ELL
        // too): slot k of row idx at k * rows + idx; CSR (width 0): entries from the row
        // pointers. One text for both, so that the kernel does not depend on the format.
        g.statement(t + " " + sum + " = " + zero + "; { const ulong " + first + " = " + width +
                    " ? idx : " + pointers + "[idx]; const ulong " + count + " = " + width + " ? " +
                    width + " - 1 : " + pointers + "[idx + 1] - " + first + "; const ulong " +
                    step + " = " + width + " ? " + rows + " : 1; for (ulong " + k + " = 0; " + k +
                    " < " + count + "; ++" + k + ") { const ulong " + entry + " = " + first +
                    " + " + k + " * " + step + "; if (" + columns + "[" + entry +
                    "] == 0xffffffffu) break; { const ulong idx = " + columns + "[" + entry +
                    "]; " + accumulate + " } } }");
        return sum;
    }
    void collect(argument_list& args) const {
        const sparse_storage<T>& storage = matrix_->storage();
        if (storage.layout.format == sparse_format::sliced_ell) {
            const auto& csr = inline_csr(storage, matrix_->queue(), matrix_->rows());
            args.buffer(csr.row_pointers);
            args.buffer(csr.columns);
            args.buffer(csr.values);
        } else {
            args.buffer(storage.row_pointers);
            args.buffer(storage.columns);
            args.buffer(storage.values);
        }
        args.scalar<std::uint64_t>(
            storage.layout.format == sparse_format::ell ? storage.layout.ell_width + 1 : 0);
        args.scalar<std::uint64_t>(matrix_->rows());
        x_.collect(args);
    }
    void check(operand_check& c) const {
        if (matrix_->is_split())
            throw invalid_argument_error("kiln::make_inline", "split matrices are not supported");
        operand_check columns("kiln::make_inline operand");
        x_.check(columns);
        columns.sized(matrix_->columns(), "the matrix's columns");
        columns.on_queue(matrix_->queue());
        if (columns.launch_layout().size() > 1)
            throw invalid_argument_error("kiln::make_inline", "split vectors are not supported");
        c.single_device(matrix_->queue(), "an inlined sparse product");
        c.sized(matrix_->rows(), "an inlined sparse product");
        c.read_elsewhere(columns, "an inlined sparse product's operand");
    }

  private:
    const sparse_matrix<T>* matrix_;
    X x_;
};

/// A product alone, or a statement in which one product stands: the operands of the operators
/// below, which wrap the element-wise part around the product's value.
template <class S>
struct sparse_term_traits : std::false_type {};
template <class T, class X>
struct sparse_term_traits<sparse_product<T, X>> : std::true_type {
    using result = product_value_node<computed_t<T>>;
    static sparse_statement<T, X, result> statement(const sparse_product<T, X>& p) {
        return p.with(result{});
    }
};
template <class T, class X, class R>
struct sparse_term_traits<sparse_statement<T, X, R>> : std::true_type {
    using result = R;
    static const sparse_statement<T, X, R>& statement(const sparse_statement<T, X, R>& s) {
        return s;
    }
};
template <class S>
concept sparse_term = sparse_term_traits<S>::value;
template <class S>
using sparse_result_t = typename sparse_term_traits<S>::result;

/// term op other and other op term, for an expression or scalar `other`: the statement's
/// element-wise part becomes `part op other`, still one kernel with the product
/// (y = f - 2 * (A * x), y = (A * x) / d + 1...).
template <class Op, class S, class Other>
auto term_on_left(const S& term, const Other& other) {
    const auto statement = sparse_term_traits<S>::statement(term);
    return statement.with(make_binary<Op>(statement.result(), other));
}
template <class Op, class S, class Other>
auto term_on_right(const Other& other, const S& term) {
    const auto statement = sparse_term_traits<S>::statement(term);
    return statement.with(make_binary<Op>(other, statement.result()));
}

// clang-format off
template <sparse_term S, expression_operand Other> requires binary_operands<plus_op, sparse_result_t<S>, Other>
auto operator+(const S& term, const Other& other) { return term_on_left<plus_op>(term, other); }
template <sparse_term S, expression_operand Other> requires binary_operands<minus_op, sparse_result_t<S>, Other>
auto operator-(const S& term, const Other& other) { return term_on_left<minus_op>(term, other); }
template <sparse_term S, expression_operand Other> requires binary_operands<multiplies_op, sparse_result_t<S>, Other>
auto operator*(const S& term, const Other& other) { return term_on_left<multiplies_op>(term, other); }
template <sparse_term S, expression_operand Other> requires binary_operands<divides_op, sparse_result_t<S>, Other>
auto operator/(const S& term, const Other& other) { return term_on_left<divides_op>(term, other); }
template <sparse_term S, expression_operand Other> requires binary_operands<plus_op, Other, sparse_result_t<S>>
auto operator+(const Other& other, const S& term) { return term_on_right<plus_op>(other, term); }
template <sparse_term S, expression_operand Other> requires binary_operands<minus_op, Other, sparse_result_t<S>>
auto operator-(const Other& other, const S& term) { return term_on_right<minus_op>(other, term); }
template <sparse_term S, expression_operand Other> requires binary_operands<multiplies_op, Other, sparse_result_t<S>>
auto operator*(const Other& other, const S& term) { return term_on_right<multiplies_op>(other, term); }
template <sparse_term S, expression_operand Other> requires binary_operands<divides_op, Other, sparse_result_t<S>>
auto operator/(const Other& other, const S& term) { return term_on_right<divides_op>(other, term); }
template <sparse_term S>
auto operator-(const S& term) {
    const auto statement = sparse_term_traits<S>::statement(term);
    return statement.with(-statement.result());
}
// clang-format on

/// Two products in one statement: each needs its own kernel shape, so this is refused at
/// compile time with a message saying what to write instead.
template <class>
inline constexpr bool two_sparse_products = false;
template <sparse_term L, sparse_term R>
void operator+(const L&, const R&) {
    static_assert(two_sparse_products<L>,
                  "kiln: a statement holds one sparse product; write the others as "
                  "kiln::make_inline(B * x), or use a second statement");
}
template <sparse_term L, sparse_term R>
void operator-(const L&, const R&) {
    static_assert(two_sparse_products<L>,
                  "kiln: a statement holds one sparse product; write the others as "
                  "kiln::make_inline(B * x), or use a second statement");
}

}  // namespace detail

}  // namespace kiln
#pragma GCC visibility pop
