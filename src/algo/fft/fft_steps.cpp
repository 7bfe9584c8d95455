// SPDX-License-Identifier: Apache-2.0
// An FFT plan's steps: each size as radix passes through local memory (or one register pass) or
// as Bluestein's convolution, with their twiddle and chirp tables; then the chain of buffers.
#include "fft_steps.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <numbers>
#include <optional>
#include <vector>

namespace kiln::detail {
namespace {

// exp(i angle), with the angle given as a fraction of a full turn: numerator / denominator.
complex_double turn(double sign, std::size_t numerator, std::size_t denominator) {
    const double angle = sign * 2 * std::numbers::pi * double(numerator) / double(denominator);
    return {std::cos(angle), std::sin(angle)};
}

// A forward transform of a power-of-two length on the host, in double: Bluestein's chirp
// spectrum, so that its rounding does not add to the device's.
void host_fft(std::vector<complex_double>& x) {
    const std::size_t n = x.size();
    for (std::size_t i = 1, j = 0; i < n; ++i) {
        std::size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) std::swap(x[i], x[j]);
    }
    std::vector<complex_double> w;
    for (std::size_t length = 2; length <= n; length *= 2) {
        w.resize(length / 2);
        for (std::size_t k = 0; k < length / 2; ++k) w[k] = turn(-1, k, length);
        for (std::size_t start = 0; start < n; start += length)
            for (std::size_t k = 0; k < length / 2; ++k) {
                const complex_double a = x[start + k], b = x[start + k + length / 2] * w[k];
                x[start + k] = a + b;
                x[start + k + length / 2] = a - b;
            }
    }
}

// The prime factors of n, largest first (n's factors are all in fft_radices).
std::vector<std::size_t> primes_of(std::size_t n) {
    std::vector<std::size_t> primes;
    for (std::size_t p : {13, 11, 7, 5, 3, 2})
        for (; n % p == 0; n /= p) primes.push_back(p);
    return primes;
}

// Splits n into the fewest pass lengths of at most `longest`, as even as the greedy split gets
// them: each prime, largest first, goes to the length that is smallest so far.
std::vector<std::size_t> pass_lengths(std::size_t n, std::size_t longest) {
    const std::vector<std::size_t> primes = primes_of(n);
    for (std::size_t passes = 1;; ++passes) {
        std::vector<std::size_t> lengths(passes, 1);
        for (std::size_t p : primes) *std::min_element(lengths.begin(), lengths.end()) *= p;
        if (*std::max_element(lengths.begin(), lengths.end()) <= longest) {
            std::sort(lengths.begin(), lengths.end(), std::greater<>());
            return lengths;
        }
    }
}

// The kernel of a pass of `length` under `limits`.
fft_pass_kernel pass_kernel(std::size_t length, bool inverse, bool twiddled,
                            bool load_lines_fastest, bool store_lines_fastest,
                            const fft_pass_limits& limits) {
    fft_pass_kernel kernel;
    kernel.length = length;
    kernel.radices = *fft_factor(length);
    // Not fewer lines for small batches: one kernel per length serves every batch. Lines loaded
    // or stored across: at least enough to fill memory sectors. Within the local memory.
    kernel.lines_per_group = std::max<std::size_t>(limits.group_elements / length, 1);
    if (load_lines_fastest || store_lines_fastest)
        kernel.lines_per_group = std::max(kernel.lines_per_group, limits.coalesced_lines);
    while (kernel.lines_per_group > 1 &&
           fft_pass_local_bytes(kernel, limits.double_precision) > limits.local_bytes)
        --kernel.lines_per_group;
    // One butterfly of the largest radix per work-item and stage, in groups of the policy's
    // size; long lines take larger groups, with up to two radix-16 butterflies per item held in
    // registers across each stage's barrier. (One per item gave the H100's 16384-point pass
    // 1024 items of at most 64 registers each: 1250 GB/s.)
    const std::size_t elements = kernel.lines_per_group * length;
    const std::size_t largest = *std::max_element(kernel.radices.begin(), kernel.radices.end());
    const std::size_t most =
        std::min(std::max(limits.work_group_size, elements / 32), limits.max_work_group_size);
    kernel.work_group_size = std::clamp<std::size_t>(elements / largest, 1, most);
    kernel.inverse = inverse;
    kernel.twiddled = twiddled;
    kernel.load_lines_fastest = load_lines_fastest;
    kernel.store_lines_fastest = store_lines_fastest;
    return kernel;
}

}  // namespace

std::optional<std::vector<std::size_t>> fft_factor(std::size_t n) {
    std::vector<std::size_t> radices;
    for (std::size_t radix : fft_radices)
        while (n % radix == 0) {
            radices.push_back(radix);
            n /= radix;
        }
    if (n != 1) return std::nullopt;
    return radices;
}

