// SPDX-License-Identifier: Apache-2.0
// The measured memory bandwidth of a device model as kept in kiln's cache directory, so that a
// later process weighs split vectors without measuring again (split_weights.cpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kiln::detail {

/// The file that keeps the bandwidth of the device model `model` (detail::device_identity):
/// bandwidth/<hash of the model> in program_cache::directory(); empty when the disk cache is off.
std::filesystem::path bandwidth_file(const std::string& model);

/// The bandwidth in bytes/s kept for `model`, read like a compile-cache entry: nullopt, a miss,
/// unless bandwidth_file(model) is a regular file (a link is not followed, a FIFO is not waited
/// for) of at most 64 KiB holding kiln's format, the model itself and a positive finite number.
std::optional<double> read_measured_bandwidth(const std::string& model);

}  // namespace kiln::detail
