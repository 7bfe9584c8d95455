// SPDX-License-Identifier: Apache-2.0
// Fast Fourier transforms of complex vectors of any size, in 1, 2 or 3 dimensions: kiln::fft.
//
//     kiln::fft<float> forward(q, {480, 640});                 // 2-D, row-major (640 contiguous)
//     kiln::fft<float> backward(q, {480, 640}, kiln::inverse);
//     kiln::vector<std::complex<float>> spectrum = forward(x);
//     x = backward(spectrum);                                  // x again: inverse scales by 1/N
//     forward(x, x);                                           // in place
//     u = ifft(K * fft(rhs));                                  // plans are expression terms
//
// Forward: X[k] = sum_j x[j] exp(-2 pi i j k / N); inverse: x[j] = (1/N) sum_k X[k]
// exp(+2 pi i j k / N), N being the product of the sizes. A batch of b transforms takes b arrays
// one after another. Sizes whose prime factors are 2, 3, 5, 7, 11 and 13 run as Stockham radix
// passes; any other size through Bluestein's algorithm. docs/fft.md has the
// details, the accuracy promised and what is not there yet.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <cstddef>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/fft_term.hpp>
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
inline constexpr inverse_t inverse{};  ///< `kiln::inverse`: fft(q, sizes, kiln::inverse)

/// A plan for complex-to-complex transforms of one shape on one device. Plans of the same shape,
/// direction and precision on a device share their tables and kernels: making one again costs a
/// map look-up while another lives.
///
/// plan(input) is a term (include/kiln/detail/algo/fft_term.hpp), not a vector: `y = plan(x)`
/// writes the transform into y, `y = 2 * plan(x) + z` computes it into one temporary block first,
/// and `u = ifft(K * fft(rhs))` evaluates `K * fft(rhs)` inside ifft's first pass.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class fft {
  public:
    using value_type = std::complex<T>;  ///< the element type in and out
    using input_type = value_type;       ///< what the transform reads
    using output_type = value_type;      ///< what it writes

    /// Forward transforms of sizes {n0[, n1[, n2]]}, `batch` of them one after another.
    fft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : fft(q, std::move(sizes), false, batch) {}
    /// Inverse transforms, scaled by 1/N.
    fft(const queue& q, std::vector<std::size_t> sizes, inverse_t, std::size_t batch = 1)
        : fft(q, std::move(sizes), true, batch) {}

    /// The transform of `input`: a vector, or any vector expression of real or complex values
    /// (`plan(2.0f * x + y)`, a kiln::vector<float>), evaluated inside the first pass where the
    /// plan's first step is a radix pass. Checked here: invalid_argument_error for a wrong size
    /// or device.
    template <vector_expression E>
    requires detail::storable_as<value_type, expression_value_t<E>>
    auto operator()(const E& input) const {
        if constexpr (std::same_as<std::remove_cvref_t<E>, vector<value_type>>)
            return detail::fft_term<fft, detail::vector_terminal<value_type>>(
                *this, detail::as_node(input), &input);
        else
            return detail::fft_term<fft, detail::node_t<std::remove_cvref_t<E>>>(
                *this, detail::as_node(input));
    }
    /// Writes the transform of `input` to `output`, which may be `input` itself (in place).
    void operator()(const vector<value_type>& input, const vector<value_type>& output) const {
        check(input, "input");
        check(output, "output");
        plan_->run(input.queue(), input.part(0).storage(), output.part(0).storage());
    }

    /// The sizes of one transform, {n0[, n1[, n2]]}, n0 outermost.
    const std::vector<std::size_t>& sizes() const noexcept { return plan_->shape().sizes; }
    /// Transforms per call, one after another in memory.
    std::size_t batch() const noexcept { return plan_->shape().batch; }
    /// Elements transformed per call: the sizes' product times the batch.
    std::size_t size() const noexcept { return plan_->shape().elements(); }
    std::size_t input_size() const noexcept { return size(); }   ///< elements read: size()
    std::size_t output_size() const noexcept { return size(); }  ///< elements written: size()
    /// Whether it computes inverse transforms (scaled by 1/N).
    bool is_inverse() const noexcept { return plan_->shape().inverse; }
    /// The shared device plan (tests of caching; real transforms).
    const detail::fft_plan& plan() const noexcept { return *plan_; }
    /// The device the plan runs on.
    const device& plan_device() const noexcept { return device_; }
    /// The queue the plan was made with, which transforms inside expressions run on.
    const queue& plan_queue() const noexcept { return queue_; }

  private:
    template <class, class>
    friend class detail::fft_term;

    fft(const queue& q, std::vector<std::size_t> sizes, bool inverse, std::size_t batch)
        : plan_(detail::fft_plan::make(
              q, detail::fft_shape{std::move(sizes), batch, inverse, std::same_as<T, double>},
              "kiln::fft")),
          queue_(q),
          device_(q.device()) {}

    void check(const vector<value_type>& v, const char* role) const {
        detail::check_fft_operand(v, size(), device_, role);
    }

    // target = plan(input), input and target checked, on target's queue.
    template <class Node>
    void assign(const Node& input, const vector<value_type>* plain,
                vector<value_type>& target) const {
        const queue& q = target.queue();
        const detail::buffer_storage& output = target.part(0).storage();
        if (plain) {
            plan_->run(q, plain->part(0).storage(), output);  // in place when plain is target
            return;
        }
        if (plan_->fuses_input()) {
            const detail::fft_input_expression fused = detail::fft_input_of<value_type>(input);
            if (!detail::reads_memory(fused.arguments, output)) {
                plan_->run(q, fused, output);
                return;
            }
            // x = plan(2 * x) in one pass: pass kernels are not written to read all they read
            // before they write (chain() sends in-place single passes through scratch too).
            detail::fft_result<value_type> staging;
            const detail::buffer_storage& block = staging.acquire(q, size());
            const event done = plan_->run(q, fused, block);
            block.copy_bytes(q, 0, output, 0, size() * sizeof(value_type), done);
            return;
        }
        // FFTW's plans, and sizes that are all 1: the input written to the target, then
        // transformed there in place; into a new vector first where the input reads the target
        // (c = plan(kiln::reverse(c)) would overwrite elements it has still to read).
        detail::operand_check reads("kiln::fft input");
        input.check(reads);
        if (reads.involves(target.layout())) {
            vector<value_type> staged(q, size());
            detail::assign(detail::vector_terminal<value_type>(staged), input, "kiln::fft input");
            plan_->run(q, staged.part(0).storage(), output).wait();  // staged is freed next
            return;
        }
        detail::assign(detail::vector_terminal<value_type>(target), input, "kiln::fft input");
        plan_->run(q, output, output);
    }
    // The transform as an expression's operand, into one temporary on the plan's queue.
    template <class Node>
    void evaluate(const Node& input, const vector<value_type>* plain,
                  detail::fft_result<value_type>& result) const {
        if (plain) {
            plan_->run(queue_, plain->part(0).storage(), result.acquire(queue_, size()));
        } else if (plan_->fuses_input()) {
            const detail::buffer_storage& block = result.acquire(queue_, size());
            plan_->run(queue_, detail::fft_input_of<value_type>(input), block);
        } else {
            assign(input, plain, result.fresh(queue_, size()));
        }
    }

    std::shared_ptr<const detail::fft_plan> plan_;
    queue queue_;
    device device_;
};

