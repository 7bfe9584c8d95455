// SPDX-License-Identifier: Apache-2.0
// Dense matrices and their products: kiln::matrix, kiln::matrix_view, kiln::gemm.
//
//     kiln::matrix<float> A(q, m, k, host_a), B(q, k, n, host_b), C(q, m, n);
//     kiln::gemm(C, A, B);                                                   // C = A B
//     kiln::gemm(C, kiln::transposed(At), B, {.alpha = 2.0f, .beta = 1.0f}); // C = 2 Atᵀ B + C
//     auto V = kiln::matrix_view<float>(v, rows, cols, leading_dimension);   // over a vector
//     kiln::gemm_batched(Cs, As, Bs);          // batch matrices one after another in each
//     std::vector<float> c = C.read();
//
// Matrices are row-major. Every size may be anything, 1 and primes included; a view's leading
// dimension and offset are arbitrary. Shapes are checked here, before any device work
// (invalid_argument_error naming them). docs/linear_algebra.md has the strategies, the accuracy
// promised and the figures.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/gemm_epilogue.hpp>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/error.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

/// The element types kiln::gemm multiplies: float and double, kiln::half and kiln::bfloat16 as
/// inputs multiplied into float, and kiln::float8_e4m3 and kiln::float8_e5m2 as scaled inputs.
template <class T>
concept matrix_value = detail::is_gemm_element_v<T>;

namespace detail {
/// a * b, throwing invalid_argument_error naming `what` where it overflows.
std::size_t checked_product(std::size_t a, std::size_t b, const char* call, const char* what);

/// Device memory of 16-bit elements on one queue, with what of kiln::vector's interface matrices
/// use, until kiln::vector holds them.
template <class T>
class binary16_storage {
  public:
    using value_type = T;
    binary16_storage(const kiln::queue& q, std::size_t n) : queue_(q), buffer_(q, n) {}
    binary16_storage(const kiln::queue& q, std::span<const T> host) : queue_(q), buffer_(q, host) {}
    /// `memory`'s elements in place (memory made elsewhere, kiln/interop).
    binary16_storage(const kiln::queue& q, buffer<T> memory)
        : queue_(q), buffer_(std::move(memory)) {}

    std::size_t size() const noexcept { return buffer_.size(); }
    std::size_t part_count() const noexcept { return 1; }
    const buffer<T>& part(std::size_t) const noexcept { return buffer_; }
    const kiln::queue& queue() const noexcept { return queue_; }
    std::vector<T> read() const { return buffer_.read(queue_); }
    void write(std::span<const T> host) const { buffer_.write(queue_, host); }

  private:
    kiln::queue queue_;
    buffer<T> buffer_;
};

/// What a matrix of T keeps its elements in.
template <class T>
struct matrix_storage {
    using type = vector<T>;
};
template <>
struct matrix_storage<half> {
    using type = binary16_storage<half>;
};
template <>
struct matrix_storage<bfloat16> {
    using type = binary16_storage<bfloat16>;
};
}  // namespace detail

/// Where a matrix of T keeps its elements: a kiln::vector<T>, or for kiln::half and
/// kiln::bfloat16 their own device memory on the matrix's queue.
template <matrix_value T>
using matrix_storage_t = typename detail::matrix_storage<T>::type;

/// A rows x columns window on a kiln::vector<T> (on one device; matrix_storage_t<T> for the
/// 16-bit types): row r starts at
/// offset + r * leading_dimension. Refers to the vector, which must outlive it. A batch of such
/// windows starts every batch_stride elements.
template <matrix_value T>
class matrix_view {
  public:
    using value_type = T;  ///< the element type

    /// Throws invalid_argument_error where the leading dimension is below the columns, the window
    /// runs past the vector, its extent overflows or the vector is split over several devices.
    matrix_view(const matrix_storage_t<T>& v, std::size_t rows, std::size_t columns,
                std::size_t leading_dimension, std::size_t offset = 0, std::size_t batch = 1,
                std::size_t batch_stride = 0)
        : vector_(&v),
          rows_(rows),
          columns_(columns),
          leading_dimension_(leading_dimension),
          offset_(offset),
          batch_(batch),
          batch_stride_(batch_stride) {
        constexpr const char* call = "kiln::matrix_view";
        const detail::gemm_operand shape = operand(false);
        if (v.part_count() != 1)
            throw invalid_argument_error(call, shape.describe("the view") +
                                                   " needs a vector on one device, not in " +
                                                   std::to_string(v.part_count()) + " parts");
        if (leading_dimension < columns)
            throw invalid_argument_error(
                call, shape.describe("the view") + ": the leading dimension is below the columns");
        // Overflow first: extent() is only defined where these products fit.
        if (rows > 0 && columns > 0 && batch > 0) {
            const std::size_t last_row = detail::checked_product(rows - 1, leading_dimension, call,
                                                                 "rows x leading dimension");
            const std::size_t last_entry =
                detail::checked_product(batch - 1, batch_stride, call, "batch x batch stride");
            if (last_row > SIZE_MAX - columns || last_row + columns > SIZE_MAX - last_entry ||
                last_row + columns + last_entry > SIZE_MAX - offset)
                throw invalid_argument_error(call,
                                             shape.describe("the view") + ": its extent overflows");
        }
        if (offset + shape.extent() > v.size())
            throw invalid_argument_error(call, shape.describe("the view") +
                                                   " runs past its vector of " +
                                                   std::to_string(v.size()) + " elements");
    }

