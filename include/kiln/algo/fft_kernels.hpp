// The kernels of kiln::fft, written once through the source builder for every backend.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::detail {

/// The radices that Stockham passes exist for, largest first (the order plans prefer them in).
inline constexpr std::size_t fft_radices[] = {16, 8, 4, 2, 3, 5, 7};

/// "kiln_fft_radix<R>_forward" or "..._inverse".
std::string fft_radix_kernel_name(std::size_t radix, bool inverse);
inline constexpr const char* fft_chirp_in_kernel = "kiln_fft_chirp_in";
inline constexpr const char* fft_pointwise_kernel = "kiln_fft_pointwise";
inline constexpr const char* fft_chirp_out_kernel = "kiln_fft_chirp_out";
inline constexpr const char* fft_half_kernel = "kiln_fft_half";
inline constexpr const char* fft_expand_kernel = "kiln_fft_expand";

/// Every kernel of the FFT program.
std::vector<std::string> fft_kernel_names();

/// The FFT program for float2 or double2 data, with 32- or 64-bit element indices. Every kernel
/// takes (in, out, table, count, a, b, c, d, e, scale): work-items past `count` return, and
/// a..e are the integer parameters of fft_step::values.
std::string fft_program_source(bool double_precision, bool wide_index);

}  // namespace kiln::detail
#pragma GCC visibility pop
