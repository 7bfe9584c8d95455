// SPDX-License-Identifier: Apache-2.0
// The compile cache: memory and disk hits, damaged entries rebuilt, directories, FIFOs, links
// and oversize files at an entry's path, unwritable and missing directories, concurrent builds,
// KILN_SHOW_KERNELS, and cold versus warm build times. Forged entries and the signing key:
// cache_signing_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <kiln/kiln.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache_fixture.hpp"
#include "support/hang_guard.hpp"

namespace kiln::test::cache {
namespace {

TEST_P(compile_cache, a_second_build_is_a_memory_hit) {
    const auto source = fresh_source(1);
    const auto before = kiln::program_cache::stats();
    kiln::program first(device(), source);
    EXPECT_EQ(first.origin(), kiln::program_origin::compiled);
    EXPECT_GT(first.build_time().count(), 0);
    kiln::program second(device(), source);
    EXPECT_EQ(second.origin(), kiln::program_origin::memory_cache);
    const auto after = kiln::program_cache::stats();
    EXPECT_EQ(after.compiles, before.compiles + 1);
    EXPECT_EQ(after.memory_hits, before.memory_hits + 1);
    EXPECT_EQ(run(second, device()), std::vector<int>(5, 1));

    // Options are part of the key: the same source with other options is another program.
    kiln::program optimised_differently(device(), source, "-cl-opt-disable");
    EXPECT_EQ(optimised_differently.origin(), kiln::program_origin::compiled);
    EXPECT_EQ(entries_in(dir_.path()).size(), 2u);
}

TEST_P(compile_cache, clear_memory_then_build_is_a_disk_hit) {
    const auto source = fresh_source(2);
    kiln::program compiled(device(), source);
    ASSERT_EQ(compiled.origin(), kiln::program_origin::compiled);
    only_entry(dir_.path());
    kiln::program_cache::clear_memory();
    const auto before = kiln::program_cache::stats();
    kiln::program loaded(device(), source);
    EXPECT_EQ(loaded.origin(), kiln::program_origin::disk_cache);
    EXPECT_EQ(kiln::program_cache::stats().disk_hits, before.disk_hits + 1);
    EXPECT_EQ(run(loaded, device()), std::vector<int>(5, 2));
    // Argument checks survive the trip through the disk: the parameter descriptions are stored.
    EXPECT_THROW(loaded.kernel("fill_with")(1.0f, 5u), kiln::invalid_argument_error);
}

/// Whether the device is PoCL's with PoCL's own kernel cache off, which PoCL takes to be any
/// POCL_KERNEL_CACHE not starting with "1" (runtime.cache.pocl_uncached runs these tests so).
bool pocl_kernel_cache_off(const kiln::device& dev) {
    const char* setting = std::getenv("POCL_KERNEL_CACHE");
    return dev.properties().platform.find("Portable Computing Language") != std::string::npos &&
           setting != nullptr && setting[0] != '1';
}

// Two programs of one stored binary each keep working after the other is released. PoCL with
// its own cache off unpacks a loaded binary into the directory the binary names and removes it
// when the program is released: processes loading one kiln entry shared that directory, and one
// pulled its files from under another (mpi.vector.ranks_3 aborted in PoCL). So kiln compiles
// there instead of loading.
TEST_P(compile_cache, a_program_from_disk_outlives_the_program_it_came_from) {
    const auto source = fresh_source(11);
    std::optional<kiln::program> compiled(std::in_place, device(), source);
    ASSERT_EQ(compiled->origin(), kiln::program_origin::compiled);
    kiln::program_cache::clear_memory();
    const auto before = kiln::program_cache::stats();
    kiln::program second(device(), source);
    if (pocl_kernel_cache_off(device())) {
        EXPECT_EQ(second.origin(), kiln::program_origin::compiled);
        EXPECT_EQ(kiln::program_cache::stats().disk_rejected, before.disk_rejected + 1);
    } else {
        EXPECT_EQ(second.origin(), kiln::program_origin::disk_cache);
    }
    EXPECT_EQ(run(*compiled, device()), std::vector<int>(5, 11));
    compiled.reset();
    // Another size, so that PoCL compiles a work-group function for the second program alone.
    kiln::queue q(device());
    kiln::buffer<int> out(q, std::vector<int>(4099, 0));
    EXPECT_EQ(out.read(q, second.kernel("fill_with")(out, 4099u).launch(q, {4099})),
              std::vector<int>(4099, 11));
}

TEST_P(compile_cache, corrupt_entries_are_rebuilt) {
    const auto source = fresh_source(3);
    (void)kiln::program(device(), source);
    const auto entry = only_entry(dir_.path());
    const auto good = read_bytes(entry);
    ASSERT_GT(good.size(), 64u);
    // Damage the magic, the stored key, the middle and the last byte of the binary in turn.
    for (std::size_t at : {std::size_t(0), std::size_t(20), good.size() / 2, good.size() - 1}) {
        SCOPED_TRACE("byte " + std::to_string(at) + " of " + std::to_string(good.size()));
        auto damaged = good;
        damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
        write_bytes(entry, damaged);
        kiln::program_cache::clear_memory();
        const auto before = kiln::program_cache::stats();
        kiln::program rebuilt(device(), source);
        EXPECT_EQ(rebuilt.origin(), kiln::program_origin::compiled);
        EXPECT_EQ(kiln::program_cache::stats().disk_rejected, before.disk_rejected + 1);
        EXPECT_EQ(run(rebuilt, device()), std::vector<int>(5, 3));
        // (Not byte-equal to the first: PoCL's binaries grow once a kernel has been launched.)
        EXPECT_TRUE(read_bytes(entry) != damaged)
            << "the rebuilt entry did not replace the damaged one";
    }
    kiln::program_cache::clear_memory();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::disk_cache);
}

TEST_P(compile_cache, truncated_entries_are_rebuilt) {
    const auto source = fresh_source(4);
    (void)kiln::program(device(), source);
    const auto entry = only_entry(dir_.path());
    const auto good = read_bytes(entry);
    for (std::size_t keep :
         {std::size_t(0), std::size_t(5), std::size_t(40), good.size() / 2, good.size() - 1}) {
        SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(good.size()) +
                     " bytes");
        write_bytes(entry, good.substr(0, keep));
        kiln::program_cache::clear_memory();
        const auto before = kiln::program_cache::stats();
        kiln::program rebuilt(device(), source);
        EXPECT_EQ(rebuilt.origin(), kiln::program_origin::compiled);
        EXPECT_EQ(kiln::program_cache::stats().disk_rejected, before.disk_rejected + 1);
        EXPECT_EQ(run(rebuilt, device()), std::vector<int>(5, 4));
    }
    // Bytes appended after a valid entry are damage too.
    write_bytes(entry, good + "trailing");
    kiln::program_cache::clear_memory();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::compiled);
}

