// SPDX-License-Identifier: Apache-2.0
// Operators on vector expressions: arithmetic, comparison, logical, bitwise, if_else and casts.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <kiln/expr/core.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

/// The families of operators, which decide the operand types they accept and the result type.
enum class operator_family {
    arithmetic,  ///< + - * /: numbers, complex included; usual arithmetic conversions
    comparison,  ///< == != < <= > >=: real numbers; bool
    logical,     ///< && ||: real numbers; bool
    integral,    ///< % & | ^: integers; usual arithmetic conversions
    shift,       ///< << >>: integers; the promoted left operand's type
};

struct plus_op {
    static constexpr std::string_view symbol = "+", complex_name = "cadd";
    static constexpr operator_family family = operator_family::arithmetic;
};
struct minus_op {
    static constexpr std::string_view symbol = "-", complex_name = "csub";
    static constexpr operator_family family = operator_family::arithmetic;
};
struct multiplies_op {
    static constexpr std::string_view symbol = "*", complex_name = "cmul";
    static constexpr operator_family family = operator_family::arithmetic;
};
struct divides_op {
    static constexpr std::string_view symbol = "/", complex_name = "cdiv";
    static constexpr operator_family family = operator_family::arithmetic;
};
template <operator_family Family, char... Symbol>
struct simple_op {
    static constexpr char text[] = {Symbol..., '\0'};
    static constexpr std::string_view symbol{text, sizeof...(Symbol)};
    static constexpr operator_family family = Family;
};
using modulus_op = simple_op<operator_family::integral, '%'>;
using equal_op = simple_op<operator_family::comparison, '=', '='>;
using not_equal_op = simple_op<operator_family::comparison, '!', '='>;
using less_op = simple_op<operator_family::comparison, '<'>;
using less_equal_op = simple_op<operator_family::comparison, '<', '='>;
using greater_op = simple_op<operator_family::comparison, '>'>;
using greater_equal_op = simple_op<operator_family::comparison, '>', '='>;
using logical_and_op = simple_op<operator_family::logical, '&', '&'>;
using logical_or_op = simple_op<operator_family::logical, '|', '|'>;
using bit_and_op = simple_op<operator_family::integral, '&'>;
using bit_or_op = simple_op<operator_family::integral, '|'>;
using bit_xor_op = simple_op<operator_family::integral, '^'>;
using shift_left_op = simple_op<operator_family::shift, '<', '<'>;
using shift_right_op = simple_op<operator_family::shift, '>', '>'>;

/// Usual arithmetic conversions, extended to complex numbers: complex<float> * double is
/// complex<double>, complex<float> * int is complex<float>.
template <class A, class B>
struct arithmetic_result {
    using type = decltype(std::declval<A>() + std::declval<B>());
};
template <class A, class B>
requires(is_complex_v<A> || is_complex_v<B>) struct arithmetic_result<A, B> {
    using type =
        std::complex<decltype(std::declval<real_of_t<A>>() + std::declval<real_of_t<B>>())>;
};
template <class A, class B>
using arithmetic_result_t = typename arithmetic_result<A, B>::type;

template <class Op, class A, class B>
concept binary_applicable =
    (Op::family == operator_family::arithmetic &&
     ((number<A> && number<B>) || vec_arithmetic_operands<A, B>)) ||
    ((Op::family == operator_family::comparison || Op::family == operator_family::logical) &&
     real_number<A> && real_number<B>) ||
    ((Op::family == operator_family::integral || Op::family == operator_family::shift) &&
     std::is_integral_v<A> && std::is_integral_v<B>);

template <class Op, class A, class B>
struct binary_result {
    using type = arithmetic_result_t<A, B>;
};
template <class Op, class A, class B>
requires(Op::family == operator_family::comparison ||
         Op::family == operator_family::logical) struct binary_result<Op, A, B> {
    using type = bool;
};
template <class Op, class A, class B>
requires(Op::family == operator_family::shift) struct binary_result<Op, A, B> {
    using type = decltype(+std::declval<A>());
};
template <class Op, class A, class B>
using binary_result_t = typename binary_result<Op, A, B>::type;

template <class Op, expression_node Left, expression_node Right>
requires binary_applicable<Op, typename Left::value_type, typename Right::value_type>
class binary_node : public expression_tag {
  public:
    using left_type = typename Left::value_type;
    using right_type = typename Right::value_type;
    using value_type = binary_result_t<Op, left_type, right_type>;
    static constexpr std::size_t contiguous_width = combined_width<Left, Right>();
    // Comparisons and logic give -1 for true over vectors, and bool has no vector form.
    static constexpr bool vector_form =
        Op::family == operator_family::arithmetic && vector_forms_of<value_type, Left, Right>();

