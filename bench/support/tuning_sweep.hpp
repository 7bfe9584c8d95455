// SPDX-License-Identifier: Apache-2.0
// What the benchmarks that sweep an algorithm's tunings share: the list a KILN_*_BENCH_TUNINGS
// variable names, and the KILN_*_TUNING variable kiln reads at every call, set for one row.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace kiln_bench {

/// The ';'-separated entries of the environment variable `name`, trimmed; none where it is unset.
inline std::vector<std::string> tunings_listed_in(const char* name) {
    std::vector<std::string> tunings;
    const char* listed = std::getenv(name);
    std::stringstream keys(listed != nullptr ? listed : "");
    for (std::string key; std::getline(keys, key, ';');) {
        const std::size_t first = key.find_first_not_of(' ');
        if (first != std::string::npos)
            tunings.push_back(key.substr(first, key.find_last_not_of(' ') + 1 - first));
    }
    return tunings;
}

/// While alive, the environment variable `name` holds `key` (unset where `key` is empty: the
/// plan's own tuning); unset again after.
class forced_tuning {
  public:
    forced_tuning(const char* name, const std::string& key) : name_(name) {
        if (key.empty())
            ::unsetenv(name_);
        else
            ::setenv(name_, key.c_str(), 1);
    }
    ~forced_tuning() { ::unsetenv(name_); }
    forced_tuning(const forced_tuning&) = delete;
    forced_tuning& operator=(const forced_tuning&) = delete;

  private:
    const char* name_;
};

}  // namespace kiln_bench
