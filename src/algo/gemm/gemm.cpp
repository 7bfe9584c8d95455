// SPDX-License-Identifier: Apache-2.0
// The GEMM module's entry: the checks of kiln::gemm's typed input, and the dispatch of a checked
// problem to the strategy its plan chooses.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <kiln/detail/algo/gemm_epilogue.hpp>
#include <kiln/detail/algo/gemm_problem.hpp>
#include <kiln/error.hpp>
#include <kiln/matrix.hpp>
#include <kiln/runtime/determinism.hpp>
#include <kiln/runtime/graph.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gemm_aligned_rows.hpp"
#include "gemm_float8.hpp"
#include "gemm_host_blas.hpp"
#include "gemm_k_major.hpp"
#include "gemm_plan.hpp"
#include "gemm_strategies.hpp"
#include "runtime/device_label.hpp"

namespace kiln::detail {
namespace {

std::atomic<gemm_strategy> forced_strategy{gemm_strategy::automatic};

/// scoped_gemm_strategy's, else KILN_GEMM_STRATEGY's, else automatic.
gemm_strategy strategy_in_force() {
    if (const gemm_strategy forced = forced_strategy.load(); forced != gemm_strategy::automatic)
        return forced;
    const char* text = std::getenv("KILN_GEMM_STRATEGY");
    if (!text || !*text) return gemm_strategy::automatic;
    for (gemm_strategy s :
         {gemm_strategy::simt, gemm_strategy::tensor_cores, gemm_strategy::warpgroup_mma,
          gemm_strategy::cpu_tiles, gemm_strategy::host_blas})
        if (to_string(s) == text) return s;
    throw invalid_argument_error(
        "kiln::gemm", "KILN_GEMM_STRATEGY is '" + std::string(text) +
                          "'; it takes simt, tensor_cores, warpgroup_mma, cpu_tiles or host_blas");
}

std::string shape(std::size_t rows, std::size_t columns) {
    return std::to_string(rows) + "x" + std::to_string(columns);
}

/// offset + extent, in elements, or throws where it overflows (or its bytes do).
std::size_t checked_end(const gemm_operand& x, std::string_view name, const char* call) {
    if (x.rows == 0 || x.columns == 0 || x.batch == 0) return x.offset;
    const std::size_t last_row =
        checked_product(x.rows - 1, x.leading_dimension, call, "rows x leading dimension");
    const std::size_t last_entry =
        checked_product(x.batch - 1, x.batch_stride, call, "batch x batch stride");
    std::size_t end = last_row;
    for (std::size_t term : {x.columns, last_entry, x.offset}) {
        if (end > SIZE_MAX - term)
            throw invalid_argument_error(call, x.describe(name) + ": its extent overflows");
        end += term;
    }
    checked_product(end, element_bytes(x.element), call, "extent in bytes");
    return end;
}

/// Whether two windows on one buffer share an element. Single matrices with the same leading
/// dimension, neither wrapping past its rows' ends, share one where their rows and their columns
/// both meet (so A, B and C side by side in one buffer are apart); other pairs, where their spans
/// meet.
bool overlap(const gemm_operand& x, const gemm_operand& y) {
    if (x.extent() == 0 || y.extent() == 0) return false;
    if (x.offset >= y.offset + y.extent() || y.offset >= x.offset + x.extent()) return false;
    const std::size_t ld = x.leading_dimension;
    if (x.batch != 1 || y.batch != 1 || y.leading_dimension != ld || ld == 0) return true;
    const std::size_t x_column = x.offset % ld, y_column = y.offset % ld;
    if (x_column + x.columns > ld || y_column + y.columns > ld) return true;
    const std::size_t x_row = x.offset / ld, y_row = y.offset / ld;
    const bool rows_meet = x_row < y_row + y.rows && y_row < x_row + x.rows;
    const bool columns_meet = x_column < y_column + y.columns && y_column < x_column + x.columns;
    return rows_meet && columns_meet;
}

/// The first batch entry k that shares an element with entry 0 (then entry e shares one with
/// entry e + k, each product writing the other's), or 0 where the entries are apart. Entry k
/// starts k stride elements after entry 0, so it meets entry 0 where k stride lies within
/// columns - 1 of j leading_dimension for a row distance j < rows: for each j, the smallest k
/// past j leading_dimension - columns is the one to try. check_gemm made every product fit.
std::size_t first_entry_meeting_the_first(const gemm_operand& x) {
    if (x.batch < 2 || x.extent() == 0) return 0;
    const std::size_t stride = x.batch_stride, width = x.columns;
    if (stride == 0) return 1;
    if (stride >= (x.rows - 1) * x.leading_dimension + width) return 0;
    for (std::size_t j = 0; j < x.rows; ++j) {
        const std::size_t row = j * x.leading_dimension;
        const std::size_t k = row < width ? 1 : (row - width) / stride + 1;
        if (k >= x.batch) break;
        if (k * stride < row + width) return k;
    }
    return 0;
}

/// A per-tensor scale belongs to an FP8 operand, and must be finite: a NaN or infinite scale
/// (an amax of 0 divided into a format's largest value) would turn every element of C into NaN
/// or infinity, where the caller's mistake is better named. A zero scale is alpha = 0's case.
void check_scale(double scale, const char* option, const gemm_operand& x, std::string_view name,
                 const char* call) {
    std::ostringstream text;  // "nan", "-inf", "2": as the caller would write the value
    text << option << " is " << scale;
    if (!std::isfinite(scale))
        throw invalid_argument_error(
            call, text.str() + " (" + x.describe(name) + "): a per-tensor scale must be finite");
    if (scale != 1 && !is_float8(x.element))
        throw invalid_argument_error(call, text.str() + " but " + x.describe(name) + " holds " +
                                               std::string(to_string(x.element)) +
                                               ": per-tensor scales are for FP8 operands; fold "
                                               "others into alpha");
}

/// The epilogue's rows and columns must fit its index type, and it must not capture C's memory,
/// which the kernels reach through their restrict pointer alone.
void check_epilogue(const gemm_problem& p, const char* call) {
    const gemm_epilogue& epilogue = *p.epilogue;
    if (std::max(p.m(), p.n()) - 1 > epilogue.largest_index)
        throw invalid_argument_error(call, "C is " + shape(p.m(), p.n()) +
                                               ": its rows and columns do not fit the "
                                               "epilogue's row and column type " +
                                               epilogue.index_type + ", whose largest value is " +
                                               std::to_string(epilogue.largest_index) +
                                               "; declare them kiln::uint or "
                                               "kiln::ulong");
    for (std::size_t i = 0; i < epilogue.arguments.size(); ++i)
        if (epilogue.arguments[i].memory &&
            epilogue.arguments[i].memory.get() == p.c.storage->memory())
            throw invalid_argument_error(
                call, "the epilogue captures C's memory (capture " + std::to_string(i + 1) +
                          "): the product writes C while the epilogue would read it; read C's "
                          "old values with beta, or capture a copy");
}

/// Reproducible mode: float and double products on the SIMT kernel alone, each C element summed
/// in k's order with every product rounded, the same on every device and tile shape.
bool runs_reproducibly(const gemm_problem& problem) {
    return current_determinism() == determinism::reproducible &&
           (problem.c.element == gemm_element::f32 || problem.c.element == gemm_element::f64) &&
           problem.a.element == problem.c.element && problem.b.element == problem.c.element;
}

/// The plan of a checked problem with alpha folded on `props`' device.
gemm_plan plan_of(const device_properties& props, const gemm_problem& problem) {
    const bool reproducible = runs_reproducibly(problem);
    return plan_gemm(
        props, {.element = problem.c.element,
                .host_blas = !reproducible && host_blas_available() && host_blas_fits(problem),
                .forced = reproducible ? gemm_strategy::simt : strategy_in_force(),
                .tuning = tuning_table<algorithm::gemm_rows>::forced(),
                .inputs = problem.a.element,
                .allow_tf32 = problem.allow_tf32,
                .tensor_core_layout = tensor_core_layout_fits(problem),
                .rows = problem.m(),
                .columns = problem.n(),
                .depth = problem.k(),
                .a_copy_aligns = copy_aligns_rows(problem.a),
                .b_copy_aligns = copy_aligns_rows(problem.b),
                // With k = 0 nothing is read, but an operand of no elements may have no memory
                // for a tile map: the copies (of nothing) give each one.
                .a_k_major = problem.k() != 0 && lies_k_major(problem.a, true),
                .b_k_major = problem.k() != 0 && lies_k_major(problem.b, false)});
}

/// Runs `problem` with A (B) replaced by a copy that `copy` makes of it where `copy_a` (`copy_b`);
/// the copies' scratch is freed after the product.
template <class Copy, class Run>
event run_with_copies(const queue& q, const gemm_problem& problem, bool copy_a, bool copy_b,
                      Copy&& copy, Run&& run) {
    if (!copy_a && !copy_b) return run(problem);
    std::vector<operand_copy> copies;
    copies.reserve(2);  // the operands point into the leases, which must not move
    gemm_problem copied = problem;
    for (const auto& [wanted, operand, is_a] :
         {std::tuple{copy_a, &copied.a, true}, std::tuple{copy_b, &copied.b, false}}) {
        if (!wanted) continue;
        copies.push_back(copy(*operand, is_a));
        *operand = copies.back().operand();
    }
    // The queue is in order: the product runs after the copies.
    const event done = run(copied);
    for (operand_copy& c : copies) c.scratch.release_after(q, done);
    return done;
}

/// A checked problem with alpha folded and no FP8 operand but for both on wgmma, on the
/// strategy its plan chooses.
event run_planned_gemm(const queue& q, const gemm_problem& problem) {
    const gemm_plan plan = plan_of(q.device().properties(), problem);
    switch (plan.strategy) {
        case gemm_strategy::tensor_cores:
            return run_tensor_core_gemm(q, problem, plan.tensor);
        case gemm_strategy::warpgroup_mma:
            if (!plan.warpgroup.tile_maps) return run_warpgroup_gemm(q, problem, plan.warpgroup);
            return run_with_copies(
                q, problem, plan.k_major_a, plan.k_major_b,
                [&](const gemm_operand& x, bool is_a) { return copy_k_major(q, x, is_a); },
                [&](const gemm_problem& p) {
                    return run_warpgroup_tma_gemm(q, p, plan.warpgroup);
                });
        case gemm_strategy::host_blas:
            refuse_inside_capture("kiln::gemm",
                                  "the host_blas strategy (OpenBLAS, the plan's choice on CPU "
                                  "devices) multiplies on the host, in the device's memory; "
                                  "KILN_GEMM_STRATEGY=cpu_tiles multiplies with kernels, which "
                                  "capture");
            run_host_blas_gemm(q, problem);
            return problem.epilogue ? run_gemm_epilogue_pass(q, problem) : q.marker();
        case gemm_strategy::cpu_tiles:
            return run_cpu_tiles_gemm(q, problem, plan.cpu);
        case gemm_strategy::automatic:
        case gemm_strategy::simt:
            break;
    }
    return run_with_copies(
        q, problem, plan.align_a, plan.align_b,
        [&](const gemm_operand& x, bool) { return copy_with_aligned_rows(q, x); },
        [&](const gemm_problem& p) {
            return run_simt_gemm(q, p, plan.simt, runs_reproducibly(problem));
        });
}

/// A problem with alpha folded and a C that is not FP8, its FP8 operands taken as the plan and
/// the options allow.
event run_float8_inputs(const queue& q, const gemm_problem& problem) {
    const device_properties& props = q.device().properties();
    // FP8 operands go to wgmma as they are where the caller allows its fast accumulation (about
    // 14 bits per k32 step on an H200, past float's bound) and the plan takes them there (both
    // FP8); else they are widened whole into scratch first, which the strategies take as 16-bit
    // or float inputs (gemm_float8.hpp), with float accumulation.
    const bool float8_on_warpgroup =
        problem.allow_float8_fast_accumulation && is_float8(problem.a.element) &&
        is_float8(problem.b.element) &&
        plan_of(props, problem).strategy == gemm_strategy::warpgroup_mma;
    return run_with_copies(
        q, problem, is_float8(problem.a.element) && !float8_on_warpgroup,
        is_float8(problem.b.element) && !float8_on_warpgroup,
        [&](const gemm_operand& x, bool) {
            return widen_float8(q, x, widened_element(problem.c.element, props));
        },
        [&](const gemm_problem& p) { return run_planned_gemm(q, p); });
}

}  // namespace

std::size_t checked_product(std::size_t a, std::size_t b, const char* call, const char* what) {
    std::size_t product = 0;
    if (__builtin_mul_overflow(a, b, &product))
        throw invalid_argument_error(call, std::string(what) + " overflows: " + std::to_string(a) +
                                               " x " + std::to_string(b));
    return product;
}

std::size_t element_bytes(gemm_element e) noexcept {
    return e == gemm_element::f64 ? 8 : is_16_bit(e) ? 2 : is_float8(e) ? 1 : 4;
}

std::string_view to_string(gemm_element e) noexcept {
    switch (e) {
        case gemm_element::f32:
            return "f32";
        case gemm_element::f64:
            return "f64";
        case gemm_element::f16:
            return "f16";
        case gemm_element::bf16:
            return "bf16";
        case gemm_element::e4m3:
            return "e4m3";
        case gemm_element::e5m2:
            return "e5m2";
    }
    return "?";
}

std::string_view to_string(gemm_strategy s) noexcept {
    switch (s) {
        case gemm_strategy::automatic:
            return "automatic";
        case gemm_strategy::simt:
            return "simt";
        case gemm_strategy::tensor_cores:
            return "tensor_cores";
        case gemm_strategy::warpgroup_mma:
            return "warpgroup_mma";
        case gemm_strategy::cpu_tiles:
            return "cpu_tiles";
        case gemm_strategy::host_blas:
            return "host_blas";
    }
    return "?";
}

std::size_t gemm_operand::extent() const noexcept {
    if (rows == 0 || columns == 0 || batch == 0) return 0;
    return (rows - 1) * leading_dimension + columns + (batch - 1) * batch_stride;
}

std::string gemm_operand::describe(std::string_view name) const {
    std::string text = std::string(name) + " (" + shape(rows, columns);
    if (batch != 1) text += " x" + std::to_string(batch) + " every " + std::to_string(batch_stride);
    if (leading_dimension != columns)
        text += ", leading dimension " + std::to_string(leading_dimension);
    if (offset != 0) text += ", offset " + std::to_string(offset);
    return text + (transposed ? ", transposed)" : ")");
}

void check_gemm(const gemm_problem& p, const char* call) {
    const std::pair<const gemm_operand*, const char*> operands[] = {
        {&p.a, "A"}, {&p.b, "B"}, {&p.c, "C"}};
    for (const auto& [x, name] : operands) {
        if (!x->storage)
            throw invalid_argument_error(call, x->describe(name) + " has no device memory");
        if (x->leading_dimension < x->columns)
            throw invalid_argument_error(
                call, x->describe(name) + ": the leading dimension is below the columns");
        const std::size_t end = checked_end(*x, name, call);
        if (end * element_bytes(x->element) > x->storage->bytes())
            throw invalid_argument_error(call, x->describe(name) + " runs past its buffer of " +
                                                   std::to_string(x->storage->bytes()) + " bytes");
    }
    const std::string shapes =
        p.a.describe("A") + ", " + p.b.describe("B") + ", " + p.c.describe("C");
    if (p.a.product_columns() != p.b.product_rows())
        throw invalid_argument_error(
            call, "inner dimensions differ: op(A) is " +
                      shape(p.a.product_rows(), p.a.product_columns()) + ", op(B) " +
                      shape(p.b.product_rows(), p.b.product_columns()) + " (" + shapes + ")");
    if (p.c.rows != p.a.product_rows() || p.c.columns != p.b.product_columns())
        throw invalid_argument_error(
            call, "C is " + shape(p.c.rows, p.c.columns) + ", op(A) op(B) " +
                      shape(p.a.product_rows(), p.b.product_columns()) + " (" + shapes + ")");
    if (p.a.batch != p.c.batch || p.b.batch != p.c.batch)
        throw invalid_argument_error(call, "batches differ (" + shapes + ")");
    if (!(p.a.storage->device() == p.c.storage->device()) ||
        !(p.b.storage->device() == p.c.storage->device()))
        throw invalid_argument_error(call, "operands on different devices: A on " +
                                               device_label(p.a.storage->device()) + ", B on " +
                                               device_label(p.b.storage->device()) + ", C on " +
                                               device_label(p.c.storage->device()));
    for (const auto& [x, name] : {operands[0], operands[1]}) {
        if (x->storage->memory() == p.c.storage->memory() && overlap(*x, p.c))
            throw invalid_argument_error(call, "C overlaps " + std::string(name) + " (" + shapes +
                                                   "): the product would read what it writes");
    }
    check_scale(p.scale_a, "scale_a", p.a, "A", call);
    check_scale(p.scale_b, "scale_b", p.b, "B", call);
    if (p.epilogue) check_epilogue(p, call);
    if (const std::size_t k = first_entry_meeting_the_first(p.c))
        throw invalid_argument_error(call, "C's batch entries overlap (" + p.c.describe("C") +
                                               "): entries 0 and " + std::to_string(k) +
                                               " share elements, which both products would write");
}

event run_gemm(const queue& q, const gemm_problem& checked) {
    if (checked.m() == 0 || checked.n() == 0 || checked.batch() == 0) return q.marker();
    // C = alpha (scale_a A) (scale_b B) + beta C: every kernel applies alpha once per element,
    // so the scales cost nothing where they are folded into it.
    gemm_problem problem = checked;
    problem.alpha *= problem.scale_a * problem.scale_b;
    problem.scale_a = problem.scale_b = 1;
    // alpha = 0 reads neither A nor B (BLAS's rule, which OpenBLAS keeps): every strategy then
    // runs the product with k = 0, C = beta C, so that NaN in A or B cannot reach C on one
    // strategy and not on another.
    if (problem.alpha == 0) {
        (problem.a.transposed ? problem.a.rows : problem.a.columns) = 0;
        (problem.b.transposed ? problem.b.columns : problem.b.rows) = 0;
    }
    if (is_float8(problem.c.element))
        return run_with_float8_output(
            q, problem, [&](const gemm_problem& p) { return run_float8_inputs(q, p); });
    return run_float8_inputs(q, problem);
}

std::vector<gemm_strategy> gemm_strategies_for(const device& dev) {
    std::vector<gemm_strategy> strategies;
    for (gemm_strategy s :
         {gemm_strategy::simt, gemm_strategy::tensor_cores, gemm_strategy::warpgroup_mma,
          gemm_strategy::cpu_tiles, gemm_strategy::host_blas})
        if (gemm_strategy_runs_on(s, dev.properties(), host_blas_available()))
            strategies.push_back(s);
    return strategies;
}

scoped_gemm_strategy::scoped_gemm_strategy(gemm_strategy strategy)
    : previous_(forced_strategy.exchange(strategy)) {}
scoped_gemm_strategy::~scoped_gemm_strategy() {
    forced_strategy.store(previous_);
}

}  // namespace kiln::detail
