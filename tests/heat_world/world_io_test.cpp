// SPDX-License-Identifier: Apache-2.0
// Tests of the world readers and writers: exact bytes, round trips, and every rejection.
#include "world_io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "test_worlds.hpp"
#include "world.hpp"

namespace kiln::heat {
namespace {

std::string read_file(const std::string& name) {
    std::ifstream in(std::string(HEAT_WORLD_TEST_DATA) + "/" + name, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot open test data " << name;
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
}

world tiny_world() {
    // 2 x 2:  insulator 0.5 | fixed 1
    //         normal 0      | normal 0.25
    world w;
    w.width = 2;
    w.height = 2;
    w.alpha = 0.1f;
    w.flags = {cell_insulator, cell_fixed, cell_normal, cell_normal};
    w.temperatures = {0.5f, 1.0f, 0.0f, 0.25f};
    return w;
}

std::string little_endian(std::uint32_t value) {
    std::string bytes(4, '\0');
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
    return bytes;
}

std::string little_endian(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return little_endian(bits);
}

TEST(write_world, text_bytes_are_the_originals) {
    EXPECT_EQ(world_to_string(tiny_world(), world_format::text),
              "HPCEHeatWorldV0\n"
              "2 2 0.1\n"
              "-\n"
              " 2 1\n"
              " 0 0\n"
              "-\n"
              " 0.50000000 1.00000000\n"
              " 0.00000000 0.25000000\n"
              "End\n");
}

TEST(write_world, binary_bytes_are_the_originals) {
    const std::string expected = "HPCEHeatWorldV0Binary\n2 2 0.1\n-" + little_endian(2u) +
                                 little_endian(1u) + little_endian(0u) + little_endian(0u) + "-" +
                                 little_endian(0.5f) + little_endian(1.0f) + little_endian(0.0f) +
                                 little_endian(0.25f) + "End\n";
    EXPECT_EQ(world_to_string(tiny_world(), world_format::binary), expected);
}

// The original printed alpha with `stream << float` and temperatures with std::fixed and
// precision 8; iostreams are the independent oracle here.
std::string ostream_default(float value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

std::string ostream_fixed8(float value) {
    std::ostringstream out;
    out << std::fixed;
    out.precision(8);
    out << value;
    return out.str();
}

TEST(write_world, alpha_is_printed_as_iostreams_print_a_float) {
    for (float alpha :
         {0.1f, 0.05f, 1e-7f, 2.5f, 100000.0f, 1234567.0f, 0.123456789f, 0.0f, 3.0f}) {
        world w = tiny_world();
        w.alpha = alpha;
        const std::string text = world_to_string(w, world_format::text);
        const std::string second_line = text.substr(
            text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
        EXPECT_EQ(second_line, "2 2 " + ostream_default(alpha)) << alpha;
    }
}

TEST(write_world, temperatures_are_printed_as_iostreams_fixed_8) {
    std::vector<float> values = {0.0f,
                                 -0.0f,
                                 1.0f,
                                 0.5f,
                                 0.1f,
                                 1e-9f,
                                 5e-9f,
                                 4.9999999e-9f,
                                 0.99999999f,
                                 std::nextafter(1.0f, 0.0f),
                                 std::numeric_limits<float>::denorm_min()};
    // Exact decimal ties at the ninth decimal, where the rounding rule shows.
    for (int k = 0; k <= 4096; ++k) values.push_back(static_cast<float>(k) / 4096.0f);
    for (int k = 0; k < 512; ++k) values.push_back(static_cast<float>(k) / 512.0f + 1.0f / 1024.0f);
    std::mt19937 random(20240521);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (int i = 0; i < 100000; ++i) values.push_back(unit(random));
    for (int i = 0; i < 20000; ++i)
        values.push_back(std::ldexp(unit(random), -static_cast<int>(random() % 40)));

    world w;
    w.width = static_cast<std::uint32_t>(values.size());
    w.height = 1;
    w.flags.assign(values.size(), cell_normal);
    w.temperatures = values;
    std::string expected_row;
    for (float v : values) expected_row += " " + ostream_fixed8(v);
    const std::string text = world_to_string(w, world_format::text);
    const std::size_t row_start = text.find("-\n", text.find("-\n") + 2) + 2;
    EXPECT_EQ(text.substr(row_start, expected_row.size()), expected_row);
}

TEST(read_world, reads_what_the_original_wrote) {
    // Written by the original coursework program: make_world 10 0.1 | step_world 0.1 100.
    const std::string text = read_file("make_world_10_step_100.txt");
    const world w = read_world(text);
    EXPECT_EQ(w.width, 10u);
    EXPECT_EQ(w.alpha, 0.1f);
    EXPECT_EQ(world_to_string(w, world_format::text), text);

    // make_world 6 0.1 1 | step_world 0.1 50 1, and the same with text output.
    const std::string binary = read_file("make_world_6_step_50.bin");
    const world from_binary = read_world(binary);
    EXPECT_EQ(world_to_string(from_binary, world_format::binary), binary);
    EXPECT_EQ(world_to_string(from_binary, world_format::text),
              read_file("make_world_6_step_50.txt"));
}

TEST(read_world, reads_from_a_stream_like_from_bytes) {
    const std::string text = world_to_string(make_test_world(7, 0.2f), world_format::text);
    std::istringstream in(text);
    EXPECT_EQ(read_world(in), read_world(text));
}

// A file of `bytes` in the test's temporary folder, removed again.
class temporary_file {
  public:
    explicit temporary_file(const std::string& bytes)
        : path_(::testing::TempDir() + "world_io_test_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
        std::ofstream(path_, std::ios::binary) << bytes;
    }
    ~temporary_file() { std::remove(path_.c_str()); }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

world read_world_from_file(const std::string& path,
                           std::size_t parallel_from_cells = parallel_read_cells) {
    const int fd = open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path;
    try {
        world w = read_world(fd, "'" + path + "'", parallel_from_cells);
        close(fd);
        return w;
    } catch (...) {
        close(fd);
        throw;
    }
}

// The large, checked reads from a file descriptor give what the bytes reader gives, from a
// file (whose size is known: each array is allocated once, at its size) and from a pipe.
TEST(read_world, reads_from_a_descriptor_like_from_bytes) {
    const world big = testing::random_world({.width = 700, .height = 300}, 5);
    for (const world& w : {tiny_world(), make_test_world(9, 0.3f), big}) {
        for (const world_format format : {world_format::binary, world_format::text}) {
            const std::string bytes = world_to_string(w, format);
            const temporary_file file(bytes);
            const world from_file = read_world_from_file(file.path());
            EXPECT_EQ(from_file, read_world(bytes));
            if (format == world_format::binary) {
                EXPECT_EQ(from_file.flags.capacity(), w.cell_count());
                EXPECT_EQ(from_file.temperatures.capacity(), w.cell_count());
            }

            int ends[2];
            ASSERT_EQ(pipe(ends), 0);
            std::thread writer([&] {
                std::size_t done = 0;
                while (done < bytes.size()) {
                    const ssize_t wrote = write(ends[1], bytes.data() + done, bytes.size() - done);
                    if (wrote <= 0) break;
                    done += static_cast<std::size_t>(wrote);
                }
                close(ends[1]);
            });
            const world from_pipe = read_world(ends[0], "a pipe");
            writer.join();
            close(ends[0]);
            EXPECT_EQ(from_pipe, from_file);
        }
    }
}

// Arrays of a regular file read by several threads (chunks of 2^20 cells taken in turn) give
// the serial reader's world, and its error for the first bad cell in the file's order whichever
// thread meets it first.
TEST(read_world, reads_large_arrays_of_a_file_in_parallel_like_serially) {
    world w = testing::random_world({.width = 2048, .height = 2048}, 7);
    const std::string bytes = world_to_string(w, world_format::binary);
    const temporary_file file(bytes);
    const world in_parallel = read_world_from_file(file.path(), 0);
    EXPECT_EQ(in_parallel, w);
    EXPECT_EQ(in_parallel, read_world_from_file(file.path()));

    // Bad cells at the end of the flags' first chunk, at the start of their second (which
    // another thread meets first) and in the temperatures: the first chunk's flag comes first in
    // the file.
    w.flags[(std::size_t{1} << 20) - 3] = 7;
    w.flags[(std::size_t{1} << 20) + 1] = 8;
    w.temperatures[3] = 2.0f;
    const temporary_file bad(world_to_string(w, world_format::binary));
    std::string serial_error, parallel_error;
    try {
        (void)read_world_from_file(bad.path());
    } catch (const world_format_error& e) {
        serial_error = e.what();
    }
    // Which thread fails first varies: several runs give a wrong pick a chance to show.
    for (int run = 0; run < 20; ++run) {
        try {
            (void)read_world_from_file(bad.path(), 0);
        } catch (const world_format_error& e) {
            parallel_error = e.what();
        }
        EXPECT_EQ(parallel_error, serial_error);
    }
    EXPECT_NE(serial_error.find("unknown cell flag 7 at x=2045, y=511"), std::string::npos)
        << serial_error;
}

TEST(read_world, a_descriptor_that_cannot_be_read_is_an_error_not_the_end) {
    const int fd = open(::testing::TempDir().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    try {
        (void)read_world(fd, "the folder");
        FAIL() << "read a world from a folder";
    } catch (const world_format_error& e) {
        FAIL() << "a failed read looked like input: " << e.what();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "reading the folder failed: Is a directory");
    }
    close(fd);
}

// The file's size only sizes the arrays: a file shorter than its header says still fails where
// its data ends.
TEST(read_world, a_short_file_fails_where_it_ends) {
    const std::string bytes = world_to_string(make_test_world(9, 0.3f), world_format::binary);
    const temporary_file file(bytes.substr(0, bytes.size() - 40));
    try {
        (void)read_world_from_file(file.path());
        FAIL();
    } catch (const world_format_error& e) {
        EXPECT_EQ(std::string(e.what()), "byte offset " + std::to_string(bytes.size() - 40) +
                                             ": input ends after 72 of 81 temperatures");
    }
}

TEST(read_world, tolerates_the_whitespace_the_original_tolerated) {
    const world expected = tiny_world();
    EXPECT_EQ(
        read_world(
            "HPCEHeatWorldV0\r\n2 2 0.1\r\n-\r\n 2 1\r\n 0 0\r\n-\r\n 0.5 1\r\n 0 0.25\r\nEnd\r\n"),
        expected);
    EXPECT_EQ(read_world("  HPCEHeatWorldV0 2\n2\t0.1 - 2 1 0 0 -0.5 1 0 0.25 End"), expected);
}

class round_trip : public ::testing::TestWithParam<world_format> {};

TEST_P(round_trip, is_byte_exact_for_test_worlds_and_random_worlds) {
    const world_format format = GetParam();
    std::vector<world> worlds;
    for (std::uint32_t n = 3; n <= 10; ++n) worlds.push_back(make_test_world(n, 0.1f));
    worlds.push_back(make_test_world(128, 0.37f));
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        worlds.push_back(testing::random_world({.width = static_cast<std::uint32_t>(1 + seed * 7),
                                                .height = static_cast<std::uint32_t>(1 + seed * 3)},
                                               seed));
    }
    for (const world& w : worlds) {
        const std::string bytes = world_to_string(w, format);
        const world back = read_world(bytes);
        EXPECT_EQ(back.flags, w.flags);
        if (format == world_format::binary) {
            EXPECT_EQ(back.temperatures, w.temperatures);
        }
        EXPECT_EQ(world_to_string(back, format), bytes) << w.width << "x" << w.height;
        // Binary is lossless, so text survives a trip through it; the reverse holds only for
        // temperatures that 8 decimals represent, which random floats are not.
        if (format == world_format::text) {
            EXPECT_EQ(
                world_to_string(read_world(world_to_string(back, world_format::binary)), format),
                bytes);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(formats, round_trip,
                         ::testing::Values(world_format::text, world_format::binary),
                         [](const auto& info) {
                             return info.param == world_format::text ? "text" : "binary";
                         });

// Each malformed input and the exact message it must give.
struct rejection {
    const char* name;
    std::string input;
    std::string message;
};

void PrintTo(const rejection& r, std::ostream* out) {
    *out << r.name;
}

std::string binary_world(std::uint32_t flag3, float temperature3, bool with_end = true) {
    return "HPCEHeatWorldV0Binary\n2 2 0.1\n-" + little_endian(2u) + little_endian(1u) +
           little_endian(0u) + little_endian(flag3) + "-" + little_endian(0.5f) +
           little_endian(1.0f) + little_endian(0.0f) + little_endian(temperature3) +
           (with_end ? "End\n" : "");
}

const std::string good_text_head = "HPCEHeatWorldV0\n2 2 0.1\n-\n 2 1\n 0 0\n-\n";

std::vector<rejection> rejections() {
    const std::string binary_head = "HPCEHeatWorldV0Binary\n2 2 0.1\n-";  // 31 bytes
    return {
        {"empty", "",
         "line 1: input is empty, expected the header HPCEHeatWorldV0 or HPCEHeatWorldV0Binary"},
        {"wrong_header", "HPCEHeatWorldV1\n2 2 0.1\n",
         "line 1: wrong header 'HPCEHeatWorldV1', expected HPCEHeatWorldV0 or "
         "HPCEHeatWorldV0Binary"},
        {"binary_garbage_header", std::string("\x89PNG\r\n", 6),
         "line 1: wrong header '\\x89PNG', expected HPCEHeatWorldV0 or HPCEHeatWorldV0Binary"},
        {"width_not_a_number", "HPCEHeatWorldV0\nten 2 0.1\n",
         "line 2: world width 'ten' is not a whole number"},
        {"negative_height", "HPCEHeatWorldV0\n2 -2 0.1\n",
         "line 2: world height '-2' is not a whole number"},
        {"zero_width", "HPCEHeatWorldV0\n0 2 0.1\n-\n-\nEnd\n",
         "line 2: a world needs at least one cell, got 0 x 2"},
        {"side_too_large", "HPCEHeatWorldV0\n4294967296 1 0.1\n",
         "line 2: world side 4294967296 is larger than the format's limit of 4294967295"},
        {"width_overflows", "HPCEHeatWorldV0\n123456789012345678901234567890 1 0.1\n",
         "line 2: world width '123456789012345678901234...' is absurdly large"},
        {"alpha_nan", "HPCEHeatWorldV0\n2 2 nan\n",
         "line 2: world alpha 'nan' is not a finite number"},
        {"alpha_missing", "HPCEHeatWorldV0\n2 2", "line 2: input ends before the world's alpha"},
        {"hyphen_missing_before_flags", "HPCEHeatWorldV0\n2 2 0.1\n 2 1\n",
         "line 3: expected '-' before the cell flags, found '2' (more values than width x "
         "height?)"},
        {"hyphen_missing_before_temperatures",
         good_text_head.substr(0, good_text_head.size() - 2) + " 0.5 1 0 0.25\nEnd\n",
         "line 6: expected '-' before the temperatures, found '0.5' (more values than width x "
         "height?)"},
        {"unknown_text_flag", "HPCEHeatWorldV0\n2 2 0.1\n-\n 2 3\n",
         "line 4: unknown cell flag 3 at x=1, y=0 (expected 0, 1 or 2)"},
        {"text_flag_not_a_number", "HPCEHeatWorldV0\n2 2 0.1\n-\n 2 x\n",
         "line 4: cell flag 'x' at x=1, y=0 is not a number (expected 0, 1 or 2)"},
        {"too_few_text_flags", "HPCEHeatWorldV0\n2 2 0.1\n-\n 2 1\n 0\n-\n",
         "line 6: found '-' after 3 of 4 cell flags (fewer values than width x height)"},
        {"text_ends_in_flags", "HPCEHeatWorldV0\n2 2 0.1\n-\n 2 1\n 0",
         "line 5: input ends after 3 of 4 cell flags"},
        {"text_temperature_too_hot", good_text_head + " 0.5 1.5\n",
         "line 7: temperature 1.5 at x=1, y=0 is outside [0, 1]"},
        {"text_temperature_negative", good_text_head + " 0.5 1\n -0.25",
         "line 8: temperature -0.25 at x=0, y=1 is outside [0, 1]"},
        {"text_temperature_nan", good_text_head + " nan", "line 7: temperature at x=0, y=0 is NaN"},
        {"text_temperature_huge", good_text_head + " 1e99",
         "line 7: temperature '1e99' at x=0, y=0 is outside [0, 1]"},
        {"text_temperature_underflows", good_text_head + " 1e-50",
         "line 7: temperature '1e-50' at x=0, y=0 underflows a float"},
        {"alpha_out_of_range", "HPCEHeatWorldV0\n2 2 1e40\n",
         "line 2: world alpha '1e40' is out of float range"},
        {"alpha_negative", "HPCEHeatWorldV0\n2 2 -0.5\n", "line 2: world alpha '-0.5' is negative"},
        {"text_temperature_not_a_number", good_text_head + " 0.5x",
         "line 7: temperature '0.5x' at x=0, y=0 is not a number"},
        {"text_ends_in_temperatures", good_text_head + " 0.5 1\n 0",
         "line 8: input ends after 3 of 4 temperatures"},
        {"too_few_text_temperatures", good_text_head + " 0.5 1\n 0\nEnd\n",
         "line 9: found 'End' after 3 of 4 temperatures (fewer values than width x height)"},
        {"end_missing", good_text_head + " 0.5 1\n 0 0.25\n",
         "line 9: input ends before the closing 'End'"},
        {"end_misspelt", good_text_head + " 0.5 1\n 0 0.25\nEnd.\n",
         "line 9: expected 'End' after the temperatures, found 'End.'"},
        {"too_many_temperatures", good_text_head + " 0.5 1\n 0 0.25 0.5\nEnd\n",
         "line 8: expected 'End' after the temperatures, found '0.5' (more values than width x "
         "height?)"},
        {"data_after_end", good_text_head + " 0.5 1\n 0 0.25\nEnd\nHPCEHeatWorldV0\n",
         "line 10: unexpected data after 'End': 'HPCEHeatWorldV0'"},
        {"unknown_binary_flag", binary_world(7, 0.25f),
         "byte offset 43: unknown cell flag 7 at x=1, y=1 (expected 0, 1 or 2)"},
        {"binary_temperature_nan", binary_world(0, std::numeric_limits<float>::quiet_NaN()),
         "byte offset 60: temperature at x=1, y=1 is NaN"},
        {"binary_temperature_too_hot", binary_world(0, 2.0f),
         "byte offset 60: temperature 2 at x=1, y=1 is outside [0, 1]"},
        {"binary_ends_in_flags", binary_head + little_endian(2u) + "\x01",
         "byte offset 36: input ends after 1 of 4 cell flags"},
        {"binary_ends_in_temperatures", binary_world(0, 0.25f).substr(0, 58),
         "byte offset 58: input ends after 2 of 4 temperatures"},
        {"binary_hyphen_missing", binary_head + std::string(16, '\0') + "End\n",
         "byte offset 47: expected '-' before the temperatures, found 'End'"},
        {"binary_end_missing", binary_world(0, 0.25f, false),
         "byte offset 64: input ends before the closing 'End'"},
        {"binary_data_after_end", binary_world(0, 0.25f) + "x",
         "byte offset 68: unexpected data after 'End': 'x'"},
    };
}

class rejects : public ::testing::TestWithParam<rejection> {};

TEST_P(rejects, with_a_one_line_message_naming_the_position) {
    const rejection& r = GetParam();
    try {
        const world w = read_world(r.input);
        FAIL() << "accepted a " << w.width << "x" << w.height << " world";
    } catch (const world_format_error& e) {
        EXPECT_EQ(std::string(e.what()), r.message);
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
}

INSTANTIATE_TEST_SUITE_P(inputs, rejects, ::testing::ValuesIn(rejections()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(read_world, rejects_absurd_dimensions_before_allocating) {
    try {
        read_world("HPCEHeatWorldV0\n4294967295 4294967295 0.1\n-\n");
        FAIL();
    } catch (const world_format_error& e) {
        EXPECT_EQ(e.kind(), world_format_error::position_kind::line);
        EXPECT_EQ(e.position(), 2u);
        EXPECT_NE(e.problem().find("more than this machine's"), std::string::npos) << e.what();
    }
}

TEST(read_world, a_header_that_lies_about_the_size_costs_no_more_than_the_data) {
    // 2^32 - 1 cells would need 32 GiB; either the memory check or the data running out stops
    // it, long before anything that size is allocated.
    for (const char* header : {"HPCEHeatWorldV0Binary\n65535 65537 0.1\n-",
                               "HPCEHeatWorldV0\n65535 65537 0.1\n-\n 0 0"}) {
        EXPECT_THROW(read_world(std::string(header) + std::string(4000, '\0')), world_format_error);
    }
}

// An input that never ends: `head` first, then `filler` repeated, as `step_world < /dev/zero`
// sees it. It gives up after `limit` bytes, so that a reader that would read forever fails the
// test instead of hanging it, and counts what the reader took.
class endless_streambuf : public std::streambuf {
  public:
    endless_streambuf(std::string head, char filler, std::size_t limit)
        : head_(std::move(head)), block_(1 << 16, filler), limit_(limit) {}

    std::size_t bytes_taken() const {
        return delivered_ - static_cast<std::size_t>(egptr() - gptr());
    }

  protected:
    int_type underflow() override {
        if (delivered_ >= limit_) return traits_type::eof();
        std::string& source = delivered_ < head_.size() ? head_ : block_;
        char* begin = source.data() + (&source == &head_ ? delivered_ : 0);
        const std::size_t size = &source == &head_ ? head_.size() - delivered_ : block_.size();
        setg(begin, begin, begin + size);
        delivered_ += size;
        return traits_type::to_int_type(*begin);
    }

  private:
    std::string head_;
    std::string block_;
    std::size_t limit_;
    std::size_t delivered_ = 0;
};

struct endless_input {
    const char* name;
    std::string head;
    char filler;
    std::string message;
};

void PrintTo(const endless_input& input, std::ostream* out) {
    *out << input.name;
}

std::vector<endless_input> endless_inputs() {
    std::string escaped_zeros;
    for (int i = 0; i < 24; ++i) escaped_zeros += "\\x00";
    const std::string good_text_world = good_text_head + " 0.5 1\n 0 0.25\nEnd\n";
    return {
        {"zero_bytes", "", '\0',
         "line 1: header '" + escaped_zeros +
             "...' is longer than any valid one (more than 64 characters)"},
        {"digits_for_the_width", "HPCEHeatWorldV0\n", '7',
         "line 2: world width '777777777777777777777777...' is longer than any valid one (more "
         "than 64 characters)"},
        {"digits_for_the_binary_height", "HPCEHeatWorldV0Binary\n10 ", '1',
         "line 2: world height '111111111111111111111111...' is longer than any valid one (more "
         "than 64 characters)"},
        {"digits_for_a_temperature", good_text_head + " 0.", '5',
         "line 7: temperature '0.5555555555555555555555...' is longer than any valid one (more "
         "than 64 characters)"},
        {"spaces_before_the_header", "", ' ',
         "line 1: more than 1048576 whitespace characters in a row"},
        {"newlines_after_end", good_text_world, '\n',
         "line 9: more than 1048576 whitespace characters in a row"},
    };
}

class endless : public ::testing::TestWithParam<endless_input> {};

// Such an input fails within a few kilobytes of the token (or a mebibyte of whitespace), with
// the limit in the message, instead of being read for as long as it lasts.
TEST_P(endless, input_fails_after_a_bounded_read) {
    const endless_input& input = GetParam();
    endless_streambuf source(input.head, input.filler, std::size_t{64} << 20);
    std::istream in(&source);
    try {
        const world w = read_world(in);
        FAIL() << "accepted a " << w.width << "x" << w.height << " world";
    } catch (const world_format_error& e) {
        EXPECT_EQ(std::string(e.what()), input.message);
    }
    EXPECT_LE(source.bytes_taken(), input.head.size() + (std::size_t{1} << 20) + 1024)
        << "the reader went on reading";
}

INSTANTIATE_TEST_SUITE_P(inputs, endless, ::testing::ValuesIn(endless_inputs()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::heat
