// SPDX-License-Identifier: Apache-2.0
// kiln::multivector<T, N>: N vectors of one size handled as one value, e.g. the state of an
// ensemble of ODE systems, whose statements update every component in one kernel.
//
//     kiln::multivector<double, 3> X(q, n), F(q, n);
//     X = 0.5 * X + dt * F;   // one kernel: X(i) = 0.5 * X(i) + dt * F(i) for i = 0, 1, 2
//
// No expression machinery of its own: an expression over multivectors is a bundle of N
// ordinary component expressions (component i of each operand, scalars and vector expressions
// shared by all), and its assignment is one kiln::tie-style assignment of N targets, so each
// statement is the same single generated kernel that kiln::tie produces.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <array>
#include <complex>
#include <concepts>
#include <cstddef>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

template <vector_value T, std::size_t N>
class multivector;

namespace detail {

/// N component expressions of possibly different node types, evaluated together.
template <expression_node... Components>
class multi_expression {
  public:
    explicit multi_expression(Components... components) : components_(std::move(components)...) {}

    template <std::size_t I>
    const auto& component() const {
        return std::get<I>(components_);
    }

  private:
    std::tuple<Components...> components_;
};

/// N component statements that are not element-wise expressions (a sparse product's statement,
/// `A * X(i) + dt * F(i)`): each is its own kernel.
template <class... Statements>
class multi_statement {
  public:
    explicit multi_statement(Statements... statements) : statements_(std::move(statements)...) {}

    template <std::size_t I>
    const auto& component() const {
        return std::get<I>(statements_);
    }

  private:
    std::tuple<Statements...> statements_;
};

/// Statements that assign themselves to a vector (vector::operator= accepts them).
template <class S, class T>
concept component_statement_for =
    !vector_expression<S> && requires(const S& s, kiln::vector<T>& v) {
    s.assign_to(v);
};

/// How many components an operand has: N for multivectors and multi-expressions, N for an
/// std::array of N per-component scalars, 0 for operands shared by every component.
template <class X>
struct multi_size : std::integral_constant<std::size_t, 0> {};
template <class T, std::size_t N>
struct multi_size<multivector<T, N>> : std::integral_constant<std::size_t, N> {};
template <class... Components>
struct multi_size<multi_expression<Components...>>
    : std::integral_constant<std::size_t, sizeof...(Components)> {};
template <class... Statements>
struct multi_size<multi_statement<Statements...>>
    : std::integral_constant<std::size_t, sizeof...(Statements)> {};
template <scalar_value S, std::size_t N>
struct multi_size<std::array<S, N>> : std::integral_constant<std::size_t, N> {};

template <class X>
inline constexpr std::size_t multi_size_v = multi_size<std::remove_cvref_t<X>>::value;

/// Multivectors and multi-expressions (not std::arrays of scalars, which only scale them).
template <class X>
struct is_multi : std::false_type {};
template <class T, std::size_t N>
struct is_multi<multivector<T, N>> : std::true_type {};
template <class... Components>
struct is_multi<multi_expression<Components...>> : std::true_type {};
template <class... Statements>
struct is_multi<multi_statement<Statements...>> : std::true_type {};
template <class X>
concept multi_value = is_multi<std::remove_cvref_t<X>>::value;

/// The number of components of a statement: that of its multi operands, which must agree (0
/// when they do not, which the operators' constraints reject).
template <class... X>
constexpr std::size_t common_multi_size() {
    std::size_t n = 0;
    bool agree = true;
    ((multi_size_v<X> == 0
          ? void()
          : (n != 0 && n != multi_size_v<X> ? void(agree = false) : void(n = multi_size_v<X>))),
     ...);
    return agree ? n : 0;
}

/// Component I of an operand: the multivector's vector, the multi-expression's component, the
/// array's scalar, or the operand itself when every component shares it.
template <std::size_t I, class X>
decltype(auto) component(const X& x) {
    if constexpr (multi_size_v<X> == 0)
        return (x);
    else if constexpr (multi_value<X>)
        return x.template component<I>();
    else
        return (x[I]);
}

/// f applied to component I of every operand: a node, or a statement such as a sparse product.
template <std::size_t I, class F, class... X>
auto component_term(const F& f, const X&... x) {
    if constexpr (vector_expression<decltype(f(component<I>(x)...))>)
        return as_node(f(component<I>(x)...));
    else
        return f(component<I>(x)...);
}

/// f applied to component I of every operand, for each I: a multi-expression, or a
/// multi-statement when the components are not element-wise expressions.
template <class F, std::size_t... I, class... X>
auto componentwise_expression(const F& f, std::index_sequence<I...>, const X&... x) {
    if constexpr ((vector_expression<decltype(component_term<I>(f, x...))> && ...))
        return multi_expression<decltype(component_term<I>(f, x...))...>(
            component_term<I>(f, x...)...);
    else
        return multi_statement<decltype(component_term<I>(f, x...))...>(
            component_term<I>(f, x...)...);
}
template <class F, class... X>
auto componentwise_expression(const F& f, const X&... x) {
    return componentwise_expression(f, std::make_index_sequence<common_multi_size<X...>()>{}, x...);
}

/// Whether f can be applied componentwise to the operands: at least one has components, those
/// that have them agree on how many, and f accepts component 0 of each.
template <class F, class... X>
concept componentwise_applicable = (multi_size_v<X> + ...) > 0 && common_multi_size<X...>() > 0 &&
                                   requires(const F& f, const X&... x) {
    requires vector_expression<decltype(f(component<0>(x)...))> ||
        component_statement_for<decltype(f(component<0>(x)...)), std::complex<double>>;
};

struct plus_components {
    auto operator()(const auto& a, const auto& b) const -> decltype(a + b) { return a + b; }
};
struct minus_components {
    auto operator()(const auto& a, const auto& b) const -> decltype(a - b) { return a - b; }
};
struct multiply_components {
    auto operator()(const auto& a, const auto& b) const -> decltype(a * b) { return a * b; }
};
struct divide_components {
    auto operator()(const auto& a, const auto& b) const -> decltype(a / b) { return a / b; }
};
struct negate_components {
    auto operator()(const auto& a) const -> decltype(-a) { return -a; }
};

/// A binary operator with at least one multivector or multi-expression operand (a bare
/// std::array of scalars only scales one).
template <class Op, class L, class R>
concept multi_operands = (multi_value<L> || multi_value<R>)&&componentwise_applicable<Op, L, R>;

}  // namespace detail

