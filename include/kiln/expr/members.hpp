// SPDX-License-Identifier: Apache-2.0
// Vector types and structs in expressions: components of vector types (kiln::component<0>(v))
// and fields of KILN_STRUCTs (kiln::field<&particle::mass>(v)), readable and assignable, and the
// geometric functions dot and length.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/expr/assign.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/kernel_struct.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

/// The part of each element of `Inner` that `Selector` names: Selector::type is its value type
/// and Selector::suffix() the OpenCL C member access (".x", ".mass"). Writable when the operand
/// was a non-const vector or view.
template <class Selector, expression_node Inner, bool Writable>
class member_node : public expression_tag {
  public:
    // 16-bit fields take part as float (their kernel-side ushort bits converted).
    using value_type = computed_t<typename Selector::type>;
    using storage = field_storage<typename Selector::type>;

    explicit member_node(Inner inner) : inner_(std::move(inner)) {}
    member_node(const member_node&) = default;

    std::string generate(generator& g) const {
        return storage::load("(" + inner_.generate(g) + ")" + Selector::suffix());
    }
    std::string generate_target(generator& g) const requires(Writable&& target_node<Inner>) {
        return inner_.generate_target(g) + Selector::suffix();
    }
    void collect(argument_list& args) const { inner_.collect(args); }
    void check(operand_check& c) const { inner_.check(c); }
    const layout& written_layout() const noexcept requires(Writable&& target_node<Inner>) {
        return inner_.written_layout();
    }
    std::string written_member() const requires(Writable&& target_node<Inner>) {
        return detail::written_member(inner_) + Selector::suffix();
    }

    template <expression_operand E>
    requires(Writable&& target_node<Inner>) const member_node& operator=(const E& value) const {
        assign(*this, value, "kiln::component/field assignment");
        return *this;
    }
    const member_node& operator=(const member_node& other) const
        requires(Writable&& target_node<Inner>) {
        assign(*this, other, "kiln::component/field assignment");
        return *this;
    }

  private:
    Inner inner_;
};

template <std::size_t Index, class Vec>
struct component_selector {
    using type = typename Vec::value_type;
    static std::string suffix() { return std::string(".") + "xyzw"[Index]; }
};

template <auto Member>
struct field_selector {
    using type = typename member_of<decltype(Member)>::field;
    static std::string suffix() { return "." + std::string(field_name<Member>()); }
};

template <class Selector, class E>
auto make_member(E&& operand) {
    constexpr bool writable = !std::is_const_v<std::remove_reference_t<E>>;
    auto inner = as_node(operand);
    return member_node<Selector, decltype(inner), writable>(std::move(inner));
}

/// A geometric built-in of floating-point vector types (OpenCL C 6.12.5): dot(a, b), length(a).
template <class Name, expression_node... Args>
class geometric_node : public expression_tag {
  public:
    using value_type =
        typename std::tuple_element_t<0, std::tuple<Args...>>::value_type::value_type;

    explicit geometric_node(Args... args) : args_(std::move(args)...) {}

    std::string generate(generator& g) const {
        std::string call = std::string(Name::name) + "(";
        std::apply(
            [&](const auto&... arg) {
                bool first = true;
                ((call += (first ? "" : ", ") + arg.generate(g), first = false), ...);
            },
            args_);
        return call + ")";
    }
    void collect(argument_list& args) const {
        std::apply([&](const auto&... arg) { (arg.collect(args), ...); }, args_);
    }
    void check(operand_check& c) const {
        std::apply([&](const auto&... arg) { (arg.check(c), ...); }, args_);
    }

  private:
    std::tuple<Args...> args_;
};

struct dot_name {
    static constexpr const char* name = "dot";
};
struct length_name {
    static constexpr const char* name = "length";
};

template <class E>
concept floating_vec_expression = vector_expression<E> && is_vec_v<expression_value_t<E>> &&
    std::is_floating_point_v<typename expression_value_t<E>::value_type>;

}  // namespace detail

/// The dot product of two expressions of one floating-point vector type (float4, double2...).
template <detail::floating_vec_expression A, detail::floating_vec_expression B>
requires std::same_as<expression_value_t<A>, expression_value_t<B>>
auto dot(const A& a, const B& b) {
    auto l = detail::as_node(a);
    auto r = detail::as_node(b);
    return detail::geometric_node<detail::dot_name, decltype(l), decltype(r)>(std::move(l),
                                                                              std::move(r));
}

/// The Euclidean length of each element of a floating-point vector-type expression.
template <detail::floating_vec_expression A>
auto length(const A& a) {
    auto node = detail::as_node(a);
    return detail::geometric_node<detail::length_name, decltype(node)>(std::move(node));
}

/// Component Index (0 = x, 1 = y, 2 = z, 3 = w) of each element of a vector-type expression:
/// `kiln::component<0>(positions)`; assignable when the operand is a non-const vector.
template <std::size_t Index, class E>
requires vector_expression<E> && detail::is_vec_v<expression_value_t<E>> &&
    (Index < static_cast<std::size_t>(expression_value_t<E>::size)) auto component(E&& operand) {
    return detail::make_member<detail::component_selector<Index, expression_value_t<E>>>(
        std::forward<E>(operand));
}

/// Field `Member` of each element of a KILN_STRUCT expression:
/// `kiln::field<&particle::mass>(particles)`; assignable when the operand is a non-const vector.
template <auto Member, class E>
requires vector_expression<E> && std::is_member_object_pointer_v<decltype(Member)> &&
    std::same_as<typename detail::member_of<decltype(Member)>::owner, expression_value_t<E>>
auto field(E&& operand) {
    return detail::make_member<detail::field_selector<Member>>(std::forward<E>(operand));
}

}  // namespace kiln
#pragma GCC visibility pop
