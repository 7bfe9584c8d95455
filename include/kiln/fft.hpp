// Fast Fourier transforms of complex vectors of any size, in 1, 2 or 3 dimensions: kiln::fft.
//
//     kiln::fft<float> forward(q, {480, 640});                 // 2-D, row-major (640 contiguous)
//     kiln::fft<float> backward(q, {480, 640}, kiln::inverse);
//     kiln::vector<std::complex<float>> spectrum = forward(x);
//     x = backward(spectrum);                                  // x again: inverse scales by 1/N
//     forward(x, x);                                           // in place
//
// Forward: X[k] = sum_j x[j] exp(-2 pi i j k / N); inverse: x[j] = (1/N) sum_k X[k]
// exp(+2 pi i j k / N), N being the product of the sizes. A batch of b transforms takes b arrays
// one after another. Sizes whose prime factors are 2, 3, 5 and 7 run as Stockham radix passes
// (radix 8, 4, 2, 3, 5, 7); any other size through Bluestein's algorithm. docs/fft.md has the
// details, the accuracy promised and what is not there yet.
#pragma once

#include <complex>
#include <concepts>
#include <cstddef>
#include <kiln/algo/fft_plan.hpp>
#include <kiln/error.hpp>
#include <kiln/vector.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

/// Selects the inverse transform in kiln::fft's constructor.
struct inverse_t {
    explicit inverse_t() = default;
};
inline constexpr inverse_t inverse{};

/// A plan for complex-to-complex transforms of one shape on one device. Plans of the same shape,
/// direction and precision on a device share their tables and kernels: making one again costs a
/// map look-up while another lives.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class fft {
  public:
    using value_type = std::complex<T>;

    /// Forward transforms of sizes {n0[, n1[, n2]]}, `batch` of them one after another.
    fft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : fft(q, std::move(sizes), false, batch) {}
    /// Inverse transforms, scaled by 1/N.
    fft(const queue& q, std::vector<std::size_t> sizes, inverse_t, std::size_t batch = 1)
        : fft(q, std::move(sizes), true, batch) {}

    /// The transform of `input` in a new vector on input's queue.
    vector<value_type> operator()(const vector<value_type>& input) const {
        check(input, "input");
        vector<value_type> output(input.queue(), input.size());
        plan_->run(input.queue(), input.part(0).storage(), output.part(0).storage());
        return output;
    }
    /// The transform of a vector expression (real or complex values, e.g. `plan(2.0f * x)` or a
    /// kiln::vector<float>), evaluated into the new vector on the plan's queue first and then
    /// transformed there in place. Not yet fused into the first pass: one more read and write.
    template <vector_expression E>
    requires(!std::same_as<std::remove_cvref_t<E>, vector<value_type>>) &&
        detail::storable_as<value_type, expression_value_t<E>> vector<value_type> operator()(
            const E& input) const {
        vector<value_type> output(queue_, size());
        output = input;  // sizes and devices checked here, before anything runs
        plan_->run(queue_, output.part(0).storage(), output.part(0).storage());
        return output;
    }
    /// Writes the transform of `input` to `output`, which may be `input` itself (in place).
    void operator()(const vector<value_type>& input, const vector<value_type>& output) const {
        check(input, "input");
        check(output, "output");
        plan_->run(input.queue(), input.part(0).storage(), output.part(0).storage());
    }

    const std::vector<std::size_t>& sizes() const noexcept { return plan_->shape().sizes; }
    std::size_t batch() const noexcept { return plan_->shape().batch; }
    /// Elements transformed per call: the sizes' product times the batch.
    std::size_t size() const noexcept { return plan_->shape().elements(); }
    bool is_inverse() const noexcept { return plan_->shape().inverse; }
    /// The shared device plan, for tests of caching.
    const detail::fft_plan& plan() const noexcept { return *plan_; }

  private:
    fft(const queue& q, std::vector<std::size_t> sizes, bool inverse, std::size_t batch)
        : plan_(detail::fft_plan::make(
              q, detail::fft_shape{std::move(sizes), batch, inverse, std::same_as<T, double>},
              "kiln::fft")),
          queue_(q),
          device_(q.device()) {}

    void check(const vector<value_type>& v, const char* role) const {
        if (v.size() != size())
            throw invalid_argument_error(
                "kiln::fft", std::string(role) + " has " + std::to_string(v.size()) +
                                 " elements, the plan transforms " + std::to_string(size()));
        if (v.part_count() != 1 || !(v.queue().device() == device_))
            throw invalid_argument_error(
                "kiln::fft", std::string(role) + " is not on the plan's device " + device_.name());
    }

    std::shared_ptr<const detail::fft_plan> plan_;
    queue queue_;
    device device_;
};

}  // namespace kiln