    binary_node(Left left, Right right) : left_(std::move(left)), right_(std::move(right)) {}

    std::string generate(generator& g) const {
        if constexpr (rounded_operation) {
            if (g.explicit_contraction()) return explicit_operation(g);
        }
        const std::string a = left_.generate(g);
        const std::string b = right_.generate(g);
        if constexpr (Op::family == operator_family::arithmetic && is_complex_v<value_type>) {
            return complex_helper<value_type>(g.source, Op::complex_name) + "(" +
                   convert_value<value_type, left_type>(g.source, a) + ", " +
                   convert_value<value_type, right_type>(g.source, b) + ")";
        } else {
            return "(" + a + " " + std::string(Op::symbol) + " " + b + ")";
        }
    }
    /// A product's two factors in its own type, as its operation takes them.
    std::pair<std::string, std::string> factors(
        generator& g) const requires std::is_same_v<Op, multiplies_op> {
        std::string a = convert_value<value_type, left_type>(g.source, left_.generate(g));
        return {std::move(a), convert_value<value_type, right_type>(g.source, right_.generate(g))};
    }
    void collect(argument_list& args) const {
        left_.collect(args);
        right_.collect(args);
    }
    void check(operand_check& c) const {
        left_.check(c);
        right_.check(c);
    }

  private:
    /// + - * of float or double, which element_rules::explicit_contraction writes out (division
    /// is rounded as written: NVRTC's --prec-div).
    static constexpr bool rounded_operation =
        (std::is_same_v<value_type, float> || std::is_same_v<value_type, double>)&&(
            std::is_same_v<Op, plus_op> || std::is_same_v<Op, minus_op> ||
            std::is_same_v<Op, multiplies_op>);
    /// Whether `Node` is a product of this operation's type, which contracts into it.
    template <class Node>
    static constexpr bool contracts =
        !std::is_same_v<Op, multiplies_op> && requires(const Node& node, generator& g) {
        requires std::is_same_v<typename Node::value_type, value_type>;
        node.factors(g);
    };

    /// The operation as OpenCL C's FP_CONTRACT ON means it, whatever the compiler's own
    /// contraction: a sum or difference with a product operand (the left one first, as clang
    /// chooses) is one fma; every other operation is rounded on its own (kiln_add_rn...).
    std::string explicit_operation(generator& g) const {
        if constexpr (contracts<Left>) {
            const auto [a, b] = left_.factors(g);
            std::string c = convert_value<value_type, right_type>(g.source, right_.generate(g));
            if constexpr (std::is_same_v<Op, minus_op>) c = "(-" + c + ")";
            return "fma(" + a + ", " + b + ", " + c + ")";
        } else if constexpr (contracts<Right>) {
            const std::string c = convert_value<value_type, left_type>(g.source, left_.generate(g));
            auto [a, b] = right_.factors(g);
            if constexpr (std::is_same_v<Op, minus_op>) a = "(-" + a + ")";
            return "fma(" + a + ", " + b + ", " + c + ")";
        } else {
            constexpr std::string_view name = std::is_same_v<Op, plus_op>    ? "kiln_add_rn("
                                              : std::is_same_v<Op, minus_op> ? "kiln_sub_rn("
                                                                             : "kiln_mul_rn(";
            std::string a = convert_value<value_type, left_type>(g.source, left_.generate(g));
            const std::string b =
                convert_value<value_type, right_type>(g.source, right_.generate(g));
            return std::string(name) + a + ", " + b + ")";
        }
    }

    Left left_;
    Right right_;
};

template <class Op, class L, class R>
concept binary_operands = (vector_expression<L> || vector_expression<R>)&&expression_operand<
    L>&& expression_operand<R>&& binary_applicable<Op, beside_value_t<L, R>, beside_value_t<R, L>>;

template <class Op, class L, class R>
auto make_binary(const L& left, const R& right) {
    auto l = as_node_beside<R>(left);
    auto r = as_node_beside<L>(right);
    return binary_node<Op, decltype(l), decltype(r)>(std::move(l), std::move(r));
}

struct negate_op {
    static constexpr std::string_view symbol = "-";
};
struct logical_not_op {
    static constexpr std::string_view symbol = "!";
};
struct bit_not_op {
    static constexpr std::string_view symbol = "~";
};