// blocking, and reads it only if fstat says it is a regular file no larger than the entry cap.
TEST_P(compile_cache, a_directory_at_an_entry_is_a_miss) {
    const auto before = kiln::program_cache::stats();
    const auto entry =
        rebuild_over_planted_entry(31, [](const fs::path& at) { fs::create_directory(at); });
    // The directory stays where the entry would go, so the new entry cannot be stored.
    EXPECT_TRUE(fs::is_directory(entry));
    EXPECT_EQ(kiln::program_cache::stats().disk_write_failures, before.disk_write_failures + 1);
}

TEST_P(compile_cache, a_fifo_at_an_entry_is_a_miss) {
    const kiln::test::hang_guard guard(std::chrono::seconds(60));
    const auto entry = rebuild_over_planted_entry(32, [](const fs::path& at) {
        ASSERT_EQ(::mkfifo(at.c_str(), 0600), 0) << std::strerror(errno);
    });
    // The rebuilt entry replaced the FIFO.
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(entry)));
    EXPECT_TRUE(loads_from_disk(32));
}

TEST_P(compile_cache, a_symbolic_link_to_dev_zero_at_an_entry_is_a_miss) {
    const auto entry = rebuild_over_planted_entry(
        33, [](const fs::path& at) { fs::create_symlink("/dev/zero", at); });
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(entry)));
    EXPECT_TRUE(loads_from_disk(33));
}