void fft_plan_builder::add_passes(std::vector<fft_stage>& stages, std::size_t n, std::size_t stride,
                                  std::size_t lines, bool inverse, double last_scale,
                                  fft_buffer first_source, fft_buffer first_target,
                                  bool ping_pong) {
    const double sign = inverse ? 1 : -1;
    const bool one_pass = stride == 1 && n <= limits_.local_elements;
    std::optional<fft_pass_kernel> in_registers =
        stride == 1 && !limits_.radix_per_pass && limits_.register_passes
            ? fft_register_pass(n, inverse, limits_.double_precision, limits_.local_elements,
                                limits_.max_work_group_size)
            : std::nullopt;
    // A line that fits local memory takes the register pass (in one round) only where the pass
    // through local memory would have as many work-items, each holding as many elements across
    // its barriers, in more stages: CUDA's 16384 points, 512 x 32, radices 32, 32, 16 against
    // 16, 16, 16, 4 (one local-memory exchange fewer): 124 us against 146 on the H100.
    if (in_registers && one_pass) {
        const fft_pass_kernel local = pass_kernel(n, inverse, false, false, false, limits_);
        if (local.work_group_size != in_registers->work_group_size ||
            local.radices.size() <= in_registers->radices.size())
            in_registers.reset();
    }
    const std::vector<std::size_t> lengths =
        limits_.radix_per_pass ? *fft_factor(n)
        : one_pass || in_registers
            ? std::vector<std::size_t>{n}
            : pass_lengths(
                  n, std::max<std::size_t>(limits_.local_elements / limits_.coalesced_lines, 16));
    std::size_t done = 1;
    fft_buffer source = first_source, target = first_target;
    for (std::size_t p = 0; p < lengths.size(); ++p) {
        const std::size_t length = lengths[p];
        const std::size_t offset = table.size();
        for (std::size_t x = 0; x < length; ++x) table.push_back(turn(sign, x, length));
        if (done > 1) {
            for (std::size_t x = 0; x < length; ++x) table.push_back(turn(sign, x, done * length));
            for (std::size_t y = 0; y < done; ++y)
                table.push_back(turn(sign, y * length, done * length));
        }
        const std::size_t pass_lines = lines * (n / length);
        // A group's lines neighbour each other in memory unless each is a whole contiguous
        // array (load) or is written as one (store: the first pass of a contiguous length).
        // CPUs read through caches, where the order does not matter: one kernel for both.
        const bool coalescing = limits_.coalesced_lines > 1;
        fft_pass_kernel kernel =
            in_registers ? *in_registers
                         : pass_kernel(length, inverse, done > 1,
                                       coalescing && !(stride == 1 && length == n),
                                       coalescing && !(stride == 1 && done == 1), limits_);
        if (limits_.radix_per_pass) {
            kernel.direct = true;
            kernel.lines_per_group = kernel.work_group_size = limits_.work_group_size;
        }
        fft_step step{kernel.name(),
                      source,
                      target,
                      pass_lines,
                      {n, n / length, done, stride, offset},
                      p + 1 == lengths.size() ? last_scale : 1.0,
                      kernel,
                      nullptr};
        stages.push_back({step});
        done *= length;
        if (ping_pong) std::swap(source, target);
    }
}

fft_stage fft_plan_builder::bluestein(std::size_t n, std::size_t stride, std::size_t lines,
                                      double scale) {
    std::size_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    work_elements = std::max(work_elements, lines * m);
    const double sign = shape_.inverse ? 1 : -1;
    // k^2 mod 2n, exactly, so that the angle keeps its precision for large k.
    std::vector<complex_double> chirp(n);
    for (std::size_t k = 0, square = 0; k < n; ++k) {
        chirp[k] = turn(sign, square, 2 * n);
        square = (square + 2 * k + 1) % (2 * n);
    }
    const std::size_t chirp_offset = table.size();
    table.insert(table.end(), chirp.begin(), chirp.end());
    std::vector<complex_double> kernel(m);
    for (std::size_t k = 0; k < n; ++k) {
        kernel[k] = std::conj(chirp[k]);
        if (k > 0) kernel[m - k] = std::conj(chirp[k]);
    }
    host_fft(kernel);
    const std::size_t spectrum_offset = table.size();
    for (const complex_double& z : kernel) table.push_back(z / double(m));

    std::vector<fft_stage> passes;
    fft_stage steps;
    steps.push_back({fft_chirp_in_kernel,
                     fft_buffer::input,
                     fft_buffer::work0,
                     lines * m,
                     {n, m, stride, chirp_offset, 0},
                     1.0});
    add_passes(passes, m, 1, lines, false, 1.0, fft_buffer::work0, fft_buffer::work1, true);
    const std::size_t pass_count = passes.size();
    const fft_buffer spectrum = pass_count % 2 ? fft_buffer::work1 : fft_buffer::work0;
    const fft_buffer other = spectrum == fft_buffer::work0 ? fft_buffer::work1 : fft_buffer::work0;
    passes.push_back({{fft_pointwise_kernel,
                       spectrum,
                       spectrum,
                       lines * m,
                       {m, spectrum_offset, 0, 0, 0},
                       1.0}});
    add_passes(passes, m, 1, lines, true, 1.0, spectrum, other, true);
    const fft_buffer result = pass_count % 2 ? other : spectrum;
    for (const fft_stage& pass : passes) steps.insert(steps.end(), pass.begin(), pass.end());
    steps.push_back({fft_chirp_out_kernel,
                     result,
                     fft_buffer::output,
                     lines * n,
                     {n, m, stride, chirp_offset, 0},
                     scale});
    return steps;
}

std::vector<fft_step> fft_chain(const std::vector<fft_stage>& stages, bool in_place) {
    std::vector<fft_step> steps;
    if (stages.empty()) {
        if (!in_place) steps.push_back({"", fft_buffer::input, fft_buffer::output, 0, {}, 1.0});
        return steps;
    }
    fft_buffer current = fft_buffer::input;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const bool last = i + 1 == stages.size();
        const bool through_scratch = last && in_place && current == fft_buffer::input;
        const fft_buffer target = last && !through_scratch          ? fft_buffer::output
                                  : current == fft_buffer::scratch0 ? fft_buffer::scratch1
                                                                    : fft_buffer::scratch0;
        for (fft_step step : stages[i]) {
            if (step.source == fft_buffer::input) step.source = current;
            if (step.target == fft_buffer::output) step.target = target;
            steps.push_back(std::move(step));
        }
        current = target;
        if (through_scratch) steps.push_back({"", current, fft_buffer::output, 0, {}, 1.0});
    }
    return steps;
}

}  // namespace kiln::detail
