// SPDX-License-Identifier: Apache-2.0
// How an FFT plan's steps are built (fft_steps.cpp), for the plans of fft.cpp.
#pragma once

#include <complex>
#include <cstddef>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <vector>

namespace kiln::detail {

using complex_double = std::complex<double>;

// A stage maps its source (written fft_buffer::input) to its target (fft_buffer::output); the
// chain decides what they are.
using fft_stage = std::vector<fft_step>;

// The radices whose product is n, or nothing if n has another prime factor.
std::optional<std::vector<std::size_t>> fft_factor(std::size_t n);

/// Whether a scoped_fft_length_kernels lives.
bool fft_length_kernels_forced();

/// Plans a transform size by size into stages, gathering the host table (twiddles, chirps) that
/// their steps read.
class fft_plan_builder {
  public:
    fft_plan_builder(const fft_shape& shape, const fft_pass_limits& limits)
        : shape_(shape), limits_(limits) {}

    // Stockham passes through local memory for a length whose factors all have radix stages,
    // each pass a stage: from source to target, or (ping_pong) alternately from source to
    // target and back. A contiguous length that fits a group's local memory takes one pass;
    // others take the fewest passes whose lengths let a group take enough lines to coalesce.
    void add_passes(std::vector<fft_stage>& stages, std::size_t n, std::size_t stride,
                    std::size_t lines, bool inverse, double last_scale, fft_buffer first_source,
                    fft_buffer first_target, bool ping_pong);

    // Bluestein's algorithm for a length n with a prime factor without a pass: a convolution
    // with the chirp exp(-sign i pi k^2 / n), done by power-of-two transforms of m >= 2n - 1.
    fft_stage bluestein(std::size_t n, std::size_t stride, std::size_t lines, double scale);

    std::vector<complex_double> table;
    std::size_t work_elements = 0;

  private:
    const fft_shape& shape_;
    fft_pass_limits limits_;
};

// The steps of the stages one after another, from the input to the output through the
// scratch buffers. Radix passes cannot read and write the same memory, so a single stage run
// in place goes through scratch and a copy.
std::vector<fft_step> fft_chain(const std::vector<fft_stage>& stages, bool in_place);

}  // namespace kiln::detail
