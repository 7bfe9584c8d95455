// SPDX-License-Identifier: Apache-2.0
// The data every algorithm benchmark uses, the same in algo_bench and the CUB reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace algo_data {

/// Values of the scans: small, so that int32 sums of 2^28 of them stay in range, and every
/// partial sum is a small whole number, exact in float whatever the order of the additions.
inline std::int32_t scan_value(std::size_t i) {
    return static_cast<std::int32_t>(i % 7) - 3;
}

/// The run lengths of reduce_by_key's rows (issue 24 asks for each).
constexpr std::size_t run_lengths[] = {1, 8, 32, 1024};
/// Keys in runs of `length`, and their values.
inline std::int32_t run_key(std::size_t i, std::size_t length) {
    return static_cast<std::int32_t>(i / length);
}
inline std::int32_t run_value(std::size_t i) {
    return static_cast<std::int32_t>(i % 5);
}

/// The shares of copy_if's rows, in percent of the elements kept.
constexpr int kept_percents[] = {1, 50, 99};
/// Hashed values (multiplicative hashing: spread evenly over the int32 range).
inline std::int32_t select_value(std::size_t i) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(i) * 2654435761u);
}
/// The bound below which `percent` of the hashed values lie.
inline std::int32_t select_bound(int percent) {
    return static_cast<std::int32_t>(INT32_MIN + (std::int64_t{1} << 32) / 100 * percent);
}
/// Half keeps the even values, as the row always has (every other element: the multiplier is
/// odd); the other shares keep the values below their bound.
inline bool kept(std::int32_t v, int percent) {
    return percent == 50 ? (v & 1) == 0 : v < select_bound(percent);
}

/// unique's keys: sorted, in runs of 1 to 15 elements, 8 on average. Key b starts at element
/// 8 b plus a hashed offset below 8, so the runs are irregular as real keys are.
inline std::int32_t unique_key(std::size_t i) {
    const std::size_t block = i / 8;
    const std::uint32_t start = (static_cast<std::uint32_t>(block) * 2654435761u) >> 29;
    return static_cast<std::int32_t>(block) - (i % 8 < start ? 1 : 0);
}

}  // namespace algo_data
