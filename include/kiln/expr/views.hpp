// SPDX-License-Identifier: Apache-2.0
// Views of a single-device vector, readable and writable: permutations, reversal and slices.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/expr/assign.hpp>
#include <kiln/expr/core.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

/// What every view shares: the vector it looks into (const when the view is read-only) and the
/// kernel parameter naming its data.
template <class Vector>
class view_base : public expression_tag {
  public:
    using stored_type = typename std::remove_const_t<Vector>::value_type;
    using value_type = computed_t<stored_type>;
    using storage = element_storage<stored_type>;

    void check_storage(operand_check& c, std::string_view what, bool mirrored = false) const {
        c.gathered(vector_->layout(), what, mirrored);
    }
    const layout& written_layout() const noexcept { return vector_->layout(); }

  protected:
    explicit view_base(Vector& vector) : vector_(&vector) {}

    std::string declare_data(generator& g, bool writable) const {
        const std::string name = g.new_name();
        declare_type<stored_type>(g.source);
        g.parameter(std::string("global ") + (writable ? "" : "const ") +
                        opencl_type_name<stored_type>() + "*",
                    name);
        return name;
    }
    /// The element at `position` of the data parameter: its value, or the target of a store.
    static std::string access(const std::string& data, const std::string& position, bool writable) {
        return writable ? element_storage<stored_type>::target(data, position)
                        : element_storage<stored_type>::load(data, position);
    }
    void pass_data(argument_list& args) const { args.buffer(vector_->part(0)); }

    Vector* vector_;
};

/// v[index(i)] for each i: a gather when read, a scatter when written.
template <class Vector, expression_node Index>
class permuted_view : public view_base<Vector> {
  public:
    permuted_view(Vector& vector, Index index)
        : view_base<Vector>(vector), index_(std::move(index)) {}
    permuted_view(const permuted_view&) = default;

    std::string generate(generator& g) const { return element(g, false); }
    std::string generate_target(generator& g) const requires(!std::is_const_v<Vector>) {
        return element(g, true);
    }
    void collect(argument_list& args) const {
        this->pass_data(args);
        args.scalar<std::uint64_t>(this->vector_->size());
        index_.collect(args);
    }
    void check(operand_check& c) const {
        this->check_storage(c, "a permutation");
        // No index is inside an empty vector: only a statement of no elements may use it.
        if (this->vector_->size() == 0) c.sized(0, "a permutation of an empty vector");
        index_.check(c);
    }

    template <expression_operand E>
    requires(!std::is_const_v<Vector>) const permuted_view& operator=(const E& value) const {
        assign(*this, value, "kiln::permutation assignment");
        return *this;
    }
    const permuted_view& operator=(const permuted_view& other) const
        requires(!std::is_const_v<Vector>) {
        assign(*this, other, "kiln::permutation assignment");
        return *this;
    }

  private:
    std::string element(generator& g, bool writable) const {
        const std::string data = this->declare_data(g, writable);
        const std::string size = g.new_name();
        g.parameter("ulong", size);
        const std::string position = g.new_name();
        g.statement("const ulong " + position + " = (ulong)(" + index_.generate(g) + ");");
        // An index past the end (a negative one is, as unsigned) reads the last element, and
        // its store is skipped. The store's index is clamped as well, so that a statement that
        // dropped the guard would still stay inside the vector.
        if (writable) g.store_guard(position + " < " + size);
        return this->access(
            data, "(" + position + " < " + size + " ? " + position + " : " + size + " - 1)",
            writable);
    }

    Index index_;
};

/// v[n - 1 - i]: the vector back to front.
template <class Vector>
class reversed_view : public view_base<Vector> {
  public:
    explicit reversed_view(Vector& vector) : view_base<Vector>(vector) {}
    reversed_view(const reversed_view&) = default;

    std::string generate(generator& g) const { return element(g, false); }
    std::string generate_target(generator& g) const requires(!std::is_const_v<Vector>) {
        return element(g, true);
    }
    void collect(argument_list& args) const {
        this->pass_data(args);
        args.scalar<std::uint64_t>(this->vector_->size() - 1);
    }
    void check(operand_check& c) const {
        this->check_storage(c, "reverse", true);
        c.sized(this->vector_->size(), "reverse");
    }

    template <expression_operand E>
    requires(!std::is_const_v<Vector>) const reversed_view& operator=(const E& value) const {
        assign(*this, value, "kiln::reverse assignment");
        return *this;
    }
    const reversed_view& operator=(const reversed_view& other) const
        requires(!std::is_const_v<Vector>) {
        assign(*this, other, "kiln::reverse assignment");
        return *this;
    }

  private:
    std::string element(generator& g, bool writable) const {
        const std::string data = this->declare_data(g, writable);
        const std::string last = g.new_name();
        g.parameter("ulong", last);
        return this->access(data, last + " - idx", writable);
    }
};

