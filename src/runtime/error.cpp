// SPDX-License-Identifier: Apache-2.0
// kiln's exception types and the single function backends report failed calls through.
#include <kiln/error.hpp>
#include <string>

#include "backend/backend.hpp"

namespace kiln {
namespace {

std::string compose(const std::string& call, long long code, const std::string& code_name,
                    const std::string& detail) {
    std::string message = call + " failed: " + code_name;
    if (code != 0) message += " (" + std::to_string(code) + ")";
    if (!detail.empty()) message += ": " + detail;
    return message;
}

std::string human_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 6) {
        value /= 1024.0;
        ++unit;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return std::to_string(bytes) + " bytes (" + text + ")";
}

}  // namespace

error::error(std::string call, long long code, std::string code_name, const std::string& detail,
             std::source_location where)
    : std::runtime_error(compose(call, code, code_name, detail)),
      call_(std::move(call)),
      code_(code),
      code_name_(std::move(code_name)),
      where_(where) {}

build_error::build_error(std::string call, long long code, std::string code_name, std::string log,
                         std::source_location where)
    : error(std::move(call), code, std::move(code_name), "build log follows\n" + log, where),
      log_(std::move(log)) {}

out_of_memory_error::out_of_memory_error(std::string call, long long code, std::string code_name,
                                         std::uint64_t requested_bytes,
                                         std::uint64_t max_allocation_bytes,
                                         std::uint64_t global_memory_bytes,
                                         const std::string& device_name, std::source_location where)
    : error(std::move(call), code, std::move(code_name),
            "cannot allocate " + human_bytes(requested_bytes) + " on " + device_name +
                " (largest single allocation " + human_bytes(max_allocation_bytes) +
                ", global memory " + human_bytes(global_memory_bytes) + ")",
            where),
      requested_(requested_bytes),
      max_allocation_(max_allocation_bytes),
      global_memory_(global_memory_bytes) {}

invalid_argument_error::invalid_argument_error(std::string call, const std::string& detail,
                                               std::source_location where)
    : error(std::move(call), 0, "KILN_INVALID_ARGUMENT", detail, where) {}

namespace detail {

void throw_api_error(const char* call, long long code, const char* code_name,
                     const std::string& detail, std::source_location where) {
    throw error(call, code, code_name, detail, where);
}

}  // namespace detail
}  // namespace kiln