    std::size_t rows() const noexcept { return rows_; }        ///< rows of one entry
    std::size_t columns() const noexcept { return columns_; }  ///< columns of one entry
    /// Elements from one row's start to the next's.
    std::size_t leading_dimension() const noexcept { return leading_dimension_; }
    /// Where the first entry's first row starts in the vector.
    std::size_t offset() const noexcept { return offset_; }
    std::size_t batch() const noexcept { return batch_; }  ///< entries in the batch
    /// Elements from one entry's start to the next's.
    std::size_t batch_stride() const noexcept { return batch_stride_; }
    /// The vector viewed.
    const matrix_storage_t<T>& data() const noexcept { return *vector_; }
    /// The vector's queue, where products into the view are enqueued.
    const kiln::queue& queue() const { return vector_->queue(); }

    /// The operand as the GEMM module reads it.
    detail::gemm_operand operand(bool transposed) const {
        return {vector_->part_count() == 1 ? &vector_->part(0).storage() : nullptr,
                detail::gemm_element_of<T>(),
                offset_,
                rows_,
                columns_,
                leading_dimension_,
                batch_,
                batch_stride_,
                transposed};
    }

  private:
    const matrix_storage_t<T>* vector_;
    std::size_t rows_, columns_, leading_dimension_, offset_, batch_, batch_stride_;
};

/// A row-major rows x columns matrix that owns its device memory; `batch` of them one after
/// another for gemm_batched.
template <matrix_value T>
class matrix {
  public:
    using value_type = T;  ///< the element type

    /// Uninitialised elements.
    matrix(const kiln::queue& q, std::size_t rows, std::size_t columns, std::size_t batch = 1)
        : data_(q, elements(rows, columns, batch)), rows_(rows), columns_(columns), batch_(batch) {}
    /// A copy of `host`, which must hold rows * columns elements.
    matrix(const kiln::queue& q, std::size_t rows, std::size_t columns, std::span<const T> host)
        : matrix(q, rows, columns, 1, host) {}
    /// A copy of `host`, which must hold rows * columns * batch elements, entry after entry.
    matrix(const kiln::queue& q, std::size_t rows, std::size_t columns, std::size_t batch,
           std::span<const T> host)
        : data_(q, checked_host(host, rows, columns, batch)),
          rows_(rows),
          columns_(columns),
          batch_(batch) {}
    ///@{
    /// The same from a std::vector.
    matrix(const kiln::queue& q, std::size_t rows, std::size_t columns, const std::vector<T>& host)
        : matrix(q, rows, columns, 1, std::span<const T>(host)) {}
    matrix(const kiln::queue& q, std::size_t rows, std::size_t columns, std::size_t batch,
           const std::vector<T>& host)
        : matrix(q, rows, columns, batch, std::span<const T>(host)) {}
    ///@}

    std::size_t rows() const noexcept { return rows_; }        ///< rows of one entry
    std::size_t columns() const noexcept { return columns_; }  ///< columns of one entry
    std::size_t batch() const noexcept { return batch_; }      ///< entries in the batch
    /// The vector holding the elements, row after row, entry after entry.
    const matrix_storage_t<T>& data() const noexcept { return data_; }
    /// The queue it was made on, where products into it are enqueued.
    const kiln::queue& queue() const { return data_.queue(); }
    /// The elements, row after row, entry after entry.
    std::vector<T> read() const { return data_.read(); }
    /// Writes every element from `host`, row after row, entry after entry.
    void write(std::span<const T> host) const { data_.write(host); }

    /// The whole matrix (or batch) as a view.
    matrix_view<T> view() const {
        return {data_, rows_, columns_, columns_, 0, batch_, rows_ * columns_};
    }
    /// view(), so that a matrix goes where a view is taken.
    operator matrix_view<T>() const { return view(); }  // NOLINT: a matrix is a view of itself

