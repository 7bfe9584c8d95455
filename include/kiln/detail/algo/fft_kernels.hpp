// SPDX-License-Identifier: Apache-2.0
// The kernels of kiln::fft, written once through the source builder for every backend.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/detail/target_features.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

/// The radices of the stages inside a pass, largest first (the order plans prefer them in).
inline constexpr std::size_t fft_radices[] = {16, 8, 4, 2, 3, 5, 7, 11, 13};

/// One Stockham pass of `length` = the product of `radices`, done for `lines_per_group` lines
/// per work-group of `work_group_size` items, the data in registers during each radix stage and
/// in local memory between them. These are the
/// kernel's compile-time constants (its name says them all); the sizes and strides of the
/// transform are run-time parameters, so that shapes with the same passes share kernels.
struct fft_pass_kernel {
    std::size_t length = 1;
    std::vector<std::size_t> radices;
    std::size_t lines_per_group = 1;
    std::size_t work_group_size = 1;
    bool inverse = false;
    bool twiddled = false;  ///< after a first pass: twiddles on the loaded elements
    /// Whether work-items take neighbouring lines (else neighbouring elements of one line) when
    /// loading and storing: whichever neighbours them in global memory.
    bool load_lines_fastest = false, store_lines_fastest = false;
    /// One radix stage without local memory, one line per work-item (lines_per_group =
    /// work_group_size): what CPUs run.
    bool direct = false;
    /// When not 0, a line held in registers (lines_per_group = 1), as a rule one too long for
    /// the group's local memory: each work-item holds length / work_group_size elements in
    /// registers through every stage, and the exchanges between stages cross local memory in this
    /// many rounds of length / exchange_rounds elements each. Powers of two only.
    std::size_t exchange_rounds = 0;
    /// Says every field the kernel is written from.
    std::string name() const;
    /// The kernel's share of its program's cache key: its name.
    std::string key() const { return name(); }
};

/// Two passes through local memory that make whole lines (the first with nothing done before
/// it, the second finishing the line: first.length x second.length points), done by one kernel
/// in chunks of `chunk_lines` lines, so that the data between them stays in the L2 cache
/// instead of crossing DRAM twice. Work-groups number themselves in the order they start (a
/// global ticket) and take, chunk by chunk, the first pass's tiles of chunk r, then the second
/// pass's tiles of chunk r - `lag`; the first pass writes its chunk into slot r mod `slots` of a
/// ring buffer, and a group waits (spins) until the tiles it reads or overwrites are done. Needs
/// groups that make progress (groups_make_progress) and a fence that orders writes across them
/// (`target`'s kiln_fence_acq_rel, target_features::device_fence).
struct fft_pipeline_kernel {
    fft_pass_kernel first, second;
    std::size_t chunk_lines = 1, slots = 2, lag = 1;
    target_features target{};
    /// The first pass's loads and the second pass's stores marked as touched once
    /// (kiln_load_streaming, kiln_store_streaming), so that the L2 cache evicts them before the
    /// ring.
    bool streaming = false;
    /// The second pass waits for the first pass's lines of its own arrays of n, not of its
    /// whole chunk.
    bool fine = false;
    /// The first and the second pass's tiles (work-groups) per chunk.
    std::size_t first_tiles() const;
    std::size_t second_tiles() const;
    /// Says every field but the target's features beyond its vocabulary.
    std::string name() const;
    /// The kernel's share of its program's cache key: its name and every target feature.
    std::string key() const;
};

/// The counters (uint) of a pipeline kernel's `control`, zero between launches: the ticket, the
/// groups finished, then from first_done the first pass's progress (fine: lines done per array of
/// n; else tiles done per chunk), then the second pass's tiles done per chunk. Over Number:
/// std::size_t for the host's allocation, the kernel's text for its pointers, so that both read
/// one layout. `lines`: the first pass's (its count).
template <class Number = std::size_t>
struct fft_pipeline_control {
    Number lines, chunks;
    static constexpr std::size_t first_done = 2;
    Number first_pass_counters(const fft_pipeline_kernel& k) const {
        return k.fine ? lines / k.second.length : chunks;
    }
    Number counters(const fft_pipeline_kernel& k) const {
        return first_pass_counters(k) + first_done + chunks;
    }
};

/// The pass kernel of a power-of-two line of n elements that a group holds in registers
/// (exchange_rounds > 0: rounds of at most `local_elements`), or nothing where it does not fit.
std::optional<fft_pass_kernel> fft_register_pass(std::size_t n, bool inverse, bool double_precision,
                                                 std::size_t local_elements,
                                                 std::size_t max_work_group_size);