/// Applies f (a callable taking one component of each operand: kiln::vector, expression or
/// scalar) to every component, giving a multi-expression:
///
///     Y = kiln::componentwise([](const auto& x) { return kiln::sin(x); }, X);
template <class F, class... X>
requires detail::componentwise_applicable<F, X...>
auto componentwise(const F& f, const X&... x) {
    return detail::componentwise_expression(f, x...);
}

///@{
/// Component by component: X + Y is the multi-expression (X(0) + Y(0), X(1) + Y(1), ...); a
/// vector expression or scalar operand takes part in every component.
template <class L, class R>
requires detail::multi_operands<detail::plus_components, L, R>
auto operator+(const L& l, const R& r) {
    return detail::componentwise_expression(detail::plus_components{}, l, r);
}
template <class L, class R>
requires detail::multi_operands<detail::minus_components, L, R>
auto operator-(const L& l, const R& r) {
    return detail::componentwise_expression(detail::minus_components{}, l, r);
}
template <class L, class R>
requires detail::multi_operands<detail::multiply_components, L, R>
auto operator*(const L& l, const R& r) {
    return detail::componentwise_expression(detail::multiply_components{}, l, r);
}
template <class L, class R>
requires detail::multi_operands<detail::divide_components, L, R>
auto operator/(const L& l, const R& r) {
    return detail::componentwise_expression(detail::divide_components{}, l, r);
}
template <class X>
requires detail::multi_value<X> && detail::componentwise_applicable<detail::negate_components, X>
auto operator-(const X& x) {
    return detail::componentwise_expression(detail::negate_components{}, x);
}
///@}

/// N vectors of T with the same number of elements on the same devices, split alike. Statements
/// act on every component in one kernel per device; X(i) is component i, an ordinary
/// kiln::vector. Copies are deep; moves leave the source empty.
template <vector_value T, std::size_t N>
class multivector {
    static_assert(N >= 1, "a multivector has at least one component");

  public:
    using value_type = T;                         ///< the element type of every component
    static constexpr std::size_t components = N;  ///< the number of components

