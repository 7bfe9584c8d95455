// SPDX-License-Identifier: Apache-2.0
// Tests of a binary world's file moved by rows at computed offsets: the layout read from a
// header, rows read as step_world_mpi's ranks read them (any split gives read_world's world, or
// its first error), and the direct writer (write_world's bytes, replaced whole or not at all).
#include "world_arrays.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "step_command.hpp"
#include "support/scratch_folder.hpp"
#include "test_worlds.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace kiln::heat {
namespace {

class world_arrays : public ::testing::Test {
  protected:
    std::string path(const std::string& name) const { return folder_.path(name); }
    std::string file_of(const std::string& name, const std::string& bytes) const {
        std::ofstream(path(name), std::ios::binary) << bytes;
        return path(name);
    }
    std::set<std::string> folder_entries() const { return folder_.entries(); }

    kiln::test::scratch_folder folder_{"kiln-world-arrays"};
};

std::string contents(const std::string& path) {
    return kiln::test::file_contents(path);
}

// An open file, closed when it goes.
class opened {
  public:
    explicit opened(const std::string& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        EXPECT_GE(fd_, 0) << path << ": " << std::strerror(errno);
    }
    ~opened() { close(fd_); }
    int fd() const { return fd_; }

  private:
    int fd_;
};

// What read_world says of the file, or "" for a good world.
std::string read_world_error(const std::string& path) {
    const opened file(path);
    try {
        (void)read_world(file.fd(), "the file");
    } catch (const world_format_error& e) {
        return e.what();
    }
    return {};
}

// The world's rows read as step_world_mpi's ranks read them: the file's layout, then each part
// of `row_starts` (its rows only) by itself, then the first error of all parts in the file's
// order, as the ranks agree on it. Returns the error, or "" and the rows in `w`.
std::string read_in_parts(const std::string& path, const std::vector<std::uint32_t>& row_starts,
                          world& w) {
    const opened file(path);
    const std::optional<binary_world_layout> layout = read_binary_layout(file.fd(), "the file");
    EXPECT_TRUE(layout);
    if (!layout) return "no layout";
    w.width = layout->width;
    w.height = layout->height;
    w.alpha = layout->alpha;
    w.flags.assign(w.cell_count(), 0);
    w.temperatures.assign(w.cell_count(), 0.0f);
    std::optional<world_format_error> first_error;
    for (std::size_t part = 0; part + 1 < row_starts.size(); ++part) {
        const std::size_t first = std::size_t{row_starts[part]} * w.width;
        const std::size_t count = std::size_t{row_starts[part + 1]} * w.width - first;
        const auto array = [&](std::uint64_t offset) {
            return array_in_file{.fd = file.fd(),
                                 .shown = "the file",
                                 .file_offset = offset,
                                 .input_offset = offset,
                                 .cells = w.cell_count(),
                                 .width = w.width};
        };
        try {
            read_cells(array(layout->flags_offset), first,
                       std::span(w.flags).subspan(first, count));
            read_cells(array(layout->temperatures_offset), first,
                       std::span(w.temperatures).subspan(first, count));
        } catch (const world_format_error& e) {
            if (!first_error || e.position() < first_error->position()) first_error = e;
        }
    }
    return first_error ? first_error->what() : "";
}

TEST_F(world_arrays, the_layout_of_a_written_world_is_written_layout) {
    const world w = testing::random_world({.width = 37, .height = 11}, 3);
    const std::string file = file_of("w.bin", world_to_string(w, world_format::binary));
    const opened opened_file(file);
    const std::optional<binary_world_layout> layout =
        read_binary_layout(opened_file.fd(), "the file");
    ASSERT_TRUE(layout);
    const binary_world_layout written = written_layout(w.width, w.height, w.alpha);
    EXPECT_EQ(layout->width, 37u);
    EXPECT_EQ(layout->height, 11u);
    EXPECT_EQ(layout->alpha, w.alpha);
    EXPECT_EQ(layout->flags_offset, written.flags_offset);
    EXPECT_EQ(layout->temperatures_offset, written.temperatures_offset);
    EXPECT_EQ(written_size(written), std::filesystem::file_size(file));
}

// Whitespace where the reader takes it (before the header's tokens, around 'End') keeps the
// layout; anything else, text worlds and files that are not regular included, is left to
// read_world, which reads it whole and says what is wrong; a bad header is read_world's error.
TEST_F(world_arrays, only_files_laid_out_as_written_have_a_layout) {
    const std::string bytes = world_to_string(make_test_world(9, 0.3f), world_format::binary);
    const std::size_t flags_end = written_layout(9, 9, 0.3f).temperatures_offset - 1;
    const std::string head = "HPCEHeatWorldV0Binary\n9 9 0.3\n-";
    const std::string spaced_head = " HPCEHeatWorldV0Binary\r\n 9\t9 0.3 \n -";
    struct case_ {
        std::string name, bytes;
        bool laid_out;
    };
    const std::vector<case_> cases = {
        {"spaced_header", spaced_head + bytes.substr(head.size()), true},
        {"spaced_end", bytes.substr(0, bytes.size() - 4) + " \n End \r\n\n", true},
        {"text", world_to_string(make_test_world(9, 0.3f), world_format::text), false},
        {"space_before_middle", bytes.substr(0, flags_end) + " " + bytes.substr(flags_end), false},
        {"no_middle", bytes.substr(0, flags_end) + "+" + bytes.substr(flags_end + 1), false},
        {"short", bytes.substr(0, bytes.size() - 40), false},
        {"no_end", bytes.substr(0, bytes.size() - 4), false},
        {"after_end", bytes + "x\n", false},
        {"long_tail", bytes + std::string(100, ' '), false},
    };
    for (const case_& c : cases) {
        const std::string file = file_of(c.name, c.bytes);
        const opened opened_file(file);
        const std::optional<binary_world_layout> layout =
            read_binary_layout(opened_file.fd(), "the file");
        EXPECT_EQ(layout.has_value(), c.laid_out) << c.name;
        if (c.laid_out) {
            world w;
            EXPECT_EQ(read_in_parts(file, {0, 4, 9}, w), "") << c.name;
            EXPECT_EQ(w, read_world(c.bytes)) << c.name;
        }
    }
    const std::string bad_header = file_of("bad_header", "HPCEHeatWorldV0Binary\n9 x 0.3\n-");
    const opened opened_bad(bad_header);
    try {
        (void)read_binary_layout(opened_bad.fd(), "the file");
        ADD_FAILURE() << "a bad header gave a layout";
    } catch (const world_format_error& e) {
        EXPECT_EQ(std::string(e.what()), read_world_error(bad_header));
    }
    EXPECT_FALSE(read_binary_layout(opened(folder_.root().string()).fd(), "the folder"));
}

// Rows read in parts, however the rows are split (parts of one row, of none, uneven ones), give
// read_world's world; with bad cells in several parts, the first in the file's order is
// read_world's error whichever part met it: a flag in the last part comes before a temperature
// in the first.
TEST_F(world_arrays, rows_read_in_parts_are_read_worlds) {
    world w = testing::random_world({.width = 37, .height = 37}, 11);
    const std::string file = file_of("w.bin", world_to_string(w, world_format::binary));
    const std::vector<std::vector<std::uint32_t>> splits = {
        {0, 37}, {0, 19, 37}, {0, 13, 25, 37}, {0, 8, 16, 23, 30, 37}, {0, 1, 1, 36, 37}};
    for (const auto& starts : splits) {
        world parts;
        EXPECT_EQ(read_in_parts(file, starts, parts), "");
        EXPECT_EQ(parts, w);
    }

    w.temperatures[w.index(1, 1)] = 2.0f;
    w.flags[w.index(5, 30)] = 7;
    w.temperatures[w.index(3, 20)] = std::numeric_limits<float>::quiet_NaN();
    const std::string bad = file_of("bad.bin", world_to_string(w, world_format::binary));
    const std::string expected = read_world_error(bad);
    EXPECT_NE(expected.find("unknown cell flag 7 at x=5, y=30"), std::string::npos) << expected;
    for (const auto& starts : splits) {
        world parts;
        EXPECT_EQ(read_in_parts(bad, starts, parts), expected);
    }
    w.flags[w.index(5, 30)] = cell_normal;
    const std::string bad_temperatures =
        file_of("bad_temperatures.bin", world_to_string(w, world_format::binary));
    for (const auto& starts : splits) {
        world parts;
        EXPECT_EQ(read_in_parts(bad_temperatures, starts, parts),
                  read_world_error(bad_temperatures));
    }
}

// The frame and every part's rows, written in any order as step_world_mpi's ranks write them,
// give write_world's bytes; so does the one-process writer.
TEST_F(world_arrays, rows_written_at_their_offsets_are_write_worlds_bytes) {
    const world w = testing::random_world({.width = 37, .height = 23}, 5);
    const binary_world_layout layout = written_layout(w.width, w.height, w.alpha);
    const std::string target = path("parts.bin");
    const int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::vector<std::uint32_t> row_starts = {0, 5, 5, 14, 23};
    for (std::size_t part = row_starts.size() - 1; part-- > 0;) {
        const std::size_t first = std::size_t{row_starts[part]} * w.width;
        const std::size_t count = std::size_t{row_starts[part + 1]} * w.width - first;
        EXPECT_EQ(write_cells(fd, layout, first, std::span(w.flags).subspan(first, count),
                              std::span(w.temperatures).subspan(first, count), {}),
                  0);
    }
    EXPECT_EQ(write_binary_frame(fd, layout, {}), 0);
    close(fd);
    const std::string expected = world_to_string(w, world_format::binary);
    EXPECT_EQ(contents(target), expected);

    EXPECT_TRUE(replace_with_binary_world(path("whole.bin"), w));
    EXPECT_EQ(contents(path("whole.bin")), expected);
    EXPECT_FALSE(replace_with_binary_world("/dev/null", w));
}

// A write that fails (a full disk, through the injected pwrite) leaves the old file byte for
// byte, with its inode, and no temporary file; where there was none, none is created.
TEST_F(world_arrays, a_failed_write_leaves_the_old_file_and_no_temporary) {
    const world w = testing::random_world({.width = 40, .height = 30}, 9);
    const std::string target = file_of("old.bin", "an old world");
    struct stat before {};
    ASSERT_EQ(stat(target.c_str(), &before), 0);
    kiln::programs::file_system_calls full_disk;
    full_disk.pwrite = [](int, const void*, std::size_t, off_t) -> ssize_t {
        errno = ENOSPC;
        return -1;
    };
    try {
        replace_with_binary_world(target, w, full_disk);
        ADD_FAILURE() << "a full disk wrote the world";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "writing '" + target +
                                             "' failed: No space left on device; '" + target +
                                             "' is unchanged");
    }
    EXPECT_EQ(contents(target), "an old world");
    struct stat after {};
    ASSERT_EQ(stat(target.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bin"});

    try {
        replace_with_binary_world(path("new.bin"), w, full_disk);
        ADD_FAILURE() << "a full disk wrote the world";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("; no file was created"), std::string::npos);
    }
    EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bin"});
}

}  // namespace
}  // namespace kiln::heat