inline constexpr const char* fft_chirp_in_kernel = "kiln_fft_chirp_in";
inline constexpr const char* fft_pointwise_kernel = "kiln_fft_pointwise";
inline constexpr const char* fft_chirp_out_kernel = "kiln_fft_chirp_out";
inline constexpr const char* fft_half_kernel = "kiln_fft_half";
inline constexpr const char* fft_expand_kernel = "kiln_fft_expand";

/// The integer parameters of every FFT kernel: `count` (the work-items that do something; a
/// pass's lines), then a..e (fft_step::values).
inline constexpr const char* fft_index_slots[] = {"count", "a", "b", "c", "d", "e"};

/// The parameters every FFT kernel begins with: `in` (or, `reads_expression`, an input
/// expression's parameters in its place), out, table, the fft_index_slots as element indices
/// (uint, or ulong with `wide_index`) and scale.
kernel_description fft_step_description(const std::string& name, bool double_precision,
                                        bool wide_index, bool reads_expression);
/// A pass kernel's: those, then `data`, its local memory, where fft_pass_local_bytes is not 0.
kernel_description fft_pass_description(const fft_pass_kernel& kernel, bool double_precision,
                                        bool wide_index, bool reads_expression);
/// The kernels of the element-wise FFT program (fft_program_source).
std::vector<kernel_description> fft_step_descriptions(bool double_precision, bool wide_index);

/// The local memory a pass kernel takes in its `data` slot; 0: it takes none.
std::size_t fft_pass_local_bytes(const fft_pass_kernel& kernel, bool double_precision);

/// What one FFT program is written from: its program cache key.
struct fft_program_key {
    bool double_precision = false;
    bool wide_index = false;  ///< ulong element indices (else uint)
    /// Its one kernel: a pass's or a pipeline's key(), or the name of the element-wise kernel
    /// that reads an input expression; empty: every element-wise kernel.
    std::string kernel;
    /// fft_input_expression::key of the expression read in place of `in`; empty: none.
    std::string input;
    std::string key() const;
};

/// The element-wise FFT program for float2 or double2 data, with 32- or 64-bit element indices.
/// Its kernels take fft_step_description's parameters: work-items past `count` return.
std::string fft_program_source(bool double_precision, bool wide_index);

/// A pass's input when it is a vector expression rather than the buffer `in`: OpenCL C that
/// computes the element at `idx` (a ulong in scope) as the plan's complex type, after
/// `statements` (an expression's temporaries).
struct fft_input_text {
    std::vector<std::string> statements;
    std::string value;
};
/// Declares an input expression's kernel parameters (where `in` would be) and returns its text.
using fft_input_writer = std::function<fft_input_text(source_builder&)>;

/// A program of fft_chirp_in_kernel alone, reading `input` instead of `in` (the first step of a
/// Bluestein plan given an expression).
std::string fft_chirp_in_source(bool double_precision, bool wide_index,
                                const fft_input_writer& input);

/// A program of fft_expand_kernel alone, reading `input` instead of `in` (irfft of an expression).
std::string fft_expand_source(bool double_precision, bool wide_index,
                              const fft_input_writer& input);

/// A program of pass kernels (fft_pass_description's parameters). With `input`, they read the input
/// expression instead of `in` (the first pass of a plan given an expression).
std::string fft_pass_source(const std::vector<fft_pass_kernel>& kernels, bool double_precision,
                            bool wide_index, const fft_input_writer* input = nullptr);

/// The parameters of an fft_pipeline_kernel: a pass kernel's for the first pass (out is the
/// second pass's target), then `ring` (ring_elements), `control` (fft_pipeline_control's
/// counters, zero before the launch), the second pass's b2, c2, e2 and scale2, and `chunks`.
kernel_description fft_pipeline_description(const fft_pipeline_kernel& kernel,
                                            bool double_precision, bool wide_index,
                                            bool reads_expression);
/// A program of one fft_pipeline_kernel. With `input`, the first pass reads the expression.
std::string fft_pipeline_source(const fft_pipeline_kernel& kernel, bool double_precision,
                                bool wide_index, const fft_input_writer* input = nullptr);
/// Its local memory: the larger of its passes'.
std::size_t fft_pipeline_local_bytes(const fft_pipeline_kernel& kernel, bool double_precision);

}  // namespace kiln::detail
#pragma GCC visibility pop
