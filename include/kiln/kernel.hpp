// SPDX-License-Identifier: Apache-2.0
// Kernels written in C++: KILN_KERNEL and kiln::parallel_for with KILN_LAMBDA. The C++ compiler
// checks the body against the OpenCL C vocabulary of kiln/kernel_builtins.hpp; the same tokens
// become the kernel's OpenCL C source, built once per device through the compile cache.
//
//     KILN_KERNEL(saxpy, (float a, kiln::global_ptr<const float> x, kiln::global_ptr<float> y,
//                         kiln::uint n), {
//         const kiln::uint i = get_global_id(0);
//         if (i < n) y[i] = a * x[i] + y[i];
//     });
//     saxpy(q, kiln::range{n}, 2.0f, x, y, n);
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/error.hpp>
#include <kiln/expr/functions.hpp>
#include <kiln/kernel_builtins.hpp>
#include <kiln/kernel_struct.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

/// Parameter types a C++ kernel may declare: address-space pointers to device-representable
/// types, and such values themselves. Not bool, which has no fixed size on the device, nor half,
/// bfloat16 or the FP8 types, whose values OpenCL C takes only as bits: pass them as float.
template <class P>
concept cpp_kernel_parameter = is_address_space_pointer_v<P> ||
    (device_representable<P> && !std::is_same_v<P, bool> && !is_narrow_float_v<P>);

template <class P>
struct pointee {
    using type = P;
};
template <class T, address_space S>
struct pointee<address_space_pointer<T, S>> {
    using type = std::remove_const_t<T>;
};

/// The OpenCL C spelling of a parameter type: `global const float*`, `local int*`, `uint`.
template <cpp_kernel_parameter P>
std::string opencl_parameter_type() {
    if constexpr (is_address_space_pointer_v<P>) {
        using T = typename P::element_type;
        constexpr const char* spaces[] = {"global ", "local ", "constant "};
        return spaces[static_cast<int>(P::space)] +
               std::string(std::is_const_v<T> ? "const " : "") +
               opencl_type_name<std::remove_const_t<T>>() + "*";
    } else {
        return opencl_type_name<P>();
    }
}

/// The parameter names of a stringised list "(float a, kiln::global_ptr<const float> x)".
std::vector<std::string> kernel_parameter_names(std::string_view parameters);

/// The OpenCL C text of C++ kernel tokens: `kiln::` dropped, `float4{...}` written as the
/// vector literal `(float4)(...)`, `uint(x)` as `(uint)(x)`, KILN_LOCAL written out, one
/// statement a line.
std::vector<std::string> kernel_body_lines(std::string_view body);

/// Puts each `KILN_PRAGMA(text)` of the body at the head of the program as `#pragma text`.
void add_kernel_pragmas(source_builder& source, std::string_view body);

/// The build options of the body's `KILN_BUILD_OPTIONS("...")`, joined by spaces.
std::string kernel_build_options(std::string_view body);

/// Adds `kernel void name(parameters) { prologue body }` to `source`.
void add_cpp_kernel(source_builder& source, std::string_view name,
                    const std::vector<std::string>& parameter_types,
                    const std::vector<std::string>& parameter_names,
                    const std::vector<std::string>& prologue, std::string_view body);

/// Adds `return_type name(parameters) { body }`, a device function of C++ body tokens (a
/// KILN_LAMBDA that returns a value, as kiln::gemm's epilogue), to `source`.
void add_cpp_function(source_builder& source, std::string_view return_type, std::string_view name,
                      const std::vector<std::string>& parameter_types,
                      const std::vector<std::string>& parameter_names, std::string_view body);

template <class F>
struct kernel_signature;
template <class R, class... P>
struct kernel_signature<R (*)(P...)> {
    using parameters = std::tuple<P...>;
    using result = R;
};
/// A KILN_LAMBDA's parameters (its index, or an epilogue's value, row and column, then its
/// captures) and what its body returns. Taken once the lambda's class is complete: the body's
/// return type is deduced, and not known inside the class.
template <class Definition>
using lambda_signature = kernel_signature<decltype(&Definition::kiln_body)>;