  private:
    static std::size_t elements(std::size_t rows, std::size_t columns, std::size_t batch) {
        return detail::checked_product(
            detail::checked_product(rows, columns, "kiln::matrix", "rows x columns"), batch,
            "kiln::matrix", "rows x columns x batch");
    }
    static std::span<const T> checked_host(std::span<const T> host, std::size_t rows,
                                           std::size_t columns, std::size_t batch) {
        const std::size_t expected = elements(rows, columns, batch);
        if (host.size() != expected)
            throw invalid_argument_error(
                "kiln::matrix", std::to_string(rows) + "x" + std::to_string(columns) + " x" +
                                    std::to_string(batch) + " needs " + std::to_string(expected) +
                                    " host elements, got " + std::to_string(host.size()));
        return host;
    }

    matrix_storage_t<T> data_;
    std::size_t rows_, columns_, batch_;
};

/// An operand read transposed: kiln::transposed(A).
template <matrix_value T>
class transposed_matrix {
  public:
    using value_type = T;  ///< the element type
    /// `v`, to be read transposed.
    explicit transposed_matrix(matrix_view<T> v) : view_(v) {}
    /// The view, as it lies in memory.
    const matrix_view<T>& view() const noexcept { return view_; }

  private:
    matrix_view<T> view_;
};

///@{
/// The matrix or view as an operand of kiln::gemm read transposed; no element moves.
template <matrix_value T>
transposed_matrix<T> transposed(const matrix<T>& m) {
    return transposed_matrix<T>(m.view());
}
template <matrix_value T>
transposed_matrix<T> transposed(const matrix_view<T>& v) {
    return transposed_matrix<T>(v);
}
///@}
/// The transpose of a transpose is the matrix.
template <matrix_value T>
matrix_view<T> transposed(const transposed_matrix<T>& t) {
    return t.view();
}

/// alpha and beta of kiln::gemm, of the accumulation type; allow_tf32 lets float inputs use
/// TF32 tensor cores (10-bit mantissas), off so that float means float. scale_a and scale_b are
/// FP8 operands' per-tensor scales, the values that their elements stand for being the elements
/// times the scale: C = alpha (scale_a op(A)) (scale_b op(B)) + beta C. A scale other than 1 on
/// an operand that is not FP8, or a scale that is NaN or infinite, is an invalid_argument_error.
/// allow_float8_fast_accumulation lets FP8 A and B run on FP8 tensor cores (Hopper's wgmma
/// through CUDA), which sum each product step with fewer bits than float (as cuBLASLt's
/// CUBLASLT_MATMUL_DESC_FAST_ACCUM); off, FP8 products accumulate in float.
template <class S>
struct gemm_options {
    S alpha = S(1);           ///< scales op(A) op(B)
    S beta = S(0);            ///< scales C's old values (0: C is not read)
    bool allow_tf32 = false;  ///< float inputs may go through TF32 tensor cores
    S scale_a = S(1);         ///< an FP8 A's per-tensor scale
    S scale_b = S(1);         ///< an FP8 B's per-tensor scale
    /// FP8 inputs may go through FP8 tensor cores, which accumulate with fewer bits than float
    bool allow_float8_fast_accumulation = false;
};

