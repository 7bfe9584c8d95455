// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 and Threefry2x64-20 on the host and as OpenCL C, and their conversions to floats.
//
// Constants from Salmon et al., SC'11, and the Skein 1.3 specification (Threefish rotations and
// key-schedule parity); checked against Random123's known-answer vectors in tests/expr.
#include <cmath>
#include <kiln/random.hpp>

namespace kiln {
namespace {

constexpr std::uint32_t philox_multiplier0 = 0xD2511F53u;
constexpr std::uint32_t philox_multiplier1 = 0xCD9E8D57u;
constexpr std::uint32_t philox_weyl0 = 0x9E3779B9u;  // golden ratio
constexpr std::uint32_t philox_weyl1 = 0xBB67AE85u;  // sqrt(3) - 1

constexpr std::uint64_t threefry_parity = 0x1BD11BDAA9FC1A22ull;
constexpr unsigned threefry_rotations[8] = {16, 42, 12, 31, 16, 32, 24, 21};

// The device text mirrors the host functions below line for line; keep them in step.
constexpr std::string_view philox_source = R"(void kiln_philox4x32_10(uint* c, uint k0, uint k1) {
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const ulong p0 = (ulong)0xD2511F53u * c[0];
        const ulong p1 = (ulong)0xCD9E8D57u * c[2];
        const uint x0 = (uint)(p1 >> 32) ^ c[1] ^ k0;
        const uint x2 = (uint)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint)p1;
        c[3] = (uint)p0;
        c[0] = x0;
        c[2] = x2;
    }
}

void kiln_random_words_philox(ulong index, ulong seed, uint* w) {
    w[0] = (uint)index;
    w[1] = (uint)(index >> 32);
    w[2] = 0;
    w[3] = 0;
    kiln_philox4x32_10(w, (uint)seed, (uint)(seed >> 32));
}
)";

constexpr std::string_view threefry_source = R"(ulong kiln_rotate_left64(ulong x, uint bits) {
    return (x << bits) | (x >> (64 - bits));
}

void kiln_threefry2x64_20(ulong* x, ulong k0, ulong k1) {
    const ulong keys[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAA9FC1A22UL};
    const uint rotations[8] = {16, 42, 12, 31, 16, 32, 24, 21};
    x[0] += k0;
    x[1] += k1;
    for (uint round = 0; round < 20; ++round) {
        x[0] += x[1];
        x[1] = kiln_rotate_left64(x[1], rotations[round % 8]);
        x[1] ^= x[0];
        if (round % 4 == 3) {
            const uint injection = round / 4 + 1;
            x[0] += keys[injection % 3];
            x[1] += keys[(injection + 1) % 3] + injection;
        }
    }
}

void kiln_random_words_threefry(ulong index, ulong seed, uint* w) {
    ulong x[2] = {index, 0};
    kiln_threefry2x64_20(x, seed, 0);
    w[0] = (uint)x[0];
    w[1] = (uint)(x[0] >> 32);
    w[2] = (uint)x[1];
    w[3] = (uint)(x[1] >> 32);
}
)";

std::uint64_t rotate_left(std::uint64_t x, unsigned bits) {
    return (x << bits) | (x >> (64 - bits));
}

constexpr float two_to_minus_24 = 0x1p-24f;
constexpr double two_to_minus_53 = 0x1p-53;

}  // namespace

philox::counter_type philox::apply(counter_type c, key_type key) noexcept {
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            key[0] += philox_weyl0;
            key[1] += philox_weyl1;
        }
        const std::uint64_t p0 = std::uint64_t{philox_multiplier0} * c[0];
        const std::uint64_t p1 = std::uint64_t{philox_multiplier1} * c[2];
        c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<std::uint32_t>(p1),
             static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    }
    return c;
}

std::string_view philox::device_source() noexcept {
    return philox_source;
}