template <class Definition, class Index, class... P>
std::string lambda_source(std::tuple<Index, P...>*);

/// A C++ kernel's program source: a KILN_KERNEL's own, a KILN_LAMBDA's loop (written here rather
/// than by a member of the lambda's class, which would be compiled for every KILN_LAMBDA, GEMM
/// epilogues included).
template <class Definition>
std::string source_of() {
    if constexpr (requires { Definition::index_text(); })
        return lambda_source<Definition>(
            static_cast<typename lambda_signature<Definition>::parameters*>(nullptr));
    else
        return Definition::source();
}

/// The kernel of a program built from `source` on `dev`, built once per device for each C++
/// kernel (Definition) and kept for the process.
template <class Definition>
kiln::kernel kernel_on(const kiln::device& dev) {
    static std::mutex mutex;
    static std::vector<std::pair<kiln::device, kiln::kernel>> built;
    const std::lock_guard lock(mutex);
    for (const auto& [device, k] : built)
        if (device == dev) return k;
    kiln::kernel k =
        program(dev, source_of<Definition>(), kernel_build_options(Definition::body_text()))
            .kernel(Definition::kernel_name());
    built.emplace_back(dev, k);
    return k;
}

template <class T>
inline constexpr bool is_kiln_vector_v = false;
template <class T>
inline constexpr bool is_kiln_vector_v<kiln::vector<T>> = true;
template <class T>
inline constexpr bool is_buffer_v = false;
template <class T, access A>
inline constexpr bool is_buffer_v<buffer<T, A>> = true;

/// Whether a launch argument binds to a parameter: a kiln::vector<T> to a global or constant
/// pointer to T; a buffer<T> too, unless an `in` buffer would meet a non-const pointer or an
/// `out` buffer a const one; kiln::local<T>(count) to a local pointer to T; anything else to a
/// value parameter only where copy-list-initialisation takes it (no narrowing, and no explicit
/// constructor: a float is not a float4).
template <class Param, class Arg>
constexpr bool binds_to() {
    if constexpr (is_address_space_pointer_v<Param>) {
        using T = typename Param::element_type;
        using U = std::remove_const_t<T>;
        constexpr bool reads_only = std::is_const_v<T> || Param::space == address_space::constant;
        if constexpr (Param::space == address_space::local)
            return std::is_same_v<Arg, kiln::local<U>>;
        else if constexpr (is_kiln_vector_v<Arg>)
            return std::is_same_v<typename Arg::value_type, U>;
        else if constexpr (is_buffer_v<Arg>)
            return std::is_same_v<typename Arg::value_type, U> &&
                   (reads_only ? Arg::mode != access::out : Arg::mode != access::in);
        else
            return false;
    } else {
        return !is_kiln_vector_v<Arg> && !is_buffer_v<Arg> &&
               requires(void (*takes)(Param), const Arg& a) {
            takes({a});
        };
    }
}

template <class Param, class Arg>
concept binds_to_parameter = binds_to<Param, std::remove_cvref_t<Arg>>();

template <class T>
const buffer<T>& only_part(const kiln::vector<T>& v) {
    if (v.part_count() == 0)
        throw invalid_argument_error("kiln kernel launch",
                                     "a kiln::vector with no device (default-constructed or moved "
                                     "from) is not a kernel argument; construct it with a queue "
                                     "(an empty vector on a queue binds as a null pointer)");
    if (v.part_count() != 1)
        throw invalid_argument_error(
            "kiln kernel launch",
            "a kiln::vector split over " + std::to_string(v.part_count()) +
                " devices is not one kernel argument; pass each part's buffer");
    return v.part(0);
}

template <class Param, class Arg>
kernel_argument bind_argument(const Arg& arg) {
    if constexpr (is_kiln_vector_v<Arg>)
        return make_argument(only_part(arg));
    else if constexpr (is_address_space_pointer_v<Param>)
        return make_argument(arg);
    else
        return make_argument(Param{arg});
}