template <class Op, class A>
struct unary_traits;
template <number A>
struct unary_traits<negate_op, A> {
    using type = std::conditional_t<is_complex_v<A>, A, decltype(-std::declval<A>())>;
};
template <class A>
requires is_vec_v<A>
struct unary_traits<negate_op, A> {
    using type = A;
};
template <real_number A>
struct unary_traits<logical_not_op, A> {
    using type = bool;
};
template <class A>
requires std::is_integral_v<A>
struct unary_traits<bit_not_op, A> {
    using type = decltype(~std::declval<A>());
};

template <class Op, class A>
concept unary_applicable = requires {
    typename unary_traits<Op, A>::type;
};

template <class Op, expression_node Arg>
requires unary_applicable<Op, typename Arg::value_type>
class unary_node : public expression_tag {
  public:
    using argument_type = typename Arg::value_type;
    using value_type = typename unary_traits<Op, argument_type>::type;
    static constexpr std::size_t contiguous_width = width_of<Arg>();
    static constexpr bool vector_form =
        std::is_same_v<Op, negate_op> && vector_forms_of<value_type, Arg>();

    explicit unary_node(Arg arg) : arg_(std::move(arg)) {}

    std::string generate(generator& g) const {
        const std::string a = arg_.generate(g);
        if constexpr (is_complex_v<value_type>)
            return complex_helper<value_type>(g.source, "cneg") + "(" + a + ")";
        else
            return "(" + std::string(Op::symbol) + a + ")";
    }
    void collect(argument_list& args) const { arg_.collect(args); }
    void check(operand_check& c) const { arg_.check(c); }

  private:
    Arg arg_;
};

template <class Op, class X>
concept unary_operand = vector_expression<X> && unary_applicable<Op, expression_value_t<X>>;

/// The common type of the two branches of if_else (or of min, max...), complex included.
template <class A, class B>
using common_value_t = std::conditional_t<is_complex_v<A> || is_complex_v<B>,
                                          arithmetic_result_t<A, B>, std::common_type_t<A, B>>;

template <expression_node Condition, expression_node WhenTrue, expression_node WhenFalse>
class if_else_node : public expression_tag {
  public:
    using true_type = typename WhenTrue::value_type;
    using false_type = typename WhenFalse::value_type;
    using value_type = common_value_t<true_type, false_type>;
    static constexpr std::size_t contiguous_width =
        combined_width<Condition, WhenTrue, WhenFalse>();

    if_else_node(Condition condition, WhenTrue when_true, WhenFalse when_false)
        : condition_(std::move(condition)),
          true_(std::move(when_true)),
          false_(std::move(when_false)) {}

    std::string generate(generator& g) const {
        const std::string c = condition_.generate(g);
        const std::string t = convert_value<value_type, true_type>(g.source, true_.generate(g));
        const std::string f = convert_value<value_type, false_type>(g.source, false_.generate(g));
        return "(" + c + " ? " + t + " : " + f + ")";
    }
    void collect(argument_list& args) const {
        condition_.collect(args);
        true_.collect(args);
        false_.collect(args);
    }
    void check(operand_check& c) const {
        condition_.check(c);
        true_.check(c);
        false_.check(c);
    }

  private:
    Condition condition_;
    WhenTrue true_;
    WhenFalse false_;
};

template <class To, expression_node Arg>
requires storable_as<To, typename Arg::value_type>
class cast_node : public expression_tag {
  public:
    using value_type = To;
    static constexpr std::size_t contiguous_width = width_of<Arg>();
    // To its own type only: the conversion is then no text at all.
    static constexpr bool vector_form = vector_forms_of<To, Arg>();
    explicit cast_node(Arg arg) : arg_(std::move(arg)) {}

    std::string generate(generator& g) const {
        return convert_value<To, typename Arg::value_type>(g.source, arg_.generate(g));
    }
    void collect(argument_list& args) const { arg_.collect(args); }
    void check(operand_check& c) const { arg_.check(c); }

  private:
    Arg arg_;
};

}  // namespace detail

// --- arithmetic ------------------------------------------------------------------------------

