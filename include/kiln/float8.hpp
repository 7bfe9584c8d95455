// SPDX-License-Identifier: Apache-2.0
// kiln::float8_e4m3 and kiln::float8_e5m2 (OCP's 8-bit floating-point formats): host storage
// types of 1 byte whose values convert to and from float explicitly, rounding to nearest even and
// saturating, as NVIDIA's cvt.rn.satfinite does.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/detail/narrow_float.hpp>
#include <kiln/half.hpp>
#include <limits>
#include <type_traits>

namespace kiln {

/// OCP's E4M3 as PyTorch's float8_e4m3fn: 4 exponent bits (bias 7), 3 mantissa bits, no
/// infinities, and one NaN per sign (all other bits ones: 0x7F, 0xFF). Largest finite 448,
/// smallest normal 2^-6, smallest subnormal 2^-9.
///
/// From float: to nearest, ties to even, saturating: finite values beyond 448 and the
/// infinities give ±448, and a NaN gives the NaN of its sign. PyTorch's casts give NaN for
/// overflow instead; kiln saturates as NVIDIA's cvt.rn.satfinite.e4m3x2.f32 and CUDA's
/// __nv_fp8_e4m3 do, and gives the same bits on the host and on every device.
class float8_e4m3
    : public detail::narrow_float<
          float8_e4m3,
          detail::narrow_float_format<8, 4, 3, detail::narrow_encoding::finite_saturating>> {
  public:
    using narrow_float::narrow_float;
};

/// OCP's E5M2: 5 exponent bits (bias 15), 2 mantissa bits, IEEE 754's infinities (0x7C, 0xFC)
/// and NaNs. Largest finite 57344, smallest normal 2^-14, smallest subnormal 2^-16.
///
/// From float: to nearest, ties to even, saturating: finite values beyond 57344 and the
/// infinities give ±57344 (PyTorch's casts give infinity), as cvt.rn.satfinite.e5m2x2.f32 does;
/// a NaN gives the quiet NaN of its sign, 0x7E or 0xFE. Infinity bits made with from_bits()
/// convert to float's infinities.
class float8_e5m2
    : public detail::narrow_float<
          float8_e5m2,
          detail::narrow_float_format<8, 5, 2, detail::narrow_encoding::ieee_saturating>> {
  public:
    using narrow_float::narrow_float;
};

static_assert(sizeof(float8_e4m3) == 1 && std::is_trivially_copyable_v<float8_e4m3>);
static_assert(sizeof(float8_e5m2) == 1 && std::is_trivially_copyable_v<float8_e5m2>);

namespace detail {
template <class T>
inline constexpr bool is_float8_v =
    std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;

/// The storage types that kernels compute with as float: half, bfloat16 and the FP8 types.
template <class T>
inline constexpr bool is_narrow_float_v = is_binary16_v<T> || is_float8_v<T>;
}  // namespace detail
}  // namespace kiln

/// E4M3's limits: 4 significant bits, exponents -6 to 8, subnormals, no infinity. infinity()
/// and signaling_NaN(), which the format lacks, are zero, as for std's types without them.
template <>
struct std::numeric_limits<kiln::float8_e4m3>
    : kiln::detail::narrow_float_limits<kiln::float8_e4m3> {
    ///@{
    /// As std::numeric_limits defines them, for E4M3.
    using float8 = kiln::float8_e4m3;
    static constexpr bool is_iec559 = false;
    static constexpr int digits = 4;
    static constexpr int digits10 = 0;
    static constexpr int max_digits10 = 3;
    static constexpr int min_exponent = -5;
    static constexpr int min_exponent10 = -1;
    static constexpr int max_exponent = 9;
    static constexpr int max_exponent10 = 2;
    static constexpr float8 min() noexcept { return float8::from_bits(0x08); }
    static constexpr float8 max() noexcept { return float8::from_bits(0x7E); }
    static constexpr float8 lowest() noexcept { return float8::from_bits(0xFE); }
    static constexpr float8 epsilon() noexcept { return float8::from_bits(0x20); }
    static constexpr float8 infinity() noexcept { return float8::from_bits(0x00); }
    static constexpr float8 quiet_NaN() noexcept { return float8::from_bits(0x7F); }
    static constexpr float8 signaling_NaN() noexcept { return float8::from_bits(0x00); }
    static constexpr float8 denorm_min() noexcept { return float8::from_bits(0x01); }
    ///@}
};

/// E5M2's limits: 3 significant bits, exponents -14 to 15, subnormals, infinities. It follows
/// IEEE 754's encodings but is not one of its interchange formats: not is_iec559.
template <>
struct std::numeric_limits<kiln::float8_e5m2>
    : kiln::detail::narrow_float_limits<kiln::float8_e5m2> {
    ///@{
    /// As std::numeric_limits defines them, for E5M2.
    using float8 = kiln::float8_e5m2;
    static constexpr bool is_iec559 = false;
    static constexpr int digits = 3;
    static constexpr int digits10 = 0;
    static constexpr int max_digits10 = 2;
    static constexpr int min_exponent = -13;
    static constexpr int min_exponent10 = -4;
    static constexpr int max_exponent = 16;
    static constexpr int max_exponent10 = 4;
    static constexpr float8 min() noexcept { return float8::from_bits(0x04); }
    static constexpr float8 max() noexcept { return float8::from_bits(0x7B); }
    static constexpr float8 lowest() noexcept { return float8::from_bits(0xFB); }
    static constexpr float8 epsilon() noexcept { return float8::from_bits(0x34); }
    static constexpr float8 infinity() noexcept { return float8::from_bits(0x7C); }
    static constexpr float8 quiet_NaN() noexcept { return float8::from_bits(0x7E); }
    static constexpr float8 signaling_NaN() noexcept { return float8::from_bits(0x7D); }
    static constexpr float8 denorm_min() noexcept { return float8::from_bits(0x01); }
    ///@}
};
#pragma GCC visibility pop