template <class Definition, class... Args>
constexpr bool arguments_bind() {
    using parameters = typename Definition::parameters;
    if constexpr (sizeof...(Args) != std::tuple_size_v<parameters>) {
        return false;
    } else {
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (binds_to_parameter<std::tuple_element_t<I, parameters>, Args> && ...);
        }
        (std::index_sequence_for<Args...>{});
    }
}

template <class Definition, class... Args>
std::vector<kernel_argument> bind_arguments(const Args&... args) {
    using parameters = typename Definition::parameters;
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::vector<kernel_argument>{
            bind_argument<std::tuple_element_t<I, parameters>>(args)...};
    }
    (std::index_sequence_for<Args...>{});
}

/// The source of a KILN_KERNEL: its pragmas, its KILN_STRUCT parameters', its functions', then
/// the kernel.
template <class Definition, class... P>
std::string cpp_kernel_source(std::tuple<P...>*) {
    static_assert((cpp_kernel_parameter<P> && ...),
                  "kernel parameters are kiln::global_ptr<T>, kiln::local_ptr<T>, "
                  "kiln::constant_ptr<T> or values of types kernels know (not bool; half, "
                  "bfloat16 and FP8 values travel as float)");
    source_builder source;
    add_kernel_pragmas(source, Definition::body_text());
    (declare_type<typename pointee<P>::type>(source), ...);
    Definition::define_functions(source);
    add_cpp_kernel(source, Definition::kernel_name(), {opencl_parameter_type<P>()...},
                   kernel_parameter_names(Definition::parameter_text()), {},
                   Definition::body_text());
    return source.str();
}

/// A KILN_FUNCTION seen from a kernel body: a call with device values, checked like a C call
/// against its parameters (pointer parameters are global memory).
template <class Signature>
struct kernel_function;
template <class R, class... P>
struct kernel_function<R(P...)> {
    template <class T>
    using parameter_t =
        std::conditional_t<std::is_pointer_v<T>, global_ptr<std::remove_pointer_t<T>>, T>;
    R operator()(parameter_t<P>... args) const;
};

template <class UserFunction>
using kernel_function_t = kernel_function<decltype(UserFunction::definition::signature)>;

/// The parameter a captured host value becomes: vectors and buffers a global pointer (to const
/// where the host object is const or an `in` buffer), values themselves.
template <class T>
struct captured {
    using type = std::remove_cvref_t<T>;
};
template <class T>
struct captured<kiln::vector<T>&> {
    using type = global_ptr<T>;
};
template <class T>
struct captured<const kiln::vector<T>&> {
    using type = global_ptr<const T>;
};
template <class T>
struct captured<kiln::vector<T>> {
    using type = global_ptr<T>;
};
template <class T>
struct captured<const kiln::vector<T>> {
    using type = global_ptr<const T>;
};
template <class T, access A>
struct captured<buffer<T, A>> {
    using type = global_ptr<std::conditional_t<A == access::in, const T, T>>;
};
template <class T, access A>
struct captured<buffer<T, A>&> : captured<buffer<T, A>> {};
template <class T, access A>
struct captured<const buffer<T, A>&> : captured<buffer<T, A>> {};
template <class T, access A>
struct captured<const buffer<T, A>> : captured<buffer<T, A>> {};

template <class T>
using captured_t = typename captured<T>::type;

/// The source of a KILN_LAMBDA's kernel: a bounds check on the element count, then the index
/// parameter set to the work-item's global id, then the body.
template <class Definition, class Index, class... P>
std::string lambda_source(std::tuple<Index, P...>*) {
    static_assert(std::is_integral_v<Index>, "a KILN_LAMBDA's index is an integer");
    static_assert((cpp_kernel_parameter<P> && ...),
                  "KILN_LAMBDA captures kiln vectors, buffers and values of types kernels know "
                  "(not bool; half, bfloat16 and FP8 values travel as float)");
    source_builder source;
    add_kernel_pragmas(source, Definition::body_text());
    (declare_type<typename pointee<P>::type>(source), ...);
    const std::string index = kernel_parameter_names(Definition::index_text()).front();
    auto names = kernel_parameter_names(Definition::capture_text());
    names.insert(names.begin(), "kiln_count");
    add_cpp_kernel(source, Definition::kernel_name(), {"ulong", opencl_parameter_type<P>()...},
                   names,
                   {"if (get_global_id(0) >= kiln_count) return;",
                    "const " + opencl_type_name<Index>() + " " + index + " = get_global_id(0);"},
                   Definition::body_text());
    return source.str();
}