/// Where a slice starts and how it walks its source: element (i0, i1, i2) of the slice is
/// source[offset + i0 * strides[0] + i1 * strides[1] + i2 * strides[2]].
template <std::size_t Rank>
struct slice_geometry {
    std::uint64_t offset = 0;
    std::array<std::uint64_t, Rank> counts{};
    std::array<std::uint64_t, Rank> strides{};
    std::size_t size() const {
        std::size_t n = 1;
        for (auto c : counts) n *= c;
        return n;
    }
};

template <class Vector, std::size_t Rank>
class slice_view : public view_base<Vector> {
  public:
    slice_view(Vector& vector, slice_geometry<Rank> geometry)
        : view_base<Vector>(vector), geometry_(geometry) {}
    slice_view(const slice_view&) = default;

    std::string generate(generator& g) const { return element(g, false); }
    std::string generate_target(generator& g) const requires(!std::is_const_v<Vector>) {
        return element(g, true);
    }
    void collect(argument_list& args) const {
        this->pass_data(args);
        args.scalar<std::uint64_t>(geometry_.offset);
        for (std::size_t d = 0; d < Rank; ++d) args.scalar<std::uint64_t>(geometry_.strides[d]);
        for (std::size_t d = 1; d < Rank; ++d) args.scalar<std::uint64_t>(geometry_.counts[d]);
    }
    void check(operand_check& c) const {
        this->check_storage(c, "a slice");
        c.sized(geometry_.size(), "a slice");
    }

    template <expression_operand E>
    requires(!std::is_const_v<Vector>) const slice_view& operator=(const E& value) const {
        assign(*this, value, "kiln::slice assignment");
        return *this;
    }
    const slice_view& operator=(const slice_view& other) const requires(!std::is_const_v<Vector>) {
        assign(*this, other, "kiln::slice assignment");
        return *this;
    }

  private:
    std::string element(generator& g, bool writable) const {
        const std::string data = this->declare_data(g, writable);
        const std::string offset = g.new_name();
        g.parameter("ulong", offset);
        std::array<std::string, Rank> stride, count;
        for (std::size_t d = 0; d < Rank; ++d) {
            stride[d] = g.new_name();
            g.parameter("ulong", stride[d]);
        }
        for (std::size_t d = 1; d < Rank; ++d) {
            count[d] = g.new_name();
            g.parameter("ulong", count[d]);
        }
        // Row-major: the last dimension varies fastest, as in the source's own layout.
        std::string position = offset;
        std::string inner = "1";
        for (std::size_t d = Rank; d-- > 0;) {
            const std::string coordinate =
                d == 0 ? (Rank == 1 ? "idx" : "idx / (" + inner + ")")
                       : (d == Rank - 1 ? "idx % " + count[d]
                                        : "(idx / (" + inner + ")) % " + count[d]);
            position += " + (" + coordinate + ") * " + stride[d];
            inner = inner == "1" ? count[d] : inner + " * " + count[d];
        }
        return this->access(data, position, writable);
    }

    slice_geometry<Rank> geometry_;
};

template <class Selector>
inline constexpr bool is_index_selector_v = std::is_integral_v<Selector>;

}  // namespace detail

/// A permutation of a single-device vector by an integer expression:
///
///     auto reversed = kiln::permutation(n - 1 - kiln::element_index());
///     y = reversed(x);     // gather: y[i] = x[n - 1 - i]
///     reversed(y) = x;     // scatter
///
/// Indices are taken as unsigned (a negative index is past the end). An index past the end
/// reads the vector's last element, and a store to it is skipped: nothing outside the vector is
/// read or written. A permutation of an empty vector is refused (invalid_argument_error) in a
/// statement of any elements. A scatter with repeated indices stores one of the values.
template <class Index>
class permutation {
  public:
    /// `index` gives, for each element of a view, the position it reads or writes in the vector.
    template <vector_expression I>
    requires std::is_integral_v<expression_value_t<I>>
    explicit permutation(const I& index) : index_(detail::as_node(index)) {}

    ///@{
    /// The view of `v` through the index: readable (a gather) and, of a non-const vector,
    /// writable (a scatter).
    template <vector_value T>
    auto operator()(vector<T>& v) const {
        return detail::permuted_view<vector<T>, Index>(v, index_);
    }
    template <vector_value T>
    auto operator()(const vector<T>& v) const {
        return detail::permuted_view<const vector<T>, Index>(v, index_);
    }
    ///@}

  private:
    Index index_;
};
/// A permutation takes its index expression's type.
template <vector_expression I>
permutation(const I&) -> permutation<detail::node_t<I>>;

///@{
/// A single-device vector back to front, readable and writable (not in place: reverse(x) = x
/// races).
template <vector_value T>
auto reverse(vector<T>& v) {
    return detail::reversed_view<vector<T>>(v);
}
template <vector_value T>
auto reverse(const vector<T>& v) {
    return detail::reversed_view<const vector<T>>(v);
}
///@}

/// Selects every index of a slicer dimension.
struct every_index {};
inline constexpr every_index every{};  ///< `kiln::every`: the whole of a dimension

/// Indices begin, begin + step, ... below end, in one slicer dimension.
struct index_range {
    std::size_t begin = 0;  ///< the first index
    std::size_t end = 0;    ///< one past the last index that may be taken
    std::size_t step = 1;   ///< the distance between indices taken
};