TEST_P(compile_cache, an_oversize_file_at_an_entry_is_a_miss) {
    // A terabyte, sparse so that it takes no disk: read into memory it would exhaust it. Its
    // size alone (from fstat, over the 64 MiB entry cap) makes it a miss.
    rebuild_over_planted_entry(34, [](const fs::path& at) {
        write_bytes(at, "KILNBIN2");
        fs::resize_file(at, std::uintmax_t(1) << 40);
    });
    EXPECT_TRUE(loads_from_disk(34));
}

TEST_P(compile_cache, an_unwritable_directory_only_disables_the_disk_cache) {
    // Root may write anywhere regardless of permissions, but not beneath a regular file.
    write_bytes(dir_.path() / "a_file", "not a directory");
    std::vector<fs::path> unwritable = {dir_.path() / "a_file" / "cache"};
    if (::geteuid() != 0) {
        fs::create_directory(dir_.path() / "read_only");
        fs::permissions(dir_.path() / "read_only", fs::perms::owner_read | fs::perms::owner_exec);
        unwritable.push_back(dir_.path() / "read_only");
    }
    for (const auto& cache : unwritable) {
        SCOPED_TRACE(cache.string());
        scoped_env env("KILN_CACHE_DIR", cache.string());
        const auto source = fresh_source(5);
        const auto before = kiln::program_cache::stats();
        kiln::program prog(device(), source);
        EXPECT_EQ(prog.origin(), kiln::program_origin::compiled);
        EXPECT_EQ(kiln::program_cache::stats().disk_write_failures, before.disk_write_failures + 1);
        EXPECT_EQ(run(prog, device()), std::vector<int>(5, 5));
        kiln::program_cache::clear_memory();
        EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::compiled);
    }
}

TEST_P(compile_cache, a_missing_directory_is_created) {
    const auto deep = dir_.path() / "not" / "there" / "yet";
    scoped_env env("KILN_CACHE_DIR", deep.string());
    const auto source = fresh_source(6);
    const auto before = kiln::program_cache::stats();
    (void)kiln::program(device(), source);
    EXPECT_EQ(kiln::program_cache::stats().disk_write_failures, before.disk_write_failures);
    only_entry(deep);
    kiln::program_cache::clear_memory();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::disk_cache);
}

TEST_P(compile_cache, an_empty_kiln_cache_dir_turns_the_disk_cache_off) {
    scoped_env env("KILN_CACHE_DIR", "");
    EXPECT_TRUE(kiln::program_cache::directory().empty());
    const auto source = fresh_source(7);
    const auto before = kiln::program_cache::stats();
    (void)kiln::program(device(), source);
    kiln::program_cache::clear_memory();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::compiled);
    EXPECT_EQ(kiln::program_cache::stats().disk_write_failures, before.disk_write_failures);
    EXPECT_TRUE(files_in(dir_.path()).empty());
}

TEST(compile_cache_directory, follows_kiln_cache_dir_then_xdg_then_home) {
    scoped_env cache("KILN_CACHE_DIR", "/somewhere/kiln-cache");
    scoped_env xdg("XDG_CACHE_HOME", "/xdg");
    scoped_env home("HOME", "/home/someone");
    EXPECT_EQ(kiln::program_cache::directory(), fs::path("/somewhere/kiln-cache"));
    {
        scoped_env unset("KILN_CACHE_DIR", std::nullopt);
        EXPECT_EQ(kiln::program_cache::directory(), fs::path("/xdg/kiln"));
        scoped_env no_xdg("XDG_CACHE_HOME", std::nullopt);
        EXPECT_EQ(kiln::program_cache::directory(), fs::path("/home/someone/.cache/kiln"));
        scoped_env no_home("HOME", std::nullopt);
        EXPECT_TRUE(kiln::program_cache::directory().empty());
    }
}