/// Throws invalid_argument_error unless every index below n fits a KILN_LAMBDA's index type,
/// whose OpenCL C name and largest value are given: a narrower index would wrap on the device,
/// running some indices twice and others never.
void check_parallel_for_index(std::size_t n, std::string_view index_type, std::uint64_t largest);

/// The ranges of a parallel_for over n indices: groups of up to 256 work-items, chosen by kiln
/// rather than the driver (PoCL counts driver-chosen groups as if of one work-item, so past
/// 2^32 indices it could not launch), the global range rounded up to whole groups; the
/// kernel's prologue returns at once in the work-items past n.
struct parallel_for_ranges {
    range global;
    range local;
};
parallel_for_ranges plan_parallel_for(const kiln::kernel& k, const device& dev, std::size_t n);

/// The captured values of a KILN_LAMBDA, for kiln::parallel_for.
template <class Definition, class... Captures>
struct kernel_lambda {
    std::tuple<const Captures&...> captures;
};

}  // namespace detail

/// A C++ kernel with its arguments bound and checked; launched on any queue, whose device gets
/// the program built once.
template <class Definition>
class bound_cpp_kernel {
  public:
    /// Arguments already checked against the kernel's parameters; made by cpp_kernel::bind.
    explicit bound_cpp_kernel(std::vector<detail::kernel_argument> args) : args_(std::move(args)) {}
    /// As bound_kernel::launch: `global` work-items in groups of `local` (empty: the
    /// implementation chooses).
    event launch(const queue& q, const range& global, const range& local = {},
                 const range& offset = {}, const wait_list& after = {}) const {
        return detail::kernel_on<Definition>(q.device())
            .bind(args_)
            .launch(q, global, local, offset, after);
    }

  private:
    std::vector<detail::kernel_argument> args_;
};

/// A kernel declared with KILN_KERNEL: call it with a queue, a range and its arguments, which are
/// checked against its parameters at compile time.
template <class Definition>
class cpp_kernel {
  public:
    /// Binds the arguments, checked against the parameters at compile time, to launch later
    /// with a chosen group size.
    template <class... Args>
    requires(detail::arguments_bind<Definition, Args...>())
        bound_cpp_kernel<Definition> bind(const Args&... args)
    const { return bound_cpp_kernel<Definition>(detail::bind_arguments<Definition>(args...)); }
    /// Launches over `global` work-items, the group size chosen by the implementation.
    template <class... Args>
    requires(detail::arguments_bind<Definition, Args...>()) event operator()(
        const queue& q, const range& global, const Args&... args) const {
        return bind(args...).launch(q, global);
    }
    /// The kernel as built for `dev`, e.g. for its max_work_group_size().
    kiln::kernel on(const kiln::device& dev) const { return detail::kernel_on<Definition>(dev); }
    /// The OpenCL C program the kernel becomes.
    static std::string source() { return Definition::source(); }
};

