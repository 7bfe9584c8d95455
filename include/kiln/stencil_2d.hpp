// SPDX-License-Identifier: Apache-2.0
// 2-D stencils over a vector holding a row-major grid (the shape of a kiln::slicer<2>).
//
//     kiln::slicer<2> grid({rows, columns});
//     const auto L = kiln::stencil_2d<float>::laplacian_5(q, grid);
//     y = x * L;   // y(r, c) = x(r-1, c) + x(r+1, c) + x(r, c-1) + x(r, c+1) - 4 x(r, c)
//
// Element (r, c) is the sum over (a, b) of S(a, b) * x(clamp(r + a - center_row, 0, rows - 1),
// clamp(c + b - center_column, 0, columns - 1)): positions outside the grid read the nearest
// border element. One kernel, through local-memory tiles, strips of rows streamed through
// registers, or, on CPU devices, runs of rows walked by single work-items; a statement of its
// own (not a term of a larger expression), on one device.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_2d_streaming.hpp>
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_on_cpu.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/expr/views.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <vector>

namespace kiln {

/// The coefficients of a 2-D stencil (kernel_rows x kernel_columns, row-major) for one grid.
template <stencil_value T>
class stencil_2d {
  public:
    /// kernel_extents[0] x kernel_extents[1] coefficients, row-major, `center` the (row,
    /// column) of the one that weighs the element itself; copied to q's device.
    /// invalid_argument_error for no coefficients, a count that is not the extents' product, or
    /// a center outside them.
    stencil_2d(const queue& q, const slicer<2>& grid, std::span<const T> coefficients,
               std::array<std::size_t, 2> kernel_extents, std::array<std::size_t, 2> center)
        : queue_(q), grid_(grid.extents()), kernel_(kernel_extents), center_(center) {
        const auto fail = [](const std::string& why) {
            throw invalid_argument_error("kiln::stencil_2d", why);
        };
        if (kernel_[0] == 0 || kernel_[1] == 0) fail("a stencil needs coefficients");
        if (coefficients.size() != kernel_[0] * kernel_[1])
            fail(std::to_string(coefficients.size()) + " coefficients for a " +
                 std::to_string(kernel_[0]) + " x " + std::to_string(kernel_[1]) + " stencil");
        if (center_[0] >= kernel_[0] || center_[1] >= kernel_[1])
            fail("the center is outside the " + std::to_string(kernel_[0]) + " x " +
                 std::to_string(kernel_[1]) + " coefficients");
        coefficients_ = kiln::buffer<T>(q, coefficients);
    }
    /// Rows of coefficients of equal length, centred on the middle one (odd extents).
    stencil_2d(const queue& q, const slicer<2>& grid,
               std::initializer_list<std::initializer_list<T>> rows)
        : stencil_2d(q, grid, flatten(rows), {rows.size(), rows.size() ? rows.begin()->size() : 0},
                     {rows.size() / 2, rows.size() ? rows.begin()->size() / 2 : 0}) {}

    /// The 5-point Laplacian (grid spacing 1): neighbours 1, centre -4.
    static stencil_2d laplacian_5(const queue& q, const slicer<2>& grid) {
        return stencil_2d(q, grid, {{0, 1, 0}, {1, -4, 1}, {0, 1, 0}});
    }
    /// The 9-point Laplacian (grid spacing 1): (edge neighbours 4, corners 1, centre -20) / 6.
    static stencil_2d laplacian_9(const queue& q, const slicer<2>& grid) {
        const T e = T(4) / 6, k = T(1) / 6, m = T(-20) / 6;
        return stencil_2d(q, grid, {{k, e, k}, {e, m, e}, {k, e, k}});
    }

    /// The grid's extents: rows, columns.
    const std::array<std::size_t, 2>& grid() const noexcept { return grid_; }
    /// The coefficients' extents: rows, columns.
    const std::array<std::size_t, 2>& kernel_extents() const noexcept { return kernel_; }
    /// The (row, column) of the coefficient that weighs the element itself.
    const std::array<std::size_t, 2>& center() const noexcept { return center_; }
    /// The queue it was made on.
    const kiln::queue& queue() const noexcept { return queue_; }
    /// The coefficients on the queue's device, row-major.
    const kiln::buffer<T>& coefficients() const noexcept { return coefficients_; }

