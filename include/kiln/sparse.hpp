// SPDX-License-Identifier: Apache-2.0
// Sparse matrices built from host CSR arrays, and their products inside vector expressions.
//
//     kiln::sparse_matrix<float> A(q, rows, columns, row_pointers, column_indices, values);
//     y = A * x;                 // one kernel
//     r = f - A * x;             // one kernel: the element-wise part runs in the product's
//     y = 2 * x + A * (x + z);   // kernel, at each row, and A's operand at each column
//
// The operand of A * ... is evaluated at the columns a row reads (idx is the column there), the
// rest of the statement at the row. The storage (CSR, ELL) and the kernel shape are chosen when
// the matrix is built (include/kiln/detail/algo/sparse_format.hpp); the element types
// (sparse_value), the device storage and the statements a product builds are in
// include/kiln/algo/sparse_product.hpp.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/algo/sparse_product.hpp>
#include <kiln/vector.hpp>
#include <ranges>
#include <span>
#include <vector>

namespace kiln {

/// A sparse matrix on one device, multiplied with vector expressions: `y = A * x`.
template <sparse_value T>
class sparse_matrix {
  public:
    using value_type = T;  ///< the entries' type

    /// From 0-based host CSR arrays of any integer index type. Validated before anything is
    /// allocated (invalid_argument_error).
    template <std::ranges::contiguous_range RowPointers, std::ranges::contiguous_range Columns,
              std::ranges::contiguous_range Values>
    requires std::integral<std::ranges::range_value_t<RowPointers>> &&
        std::same_as<std::ranges::range_value_t<RowPointers>,
                     std::ranges::range_value_t<Columns>> &&
        std::same_as<std::ranges::range_value_t<Values>, T>
        sparse_matrix(const queue& q, std::size_t rows, std::size_t columns,
                      const RowPointers& row_pointers, const Columns& column_indices,
                      const Values& values)
        : sparse_matrix(std::vector<kiln::queue>{q}, rows, columns, row_pointers, column_indices,
                        values) {}

    /// Split over several devices like a kiln::vector of `rows` elements on `queues`: each
    /// device multiplies its rows, reading its own part of x (split like a vector of `columns`
    /// elements) and, exchanged before each product, only the elements of other parts its rows
    /// need.
    template <std::ranges::contiguous_range RowPointers, std::ranges::contiguous_range Columns,
              std::ranges::contiguous_range Values>
    requires std::integral<std::ranges::range_value_t<RowPointers>> &&
        std::same_as<std::ranges::range_value_t<RowPointers>,
                     std::ranges::range_value_t<Columns>> &&
        std::same_as<std::ranges::range_value_t<Values>, T>
        sparse_matrix(const std::vector<kiln::queue>& queues, std::size_t rows, std::size_t columns,
                      const RowPointers& row_pointers, const Columns& column_indices,
                      const Values& values)
        : queue_(first_of(queues)), rows_(rows), columns_(columns) {
        using Index = std::ranges::range_value_t<RowPointers>;
        const std::span<const Index> checked_pointers(std::ranges::data(row_pointers),
                                                      std::ranges::size(row_pointers));
        const std::span<const Index> checked_indices(std::ranges::data(column_indices),
                                                     std::ranges::size(column_indices));
        const detail::row_statistics stats = detail::check_csr(
            rows, columns, checked_pointers, checked_indices, std::ranges::size(values));
        nonzeros_ = stats.nonzeros;
        const std::vector<std::uint32_t> pointers(checked_pointers.begin(), checked_pointers.end());
        const std::vector<std::uint32_t> indices(checked_indices.begin(), checked_indices.end());
        const std::span<const T> all_values(std::ranges::data(values), std::ranges::size(values));
        if (queues.size() == 1) {
            storage_ = detail::make_storage<T>(queue_, stats, pointers, indices, all_values);
            return;
        }
        row_parts_ = detail::split(queues, rows);
        column_parts_ = detail::split(queues, columns);
        const auto plans = detail::plan_split(row_parts_, column_parts_, pointers, indices);
        for (std::size_t k = 0; k < plans.size(); ++k) {
            const auto& plan = plans[k];
            const std::size_t own = column_parts_[k].size;
            blocks_.emplace_back(row_parts_[k].queue, row_parts_[k].size, own + plan.halo.size(),
                                 plan.row_pointers, plan.column_indices,
                                 all_values.subspan(plan.entries_begin, plan.entries));
            std::vector<detail::halo_transfer> transfers;
            for (std::size_t j = 0; j < column_parts_.size(); ++j) {
                std::vector<std::uint32_t> owner_indices;
                std::size_t offset = plan.halo.size();
                for (std::size_t h = 0; h < plan.halo.size(); ++h) {
                    const auto c = plan.halo[h];
                    if (c < column_parts_[j].begin ||
                        c >= column_parts_[j].begin + column_parts_[j].size)
                        continue;
                    offset = std::min(offset, h);
                    owner_indices.push_back(static_cast<std::uint32_t>(c - column_parts_[j].begin));
                }
                if (owner_indices.empty()) continue;
                transfers.push_back(
                    {j, offset, kiln::buffer<std::uint32_t>(column_parts_[j].queue, owner_indices),
                     owner_indices.size()});
            }
            transfers_.push_back(std::move(transfers));
            halo_sizes_.push_back(plan.halo.size());
        }
    }