/// Runs a KILN_LAMBDA once for each index in [0, n), on q's device: each work-item one index.
/// n's last index must fit the lambda's index type (invalid_argument_error otherwise).
template <class Definition, class... Captures>
event parallel_for(const queue& q, std::size_t n,
                   const detail::kernel_lambda<Definition, Captures...>& lambda) {
    using parameters = typename detail::lambda_signature<Definition>::parameters;
    static_assert(std::is_void_v<typename detail::lambda_signature<Definition>::result>,
                  "a kiln::parallel_for body returns nothing (a KILN_LAMBDA that returns a value "
                  "is a kiln::gemm epilogue)");
    using index = std::tuple_element_t<0, parameters>;
    static_assert(std::is_integral_v<index> && !std::is_same_v<index, bool>,
                  "a KILN_LAMBDA's index is an integer");
    if (n == 0) return {};
    detail::check_parallel_for_index(n, detail::opencl_type_name<index>(),
                                     static_cast<std::uint64_t>(std::numeric_limits<index>::max()));
    auto args = std::apply(
        [&](const auto&... captured) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                return std::vector<detail::kernel_argument>{
                    detail::make_argument(static_cast<ulong>(n)),
                    detail::bind_argument<std::tuple_element_t<I + 1, parameters>>(captured)...};
            }
            (std::index_sequence_for<Captures...>{});
        },
        lambda.captures);
    const kiln::kernel k = detail::kernel_on<Definition>(q.device());
    const auto ranges = detail::plan_parallel_for(k, q.device(), n);
    return k.bind(std::move(args)).launch(q, ranges.global, ranges.local);
}

}  // namespace kiln

