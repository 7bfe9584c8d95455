// SPDX-License-Identifier: Apache-2.0
// What the FFT kernel writers share: element types, small DFTs, twiddles, loads and signatures.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail::fft_source {

// Everything a kernel needs to know about the element and index types.
struct fft_types {
    std::string real, complex, index;
    bool double_precision, wide_index;
    std::size_t real_bytes() const { return double_precision ? 8 : 4; }
    std::size_t index_bytes() const { return wide_index ? 8 : 4; }
};

fft_types types(bool double_precision, bool wide_index);

/// The parameters every FFT kernel begins with: see fft_step_description.
kernel_description step_kernel_description(const std::string& name, const fft_types& t,
                                           bool reads_expression);

/// The parameters of `kernel`, with an input expression's declared in place of `in` (the
/// description's then_input); returns the expression's text.
std::optional<fft_input_text> declare_parameters(source_builder& b,
                                                 const kernel_description& kernel,
                                                 const fft_input_writer* input);

/// kiln_fft_make, _add, _mul and the other complex helpers every FFT program starts with.
void define_helpers(source_builder& b, const fft_types& t);

/// `function(a, b)`, or `function(a)` when b is empty.
std::string call(std::string_view function, std::string_view a, std::string_view b = {});

/// v w^e, w = exp(sign 2 pi i / R): multiplications by 1, -1, i and -i are negations and swaps.
std::string rotated(const fft_types& t, const std::string& v, std::size_t e, std::size_t radix,
                    bool inverse);

/// Sets `target` to input element `index`: in[index], or the value of the plan's input
/// expression (fused into the first pass) at idx = index.
void load_input(source_builder& b, const fft_input_text* input, const std::string& target,
                const std::string& index);

/// Text added to a pass's global element offsets (empty: nothing): where a pass reads or writes
/// a window of the lines (fft_pipeline_kernel's ring) rather than the whole array. Streaming:
/// global loads of `in` and stores to `out` go through kiln_load_streaming and kiln_store_streaming
/// (fft_pipeline_kernel::streaming).
struct line_shifts {
    std::string in, out;
    bool streaming_loads = false, streaming_stores = false;
};

/// The global offsets of the group's line g (the pass's line first + g): `in_line` of its first
/// input, `out_line` of its first output, and `line_k`, its position among the c sub-transform
/// elements (its twiddles), declared for the code that follows.
void line_offsets(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                  const line_shifts& shifts = {});

/// The radix stages of a pass through local memory (fft_kernels.cpp's write_pass_kernel) for the
/// group's lines first + g, with `first`, `lid`, `in`, `out`, `table`, `data`, count, a to e and
/// scale in scope; `input` (may be null) replaces `in` for the first stage.
void write_pass_body(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                     const fft_input_text* input, const line_shifts& shifts);

/// A pass kernel's name and parameters (fft_pass_description; described at write_pass_kernel in
/// fft_kernels.cpp), with an input expression's parameters in place of `in`.
std::optional<fft_input_text> begin_pass_kernel(source_builder& b, const fft_types& t,
                                                const fft_pass_kernel& k,
                                                const fft_input_writer* input);

/// A pass whose line stays in registers and crosses local memory a part at a time between its
/// stages (fft_pass_kernel::exchange_rounds; fft_register_pass.cpp).
void write_register_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                                const fft_input_writer* input);

// Writes the small DFT inside a pass, y[m] = sum over r of v[r] w^(r m), into named values.
// Radices 8, 16 and 32 are split into DFTs of 2 x 4, 4 x 4 and 2 x 16 with twiddles between them
// (fewer multiplications, and less rounding, than the direct sum); the others are direct sums.
class small_dft_writer {
  public:
    small_dft_writer(source_builder& b, const fft_types& t, bool inverse)
        : b_(b), t_(t), inverse_(inverse) {}