///@{
/// Element-wise arithmetic of two expressions, or of an expression and a scalar, in C++'s usual
/// arithmetic conversions (complex numbers included: complex<float> * double is
/// complex<double>); `%` takes integers.
template <class L, class R>
requires detail::binary_operands<detail::plus_op, L, R>
auto operator+(const L& l, const R& r) {
    return detail::make_binary<detail::plus_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::minus_op, L, R>
auto operator-(const L& l, const R& r) {
    return detail::make_binary<detail::minus_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::multiplies_op, L, R>
auto operator*(const L& l, const R& r) {
    return detail::make_binary<detail::multiplies_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::divides_op, L, R>
auto operator/(const L& l, const R& r) {
    return detail::make_binary<detail::divides_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::modulus_op, L, R>
auto operator%(const L& l, const R& r) {
    return detail::make_binary<detail::modulus_op>(l, r);
}
///@}

// --- comparison ------------------------------------------------------------------------------

///@{
/// Element-wise comparison of real numbers: an expression of bool.
template <class L, class R>
requires detail::binary_operands<detail::equal_op, L, R>
auto operator==(const L& l, const R& r) {
    return detail::make_binary<detail::equal_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::not_equal_op, L, R>
auto operator!=(const L& l, const R& r) {
    return detail::make_binary<detail::not_equal_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::less_op, L, R>
auto operator<(const L& l, const R& r) {
    return detail::make_binary<detail::less_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::less_equal_op, L, R>
auto operator<=(const L& l, const R& r) {
    return detail::make_binary<detail::less_equal_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::greater_op, L, R>
auto operator>(const L& l, const R& r) {
    return detail::make_binary<detail::greater_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::greater_equal_op, L, R>
auto operator>=(const L& l, const R& r) {
    return detail::make_binary<detail::greater_equal_op>(l, r);
}
///@}

// --- logical and bitwise ---------------------------------------------------------------------

///@{
/// Element-wise logic of real numbers, an expression of bool; both sides are always evaluated
/// (no short-circuit across elements).
template <class L, class R>
requires detail::binary_operands<detail::logical_and_op, L, R>
auto operator&&(const L& l, const R& r) {
    return detail::make_binary<detail::logical_and_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::logical_or_op, L, R>
auto operator||(const L& l, const R& r) {
    return detail::make_binary<detail::logical_or_op>(l, r);
}
///@}
///@{
/// Element-wise bitwise operations of integers, in the usual arithmetic conversions; a shift
/// takes the promoted left operand's type.
template <class L, class R>
requires detail::binary_operands<detail::bit_and_op, L, R>
auto operator&(const L& l, const R& r) {
    return detail::make_binary<detail::bit_and_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::bit_or_op, L, R>
auto operator|(const L& l, const R& r) {
    return detail::make_binary<detail::bit_or_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::bit_xor_op, L, R>
auto operator^(const L& l, const R& r) {
    return detail::make_binary<detail::bit_xor_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::shift_left_op, L, R>
auto operator<<(const L& l, const R& r) {
    return detail::make_binary<detail::shift_left_op>(l, r);
}
template <class L, class R>
requires detail::binary_operands<detail::shift_right_op, L, R>
auto operator>>(const L& l, const R& r) {
    return detail::make_binary<detail::shift_right_op>(l, r);
}
///@}

// --- unary -----------------------------------------------------------------------------------

///@{
/// Element-wise negation, logical not (an expression of bool) and bitwise not (integers).
template <class X>
requires detail::unary_operand<detail::negate_op, X>
auto operator-(const X& x) {
    auto node = detail::as_node(x);
    return detail::unary_node<detail::negate_op, decltype(node)>(std::move(node));
}
template <class X>
requires detail::unary_operand<detail::logical_not_op, X>
auto operator!(const X& x) {
    auto node = detail::as_node(x);
    return detail::unary_node<detail::logical_not_op, decltype(node)>(std::move(node));
}
template <class X>
requires detail::unary_operand<detail::bit_not_op, X>
auto operator~(const X& x) {
    auto node = detail::as_node(x);
    return detail::unary_node<detail::bit_not_op, decltype(node)>(std::move(node));
}
///@}

// --- selection and conversion ----------------------------------------------------------------

/// Element-wise `condition ? when_true : when_false`; both branches are evaluated.
template <expression_operand C, expression_operand T, expression_operand F>
requires(vector_expression<C> || vector_expression<T> || vector_expression<F>) &&
    detail::real_number<detail::operand_value_t<C>> auto if_else(const C& condition,
                                                                 const T& when_true,
                                                                 const F& when_false) {
    auto c = detail::as_node(condition);
    auto t = detail::as_node_beside<F>(when_true);
    auto f = detail::as_node_beside<T>(when_false);
    return detail::if_else_node<decltype(c), decltype(t), decltype(f)>(std::move(c), std::move(t),
                                                                       std::move(f));
}

/// Converts each element to To, like a C cast (to complex: the value becomes the real part).
template <scalar_value To, vector_expression X>
requires detail::storable_as<To, expression_value_t<X>>
auto cast(const X& x) {
    auto node = detail::as_node(x);
    return detail::cast_node<To, decltype(node)>(std::move(node));
}

}  // namespace kiln
#pragma GCC visibility pop
