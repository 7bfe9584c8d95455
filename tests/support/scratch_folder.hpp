// SPDX-License-Identifier: Apache-2.0
// A fresh folder for a test's files, removed with all it holds when the test ends, and the
// questions tests of file writers ask of it: what a file holds, which names the folder holds.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

namespace kiln::test {

class scratch_folder {
  public:
    // A new folder in the system's temporary folder, named `prefix` and a random suffix.
    explicit scratch_folder(const std::string& prefix) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        if (mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
        root_ = pattern;
    }
    scratch_folder(const scratch_folder&) = delete;
    scratch_folder& operator=(const scratch_folder&) = delete;
    ~scratch_folder() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }

    const std::filesystem::path& root() const { return root_; }
    std::string path(const std::string& name) const { return (root_ / name).string(); }
    // The names in the folder, hidden ones (temporary files) included.
    std::set<std::string> entries() const {
        std::set<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(root_))
            names.insert(entry.path().filename().string());
        return names;
    }

  private:
    std::filesystem::path root_;
};

// What the file at `path` holds ("" when it cannot be read).
inline std::string file_contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace kiln::test
