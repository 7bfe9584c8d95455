// SPDX-License-Identifier: Apache-2.0
// Functions in vector expressions: OpenCL math built-ins, complex helpers and user functions.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <kiln/expr/core.hpp>
#include <kiln/expr/operators.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {
namespace detail {

/// A function name as a template argument, so that each built-in is its own node type.
template <std::size_t N>
struct fixed_string {
    constexpr fixed_string(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT
    constexpr std::string_view view() const { return {chars, N - 1}; }
    char chars[N]{};
};

/// Math built-ins take floating-point arguments; integers convert to double, as in C++.
template <class T>
using floating_argument_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

template <class... T>
using floating_result_t = std::common_type_t<floating_argument_t<T>...>;

/// A call of OpenCL built-in `Name` with `Result` values, converting each argument to Parameter.
template <fixed_string Name, class Result, class Parameter, expression_node... Args>
class builtin_call : public expression_tag {
  public:
    using value_type = Result;
    static constexpr std::size_t contiguous_width = combined_width<Args...>();
    // OpenCL C defines every built-in kiln calls on vectors of float and double, lane by lane.
    static constexpr bool vector_form =
        std::is_same_v<Result, Parameter> && vector_forms_of<Result, Args...>();
    explicit builtin_call(Args... args) : args_(std::move(args)...) {}

    std::string generate(generator& g) const {
        const unsigned lanes = broadcast_lanes(g);
        std::string call = std::string(Name.view()) + "(";
        std::apply(
            [&](const auto&... arg) {
                std::size_t position = 0;
                ((call += (position++ ? ", " : "") + operand(g, arg, lanes)), ...);
            },
            args_);
        return call + (lanes ? ").s0" : ")");
    }
    void collect(argument_list& a) const {
        std::apply([&](const auto&... arg) { (arg.collect(a), ...); }, args_);
    }
    void check(operand_check& c) const {
        std::apply([&](const auto&... arg) { (arg.check(c), ...); }, args_);
    }

  private:
    /// Lanes of the vector form that an element pass calls (element_rules::vector_bytes), 0 for
    /// the scalar call: built-ins that OpenCL defines exactly give the same bits either way.
    static unsigned broadcast_lanes(const generator& g) {
        if constexpr (!vector_form_value<Parameter> || !std::is_same_v<Result, Parameter>) {
            return 0;
        } else {
            constexpr std::array<std::string_view, 13> exact = {
                "fabs", "floor", "ceil",     "round", "trunc", "fmin", "fmax",
                "min",  "max",   "copysign", "fdim",  "fmod",  "fma"};
            if (std::ranges::find(exact, Name.view()) != exact.end()) return 0;
            return g.builtin_lanes(sizeof(Parameter));
        }
    }
    template <class Arg>
    static std::string operand(generator& g, const Arg& arg, unsigned lanes) {
        std::string value =
            convert_value<Parameter, typename Arg::value_type>(g.source, arg.generate(g));
        if (lanes)
            return "((" + opencl_type_name<Parameter>() + std::to_string(lanes) + ")(" + value +
                   "))";
        if (!g.vector_width()) return value;
        return g.finite_operand(opencl_type_name<Parameter>(), value);
    }

    std::tuple<Args...> args_;
};

template <class... X>
concept builtin_operands = (expression_operand<X> && ...) && (vector_expression<X> || ...) &&
                           (real_number<operand_value_t<std::remove_cvref_t<X>>> && ...);

/// Math built-in over real arguments: all are converted to their common floating-point type.
template <fixed_string Name, class... X>
auto make_math_call(const X&... x) {
    using Common =
        floating_result_t<beside_value_t<X, std::common_type_t<operand_value_t<X>...>>...>;
    return builtin_call<Name, Common, Common, decltype(as_node_beside<Common>(x))...>(
        as_node_beside<Common>(x)...);
}

/// Built-in of integer or floating arguments (min, max) in their common type.
template <fixed_string Name, class... X>
auto make_generic_call(const X&... x) {
    using Common =
        std::common_type_t<beside_value_t<X, std::common_type_t<operand_value_t<X>...>>...>;
    return builtin_call<Name, Common, Common, decltype(as_node_beside<Common>(x))...>(
        as_node_beside<Common>(x)...);
}

/// A complex helper returning Result (abs, arg, conj...) applied to one complex expression.
template <class Result, expression_node Arg>
class complex_call : public expression_tag {
  public:
    using value_type = Result;
    static constexpr std::size_t contiguous_width = width_of<Arg>();
    complex_call(Arg arg, std::string_view helper) : arg_(std::move(arg)), helper_(helper) {}