/// Real-to-complex forward transforms, FFTW's r2c layout: arrays of {n0[, n1[, n2]]} real values
/// to arrays of {n0[, n1[, n2 / 2 + 1]]} complex ones (the last size halved, plus one; the rest of
/// the spectrum is their complex conjugate). Even and odd sizes. Runs as a complex transform of
/// the real data (read by its first pass, widened there) and keeps half of it: correct, not yet
/// the 2x faster packed algorithm. plan(input) is a term like kiln::fft's.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class rfft {
  public:
    using input_type = T;                 ///< real values in
    using output_type = std::complex<T>;  ///< the half spectrum out

    /// Forward transforms of real arrays of sizes {n0[, n1[, n2]]}, `batch` of them.
    rfft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : complex_(q, std::move(sizes), batch) {}

    /// The half spectrum of `input`, a real vector or real vector expression.
    template <vector_expression E>
    requires detail::storable_as<T, expression_value_t<E>>
    auto operator()(const E& input) const {
        return detail::fft_term<rfft, detail::node_t<std::remove_cvref_t<E>>>(
            *this, detail::as_node(input));
    }
    /// Writes the half spectrum of `input` to `output` (spectrum_size() elements);
    /// invalid_argument_error for a wrong size or device.
    void operator()(const vector<T>& input, const vector<std::complex<T>>& output) const {
        detail::check_fft_operand(input, size(), complex_.plan_device(), "input");
        detail::check_fft_operand(output, spectrum_size(), complex_.plan_device(), "output");
        write(detail::vector_terminal<T>(input), input.queue(), output.part(0).storage());
    }

    /// Real values in: the sizes' product times the batch.
    std::size_t size() const noexcept { return complex_.size(); }
    /// Complex values out.
    std::size_t spectrum_size() const noexcept {
        return size() / complex_.sizes().back() * (complex_.sizes().back() / 2 + 1);
    }
    std::size_t input_size() const noexcept { return size(); }  ///< elements read: size()
    /// Elements written: spectrum_size().
    std::size_t output_size() const noexcept { return spectrum_size(); }
    /// The queue the plan was made with, which transforms inside expressions run on.
    const queue& plan_queue() const noexcept { return complex_.plan_queue(); }

  private:
    template <class, class>
    friend class detail::fft_term;

    // The full complex transform in a pool block (the input read by its first pass where it
    // can be), then its half into `output`.
    template <class Node>
    void write(const Node& input, const queue& q, const detail::buffer_storage& output) const {
        const detail::fft_plan& plan = complex_.plan();
        detail::fft_result<std::complex<T>> full;
        if (plan.fuses_input()) {
            const detail::buffer_storage& block = full.acquire(q, size());
            const event done = plan.run(q, detail::fft_input_of<std::complex<T>>(input), block);
            plan.keep_half(q, block, output, done);
        } else {
            vector<std::complex<T>>& widened = full.fresh(q, size());
            detail::assign(detail::vector_terminal<std::complex<T>>(widened), input,
                           "kiln::rfft input");
            const detail::buffer_storage& storage = widened.part(0).storage();
            plan.keep_half(q, storage, output, plan.run(q, storage, storage));
        }
    }
    template <class Node>
    void assign(const Node& input, const vector<T>*, vector<std::complex<T>>& target) const {
        write(input, target.queue(), target.part(0).storage());
    }
    template <class Node>
    void evaluate(const Node& input, const vector<T>*,
                  detail::fft_result<std::complex<T>>& result) const {
        write(input, plan_queue(), result.acquire(plan_queue(), spectrum_size()));
    }

    fft<T> complex_;
};