    multivector() = default;  ///< no elements, no device
    /// N components of n uninitialised elements each.
    multivector(const kiln::queue& q, std::size_t n)
        : multivector(std::span<const kiln::queue>(&q, 1), n) {}
    /// Each component split over the queues' devices like a kiln::vector of n elements.
    multivector(std::span<const kiln::queue> queues, std::size_t n)
        : components_(make_components(detail::split(queues, n), n)) {}
    /// From host data holding the components one after the other: component i is
    /// host[i * n, (i + 1) * n) with n = host.size() / N.
    template <host_range_of<T> R>
    multivector(const kiln::queue& q, const R& host)
        : multivector(q, checked_component_size(std::ranges::size(host))) {
        write(std::span<const T>(std::ranges::data(host), std::ranges::size(host)));
    }
    /// The same split over the queues' devices.
    template <host_range_of<T> R>
    multivector(std::span<const kiln::queue> queues, const R& host)
        : multivector(queues, checked_component_size(std::ranges::size(host))) {
        write(std::span<const T>(std::ranges::data(host), std::ranges::size(host)));
    }

    /// A deep copy, its components again ranges of one allocation per device.
    multivector(const multivector& other)
        : components_(make_components(other.components_[0].layout(), other.size())) {
        for (std::size_t i = 0; i < N; ++i) components_[i] = other.components_[i];
    }
    /// Takes `other`'s components, leaving it empty.
    multivector(multivector&&) noexcept = default;
    /// Copies in place when both are split alike over the same devices.
    multivector& operator=(const multivector& other) {
        if (this == &other) return *this;
        if (!same_split(other)) {
            multivector copy(other);
            swap(copy);
            return *this;
        }
        for (std::size_t i = 0; i < N; ++i) components_[i] = other.components_[i];
        return *this;
    }
    /// Takes `other`'s components, leaving it empty.
    multivector& operator=(multivector&&) noexcept = default;