    std::vector<std::string> dft(const std::vector<std::string>& v) {
        const std::size_t radix = v.size();
        const std::size_t a = radix == 16 ? 4 : radix == 8 || radix == 32 ? 2 : 1;
        std::vector<std::string> y(radix);
        if (a == 1) {
            for (std::size_t m = 0; m < radix; ++m) {
                std::string sum = v[0];
                for (std::size_t r = 1; r < radix; ++r)
                    sum = call("kiln_fft_add", sum, rotated(t_, v[r], r * m, radix, inverse_));
                y[m] = name(sum);
            }
            return y;
        }
        // r = r1 + a r2 and m = m2 + b m1: DFTs of length b over r2, twiddles w^(r1 m2), then
        // DFTs of length a over r1.
        const std::size_t b = radix / a;
        std::vector<std::vector<std::string>> inner(a);
        for (std::size_t r1 = 0; r1 < a; ++r1) {
            std::vector<std::string> column;
            for (std::size_t r2 = 0; r2 < b; ++r2) column.push_back(v[r1 + a * r2]);
            inner[r1] = dft(column);
            for (std::size_t m2 = 1; m2 < b; ++m2)
                if ((r1 * m2) % radix != 0)
                    inner[r1][m2] = name(rotated(t_, inner[r1][m2], r1 * m2, radix, inverse_));
        }
        for (std::size_t m2 = 0; m2 < b; ++m2) {
            std::vector<std::string> row;
            for (std::size_t r1 = 0; r1 < a; ++r1) row.push_back(inner[r1][m2]);
            const std::vector<std::string> outer = dft(row);
            for (std::size_t m1 = 0; m1 < a; ++m1) y[m2 + b * m1] = outer[m1];
        }
        return y;
    }

  private:
    std::string name(const std::string& value) {
        std::string n = 's' + std::to_string(next_++);
        b_.line("const " + t_.complex + " " + n + " = " + value + ";");
        return n;
    }

    source_builder& b_;
    const fft_types& t_;
    bool inverse_;
    int next_ = 0;
};

// The twiddles of a butterfly's inputs r = 0..R-1 are powers base s^r of one root s (times
// a base after a first pass). Work-items look up s and s^S (S = ceil(sqrt(R))) and make the
// others as products base (s^S)^(r / S) s^(r mod S): two or three table reads per butterfly
// instead of one or two per input (the inputs of neighbouring work-items read entries far
// apart: a gather each), for a few roundings more (chains of at most S - 1 multiplications).
class twiddle_powers {
  public:
    twiddle_powers(source_builder& b, const fft_types& t, std::size_t radix)
        : b_(b), t_(t), radix_(radix) {
        while (split_ * split_ < radix_) ++split_;
    }

    // Declares the powers from s, s^S and the base (values; base may be empty: 1).
    void declare(const std::string& s, const std::string& s_split, const std::string& base) {
        has_base_ = !base.empty();
        if (has_base_) b_.line("const " + t_.complex + " tw_high0 = " + base + ";");
        if (radix_ > 1) b_.line("const " + t_.complex + " tw_low1 = " + s + ";");
        for (std::size_t low = 2; low < split_ && low < radix_; ++low)
            b_.line("const " + t_.complex + " tw_low" + std::to_string(low) +
                    " = kiln_fft_mul(tw_low" + std::to_string(low - 1) + ", tw_low1);");
        if (split_ < radix_) b_.line("const " + t_.complex + " tw_step = " + s_split + ";");
        for (std::size_t high = 1; high * split_ < radix_; ++high)
            b_.line("const " + t_.complex + " tw_high" + std::to_string(high) + " = " +
                    (high == 1 && !has_base_
                         ? std::string("tw_step")
                         : call("kiln_fft_mul", "tw_high" + std::to_string(high - 1), "tw_step")) +
                    ";");
    }

    // v times the twiddle of input r.
    std::string times(const std::string& v, std::size_t r) const {
        const std::size_t high = r / split_, low = r % split_;
        std::string twiddle;
        if (high > 0 || has_base_) twiddle = "tw_high" + std::to_string(high);
        if (low > 0)
            twiddle = twiddle.empty()
                          ? "tw_low" + std::to_string(low)
                          : call("kiln_fft_mul", twiddle, "tw_low" + std::to_string(low));
        return twiddle.empty() ? v : call("kiln_fft_mul", v, twiddle);
    }

    std::size_t split() const { return split_; }

  private:
    source_builder& b_;
    const fft_types& t_;
    std::size_t radix_, split_ = 1;
    bool has_base_ = false;
};

}  // namespace kiln::detail::fft_source