TEST_P(compile_cache, threads_building_the_same_program_at_once) {
    const auto source = fresh_source(8);
    constexpr int threads = 4;
    std::vector<std::vector<int>> results(threads);
    std::vector<std::string> errors(threads);
    std::vector<std::thread> builders;
    const auto before = kiln::program_cache::stats();
    for (int t = 0; t < threads; ++t) {
        builders.emplace_back([&, t] {
            // An exception must not escape a thread: that would end the whole test program.
            try {
                results[t] = run(kiln::program(device(), source), device());
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (auto& b : builders) b.join();
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(errors[t], "") << "thread " << t;
        EXPECT_EQ(results[t], std::vector<int>(5, 8)) << "thread " << t;
    }
    const auto after = kiln::program_cache::stats();
    EXPECT_EQ((after.compiles - before.compiles) + (after.memory_hits - before.memory_hits) +
                  (after.disk_hits - before.disk_hits),
              std::size_t(threads));
    EXPECT_EQ(after.disk_write_failures, before.disk_write_failures);
    // Whoever wrote last, exactly one complete entry is left and no temporary file.
    only_entry(dir_.path());
    kiln::program_cache::clear_memory();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::disk_cache);
}

TEST_P(compile_cache, kiln_show_kernels_prints_each_source_before_compiling) {
    const auto source = fresh_source(9);
    {
        scoped_env show("KILN_SHOW_KERNELS", "1");
        testing::internal::CaptureStderr();
        (void)kiln::program(device(), source, "-DUNUSED_MACRO=1");
        const std::string printed = testing::internal::GetCapturedStderr();
        EXPECT_NE(printed.find(source), std::string::npos) << printed;
        EXPECT_NE(printed.find(device().name()), std::string::npos) << printed;
        EXPECT_NE(printed.find("-DUNUSED_MACRO=1"), std::string::npos) << printed;

        testing::internal::CaptureStderr();
        (void)kiln::program(device(), source, "-DUNUSED_MACRO=1");
        EXPECT_EQ(testing::internal::GetCapturedStderr().find(source), std::string::npos)
            << "a memory hit compiles nothing, so prints nothing";
    }
    for (const char* off : {"0", ""}) {
        scoped_env show("KILN_SHOW_KERNELS", off);
        const auto other = fresh_source(10);
        testing::internal::CaptureStderr();
        (void)kiln::program(device(), other);
        EXPECT_EQ(testing::internal::GetCapturedStderr().find(other), std::string::npos)
            << "KILN_SHOW_KERNELS=" << off;
    }
}

// A kernel of realistic size (a tiled matrix product) so that the times mean something.
std::string timing_source() {
    return "// " + kiln::test::unique_token() + R"(
#define TILE 16
kernel void product(global const float* a, global const float* b, global float* c, uint n) {
    local float a_tile[TILE][TILE], b_tile[TILE][TILE];
    size_t row = get_global_id(1), col = get_global_id(0);
    size_t lr = get_local_id(1), lc = get_local_id(0);
    float sum = 0.0f;
    for (uint t = 0; t < (n + TILE - 1) / TILE; ++t) {
        a_tile[lr][lc] = row < n && t * TILE + lc < n ? a[row * n + t * TILE + lc] : 0.0f;
        b_tile[lr][lc] = col < n && t * TILE + lr < n ? b[(t * TILE + lr) * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k) sum += a_tile[lr][k] * b_tile[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < n && col < n) c[row * n + col] = sum;
}
)";
}

TEST_P(compile_cache, cold_and_warm_build_times) {
    const auto source = timing_source();
    kiln::program cold(device(), source);
    ASSERT_EQ(cold.origin(), kiln::program_origin::compiled);
    kiln::program_cache::clear_memory();
    kiln::program warm(device(), source);
    ASSERT_EQ(warm.origin(), kiln::program_origin::disk_cache);
    kiln::program hot(device(), source);
    ASSERT_EQ(hot.origin(), kiln::program_origin::memory_cache);
    using ms = std::chrono::duration<double, std::milli>;
    const double cold_ms = ms(cold.build_time()).count(), warm_ms = ms(warm.build_time()).count();
    std::cout << "[ timing   ] " << device().name() << ": cold build (compiled) " << cold_ms
              << " ms, warm build (disk cache) " << warm_ms << " ms, memory cache "
              << ms(hot.build_time()).count() << " ms\n";
    RecordProperty("cold_build_ms", std::to_string(cold_ms));
    RecordProperty("warm_build_ms", std::to_string(warm_ms));
    EXPECT_LT(warm.build_time(), cold.build_time())
        << "loading a cached binary should beat compiling";
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(compile_cache);

}  // namespace
}  // namespace kiln::test::cache