/// Complex-to-real inverse transforms, the inverse of rfft (scaled by 1/N): arrays of
/// {n0[, n1[, n2 / 2 + 1]]} complex values, the half spectrum of real data, to arrays of
/// {n0[, n1[, n2]]} real ones. Only the half spectrum is read; the rest is taken to be its
/// conjugate, as for FFTW's c2r. Runs as a complex transform of the spectrum expanded from the
/// half (an input expression is read by the expansion kernel). plan(input) is a term like
/// kiln::fft's; inside a larger expression its value is a new vector.
template <class T>
requires std::same_as<T, float> || std::same_as<T, double>
class irfft {
  public:
    using input_type = std::complex<T>;  ///< the half spectrum in
    using output_type = T;               ///< real values out

    /// Inverse transforms to real arrays of sizes {n0[, n1[, n2]]}, `batch` of them.
    irfft(const queue& q, std::vector<std::size_t> sizes, std::size_t batch = 1)
        : complex_(q, std::move(sizes), inverse, batch) {}

    /// The real arrays whose half spectrum is `input`, a vector or vector expression.
    template <vector_expression E>
    requires detail::storable_as<std::complex<T>, expression_value_t<E>>
    auto operator()(const E& input) const {
        if constexpr (std::same_as<std::remove_cvref_t<E>, vector<std::complex<T>>>)
            return detail::fft_term<irfft, detail::vector_terminal<std::complex<T>>>(
                *this, detail::as_node(input), &input);
        else
            return detail::fft_term<irfft, detail::node_t<std::remove_cvref_t<E>>>(
                *this, detail::as_node(input));
    }
    /// Writes the real arrays whose half spectrum is `input` to `output` (size() elements);
    /// invalid_argument_error for a wrong size or device.
    void operator()(const vector<std::complex<T>>& input, vector<T>& output) const {
        detail::check_fft_operand(input, spectrum_size(), complex_.plan_device(), "input");
        detail::check_fft_operand(output, size(), complex_.plan_device(), "output");
        assign(detail::vector_terminal<std::complex<T>>(input), &input, output);
    }

    /// Real values out: the sizes' product times the batch.
    std::size_t size() const noexcept { return complex_.size(); }
    /// Complex values in.
    std::size_t spectrum_size() const noexcept {
        return size() / complex_.sizes().back() * (complex_.sizes().back() / 2 + 1);
    }
    /// Elements read: spectrum_size().
    std::size_t input_size() const noexcept { return spectrum_size(); }
    std::size_t output_size() const noexcept { return size(); }  ///< elements written: size()
    /// The queue the plan was made with, which transforms inside expressions run on.
    const queue& plan_queue() const noexcept { return complex_.plan_queue(); }

  private:
    template <class, class>
    friend class detail::fft_term;

    template <class Node>
    void assign(const Node& input, const vector<std::complex<T>>* plain, vector<T>& target) const {
        const queue& q = target.queue();
        vector<std::complex<T>> full(q, size());
        if (plain)
            complex_.plan().expand_half(q, plain->part(0).storage(), full.part(0).storage());
        else
            complex_.plan().expand_half(q, detail::fft_input_of<std::complex<T>>(input),
                                        full.part(0).storage());
        complex_(full, full);
        target = real(full);
    }
    template <class Node>
    void evaluate(const Node& input, const vector<std::complex<T>>* plain,
                  detail::fft_result<T>& result) const {
        assign(input, plain, result.fresh(plan_queue(), size()));
    }

    fft<T> complex_;
};

}  // namespace kiln
#pragma GCC visibility pop