namespace detail {

template <class M>
struct gemm_operand_traits;
template <class T>
struct gemm_operand_traits<matrix<T>> {
    using value_type = T;
    static gemm_operand of(const matrix<T>& m) { return m.view().operand(false); }
};
template <class T>
struct gemm_operand_traits<matrix_view<T>> {
    using value_type = T;
    static gemm_operand of(const matrix_view<T>& v) { return v.operand(false); }
};
template <class T>
struct gemm_operand_traits<transposed_matrix<T>> {
    using value_type = T;
    static gemm_operand of(const transposed_matrix<T>& t) { return t.view().operand(true); }
};

/// Matrices, views and transposes of them.
template <class M>
concept gemm_input = requires {
    typename gemm_operand_traits<std::remove_cvref_t<M>>::value_type;
};
/// Matrices and views (C is not read transposed).
template <class M>
concept gemm_output = gemm_input<M> && !std::is_same_v<
    std::remove_cvref_t<M>,
    transposed_matrix<typename gemm_operand_traits<std::remove_cvref_t<M>>::value_type>>;

template <class M>
using gemm_value_t = typename gemm_operand_traits<std::remove_cvref_t<M>>::value_type;

template <class T>
inline constexpr bool is_binary16_input_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// The type alpha and beta are given in, which products of C's type accumulate in: C's, float for
/// 16-bit and FP8 outputs.
template <class C>
using gemm_scalar_t =
    std::conditional_t<is_binary16_input_v<gemm_value_t<C>> || is_float8_v<gemm_value_t<C>>, float,
                       gemm_value_t<C>>;

/// Inputs of the output's type (float, double, kiln::half, kiln::bfloat16), or both kiln::half or
/// both kiln::bfloat16 with a float output, or A and B each kiln::float8_e4m3 or
/// kiln::float8_e5m2 with a float, kiln::half, kiln::bfloat16, kiln::float8_e4m3 or
/// kiln::float8_e5m2 output.
template <class C, class A, class B>
concept gemm_operand_types =
    (std::is_same_v<gemm_value_t<A>, gemm_value_t<B>> && !is_float8_v<gemm_value_t<C>> &&
     (std::is_same_v<gemm_value_t<C>, gemm_value_t<A>> ||
      (std::is_same_v<gemm_value_t<C>, float> && is_binary16_input_v<gemm_value_t<A>>))) ||
    (is_float8_v<gemm_value_t<A>> && is_float8_v<gemm_value_t<B>> &&
     (std::is_same_v<gemm_value_t<C>, float> || is_binary16_input_v<gemm_value_t<C>> ||
      is_float8_v<gemm_value_t<C>>));

template <class C, class A, class B>
void gemm(const char* call, const C& c, const A& a, const B& b,
          const gemm_options<gemm_scalar_t<C>>& options, bool batched,
          const gemm_epilogue* epilogue = nullptr) {
    gemm_problem problem;
    problem.a = gemm_operand_traits<A>::of(a);
    problem.b = gemm_operand_traits<B>::of(b);
    problem.c = gemm_operand_traits<C>::of(c);
    problem.alpha = static_cast<double>(options.alpha);
    problem.beta = static_cast<double>(options.beta);
    problem.scale_a = static_cast<double>(options.scale_a);
    problem.scale_b = static_cast<double>(options.scale_b);
    problem.allow_tf32 = options.allow_tf32;
    problem.allow_float8_fast_accumulation = options.allow_float8_fast_accumulation;
    problem.epilogue = epilogue;
    if (!batched && (problem.a.batch != 1 || problem.b.batch != 1 || problem.c.batch != 1))
        throw invalid_argument_error(call, "operands hold batches of matrices (" +
                                               problem.c.describe("C") +
                                               "): use kiln::gemm_batched");
    check_gemm(problem, call);
    run_gemm(c.queue(), problem);
}

}  // namespace detail

/// C = alpha op(A) op(B) + beta C, op being the identity or kiln::transposed. C is m x n, op(A)
/// m x k and op(B) k x n; all on one device, C apart from A and B. Returns once the product is
/// enqueued on C's queue.
template <detail::gemm_output C, detail::gemm_input A, detail::gemm_input B>
requires detail::gemm_operand_types<C, A, B>
void gemm(const C& c, const A& a, const B& b,
          const gemm_options<detail::gemm_scalar_t<C>>& options = {}) {
    detail::gemm("kiln::gemm", c, a, b, options, false);
}

/// gemm for each of the batch entries of Cs, As and Bs (the same count in each).
template <detail::gemm_output C, detail::gemm_input A, detail::gemm_input B>
requires detail::gemm_operand_types<C, A, B>
void gemm_batched(const C& cs, const A& as, const B& bs,
                  const gemm_options<detail::gemm_scalar_t<C>>& options = {}) {
    detail::gemm("kiln::gemm_batched", cs, as, bs, options, true);
}

/// gemm with an epilogue, a KILN_LAMBDA((S value, I row, I column), (captures), { return ...; })
/// where S is the accumulation type (float, double for double products) and I an integer type
/// every row and column fits: C(row, column) = epilogue(alpha (op(A) op(B))(row, column) + beta
/// C(row, column), row, column), computed in S and rounded once to C's type, in the product's
/// kernels. It captures kiln vectors, buffers and values as parallel_for's lambdas do, on C's
/// device and apart from C (docs/linear_algebra.md, "Epilogues").
template <detail::gemm_output C, detail::gemm_input A, detail::gemm_input B, class Definition,
          class... Captures>
requires detail::gemm_operand_types<C, A, B>
void gemm(const C& c, const A& a, const B& b, const gemm_options<detail::gemm_scalar_t<C>>& options,
          const detail::kernel_lambda<Definition, Captures...>& epilogue) {
    const detail::gemm_epilogue e = detail::make_gemm_epilogue<detail::gemm_scalar_t<C>>(epilogue);
    detail::gemm("kiln::gemm", c, a, b, options, false, &e);
}

/// gemm_batched with an epilogue, called with each entry's rows and columns.
template <detail::gemm_output C, detail::gemm_input A, detail::gemm_input B, class Definition,
          class... Captures>
requires detail::gemm_operand_types<C, A, B>
void gemm_batched(const C& cs, const A& as, const B& bs,
                  const gemm_options<detail::gemm_scalar_t<C>>& options,
                  const detail::kernel_lambda<Definition, Captures...>& epilogue) {
    const detail::gemm_epilogue e = detail::make_gemm_epilogue<detail::gemm_scalar_t<C>>(epilogue);
    detail::gemm("kiln::gemm_batched", cs, as, bs, options, true, &e);
}

}  // namespace kiln
#pragma GCC visibility pop
