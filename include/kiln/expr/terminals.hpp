// SPDX-License-Identifier: Apache-2.0
// Special terminals: element indices, tagged operands, temporaries and raw pointers.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/expr/core.hpp>
#include <kiln/expr/functions.hpp>
#include <optional>
#include <string>
#include <utility>

namespace kiln {
namespace detail {

class element_index_terminal : public expression_tag {
  public:
    using value_type = std::uint64_t;
    static constexpr std::size_t contiguous_width = any_width;
    element_index_terminal(std::uint64_t offset, std::optional<std::size_t> size)
        : offset_(offset), size_(size) {}

    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        g.parameter("ulong", name);
        return "(idx + " + name + ")";
    }
    // Numbering continues across the parts of a multi-device vector.
    void collect(argument_list& args) const {
        args.scalar<std::uint64_t>(offset_ + args.part_begin());
    }
    void check(operand_check& c) const {
        if (size_) c.sized(*size_, "element_index");
    }

  private:
    std::uint64_t offset_;
    std::optional<std::size_t> size_;
};

/// Terminals whose parameter can be shared: vectors and scalars.
template <class T>
concept shareable_terminal = expression_node<T> &&
    requires(const T& t, generator& g, argument_list& a, const std::string& name) {
    t.declare(g, name);
    { t.value_of(g, name) } -> std::same_as<std::string>;
    t.pass(a);
};

template <int Id, shareable_terminal Terminal>
class tagged_node : public expression_tag {
  public:
    using value_type = typename Terminal::value_type;
    static constexpr std::size_t contiguous_width = width_of<Terminal>();
    static constexpr bool vector_form = has_vector_form<Terminal>();
    explicit tagged_node(Terminal terminal) : terminal_(std::move(terminal)) {}

    std::string generate(generator& g) const {
        const std::string name = g.local_name("tag" + std::to_string(Id));
        if (g.first_use(shared_key(shared_kind::tag, Id))) terminal_.declare(g, name);
        return terminal_.value_of(g, name);
    }
    void collect(argument_list& args) const {
        if (args.first_use(shared_key(shared_kind::tag, Id))) terminal_.pass(args);
    }
    void check(operand_check& c) const { terminal_.check(c); }

  private:
    Terminal terminal_;
};

template <int Id, expression_node Expression>
class temporary_node : public expression_tag {
  public:
    using value_type = typename Expression::value_type;
    static constexpr std::size_t contiguous_width = width_of<Expression>();
    static constexpr bool vector_form = has_vector_form<Expression>();
    explicit temporary_node(Expression expression) : expression_(std::move(expression)) {}

    std::string generate(generator& g) const {
        const std::string name = g.local_name("temp" + std::to_string(Id));
        if (g.first_use(shared_key(shared_kind::temporary, Id))) {
            const std::string value = expression_.generate(g);
            g.statement("const " + g.value_type(opencl_type_name<value_type>()) + " " + name +
                        " = " + value + ";");
        }
        return name;
    }
    void collect(argument_list& args) const {
        if (args.first_use(shared_key(shared_kind::temporary, Id))) expression_.collect(args);
    }
    void check(operand_check& c) const { expression_.check(c); }

  private:
    Expression expression_;
};

template <class Pointer, expression_node Index>
class subscript_node : public expression_tag {
  public:
    using value_type = computed_t<typename Pointer::element_type>;
    subscript_node(Pointer pointer, Index index)
        : pointer_(std::move(pointer)), index_(std::move(index)) {}

    std::string generate(generator& g) const {
        const std::string pointer = pointer_.generate(g);
        return element_storage<typename Pointer::element_type>::load(pointer, index_.generate(g));
    }
    void collect(argument_list& args) const {
        pointer_.collect(args);
        index_.collect(args);
    }
    void check(operand_check& c) const {
        pointer_.check(c);
        index_.check(c);
    }

  private:
    Pointer pointer_;
    Index index_;
};

/// The device address of a vector's data inside a kernel (single-device vectors only).
template <class Vector>
class raw_pointer_node : public expression_tag {
  public:
    using element_type = typename Vector::value_type;
    using value_type = device_pointer<element_type>;
    explicit raw_pointer_node(const Vector& vector) : vector_(&vector) {}

    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        // Not const: user functions may declare the parameter as a plain T*.
        declare_type<element_type>(g.source);
        g.parameter("global " + opencl_type_name<element_type>() + "*", name);
        return name;
    }
    void collect(argument_list& args) const { args.buffer(vector_->part(0)); }
    void check(operand_check& c) const { c.gathered(vector_->layout(), "raw_pointer"); }

    /// Element `index` (an integer expression) of the vector.
    template <expression_operand I>
    requires std::is_integral_v<operand_value_t<std::remove_cvref_t<I>>>
    auto operator[](const I& index) const {
        auto node = as_node_beside<std::uint64_t>(index);
        return subscript_node<raw_pointer_node, decltype(node)>(*this, std::move(node));
    }

  private:
    const Vector* vector_;
};

}  // namespace detail

///@{
/// The index of each element: offset, offset + 1, ... numbered continuously across the devices
/// of a multi-device vector. Without a size it fits any statement; with one it sets the size.
inline auto element_index(std::uint64_t offset = 0) {
    return detail::element_index_terminal(offset, std::nullopt);
}
inline auto element_index(std::uint64_t offset, std::size_t size) {
    return detail::element_index_terminal(offset, size);
}
///@}

/// Marks an operand (vector or scalar) that appears several times in one expression, so that
/// the kernel gets it once: tag<1>(x) * tag<1>(x) passes x once. Equal ids must mean the same
/// operand.
///@{
template <int Id, vector_expression X>
requires detail::shareable_terminal<detail::node_t<X>>
auto tag(const X& x) {
    return detail::tagged_node<Id, detail::node_t<X>>(detail::as_node(x));
}
template <int Id, scalar_value S>
auto tag(const S& s) {
    return detail::tagged_node<Id, detail::scalar_terminal<S>>(detail::scalar_terminal<S>(s));
}
///@}

/// A subexpression computed once per element and reused wherever it appears:
///
///     auto l = kiln::temporary<1>(log(x));
///     z = l * (l + y);   // log(x) is evaluated once per element
///
/// Equal ids in one statement must mean the same subexpression.
template <int Id, vector_expression X>
auto temporary(const X& x) {
    return detail::temporary_node<Id, detail::node_t<X>>(detail::as_node(x));
}

/// The device address of a single-device vector's data, for stencils and n-body-style loops:
/// index it in an expression (raw_pointer(x)[i]) or pass it to a user function taking a T*.
/// Reads through it are not bounds-checked.
template <vector_value T>
auto raw_pointer(const vector<T>& v) {
    return detail::raw_pointer_node<vector<T>>(v);
}

}  // namespace kiln
#pragma GCC visibility pop