    /// Evaluates one expression per component (of multivectors, multi-expressions, vector
    /// expressions and scalars) in one kernel per device part. Every value is computed before
    /// any component is stored, so X = std::make_tuple(X(1), X(0)) swaps.
    template <class... Components>
    requires(sizeof...(Components) == N) &&
        (detail::assignable_to<detail::vector_terminal<T>, Components> && ...) multivector&
        operator=(const detail::multi_expression<Components...>& expression) {
        run([&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::make_tuple(expression.template component<I>()...);
        });
        return *this;
    }
    /// Statements that are not element-wise, such as sparse products (X = A * X + dt * F): one
    /// kernel per component, each into a new vector; the components are replaced once all are
    /// computed, since a statement may read every element of any component.
    template <class... Statements>
    requires(sizeof...(Statements) == N) &&
        (detail::component_statement_for<Statements, T> && ...) multivector& operator=(
            const detail::multi_statement<Statements...>& statements) {
        std::array<kiln::vector<T>, N> results;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((results[I] = kiln::vector<T>(queues_of(I), size()),
              statements.template component<I>().assign_to(results[I])),
             ...);
        }
        (std::make_index_sequence<N>{});
        components_.swap(results);
        return *this;
    }
    /// One expression or scalar per component, e.g. the right-hand side of an ODE system:
    ///     dxdt = std::make_tuple(sigma * (X(1) - X(0)), ...);
    template <class... Values>
    requires(sizeof...(Values) == N) &&
        (detail::assignable_to<detail::vector_terminal<T>, Values> && ...) multivector& operator=(
            const std::tuple<Values...>& values) {
        run([&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::make_tuple(detail::as_node_beside<T>(std::get<I>(values))...);
        });
        return *this;
    }
    /// Fills every component (no kernel).
    template <scalar_value S>
    requires detail::storable_as<T, S> multivector& operator=(const S& value) {
        for (auto& c : components_) c = value;
        return *this;
    }

    ///@{
    /// X op= e is X = X op e: one kernel for every component.
    template <class E>
    requires requires(const multivector& x, const E& e) { x + e; }
    multivector& operator+=(const E& e) { return *this = *this + e; }
    template <class E>
    requires requires(const multivector& x, const E& e) { x - e; }
    multivector& operator-=(const E& e) { return *this = *this - e; }
    template <class E>
    requires requires(const multivector& x, const E& e) { x* e; }
    multivector& operator*=(const E& e) { return *this = *this * e; }
    template <class E>
    requires requires(const multivector& x, const E& e) { x / e; }
    multivector& operator/=(const E& e) { return *this = *this / e; }
    ///@}

    /// Component I, for the operators.
    template <std::size_t I>
    const kiln::vector<T>& component() const {
        return components_[I];
    }
    ///@{
    /// Component i (a reference: assign to it, or use it in any expression); std::out_of_range
    /// for i >= N.
    kiln::vector<T>& operator()(std::size_t i) { return components_.at(i); }
    const kiln::vector<T>& operator()(std::size_t i) const { return components_.at(i); }
    ///@}

    /// Elements per component.
    std::size_t size() const noexcept { return components_[0].size(); }
    /// Whether the components hold no elements.
    bool empty() const noexcept { return size() == 0; }

    /// Copies host data in: the components one after the other (N * size() elements).
    void write(std::span<const T> host) const {
        if (host.size() != N * size())
            detail::throw_size_mismatch("kiln::multivector::write", N * size(), host.size());
        for (std::size_t i = 0; i < N; ++i) components_[i].write(host.subspan(i * size(), size()));
    }
    /// The components one after the other (N * size() elements).
    std::vector<T> read() const {
        std::vector<T> host(N * size());
        for (std::size_t i = 0; i < N; ++i)
            components_[i].read(std::span<T>(host).subspan(i * size(), size()));
        return host;
    }

    /// Exchanges the components of the two, without copying elements.
    void swap(multivector& other) noexcept { components_.swap(other.components_); }
    /// a.swap(b).
    friend void swap(multivector& a, multivector& b) noexcept { a.swap(b); }

  private:
    /// Components of n elements split as `parts` says, each part of them ranges of one
    /// allocation on its device, so that a statement over several components passes it once
    /// (detail::packed_arguments). Each range begins at a multiple of the device's base
    /// alignment, which the ranges' memory (OpenCL sub-buffers) requires.
    static std::array<kiln::vector<T>, N> make_components(const detail::layout& parts,
                                                          std::size_t n) {
        std::array<std::vector<buffer<T>>, N> buffers;
        for (const auto& part : parts) {
            const kiln::device& dev = part.queue.device();
            const std::size_t bytes = detail::checked_bytes(part.size, sizeof(T));
            const std::size_t alignment =
                std::max<std::size_t>(dev.properties().memory_base_alignment_bytes, 1);
            const std::size_t stride =
                bytes / alignment * alignment + (bytes % alignment ? alignment : 0);
            const detail::buffer_storage allocation(dev, detail::checked_bytes(N, stride),
                                                    access::inout);
            for (std::size_t i = 0; i < N; ++i)
                buffers[i].emplace_back(detail::buffer_storage(allocation, i * stride, bytes));
        }
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::array<kiln::vector<T>, N>{
                kiln::vector<T>(parts, std::move(buffers[I]), n)...};
        }
        (std::make_index_sequence<N>{});
    }
    bool same_split(const multivector& other) const {
        return components_[0].same_split(other.components_[0]);
    }
    std::vector<kiln::queue> queues_of(std::size_t i) const {
        std::vector<kiln::queue> queues;
        for (const auto& part : components_[i].layout()) queues.push_back(part.queue);
        return queues;
    }
    static std::size_t checked_component_size(std::size_t host_size) {
        if (host_size % N != 0)
            throw invalid_argument_error("kiln::multivector",
                                         "host data of " + std::to_string(host_size) +
                                             " elements does not split into " + std::to_string(N) +
                                             " equal components");
        return host_size / N;
    }
    /// One assignment of N targets from the tuple of N nodes that make_values returns.
    template <class MakeValues>
    void run(const MakeValues& make_values) {
        auto values = make_values(std::make_index_sequence<N>{});
        auto targets = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::make_tuple(detail::vector_terminal<T>(components_[I])...);
        }
        (std::make_index_sequence<N>{});
        detail::assignment<decltype(targets), decltype(values)>(std::move(targets),
                                                                std::move(values))
            .run("kiln::multivector assignment");
    }

    std::array<kiln::vector<T>, N> components_;
};

}  // namespace kiln
#pragma GCC visibility pop