/// Declares a kernel written in C++ (at namespace scope):
///
///     KILN_KERNEL(name, (parameters), { body });
///
/// Parameters are kiln::global_ptr<T>, kiln::local_ptr<T>, kiln::constant_ptr<T> and values
/// (float, kiln::uint, kiln::float4, KILN_STRUCTs). The body sees OpenCL C's built-ins
/// (kiln/kernel_builtins.hpp) and is checked by the C++ compiler; the same tokens, with `kiln::`
/// dropped, are the kernel's OpenCL C source. docs/kernel_language.md has the rules.
///
/// The kernel belongs to its translation unit (an unnamed namespace): two files may each
/// declare a kernel of one name with different bodies, and each runs its own.
#define KILN_KERNEL(name, parameter_list, ...)                                                 \
    namespace {                                                                                \
    struct name##_kiln_kernel : ::kiln::detail::kernel_scope {                                 \
        static void kiln_body parameter_list { KILN_DETAIL_KERNEL_BODY_NAMES __VA_ARGS__ }     \
        using parameters = ::kiln::detail::kernel_signature<decltype(&kiln_body)>::parameters; \
        static constexpr ::std::string_view kernel_name() { return #name; }                    \
        static constexpr ::std::string_view parameter_text() { return #parameter_list; }       \
        static constexpr ::std::string_view body_text() { return #__VA_ARGS__; }               \
        static void define_functions(::kiln::detail::source_builder&) {}                       \
        static ::std::string source() {                                                        \
            return ::kiln::detail::cpp_kernel_source<name##_kiln_kernel>(                      \
                static_cast<parameters*>(nullptr));                                            \
        }                                                                                      \
    };                                                                                         \
    [[maybe_unused]] inline constexpr ::kiln::cpp_kernel<name##_kiln_kernel> name{};           \
    }                                                                                          \
    static_assert(true, "the semicolon after the macro ends this declaration")

#define KILN_DETAIL_KERNEL_FUNCTION_ALIAS(kernel, function) \
    using kernel##_kiln_uses_##function = ::std::remove_cvref_t<decltype(function)>;
#define KILN_DETAIL_KERNEL_FUNCTION_MEMBER(kernel, function) \
    static constexpr ::kiln::detail::kernel_function_t<kernel##_kiln_uses_##function> function{};
#define KILN_DETAIL_KERNEL_FUNCTION_DEFINE(kernel, function) \
    kernel##_kiln_uses_##function::define(source);

/// KILN_KERNEL for a body that calls KILN_FUNCTIONs, listed in parentheses (their definitions
/// come first in the kernel's source). It repeats KILN_KERNEL's members rather than passing the
/// body on to a shared macro: an argument passed on is macro-expanded first, so `#__VA_ARGS__`
/// there would stringize KILN_LOCAL's expansion instead of the tokens the user wrote.
///
///     KILN_KERNEL_USING(norms, (kiln::global_ptr<float> r), (squared_norm), { ... });
#define KILN_KERNEL_USING(name, parameter_list, functions, ...)                                \
    namespace {                                                                                \
    KILN_DETAIL_FOR_EACH(KILN_DETAIL_KERNEL_FUNCTION_ALIAS, name,                              \
                         KILN_DETAIL_UNPARENTHESIZE functions)                                 \
    struct name##_kiln_kernel : ::kiln::detail::kernel_scope {                                 \
        KILN_DETAIL_FOR_EACH(KILN_DETAIL_KERNEL_FUNCTION_MEMBER, name,                         \
                             KILN_DETAIL_UNPARENTHESIZE functions)                             \
        static void kiln_body parameter_list { KILN_DETAIL_KERNEL_BODY_NAMES __VA_ARGS__ }     \
        using parameters = ::kiln::detail::kernel_signature<decltype(&kiln_body)>::parameters; \
        static constexpr ::std::string_view kernel_name() { return #name; }                    \
        static constexpr ::std::string_view parameter_text() { return #parameter_list; }       \
        static constexpr ::std::string_view body_text() { return #__VA_ARGS__; }               \
        static void define_functions(::kiln::detail::source_builder& source) {                 \
            KILN_DETAIL_FOR_EACH(KILN_DETAIL_KERNEL_FUNCTION_DEFINE, name,                     \
                                 KILN_DETAIL_UNPARENTHESIZE functions)                         \
        }                                                                                      \
        static ::std::string source() {                                                        \
            return ::kiln::detail::cpp_kernel_source<name##_kiln_kernel>(                      \
                static_cast<parameters*>(nullptr));                                            \
        }                                                                                      \
    };                                                                                         \
    [[maybe_unused]] inline constexpr ::kiln::cpp_kernel<name##_kiln_kernel> name{};           \
    }                                                                                          \
    static_assert(true, "the semicolon after the macro ends this declaration")

#define KILN_DETAIL_LAMBDA_PARAMETER(unused, capture) \
    , ::kiln::detail::captured_t<decltype(capture)> capture
#define KILN_DETAIL_LAMBDA_INDEX_I(...) __VA_ARGS__
#define KILN_DETAIL_LAMBDA_INDEX(index) KILN_DETAIL_LAMBDA_INDEX_I index
#define KILN_DETAIL_LAMBDA_CAPTURE_TYPE(unused, capture) , decltype(capture)

/// An element-wise loop body for kiln::parallel_for, capturing kiln vectors, buffers and values
/// by name:
///
///     kiln::parallel_for(q, n, KILN_LAMBDA((kiln::uint i), (x, y, a), {
///         y[i] = a * x[i] + y[i];
///     }));
///
/// The body is checked like a KILN_KERNEL's; it runs once for each index below n. A KILN_LAMBDA
/// whose parameters are a value, a row and a column and whose body returns a value is an
/// epilogue of kiln::gemm (kiln/matrix.hpp).
#define KILN_LAMBDA(index, captures, ...)                                                          \
    [&] {                                                                                          \
        struct kiln_lambda : ::kiln::detail::kernel_scope {                                        \
            static auto kiln_body(KILN_DETAIL_LAMBDA_INDEX(index)                                  \
                                      KILN_DETAIL_FOR_EACH(KILN_DETAIL_LAMBDA_PARAMETER, unused,   \
                                                           KILN_DETAIL_UNPARENTHESIZE captures)) { \
                KILN_DETAIL_KERNEL_BODY_NAMES __VA_ARGS__                                          \
            }                                                                                      \
            static constexpr ::std::string_view kernel_name() { return "kiln_parallel_for"; }      \
            static constexpr ::std::string_view index_text() { return #index; }                    \
            static constexpr ::std::string_view capture_text() { return #captures; }               \
            static constexpr ::std::string_view body_text() { return #__VA_ARGS__; }               \
        };                                                                                         \
        return ::kiln::detail::kernel_lambda<kiln_lambda KILN_DETAIL_FOR_EACH(                     \
            KILN_DETAIL_LAMBDA_CAPTURE_TYPE, unused, KILN_DETAIL_UNPARENTHESIZE captures)>{        \
            {KILN_DETAIL_UNPARENTHESIZE captures}};                                                \
    }()
#pragma GCC visibility pop
