// 1-D linear stencils (convolutions clamped at the ends) as terms of vector expressions.
//
//     kiln::stencil<float> S(q, {1, -2, 1}, 1);  // coefficients for x[i - 1], x[i], x[i + 1]
//     y = x * S;                                 // y[i] = x[i-1] - 2 x[i] + x[i+1]
//     y = 2 * x - 0.5 * (x * S);                 // any expression, still one kernel
//
// Element i of x * S is the sum over k of S[k] * x[clamp(i + k - center, 0, n - 1)]: positions
// before the first element read the first, positions past the last read the last.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <initializer_list>
#include <kiln/expr/core.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <vector>

namespace kiln {

template <class T>
concept stencil_value = std::same_as<T, float> || std::same_as<T, double>;

/// The coefficients of a 1-D stencil on one device; `center` is the coefficient of x[i].
template <stencil_value T>
class stencil {
  public:
    stencil(const queue& q, std::span<const T> coefficients, std::size_t center)
        : queue_(q), width_(coefficients.size()), center_(center) {
        if (coefficients.empty())
            throw invalid_argument_error("kiln::stencil", "a stencil needs coefficients");
        if (center >= coefficients.size())
            throw invalid_argument_error(
                "kiln::stencil", "center " + std::to_string(center) + " is not one of the " +
                                     std::to_string(coefficients.size()) + " coefficients");
        coefficients_ = kiln::buffer<T>(q, coefficients);
    }
    stencil(const queue& q, std::initializer_list<T> coefficients, std::size_t center)
        : stencil(q, std::span<const T>(coefficients.begin(), coefficients.size()), center) {}

    std::size_t width() const noexcept { return width_; }
    std::size_t center() const noexcept { return center_; }
    const kiln::queue& queue() const noexcept { return queue_; }
    const kiln::buffer<T>& coefficients() const noexcept { return coefficients_; }

  private:
    kiln::queue queue_;
    std::size_t width_, center_;
    kiln::buffer<T> coefficients_;
};

namespace detail {

/// x * S at element idx: reads x at computed positions, so x lives on one device.
template <stencil_value T>
class stencil_node : public expression_tag {
  public:
    using value_type = T;
    stencil_node(const kiln::vector<T>& x, const stencil<T>& s) : x_(&x), stencil_(&s) {}

    std::string generate(generator& g) const {
        const std::string t = opencl_type_name<T>();
        const std::string function = "kiln_stencil_" + t;
        // Away from the ends no clamping: one contiguous window.
        std::string text = R"(T F(global const T* x, global const T* c, ulong width, ulong center,
     ulong n, ulong i) {
    T sum = 0;
    if (i >= center && i + width - center <= n) {
        global const T* w = x + (i - center);
        for (ulong k = 0; k < width; ++k) sum += c[k] * w[k];
        return sum;
    }
    for (ulong k = 0; k < width; ++k) {
        const ulong j = i + k < center ? 0 : i + k - center;
        sum += c[k] * x[j < n ? j : n - 1];
    }
    return sum;
}
)";
        for (std::size_t at = 0; (at = text.find_first_of("TF", at)) != std::string::npos;) {
            const std::string& name = text[at] == 'T' ? t : function;
            text.replace(at, 1, name);
            at += name.size();
        }
        g.source.define(function, text);
        const std::string x = g.new_name(), c = g.new_name(), width = g.new_name(),
                          center = g.new_name(), n = g.new_name();
        g.parameter("global const " + t + "*", x);
        g.parameter("global const " + t + "*", c);
        for (const auto& name : {width, center, n}) g.parameter("ulong", name);
        return function + "(" + x + ", " + c + ", " + width + ", " + center + ", " + n + ", idx)";
    }
    void collect(argument_list& args) const {
        args.buffer(x_->part(0));
        args.buffer(stencil_->coefficients());
        args.scalar<std::uint64_t>(stencil_->width());
        args.scalar<std::uint64_t>(stencil_->center());
        args.scalar<std::uint64_t>(x_->size());
    }
    void check(operand_check& c) const {
        c.gathered(x_->layout(), "a stencil's operand");
        c.sized(x_->size(), "a stencil's operand");
        c.on_queue(stencil_->queue());
    }

  private:
    const kiln::vector<T>* x_;
    const stencil<T>* stencil_;
};

}  // namespace detail

/// The stencil applied to every element of x (clamped at the ends), as an expression.
template <stencil_value T>
detail::stencil_node<T> operator*(const vector<T>& x, const stencil<T>& s) {
    return {x, s};
}

}  // namespace kiln
#pragma GCC visibility pop
