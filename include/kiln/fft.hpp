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
#pragma GCC visibility push(default)

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
namespace detail {

/// Throws invalid_argument_error unless `v` has `size` elements, all on `dev`.
template <class V>
void check_fft_operand(const vector<V>& v, std::size_t size, const device& dev, const char* role) {
    if (v.size() != size)
        throw invalid_argument_error("kiln::fft",
                                     std::string(role) + " has " + std::to_string(v.size()) +
                                         " elements, the plan expects " + std::to_string(size));
    if (v.part_count() != 1 || !(v.queue().device() == dev))
        throw invalid_argument_error(
            "kiln::fft", std::string(role) + " is not on the plan's device " + dev.name());
}

}  // namespace detail

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
    /// The shared device plan (tests of caching; real transforms).
    const detail::fft_plan& plan() const noexcept { return *plan_; }
    const device& plan_device() const noexcept { return device_; }

  private:
    fft(const queue& q, std::vector<std::size_t> sizes, bool inverse, std::size_t batch)
        : plan_(detail::fft_plan::make(
              q, detail::fft_shape{std::move(sizes), batch, inverse, std::same_as<T, double>},
              "kiln::fft")),
          queue_(q),
          device_(q.device()) {}

    void check(const vector<value_type>& v, const char* role) const {
        detail::check_fft_operand(v, size(), device_, role);
    }

    std::shared_ptr<const detail::fft_plan> plan_;
    queue queue_;
    device device_;
};

/// Real-to-complex forward transforms, FFTW's r2c layout: arrays of {n0[, n1[, n2]]} real values
/// to arrays of {n0[, n1[, n2 / 2 + 1]]} complex ones (the last size halved, plus one; the rest of
/// the spectrum is their complex conjugate). Even and odd sizes. Runs as a complex transform of
/// the real data and keeps half of it: correct, not yet the 2x faster packed algorithm.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class rfft {
  public:
    rfft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : complex_(q, std::move(sizes), batch) {}

    vector<std::complex<T>> operator()(const vector<T>& input) const {
        detail::check_fft_operand(input, size(), complex_.plan_device(), "input");
        vector<std::complex<T>> output(input.queue(), spectrum_size());
        (*this)(input, output);
        return output;
    }
    void operator()(const vector<T>& input, const vector<std::complex<T>>& output) const {
        detail::check_fft_operand(input, size(), complex_.plan_device(), "input");
        detail::check_fft_operand(output, spectrum_size(), complex_.plan_device(), "output");
        vector<std::complex<T>> full(input.queue(), size());
        full = input;
        complex_(full, full);
        complex_.plan().keep_half(input.queue(), full.part(0).storage(), output.part(0).storage(),
                                  {});
    }

    /// Real values in: the sizes' product times the batch.
    std::size_t size() const noexcept { return complex_.size(); }
    /// Complex values out.
    std::size_t spectrum_size() const noexcept {
        return size() / complex_.sizes().back() * (complex_.sizes().back() / 2 + 1);
    }

  private:
    fft<T> complex_;
};

/// Complex-to-real inverse transforms, the inverse of rfft (scaled by 1/N): arrays of
/// {n0[, n1[, n2 / 2 + 1]]} complex values, the half spectrum of real data, to arrays of
/// {n0[, n1[, n2]]} real ones. Only the half spectrum is read; the rest is taken to be its
/// conjugate, as for FFTW's c2r. Runs as a complex transform of the expanded spectrum.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class irfft {
  public:
    irfft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : complex_(q, std::move(sizes), inverse, batch) {}

    vector<T> operator()(const vector<std::complex<T>>& input) const {
        detail::check_fft_operand(input, spectrum_size(), complex_.plan_device(), "input");
        vector<T> output(input.queue(), size());
        (*this)(input, output);
        return output;
    }
    void operator()(const vector<std::complex<T>>& input, vector<T>& output) const {
        detail::check_fft_operand(input, spectrum_size(), complex_.plan_device(), "input");
        detail::check_fft_operand(output, size(), complex_.plan_device(), "output");
        vector<std::complex<T>> full(input.queue(), size());
        complex_.plan().expand_half(input.queue(), input.part(0).storage(), full.part(0).storage());
        complex_(full, full);
        output = real(full);
    }

    /// Real values out: the sizes' product times the batch.
    std::size_t size() const noexcept { return complex_.size(); }
    /// Complex values in.
    std::size_t spectrum_size() const noexcept {
        return size() / complex_.sizes().back() * (complex_.sizes().back() / 2 + 1);
    }

  private:
    fft<T> complex_;
};

}  // namespace kiln
#pragma GCC visibility pop
