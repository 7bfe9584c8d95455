// SPDX-License-Identifier: Apache-2.0
// The typed input of kiln::gemm: what include/kiln/matrix.hpp turns its arguments into, checks
// (check_gemm) and hands to the GEMM module in src/algo/gemm/ (run_gemm), which plans the whole
// strategy for the device and runs it.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::detail {

/// The element types a GEMM operand may hold. The accumulation type is the plan's choice
/// (gemm_accumulation): double for double outputs, float otherwise, so that 16-bit inputs with
/// float accumulation add enumerators here and not another path. f16 is kiln::half, bf16
/// kiln::bfloat16, e4m3 and e5m2 kiln::float8_e4m3 and kiln::float8_e5m2 (inputs only, widened
/// to 16 bits or float before the product: src/algo/gemm/gemm_float8.hpp).
enum class gemm_element { f32, f64, f16, bf16, e4m3, e5m2 };

template <class T>
inline constexpr bool is_gemm_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half> ||
    std::is_same_v<T, bfloat16> || is_float8_v<T>;

template <class T>
requires is_gemm_element_v<T>
constexpr gemm_element gemm_element_of() noexcept {
    if constexpr (std::is_same_v<T, double>) return gemm_element::f64;
    if constexpr (std::is_same_v<T, half>) return gemm_element::f16;
    if constexpr (std::is_same_v<T, bfloat16>) return gemm_element::bf16;
    if constexpr (std::is_same_v<T, float8_e4m3>) return gemm_element::e4m3;
    if constexpr (std::is_same_v<T, float8_e5m2>) return gemm_element::e5m2;
    return gemm_element::f32;
}
/// kiln::half or kiln::bfloat16.
constexpr bool is_16_bit(gemm_element e) noexcept {
    return e == gemm_element::f16 || e == gemm_element::bf16;
}
/// kiln::float8_e4m3 or kiln::float8_e5m2.
constexpr bool is_float8(gemm_element e) noexcept {
    return e == gemm_element::e4m3 || e == gemm_element::e5m2;
}
std::size_t element_bytes(gemm_element e) noexcept;
std::string_view to_string(gemm_element e) noexcept;

/// One operand as it lies in memory: `rows` x `columns`, row-major, row r starting
/// `leading_dimension` elements after row r - 1, the first element `offset` elements into the
/// buffer; batch entry b starts `batch_stride` elements after entry b - 1. `transposed`: the
/// product reads its transpose (columns x rows).
struct gemm_operand {
    const buffer_storage* storage = nullptr;
    gemm_element element = gemm_element::f32;
    std::size_t offset = 0, rows = 0, columns = 0, leading_dimension = 0;
    std::size_t batch = 1, batch_stride = 0;
    bool transposed = false;

    /// Rows and columns as the product reads them.
    std::size_t product_rows() const noexcept { return transposed ? columns : rows; }
    std::size_t product_columns() const noexcept { return transposed ? rows : columns; }
    /// Elements from offset to one past the last element of the last batch entry (0 when
    /// empty); check_gemm makes sure this does not overflow.
    std::size_t extent() const noexcept;
    /// "A (3x4, leading dimension 4, transposed)" for error messages.
    std::string describe(std::string_view name) const;
};

struct gemm_epilogue;

/// C = alpha (scale_a op(A)) (scale_b op(B)) + beta C for every batch entry. alpha and beta are
/// held in double and converted to the accumulation type; beta == 0 does not read C (BLAS's
/// rule, so that uninitialised C cannot leak NaN). The scales are FP8 operands' (1 for others):
/// run_gemm folds them into alpha.
struct gemm_problem {
    gemm_operand a, b, c;
    double alpha = 1.0, beta = 0.0;
    double scale_a = 1.0, scale_b = 1.0;
    /// Float inputs may use TF32 tensor cores.
    bool allow_tf32 = false;
    /// FP8 inputs may use FP8 tensor cores, whose sums keep fewer bits than float.
    bool allow_float8_fast_accumulation = false;
    /// The user's epilogue, called on each alpha op(A) op(B) + beta C before it is stored
    /// (kiln/detail/algo/gemm_epilogue.hpp); none where null.
    const gemm_epilogue* epilogue = nullptr;

    std::size_t m() const noexcept { return c.rows; }
    std::size_t n() const noexcept { return c.columns; }
    std::size_t k() const noexcept { return a.product_columns(); }
    std::size_t batch() const noexcept { return c.batch; }
};

/// Throws invalid_argument_error naming the shapes where the problem cannot be run: inner
/// dimensions that differ, a scale other than 1 on an operand that is not FP8 or a scale that is
/// not finite, C of the wrong shape, batches that differ, operands on
/// different devices, C overlapping A or B, a leading dimension below the columns, an operand
/// running past its buffer or extents that overflow. Touches no device.
void check_gemm(const gemm_problem& problem, const char* call);
/// Runs a checked problem on q (which must be the operands' device's queue), after q's earlier
/// work; returns the event of its last command.
event run_gemm(const queue& q, const gemm_problem& problem);

/// How a product runs; the plan chooses (src/algo/gemm/gemm_plan.hpp).
enum class gemm_strategy {
    automatic,
    /// Register tiles staged through local memory, for GPUs (src/algo/gemm/gemm_simt.cpp).
    simt,
    /// mma.sync on NVIDIA tensor cores, for 16-bit inputs on compute capability 8.0 and later
    /// (src/algo/gemm/gemm_tensor_cores.cpp).
    tensor_cores,
    /// wgmma on Hopper's tensor cores, for 16-bit inputs on compute capability 9.0 through CUDA
    /// (src/algo/gemm/gemm_warpgroup.cpp).
    warpgroup_mma,
    /// Vector register tiles read straight from memory, for CPU devices
    /// (src/algo/gemm/gemm_cpu_tiles.cpp).
    cpu_tiles,
    /// OpenBLAS on the host, over the buffers where a CPU device keeps them
    /// (src/algo/gemm/gemm_host_blas.cpp).
    host_blas,
};
std::string_view to_string(gemm_strategy s) noexcept;

/// The strategies `dev` can run (tests force each; host_blas where OpenBLAS loads and the
/// device's memory is the host's).
std::vector<gemm_strategy> gemm_strategies_for(const device& dev);

/// Test and benchmark only: while alive, products on every device take `strategy` (automatic:
/// the plan's choice). KILN_GEMM_STRATEGY (simt, tensor_cores, cpu_tiles or host_blas) does the
/// same for a process.
class scoped_gemm_strategy {
  public:
    explicit scoped_gemm_strategy(gemm_strategy strategy);
    ~scoped_gemm_strategy();
    scoped_gemm_strategy(const scoped_gemm_strategy&) = delete;
    scoped_gemm_strategy& operator=(const scoped_gemm_strategy&) = delete;

  private:
    gemm_strategy previous_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
