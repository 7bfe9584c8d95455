// SPDX-License-Identifier: Apache-2.0
// Helpers for the runtime tests: environment variables, the current directory and temporary
// directories that are restored or removed whatever the test's outcome, and sources that no cache
// has seen.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace kiln::test {

/// Sets (or, with std::nullopt, unsets) an environment variable for the current scope.
class scoped_env {
  public:
    scoped_env(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) previous_ = old;
        if (value)
            ::setenv(name_.c_str(), value->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }
    ~scoped_env() {
        if (previous_)
            ::setenv(name_.c_str(), previous_->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

  private:
    std::string name_;
    std::optional<std::string> previous_;
};

/// Makes `dir` the current directory for the current scope.
class scoped_cwd {
  public:
    explicit scoped_cwd(const std::filesystem::path& dir)
        : previous_(std::filesystem::current_path()) {
        std::filesystem::current_path(dir);
    }
    ~scoped_cwd() {
        std::error_code ignored;
        std::filesystem::current_path(previous_, ignored);
    }
    scoped_cwd(const scoped_cwd&) = delete;
    scoped_cwd& operator=(const scoped_cwd&) = delete;

  private:
    std::filesystem::path previous_;
};

/// A text that differs between calls and between runs, so a program containing it is compiled
/// rather than found in kiln's or the driver's cache.
inline std::string unique_token() {
    static std::atomic<unsigned> counter{0};
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    return std::to_string(::getpid()) + "_" + std::to_string(now) + "_" + std::to_string(counter++);
}

/// A fresh, empty directory under the system's temporary directory, removed on destruction.
class temp_dir {
  public:
    temp_dir() : path_(std::filesystem::temp_directory_path() / ("kiln_test_" + unique_token())) {
        std::filesystem::create_directories(path_);
    }
    ~temp_dir() {
        std::error_code ignored;
        // A test may have made a subdirectory read-only; removal needs write permission back.
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
        for (const auto& entry : std::filesystem::recursive_directory_iterator(path_, ignored))
            if (entry.is_directory(ignored))
                std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_all,
                                             ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace kiln::test