std::array<std::uint32_t, 4> philox::words(std::uint64_t index, std::uint64_t seed) noexcept {
    return apply({static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 0, 0},
                 {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

threefry::counter_type threefry::apply(counter_type x, key_type key) noexcept {
    const std::uint64_t keys[3] = {key[0], key[1], key[0] ^ key[1] ^ threefry_parity};
    x[0] += key[0];
    x[1] += key[1];
    for (unsigned round = 0; round < 20; ++round) {
        x[0] += x[1];
        x[1] = rotate_left(x[1], threefry_rotations[round % 8]);
        x[1] ^= x[0];
        if (round % 4 == 3) {
            const unsigned injection = round / 4 + 1;
            x[0] += keys[injection % 3];
            x[1] += keys[(injection + 1) % 3] + injection;
        }
    }
    return x;
}

std::string_view threefry::device_source() noexcept {
    return threefry_source;
}

std::array<std::uint32_t, 4> threefry::words(std::uint64_t index, std::uint64_t seed) noexcept {
    const auto x = apply({index, 0}, {seed, 0});
    return {static_cast<std::uint32_t>(x[0]), static_cast<std::uint32_t>(x[0] >> 32),
            static_cast<std::uint32_t>(x[1]), static_cast<std::uint32_t>(x[1] >> 32)};
}

namespace detail {

std::string random_function_source(std::string_view function, std::string_view generator,
                                   std::string_view type, distribution kind) {
    const std::string t(type);
    const bool is_double = type == "double";
    std::string body = t + " " + std::string(function) +
                       "(ulong index, ulong seed) {\n    uint w[4];\n" + "    kiln_random_words_" +
                       std::string(generator) + "(index, seed, w);\n";
    // 2^-24 and 2^-53, written so that every compiler reads the exact power of two.
    const std::string scale = is_double ? "1.1102230246251565e-16" : "5.9604644775390625e-8f";
    const std::string low = is_double ? "((((ulong)w[1] << 32) | w[0]) >> 11)" : "(w[0] >> 8)";
    if (kind == distribution::uniform) {
        body += "    return (" + t + ")" + low + " * " + scale + ";\n";
    } else {
        const std::string high = is_double ? "((((ulong)w[3] << 32) | w[2]) >> 11)" : "(w[1] >> 8)";
        const std::string two = is_double ? "2.0" : "2.0f";
        const std::string two_pi = is_double ? "6.283185307179586" : "6.2831853f";
        // u1 in (0, 1] so that log(u1) is finite; u2 in [0, 1).
        body += "    const " + t + " u1 = (" + t + ")(" + low + " + 1) * " + scale + ";\n";
        body += "    const " + t + " u2 = (" + t + ")" + high + " * " + scale + ";\n";
        body += "    return sqrt(-" + two + " * log(u1)) * cos(" + two_pi + " * u2);\n";
    }
    return body + "}\n";
}

template <std::floating_point T>
T random_from_words(const std::array<std::uint32_t, 4>& w, distribution kind) {
    constexpr bool is_double = std::is_same_v<T, double>;
    const T scale = is_double ? T(two_to_minus_53) : T(two_to_minus_24);
    const std::uint64_t low = is_double ? ((std::uint64_t{w[1]} << 32) | w[0]) >> 11 : w[0] >> 8;
    if (kind == distribution::uniform) return static_cast<T>(low) * scale;
    const std::uint64_t high = is_double ? ((std::uint64_t{w[3]} << 32) | w[2]) >> 11 : w[1] >> 8;
    const T two_pi = is_double ? T(6.283185307179586) : T(6.2831853f);
    const T u1 = static_cast<T>(low + 1) * scale;
    const T u2 = static_cast<T>(high) * scale;
    return std::sqrt(T(-2) * std::log(u1)) * std::cos(two_pi * u2);
}

template float random_from_words<float>(const std::array<std::uint32_t, 4>&, distribution);
template double random_from_words<double>(const std::array<std::uint32_t, 4>&, distribution);

}  // namespace detail
}  // namespace kiln
