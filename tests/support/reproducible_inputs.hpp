// SPDX-License-Identifier: Apache-2.0
// The fixed inputs of the reproducible mode's golden-bits tests (docs/reproducibility.md): the
// same values on every machine (drawn from splitmix64 and assembled from their bits, never
// through a library's distributions), and the bits each operation must give on them, on every
// device, split and rank count. tests/algo/reproducible_test.cpp and tests/mpi share them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::test {

/// splitmix64: a replayable stream of 64-bit words.
class word_stream {
  public:
    explicit word_stream(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

  private:
    std::uint64_t state_;
};

/// n values of random sign and mantissa whose binary exponents lie in [low, high].
template <class T>
std::vector<T> spread_values(std::size_t n, int low, int high, std::uint64_t seed) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    using bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
    constexpr int mantissa_bits = std::is_same_v<T, float> ? 23 : 52;
    constexpr int bias = std::is_same_v<T, float> ? 127 : 1023;
    word_stream words(seed);
    std::vector<T> values(n);
    for (auto& v : values) {
        const std::uint64_t w = words.next();
        const auto exponent =
            static_cast<bits>(low + static_cast<int>(w % (high - low + 1)) + bias);
        const auto mantissa = static_cast<bits>((w >> 11) & ((bits(1) << mantissa_bits) - 1));
        const auto sign = static_cast<bits>((w >> 63) & 1);
        v = std::bit_cast<T>(static_cast<bits>((sign << (sizeof(bits) * 8 - 1)) |
                                               (exponent << mantissa_bits) | mantissa));
    }
    return values;
}

/// Values that cancel: pairs v, -v of a wide range in shuffled places, and small values, so
/// that the sum is far below the largest element.
template <class T>
std::vector<T> cancelling_values(std::size_t pairs, std::uint64_t seed) {
    std::vector<T> values = spread_values<T>(pairs, -20, 20, seed);
    const std::vector<T> small = spread_values<T>(pairs, -40, -30, seed + 1);
    values.reserve(3 * pairs);
    for (std::size_t i = 0; i < pairs; ++i) values.push_back(-values[i]);
    values.insert(values.end(), small.begin(), small.end());
    word_stream words(seed + 2);
    for (std::size_t i = values.size() - 1; i > 0; --i)
        std::swap(values[i], values[words.next() % (i + 1)]);
    return values;
}

/// The elements of the golden inputs: enough for many work-groups on any device, and not a
/// multiple of any group size.
inline constexpr std::size_t golden_size = 300007;

/// The bits of a result, as hexadecimal text (what the golden table holds).
template <class T>
std::string hex_bits(T value) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    char text[24];
    std::snprintf(text, sizeof text, sizeof(T) == 4 ? "%08llx" : "%016llx",
                  static_cast<unsigned long long>(std::bit_cast<bits>(value)));
    return text;
}

/// A vector result's bits, digested (FNV-1a over each element's bits) into hexadecimal text.
template <class T>
std::string digest_bits(const std::vector<T>& values) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    std::uint64_t digest = 14695981039346656037ull;
    for (const T& value : values) {
        const auto word = std::bit_cast<bits>(value);
        for (std::size_t byte = 0; byte < sizeof word; ++byte) {
            digest ^= (word >> (8 * byte)) & 0xff;
            digest *= 1099511628211ull;
        }
    }
    return hex_bits(digest);
}

}  // namespace kiln::test