template <class S>
concept slice_selector =
    std::is_integral_v<S> || std::same_as<S, every_index> || std::same_as<S, index_range>;

namespace detail {
[[noreturn]] void throw_bad_slice(const std::string& why);
}

/// Views of a vector holding a dense row-major array of Rank dimensions (1 to 3):
///
///     kiln::slicer<2> matrix({rows, columns});
///     y = matrix(x, 3, kiln::every);                  // row 3
///     matrix(x, kiln::every, 0) = y;                  // column 0 (views are writable)
///     z = matrix(x, kiln::index_range{0, rows, 2}, kiln::index_range{1, 5});
///
/// Each selector is an index (that dimension disappears), kiln::every or an index_range. The
/// view's elements are in row-major order of the dimensions that remain.
template <std::size_t Rank>
requires(Rank >= 1 && Rank <= 3) class slicer {
  public:
    /// Throws invalid_argument_error where the extents' product (the elements) overflows size_t.
    explicit slicer(const std::array<std::size_t, Rank>& extents) : extents_(extents) {
        if (std::find(extents.begin(), extents.end(), 0) != extents.end()) return;
        std::size_t elements = 1;
        for (std::size_t e : extents) {
            if (elements > std::numeric_limits<std::size_t>::max() / e)
                detail::throw_bad_slice("extents " + describe(extents) +
                                        " hold more than 2^64 - 1 elements");
            elements *= e;
        }
    }

    ///@{
    /// The view of `v` that the selectors, one per dimension, pick; of a non-const vector it is
    /// writable. Throws invalid_argument_error where `v` is not the extents' size or a
    /// selector leaves its dimension.
    template <vector_value T, slice_selector... Selectors>
    requires(sizeof...(Selectors) == Rank) auto operator()(vector<T>& v,
                                                           Selectors... selectors) const {
        return make<vector<T>>(v, selectors...);
    }
    template <vector_value T, slice_selector... Selectors>
    requires(sizeof...(Selectors) == Rank) auto operator()(const vector<T>& v,
                                                           Selectors... selectors) const {
        return make<const vector<T>>(v, selectors...);
    }
    ///@}

    /// The array's extents, outermost first.
    const std::array<std::size_t, Rank>& extents() const noexcept { return extents_; }

  private:
    template <class Vector, class... Selectors>
    auto make(Vector& v, Selectors... selectors) const {
        constexpr std::size_t view_rank =
            (std::size_t{0} + ... + (detail::is_index_selector_v<Selectors> ? 0 : 1));
        std::size_t elements = 1;
        for (auto e : extents_) elements *= e;
        if (v.size() != elements)
            detail::throw_bad_slice(std::string("the vector has ") + std::to_string(v.size()) +
                                    " elements but the slicer's extents hold " +
                                    std::to_string(elements));
        // Pitch of each dimension in the flat row-major source.
        std::array<std::uint64_t, Rank> pitch{};
        pitch[Rank - 1] = 1;
        for (std::size_t d = Rank - 1; d-- > 0;) pitch[d] = pitch[d + 1] * extents_[d + 1];

        detail::slice_geometry<view_rank> geometry;
        std::size_t dim = 0, kept = 0;
        auto select = [&](auto selector) {
            using S = decltype(selector);
            const std::size_t extent = extents_[dim];
            if constexpr (std::is_integral_v<S>) {
                bool negative = false;
                if constexpr (std::is_signed_v<S>) negative = selector < 0;
                if (negative || static_cast<std::size_t>(selector) >= extent)
                    detail::throw_bad_slice(std::string("index ") + std::to_string(selector) +
                                            " is outside dimension " + std::to_string(dim) +
                                            " of extent " + std::to_string(extent));
                geometry.offset += static_cast<std::uint64_t>(selector) * pitch[dim];
            } else {
                index_range r{0, extent, 1};
                if constexpr (std::is_same_v<S, index_range>) r = selector;
                if (r.step == 0 || r.begin > r.end || r.end > extent)
                    detail::throw_bad_slice(std::string("range [") + std::to_string(r.begin) +
                                            ", " + std::to_string(r.end) + ") step " +
                                            std::to_string(r.step) + " does not fit dimension " +
                                            std::to_string(dim) + " of extent " +
                                            std::to_string(extent));
                geometry.offset += r.begin * pitch[dim];
                if constexpr (view_rank > 0) {
                    // Not (end - begin + step - 1) / step, which wraps for steps near 2^64.
                    geometry.counts[kept] =
                        r.end == r.begin ? 0 : (r.end - r.begin - 1) / r.step + 1;
                    geometry.strides[kept] = r.step * pitch[dim];
                }
                ++kept;
            }
            ++dim;
        };
        (select(selectors), ...);
        return detail::slice_view<Vector, view_rank>(v, geometry);
    }

    static std::string describe(const std::array<std::size_t, Rank>& extents) {
        std::string text;
        for (std::size_t e : extents) text += (text.empty() ? "" : " x ") + std::to_string(e);
        return text;
    }

    std::array<std::size_t, Rank> extents_;
};

}  // namespace kiln
#pragma GCC visibility pop