    std::string generate(generator& g) const {
        return complex_helper<typename Arg::value_type>(g.source, helper_) + "(" +
               arg_.generate(g) + ")";
    }
    void collect(argument_list& a) const { arg_.collect(a); }
    void check(operand_check& c) const { arg_.check(c); }

  private:
    Arg arg_;
    std::string_view helper_;
};

/// The real or imaginary part of a complex expression.
template <expression_node Arg>
class complex_part : public expression_tag {
  public:
    using value_type = typename Arg::value_type::value_type;
    static constexpr std::size_t contiguous_width = width_of<Arg>();
    complex_part(Arg arg, bool imaginary) : arg_(std::move(arg)), imaginary_(imaginary) {}

    std::string generate(generator& g) const {
        return "(" + arg_.generate(g) + (imaginary_ ? ").y" : ").x");
    }
    void collect(argument_list& a) const { arg_.collect(a); }
    void check(operand_check& c) const { arg_.check(c); }

  private:
    Arg arg_;
    bool imaginary_;
};

template <class X>
concept complex_operand = vector_expression<X> && is_complex_v<expression_value_t<X>>;

}  // namespace detail

// --- math built-ins ----------------------------------------------------------------------------
// Real arguments; integers are converted to double, as std::sin(int) is. Results follow OpenCL's
// accuracy rules for the device, which may differ from the host's libm in the last bits.

// clang-format off
///@{
/// Element-wise math built-in of real expressions (OpenCL C's function of the same name); an
/// integer operand is converted to double.
template <class X> requires detail::builtin_operands<X> auto sin(const X& x) { return detail::make_math_call<"sin">(x); }
template <class X> requires detail::builtin_operands<X> auto cos(const X& x) { return detail::make_math_call<"cos">(x); }
template <class X> requires detail::builtin_operands<X> auto tan(const X& x) { return detail::make_math_call<"tan">(x); }
template <class X> requires detail::builtin_operands<X> auto asin(const X& x) { return detail::make_math_call<"asin">(x); }
template <class X> requires detail::builtin_operands<X> auto acos(const X& x) { return detail::make_math_call<"acos">(x); }
template <class X> requires detail::builtin_operands<X> auto atan(const X& x) { return detail::make_math_call<"atan">(x); }
template <class X> requires detail::builtin_operands<X> auto sinh(const X& x) { return detail::make_math_call<"sinh">(x); }
template <class X> requires detail::builtin_operands<X> auto cosh(const X& x) { return detail::make_math_call<"cosh">(x); }
template <class X> requires detail::builtin_operands<X> auto tanh(const X& x) { return detail::make_math_call<"tanh">(x); }
template <class X> requires detail::builtin_operands<X> auto asinh(const X& x) { return detail::make_math_call<"asinh">(x); }
template <class X> requires detail::builtin_operands<X> auto acosh(const X& x) { return detail::make_math_call<"acosh">(x); }
template <class X> requires detail::builtin_operands<X> auto atanh(const X& x) { return detail::make_math_call<"atanh">(x); }
template <class X> requires detail::builtin_operands<X> auto exp(const X& x) { return detail::make_math_call<"exp">(x); }
template <class X> requires detail::builtin_operands<X> auto exp2(const X& x) { return detail::make_math_call<"exp2">(x); }
template <class X> requires detail::builtin_operands<X> auto expm1(const X& x) { return detail::make_math_call<"expm1">(x); }
template <class X> requires detail::builtin_operands<X> auto log(const X& x) { return detail::make_math_call<"log">(x); }
template <class X> requires detail::builtin_operands<X> auto log2(const X& x) { return detail::make_math_call<"log2">(x); }
template <class X> requires detail::builtin_operands<X> auto log10(const X& x) { return detail::make_math_call<"log10">(x); }
template <class X> requires detail::builtin_operands<X> auto log1p(const X& x) { return detail::make_math_call<"log1p">(x); }
template <class X> requires detail::builtin_operands<X> auto sqrt(const X& x) { return detail::make_math_call<"sqrt">(x); }
template <class X> requires detail::builtin_operands<X> auto rsqrt(const X& x) { return detail::make_math_call<"rsqrt">(x); }
template <class X> requires detail::builtin_operands<X> auto cbrt(const X& x) { return detail::make_math_call<"cbrt">(x); }
template <class X> requires detail::builtin_operands<X> auto fabs(const X& x) { return detail::make_math_call<"fabs">(x); }
template <class X> requires detail::builtin_operands<X> auto floor(const X& x) { return detail::make_math_call<"floor">(x); }
template <class X> requires detail::builtin_operands<X> auto ceil(const X& x) { return detail::make_math_call<"ceil">(x); }
template <class X> requires detail::builtin_operands<X> auto round(const X& x) { return detail::make_math_call<"round">(x); }
template <class X> requires detail::builtin_operands<X> auto trunc(const X& x) { return detail::make_math_call<"trunc">(x); }
template <class X> requires detail::builtin_operands<X> auto erf(const X& x) { return detail::make_math_call<"erf">(x); }
template <class X> requires detail::builtin_operands<X> auto erfc(const X& x) { return detail::make_math_call<"erfc">(x); }
template <class X> requires detail::builtin_operands<X> auto tgamma(const X& x) { return detail::make_math_call<"tgamma">(x); }
template <class X> requires detail::builtin_operands<X> auto lgamma(const X& x) { return detail::make_math_call<"lgamma">(x); }
///@}

///@{
/// Element-wise math built-in of two real expressions or scalars, in their common type (pow,
/// atan2(y, x), hypot, fmod, fdim, copysign: OpenCL C's functions).
template <class X, class Y> requires detail::builtin_operands<X, Y> auto pow(const X& x, const Y& y) { return detail::make_math_call<"pow">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto atan2(const X& y, const Y& x) { return detail::make_math_call<"atan2">(y, x); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto hypot(const X& x, const Y& y) { return detail::make_math_call<"hypot">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto fmod(const X& x, const Y& y) { return detail::make_math_call<"fmod">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto fdim(const X& x, const Y& y) { return detail::make_math_call<"fdim">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto copysign(const X& x, const Y& y) { return detail::make_math_call<"copysign">(x, y); }
///@}
///@{
/// IEEE minimum and maximum: a NaN argument is ignored unless both are NaN.
template <class X, class Y> requires detail::builtin_operands<X, Y> auto fmin(const X& x, const Y& y) { return detail::make_math_call<"fmin">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto fmax(const X& x, const Y& y) { return detail::make_math_call<"fmax">(x, y); }
///@}
/// x * y + z, rounded once.
template <class X, class Y, class Z> requires detail::builtin_operands<X, Y, Z> auto fma(const X& x, const Y& y, const Z& z) { return detail::make_math_call<"fma">(x, y, z); }

///@{
/// Element-wise minimum and maximum of integers or floats, in the operands' common type.
template <class X, class Y> requires detail::builtin_operands<X, Y> auto min(const X& x, const Y& y) { return detail::make_generic_call<"min">(x, y); }
template <class X, class Y> requires detail::builtin_operands<X, Y> auto max(const X& x, const Y& y) { return detail::make_generic_call<"max">(x, y); }
///@}
// clang-format on

// --- complex numbers ---------------------------------------------------------------------------

/// Real part of a complex expression.
template <detail::complex_operand X>
auto real(const X& x) {
    auto node = detail::as_node(x);
    return detail::complex_part<decltype(node)>(std::move(node), false);
}
/// Imaginary part of a complex expression.
template <detail::complex_operand X>
auto imag(const X& x) {
    auto node = detail::as_node(x);
    return detail::complex_part<decltype(node)>(std::move(node), true);
}
/// Complex conjugate of a complex expression.
template <detail::complex_operand X>
auto conj(const X& x) {
    auto node = detail::as_node(x);
    return detail::complex_call<expression_value_t<X>, decltype(node)>(std::move(node), "conj");
}
/// Modulus of a complex expression, computed without overflow (hypot).
template <detail::complex_operand X>
auto abs(const X& x) {
    auto node = detail::as_node(x);
    return detail::complex_call<typename expression_value_t<X>::value_type, decltype(node)>(
        std::move(node), "cabs");
}
/// Phase angle of a complex expression, in (-pi, pi].
template <detail::complex_operand X>
auto arg(const X& x) {
    auto node = detail::as_node(x);
    return detail::complex_call<typename expression_value_t<X>::value_type, decltype(node)>(
        std::move(node), "carg");
}

// --- user functions ----------------------------------------------------------------------------

namespace detail {

/// The value type of a raw_pointer(): only subscripts and user-function pointer parameters take
/// it, so pointer arithmetic and mixing pointers with numbers do not compile.
template <class T>
struct device_pointer {};

template <class T>
inline constexpr bool is_device_pointer_v = false;
template <class T>
inline constexpr bool is_device_pointer_v<device_pointer<T>> = true;

template <class Signature>
struct signature_traits;
template <class R, class... P>
struct signature_traits<R(P...)> {
    using result = R;
    using parameters = std::tuple<P...>;
};

/// Whether an argument fits a user-function parameter: pointers take raw_pointer() of the same
/// element type; other parameters take numbers, converted as in a C call.
template <class Parameter, class Argument>
concept fits_parameter = expression_operand<Argument> &&
    (std::is_pointer_v<Parameter>
         ? std::is_same_v<operand_value_t<Argument>,
                          device_pointer<std::remove_cv_t<std::remove_pointer_t<Parameter>>>>
         : number<operand_value_t<Argument>>);

/// C++ spellings of OpenCL C names with `kiln::` dropped (`kiln::ulong` is `ulong` on the
/// device), outside string and character literals.
std::string without_kiln_qualifiers(std::string_view text);

/// The OpenCL C definition of a user function: the return type and parameters without `kiln::`,
/// `global` on pointer parameters (the C++ declaration cannot spell it), the body the user's
/// text.
std::string user_function_source(std::string_view return_type, std::string_view name,
                                 std::string_view parameters, std::string_view body);

/// Scalar arguments take the parameter's exact type; expressions are passed as they are.
template <class Parameter, class Argument>
auto as_argument_node(const Argument& argument) {
    if constexpr (scalar_value<Argument> && !std::is_pointer_v<Parameter>)
        return scalar_terminal<Parameter>(static_cast<Parameter>(argument));
    else
        return as_node(argument);
}

template <class Definition, expression_node... Args>
class function_call : public expression_tag {
  public:
    using value_type = typename signature_traits<decltype(Definition::signature)>::result;
    static constexpr std::size_t contiguous_width = combined_width<Args...>();
    explicit function_call(Args... args) : args_(std::move(args)...) {}

    std::string generate(generator& g) const {
        define(g.source);
        std::string call = std::string(Definition::function_name()) + "(";
        std::apply(
            [&](const auto&... arg) {
                std::size_t position = 0;
                ((call += (position++ ? ", " : "") + arg.generate(g)), ...);
            },
            args_);
        return call + ")";
    }
    void collect(argument_list& a) const {
        std::apply([&](const auto&... arg) { (arg.collect(a), ...); }, args_);
    }
    void check(operand_check& c) const {
        std::apply([&](const auto&... arg) { (arg.check(c), ...); }, args_);
    }

    static void define(source_builder& source) {
        // Dependencies first: OpenCL C needs a function declared before its callers.
        Definition::define_dependencies(source);
        source.define("function " + std::string(Definition::function_name()),
                      user_function_source(Definition::return_text(), Definition::function_name(),
                                           Definition::parameter_text(), Definition::body()));
    }

  private:
    std::tuple<Args...> args_;
};

/// The functions a user function calls, named in KILN_FUNCTION_USING.
template <class... Functions>
struct function_list {
    explicit function_list(const Functions&...) {}
    static void define(source_builder& source) { (Functions::define(source), ...); }
};

}  // namespace detail

/// A device function declared with KILN_FUNCTION; calling it builds an expression.
template <class Definition>
class user_function {
    using traits = detail::signature_traits<decltype(Definition::signature)>;
    using parameters = typename traits::parameters;

    template <class... Args, std::size_t... I>
    static constexpr bool fits(std::index_sequence<I...>) {
        return (detail::fits_parameter<std::tuple_element_t<I, parameters>, Args> && ...);
    }

  public:
    /// The KILN_FUNCTION's definition, for KILN_KERNEL_USING.
    using definition = Definition;

    /// A call of the function in an expression: one argument per parameter, each an expression
    /// or scalar that converts to the parameter's type.
    template <class... Args>
    requires(sizeof...(Args) == std::tuple_size_v<parameters>) &&
        (fits<Args...>(std::index_sequence_for<Args...>{})) auto operator()(
            const Args&... args) const {
        return call(std::index_sequence_for<Args...>{}, args...);
    }

    /// Adds the function's definition (and its dependencies') to a program being built.
    static void define(detail::source_builder& source) {
        detail::function_call<Definition>::define(source);
    }

  private:
    template <std::size_t... I, class... Args>
    static auto call(std::index_sequence<I...>, const Args&... args) {
        return detail::function_call<
            Definition,
            decltype(detail::as_argument_node<std::tuple_element_t<I, parameters>>(args))...>(
            detail::as_argument_node<std::tuple_element_t<I, parameters>>(args)...);
    }
};

}  // namespace kiln

/// OpenCL C type names usable in KILN_FUNCTION signatures, so that one spelling serves the C++
/// declaration and the device code.
#define KILN_DETAIL_OPENCL_TYPE_NAMES               \
    using uchar [[maybe_unused]] = unsigned char;   \
    using ushort [[maybe_unused]] = unsigned short; \
    using uint [[maybe_unused]] = ::std::uint32_t;  \
    using ulong [[maybe_unused]] = ::std::uint64_t;

#define KILN_DETAIL_UNPARENTHESIZE(...) __VA_ARGS__

/// Declares a device function usable in vector expressions:
///
///     KILN_FUNCTION(float, squared_norm, (float x, float y), return x * x + y * y;);
///     z = sqrt(squared_norm(x, y));
///
/// The return type and parameter list are copied into the device code, so spell them the same
/// in C++ and OpenCL C: float, double, int, uint, ulong (the last two are provided on the C++
/// side; `kiln::uint` and `kiln::ulong` serve too, `kiln::` dropped) and pointers to them,
/// which are global memory and take raw_pointer() arguments. The
/// body is OpenCL C. Use at namespace or function scope. A compile error in the body shows the
/// generated source with line numbers.
///
/// The function belongs to its translation unit: its definition is a class local to a lambda
/// called in the initialiser of a `constexpr` variable (an unnamed namespace cannot be opened
/// at function scope), so the statements calling it are types of their own in each file, and
/// two files may each declare a function of one name with different bodies.
#define KILN_FUNCTION(return_type, name, parameters, ...)                                \
    [[maybe_unused]] constexpr auto name = [] {                                          \
        struct name##_kiln_function_definition {                                         \
            KILN_DETAIL_OPENCL_TYPE_NAMES                                                \
            static return_type signature parameters;                                     \
            static constexpr ::std::string_view function_name() { return #name; }        \
            static constexpr ::std::string_view return_text() { return #return_type; }   \
            static constexpr ::std::string_view parameter_text() { return #parameters; } \
            static constexpr ::std::string_view body() { return #__VA_ARGS__; }          \
            static void define_dependencies(::kiln::detail::source_builder&) {}          \
        };                                                                               \
        return ::kiln::user_function<name##_kiln_function_definition>{};                 \
    }()

/// Like KILN_FUNCTION for a function that calls other user functions, listed in parentheses:
///
///     KILN_FUNCTION_USING(float, norm, (float x, float y), (squared_norm),
///                         return sqrt(squared_norm(x, y)););
#define KILN_FUNCTION_USING(return_type, name, parameters, dependencies, ...)            \
    [[maybe_unused]] constexpr auto name = [] {                                          \
        struct name##_kiln_function_definition {                                         \
            KILN_DETAIL_OPENCL_TYPE_NAMES                                                \
            static return_type signature parameters;                                     \
            static constexpr ::std::string_view function_name() { return #name; }        \
            static constexpr ::std::string_view return_text() { return #return_type; }   \
            static constexpr ::std::string_view parameter_text() { return #parameters; } \
            static constexpr ::std::string_view body() { return #__VA_ARGS__; }          \
            static void define_dependencies(::kiln::detail::source_builder& source) {    \
                decltype(::kiln::detail::function_list(                                  \
                    KILN_DETAIL_UNPARENTHESIZE dependencies))::define(source);           \
            }                                                                            \
        };                                                                               \
        return ::kiln::user_function<name##_kiln_function_definition>{};                 \
    }()
#pragma GCC visibility pop