namespace kiln::test {

/// The golden inputs, by name: each a vector of floats or doubles (products take two).
struct golden_inputs {
    std::vector<float> uniform = spread_values<float>(golden_size, -8, 0, 1);
    std::vector<float> wide = spread_values<float>(golden_size, -100, 100, 2);
    std::vector<float> cancelling = cancelling_values<float>(golden_size / 3, 3);
    std::vector<float> factors = spread_values<float>(golden_size, -8, 0, 4);
    std::vector<double> uniform_double = spread_values<double>(golden_size, -8, 0, 5);
    std::vector<double> wide_double = spread_values<double>(golden_size, -600, 600, 6);
    std::vector<double> cancelling_double = cancelling_values<double>(golden_size / 3, 7);
    std::vector<double> factors_double = spread_values<double>(golden_size, -8, 0, 8);
};

/// Offsets of segments over the golden inputs: lengths of 0 to 999 elements drawn from the
/// words (empty ones among them), one of 60000 elements, the last ending at golden_size.
inline std::vector<std::uint32_t> golden_offsets() {
    word_stream words(9);
    std::vector<std::uint32_t> offsets{0};
    while (offsets.back() < golden_size) {
        const std::uint64_t length = offsets.size() == 100 ? 60000 : words.next() % 1000;
        offsets.push_back(static_cast<std::uint32_t>(
            std::min<std::uint64_t>(golden_size, offsets.back() + length)));
    }
    return offsets;
}

/// Keys whose runs are golden_offsets' non-empty segments: each element's segment.
inline std::vector<std::uint32_t> golden_keys() {
    const std::vector<std::uint32_t> offsets = golden_offsets();
    std::vector<std::uint32_t> keys;
    for (std::uint32_t s = 0; s + 1 < offsets.size(); ++s)
        keys.insert(keys.end(), offsets[s + 1] - offsets[s], s);
    return keys;
}

/// What each operation gives on the golden inputs in reproducible mode, on every device, split
/// and rank count: the result's bits (a scan's digested).
struct golden_result {
    const char* operation;
    const char* bits;
};
inline constexpr golden_result golden_results[] = {
    {"sum(uniform)", "c401e3e1"},
    {"sum(wide)", "f5566851"},
    {"sum(cancelling)", "32d7de66"},
    {"sum(uniform * factors)", "c31dcc0b"},
    {"sum(3 * uniform - factors * factors)", "c7ce493d"},
    {"minimum(wide)", "f1ffcc90"},
    {"maximum(wide)", "71ff7fe8"},
    {"sum(uniform_double)", "404586341b91599c"},
    {"sum(wide_double)", "6599f2ac48d84dbe"},
    {"sum(cancelling_double)", "be8a17148e000000"},
    {"sum(uniform_double * factors_double)", "c0545958a4bfb6f8"},
    {"minimum(wide_double)", "e57fd5fabd91bd61"},
    {"maximum(wide_double)", "657fef60cc6c6ff3"},
    // Scans: digest_bits of the whole output.
    {"inclusive_scan(wide)", "1690d198d4ff9fda"},
    {"exclusive_scan(cancelling, 0.5)", "aee6be60ea7ccd2e"},
    {"inclusive_scan(uniform * factors)", "070da3cc5f981668"},
    {"inclusive_scan(wide_double)", "38a01686e3b83e4d"},
    {"exclusive_scan(cancelling_double, -0.25)", "1e155ec58cf66614"},
    // Runs of golden_keys and segments of golden_offsets: digest_bits of the runs' sums, the
    // segments' sums and the segments' prefixes.
    {"reduce_by_key(golden keys, wide)", "f109d3e7849c9abf"},
    {"reduce_by_key(golden keys, wide_double)", "8deff2aa9935adf3"},
    {"segmented_reduce(wide)", "7279af8679bfd59f"},
    {"segmented_inclusive_scan(wide)", "47c67e55acee8a32"},
    {"segmented_inclusive_scan(wide_double)", "089553a9c685e7e4"},
    // The sparse product of tests/algo/reproducible_test.cpp's golden_matrix, digested.
    {"A * x", "d6da9d3e42a0dd8b"},
    // tests/algo/reproducible_test.cpp's conjugate gradient solve: u after 40 steps, digested.
    {"cg(poisson 24, 40 iterations)", "9e6940d24ba48327"},
};

/// The golden bits of `operation` (empty where the table has none).
inline std::string golden_bits(const std::string& operation) {
    for (const auto& r : golden_results)
        if (operation == r.operation) return r.bits;
    return {};
}

}  // namespace kiln::test
