// SPDX-License-Identifier: Apache-2.0
// The compile cache tests' fixture (runtime.cache, runtime.cache_signing): a private cache
// directory per test, programs no cache has seen, and the entries and key files they leave.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <kiln/kiln.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/entry_signing.hpp"
#include "support/device_param.hpp"
#include "test_helpers.hpp"

namespace kiln::test::cache {

namespace fs = std::filesystem;

class compile_cache : public kiln::test::device_test {
  protected:
    // Every test gets its own cache directory, so the entries it finds there are its own.
    temp_dir dir_;
    scoped_env cache_dir_{"KILN_CACHE_DIR", dir_.path().string()};
    scoped_env quiet_{"KILN_SHOW_KERNELS", std::nullopt};

    /// Builds a fresh program, puts what `plant` makes at its entry's path, and builds the
    /// program again: whatever sits there must be a miss counted as a rejected entry, never an
    /// exception, a hang or a read of more than the entry cap. Returns the entry's path.
    fs::path rebuild_over_planted_entry(int value,
                                        const std::function<void(const fs::path&)>& plant);
    /// Whether the program of fresh_source(value) last built comes from the disk cache now.
    bool loads_from_disk(int value) const {
        kiln::program_cache::clear_memory();
        return kiln::program(device(), sources_.at(value)).origin() ==
               kiln::program_origin::disk_cache;
    }

  private:
    std::map<int, std::string> sources_;
};

/// A small program that no cache has seen; its kernel writes `value` everywhere.
inline std::string fresh_source(int value) {
    return "// " + kiln::test::unique_token() +
           "\n"
           "kernel void fill_with(global int* out, uint n) {\n"
           "    size_t i = get_global_id(0);\n"
           "    if (i < n) out[i] = " +
           std::to_string(value) +
           ";\n"
           "}\n";
}

/// Runs the program's kernel, proving that a program restored from anywhere works.
inline std::vector<int> run(const kiln::program& prog, const kiln::device& dev) {
    kiln::queue q(dev);
    kiln::buffer<int> out(q, std::vector<int>(5, 0));
    return out.read(q, prog.kernel("fill_with")(out, 5u).launch(q, {5}));
}

inline std::vector<fs::path> files_in(const fs::path& dir) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) found.push_back(entry.path());
    return found;
}

/// The compile-cache entries in `dir` (beside them lies the signing key's file).
inline std::vector<fs::path> entries_in(const fs::path& dir) {
    std::vector<fs::path> entries;
    for (const auto& file : files_in(dir))
        if (file.extension() == ".kbin") entries.push_back(file);
    return entries;
}

/// The one entry the test's directory should hold, beside the signing key and nothing else.
inline fs::path only_entry(const fs::path& dir) {
    auto entries = entries_in(dir);
    EXPECT_EQ(entries.size(), 1u);
    EXPECT_EQ(files_in(dir).size(), 2u);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(kiln::detail::signing_key_file(dir))));
    if (entries.empty()) return {};
    return entries.front();
}

inline std::string read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline fs::path compile_cache::rebuild_over_planted_entry(
    int value, const std::function<void(const fs::path&)>& plant) {
    const auto source = sources_[value] = fresh_source(value);
    (void)kiln::program(device(), source);
    const auto entry = only_entry(dir_.path());
    fs::remove(entry);
    plant(entry);
    kiln::program_cache::clear_memory();
    const auto before = kiln::program_cache::stats();
    kiln::program rebuilt(device(), source);
    const auto after = kiln::program_cache::stats();
    EXPECT_EQ(rebuilt.origin(), kiln::program_origin::compiled);
    EXPECT_EQ(after.compiles, before.compiles + 1);
    EXPECT_EQ(after.disk_rejected, before.disk_rejected + 1);
    EXPECT_EQ(run(rebuilt, device()), std::vector<int>(5, value));
    return entry;
}

/// Builds `source` again after clear_memory: it must be compiled, with the entry found refused.
inline void expect_rebuilt(const kiln::device& dev, const std::string& source, int value) {
    kiln::program_cache::clear_memory();
    const auto before = kiln::program_cache::stats();
    kiln::program rebuilt(dev, source);
    EXPECT_EQ(rebuilt.origin(), kiln::program_origin::compiled);
    EXPECT_EQ(kiln::program_cache::stats().disk_rejected, before.disk_rejected + 1);
    EXPECT_EQ(run(rebuilt, dev), std::vector<int>(5, value));
}

inline bool loaded_from_disk(const kiln::device& dev, const std::string& source) {
    kiln::program_cache::clear_memory();
    return kiln::program(dev, source).origin() == kiln::program_origin::disk_cache;
}

}  // namespace kiln::test::cache
