// The data every algorithm benchmark uses, the same in algo_bench and the CUB reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace algo_data {

/// Values of the scan: small, so that int32 sums of 2^28 of them stay in range.
inline std::int32_t scan_value(std::size_t i) {
    return static_cast<std::int32_t>(i % 7) - 3;
}
/// Keys in runs of 8, and their values.
inline std::int32_t run_key(std::size_t i) {
    return static_cast<std::int32_t>(i / 8);
}
inline std::int32_t run_value(std::size_t i) {
    return static_cast<std::int32_t>(i % 5);
}
/// Hashed values; the even ones (half of them) are kept.
inline std::int32_t select_value(std::size_t i) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(i) * 2654435761u);
}
inline bool kept(std::int32_t v) {
    return (v & 1) == 0;
}

}  // namespace algo_data