    std::size_t rows() const noexcept { return rows_; }          ///< rows: the size of A * x
    std::size_t columns() const noexcept { return columns_; }    ///< columns: the size of x
    std::size_t nonzeros() const noexcept { return nonzeros_; }  ///< entries stored
    /// The queue of its first device, where products are enqueued.
    const kiln::queue& queue() const noexcept { return queue_; }
    /// The storage and kernel shape the rule chose (for tests, benchmarks and diagnostics).
    detail::sparse_format format() const noexcept { return storage_.layout.format; }
    /// The device arrays in that format, for kiln's own kernels.
    const detail::sparse_storage<T>& storage() const noexcept { return storage_; }

    /// Whether the matrix is split over several devices (the members below are empty if not).
    bool is_split() const noexcept { return !blocks_.empty(); }
    /// How the rows are split: as a kiln::vector of rows() elements on the same queues.
    const detail::layout& row_parts() const noexcept { return row_parts_; }
    /// How x is split: as a kiln::vector of columns() elements on the same queues.
    const detail::layout& column_parts() const noexcept { return column_parts_; }
    /// Part k's rows, a matrix on part k's device whose columns are its own x, then its halo.
    const sparse_matrix& block(std::size_t k) const { return blocks_.at(k); }
    /// What part k gathers from the other parts before each product.
    const std::vector<detail::halo_transfer>& transfers(std::size_t k) const {
        return transfers_.at(k);
    }
    /// Elements of x that part k reads from other parts.
    std::size_t halo_size(std::size_t k) const { return halo_sizes_.at(k); }

  private:
    static const kiln::queue& first_of(const std::vector<kiln::queue>& queues) {
        if (queues.empty()) throw invalid_argument_error("kiln::sparse_matrix", "no queue given");
        return queues[0];
    }

    kiln::queue queue_;
    std::size_t rows_, columns_, nonzeros_ = 0;
    detail::sparse_storage<T> storage_;
    detail::layout row_parts_, column_parts_;
    std::vector<sparse_matrix> blocks_;
    std::vector<std::vector<detail::halo_transfer>> transfers_;
    std::vector<std::size_t> halo_sizes_;
};

/// A * x for any vector expression x with A.columns() elements on A's device.
template <sparse_value T, vector_expression X>
requires detail::storable_as<detail::computed_t<T>, expression_value_t<X>>
auto operator*(const sparse_matrix<T>& matrix, const X& x) {
    return detail::sparse_product<T, detail::node_t<X>>(matrix, detail::as_node(x));
}

/// A * x for a vector of the matrix's own type: the form a split matrix accepts (16-bit values'
/// operands are float expressions, above).
template <sparse_value T>
requires(!detail::is_binary16_v<T>) auto operator*(const sparse_matrix<T>& matrix,
                                                   const vector<T>& x) {
    return detail::sparse_product<T, detail::vector_terminal<T>>(matrix,
                                                                 detail::vector_terminal<T>(x), &x);
}

/// The product as an ordinary expression, usable anywhere on one device (reductions, other
/// operators): `kiln::maximum(kiln::fabs(f - kiln::make_inline(A * u)))`. Each row is computed
/// by one work-item, the plain CSR (or ELL) loop: for an assignment prefer `y = f - A * u`,
/// whose kernel shape suits the matrix.
template <sparse_value T, class X>
detail::inline_product_node<T, X> make_inline(const detail::sparse_product<T, X>& product) {
    return detail::inline_product_node<T, X>(product);
}

}  // namespace kiln
#pragma GCC visibility pop