  private:
    static std::vector<T> flatten(std::initializer_list<std::initializer_list<T>> rows) {
        std::vector<T> out;
        for (const auto& row : rows) {
            if (row.size() != rows.begin()->size())
                throw invalid_argument_error("kiln::stencil_2d",
                                             "the rows of coefficients differ in length");
            out.insert(out.end(), row.begin(), row.end());
        }
        return out;
    }

    kiln::queue queue_;
    std::array<std::size_t, 2> grid_, kernel_, center_;
    kiln::buffer<T> coefficients_;
};

namespace detail {

/// x * S for a 2-D stencil: a statement that launches the tiled kernel, the strips or the runs.
template <stencil_value T>
class stencil_2d_product {
  public:
    stencil_2d_product(const kiln::vector<T>& x, const stencil_2d<T>& s) : x_(&x), stencil_(&s) {}

    void assign_to(kiln::vector<T>& y) const {
        const std::string call = "kiln::stencil_2d";
        const auto fail = [&](const std::string& why) { throw invalid_argument_error(call, why); };
        const auto [rows, columns] = stencil_->grid();
        if (&y == x_)
            fail(
                "the target is the stencil's operand (x = x * S); write into another "
                "vector");
        // rows * columns does not wrap: the slicer refused extents whose product would.
        if (x_->size() != rows * columns || y.size() != x_->size())
            fail("the grid is " + std::to_string(rows) + " x " + std::to_string(columns) +
                 " but the operand has " + std::to_string(x_->size()) +
                 " elements and the target " + std::to_string(y.size()));
        if (x_->part_count() > 1 || y.part_count() > 1)
            fail("split vectors are not supported by 2-D stencils");
        if (x_->size() == 0) return;
        const kiln::queue& q = x_->queue();
        if (q.device() != stencil_->queue().device() || y.queue().device() != q.device())
            fail("the operand, the target and the coefficients must be on one device");
        tiled_2d_shape shape{.type = opencl_type_name<T>(),
                             .kernel_rows = stencil_->kernel_extents()[0],
                             .kernel_columns = stencil_->kernel_extents()[1],
                             .center_row = stencil_->center()[0],
                             .center_column = stencil_->center()[1],
                             .tuning = stencil_2d_tuning(q.device())};
        const bool runs = shape.tuning.chunk_bytes != 0;
        const bool strips = !runs && shape.tuning.strip_rows != 0;
        const algorithm_program& built = runs     ? stencil_runs_program(q.device(), shape)
                                         : strips ? stencil_strips_program(q.device(), shape)
                                                  : tiled_stencil_program(q.device(), shape);
        kernel_binding args = built.binding(runs     ? "kiln_stencil_2d_runs"
                                            : strips ? "kiln_stencil_2d_strips"
                                                     : "kiln_stencil_2d");
        args.scalar("rows", std::uint64_t{rows})
            .scalar("columns", std::uint64_t{columns})
            .buffer("x", x_->part(0))
            .buffer("y", y.part(0))
            .buffer("c", stencil_->coefficients());
        if (runs)
            launch_stencil_runs(built, q, rows * columns, sizeof(T), shape.tuning, std::move(args));
        else if (strips)
            launch_stencil_strips(built, q, rows, columns, shape, std::move(args));
        else
            launch_tiled_stencil_2d(built, q, rows, columns, shape, std::move(args));
    }

  private:
    const kiln::vector<T>* x_;
    const stencil_2d<T>* stencil_;
};

}  // namespace detail

/// The 2-D stencil applied at every grid point (clamped at the borders): `y = x * S`.
template <stencil_value T>
detail::stencil_2d_product<T> operator*(const vector<T>& x, const stencil_2d<T>& s) {
    return {x, s};
}

}  // namespace kiln
#pragma GCC visibility pop
