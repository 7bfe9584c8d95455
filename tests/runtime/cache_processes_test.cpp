// SPDX-License-Identifier: Apache-2.0
// Processes sharing one compile cache directory: several build the same programs into it at
// once, round after round, each round in an emptied directory so that they race to make the
// signing key too. "A cache entry is a miss, never a crash" holds for concurrent processes: each
// must build and run every program and find every entry it reads whole (cache_builder.cpp).
// Each has a PoCL cache of its own: processes compiling into one PoCL cache at once is PoCL's
// race (pocl issue 1480, docs/runtime.md), not kiln's.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "support/hang_guard.hpp"
#include "test_helpers.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

// 4 processes on the CI machine's 2 cores, so that builds, writes and reads overlap: 3 rounds of
// 3 programs took 3.3 CPU-seconds with the processes' PoCL caches warm, 10.6 cold (PoCL 3.1).
constexpr int processes = 4, rounds = 3, programs = 3;

/// This process's environment with the two cache folders set, and PoCL's cache on (with it off,
/// kiln compiles rather than loading entries: docs/runtime.md).
std::vector<std::string> environment_with(const fs::path& cache, const fs::path& pocl_cache) {
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string text = *entry;
        if (!text.starts_with("KILN_CACHE_DIR=") && !text.starts_with("POCL_CACHE_DIR=") &&
            !text.starts_with("POCL_KERNEL_CACHE="))
            env.push_back(text);
    }
    env.push_back("KILN_CACHE_DIR=" + cache.string());
    env.push_back("POCL_CACHE_DIR=" + pocl_cache.string());
    return env;
}

std::vector<char*> pointers_to(std::vector<std::string>& texts) {
    std::vector<char*> pointers;
    for (auto& text : texts) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    return pointers;
}

pid_t spawn(std::vector<std::string> args, std::vector<std::string> env) {
    pid_t child = -1;
    const int error = posix_spawn(&child, args[0].c_str(), nullptr, nullptr,
                                  pointers_to(args).data(), pointers_to(env).data());
    EXPECT_EQ(error, 0) << "posix_spawn " << args[0] << ": " << std::strerror(error);
    return error == 0 ? child : -1;
}

std::string outcome(int status) {
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
    return "status " + std::to_string(status);
}

TEST(cache_processes, building_the_same_programs_into_one_directory_at_once) {
    const kiln::test::hang_guard guard(std::chrono::seconds(240));
    const kiln::test::temp_dir dir;
    const fs::path cache = dir.path() / "cache";
    // PoCL's caches persist beside the test's own, so that PoCL's first build into an empty
    // cache (half a second) is paid once per build tree, not once per process and run.
    const char* pocl_base = std::getenv("POCL_CACHE_DIR");
    const fs::path pocl_caches = pocl_base && *pocl_base ? fs::path(pocl_base) : dir.path();
    for (int round = 0; round < rounds; ++round) {
        fs::remove_all(cache);
        const std::string token = kiln::test::unique_token();
        std::vector<pid_t> children;
        for (int p = 0; p < processes; ++p)
            children.push_back(
                spawn({KILN_CACHE_BUILDER, token, std::to_string(programs)},
                      environment_with(cache, pocl_caches / ("process-" + std::to_string(p)))));
        for (std::size_t p = 0; p < children.size(); ++p) {
            int status = 0;
            if (children[p] < 0) continue;
            ASSERT_EQ(waitpid(children[p], &status, 0), children[p]);
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
                << "round " << round << ", process " << p << ": " << outcome(status);
        }
        // One entry per program, whoever wrote it last, and no temporary file left behind.
        int entries = 0, others = 0;
        for (const auto& file : fs::directory_iterator(cache)) {
            const std::string name = file.path().filename().string();
            if (file.path().extension() == ".kbin")
                ++entries;
            else if (!name.starts_with("signing-key-"))
                ++others;
        }
        EXPECT_EQ(entries, programs) << "round " << round;
        EXPECT_EQ(others, 0) << "round " << round << ": files left beside the entries";
    }
}

}  // namespace
