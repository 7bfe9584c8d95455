// SPDX-License-Identifier: Apache-2.0
// Strict readers and byte-exact writers for the HPCEHeatWorldV0 text and binary formats.
//
// Byte compatibility with the original coursework program (HPCE heat.cpp, SaveWorld/LoadWorld),
// checked against its source and against its output for the same worlds:
//  - header line `HPCEHeatWorldV0` or `HPCEHeatWorldV0Binary`, then `\n`;
//  - `w h alpha\n`: w and h as unsigned decimals, alpha as an ostream prints a float with default
//    flags, i.e. printf("%g") of the value widened to double (precision 6: 0.1f -> "0.1");
//  - text: `-\n`, then per row every flag as ' ' + decimal, then `\n`; `-\n`; per row every
//    temperature as ' ' + printf("%.8f") of the widened float (std::fixed, precision 8, so -0.0f
//    prints as "-0.00000000"), then `\n`; finally `End\n`;
//  - binary: `-` directly followed by w*h little-endian uint32 flags, `-` directly followed by
//    w*h little-endian IEEE float32 temperatures, then `End\n`, with no newline after either `-`;
//  - the time t is not stored; the original did not store it either;
//  - no trailing output after `End\n`.
// The original reader skipped whitespace before every token and before each `-` (in both
// formats), so ours does too; otherwise it is stricter than the original, which read past bad
// input, allocated whatever w*h the header claimed and ignored anything after `End`.
#include "world_io.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <istream>
#include <limits>
#include <optional>
#include <span>
#include <streambuf>
#include <vector>

#include "huge_pages.hpp"
#include "world_arrays.hpp"

namespace kiln::heat {

world_format_error::world_format_error(position_kind kind, std::uint64_t position,
                                       const std::string& problem)
    : std::runtime_error((kind == position_kind::line ? "line " : "byte offset ") +
                         std::to_string(position) + ": " + problem),
      kind_(kind),
      position_(position),
      problem_(problem) {}

namespace {

// Cells are read in chunks so that a header claiming a huge world costs memory only in
// proportion to the data that actually follows it (or that a file of known size holds).
constexpr std::size_t cells_per_chunk = std::size_t{1} << 20;
// Binary cells go from the input to the world's arrays and are checked a piece at a time, while
// the piece is still in the cache.
constexpr std::size_t cells_per_piece = std::size_t{1} << 16;

// No token of a valid world is longer (the longest the original wrote is the binary header, 21
// characters), and no valid world has this much whitespace in a row: past either the input is
// garbage, such as /dev/zero, and is not read on for as long as it lasts.
constexpr std::size_t max_token_length = 64;
constexpr std::uint64_t max_whitespace_run = std::uint64_t{1} << 20;

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);
// The binary reader checks flags as "at most cell_insulator".
static_assert(cell_normal == 0 && cell_fixed == 1 && cell_insulator == 2);

// A streambuf over caller-owned bytes, so reading from a string_view copies nothing.
class memory_streambuf : public std::streambuf {
  public:
    explicit memory_streambuf(std::string_view bytes) {
        // The get area is only ever read; streambuf merely lacks a const interface.
        char* begin = const_cast<char*>(bytes.data());
        setg(begin, begin, begin + bytes.size());
    }
};

// A streambuf over a file descriptor: large reads, and reads of more than its buffer holds (the
// binary arrays) straight into the caller's memory. A read that fails is an error, not the end
// of the input.
class descriptor_streambuf : public std::streambuf {
  public:
    descriptor_streambuf(int fd, const std::string& shown)
        : fd_(fd), shown_(shown), buffer_(std::size_t{1} << 18) {}

    // The bytes from the file's offset to its end, for a regular file.
    std::optional<std::uint64_t> remaining_in_file() const {
        struct stat status {};
        if (fstat(fd_, &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
        const off_t offset = lseek(fd_, 0, SEEK_CUR);
        if (offset < 0 || offset > status.st_size) return std::nullopt;
        return static_cast<std::uint64_t>(status.st_size - offset);
    }

    int fd() const { return fd_; }
    const std::string& shown() const { return shown_; }

    // The file's offset of the next byte the stream gives: the file's own offset, less what is
    // buffered.
    std::uint64_t next_byte_offset() const {
        const off_t offset = lseek(fd_, 0, SEEK_CUR);
        if (offset < 0) {
            throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
        }
        return static_cast<std::uint64_t>(offset) - static_cast<std::uint64_t>(egptr() - gptr());
    }

    // Goes on from the file's `offset`, past bytes read there with pread: what is buffered is
    // dropped.
    void skip_to(std::uint64_t offset) {
        if (lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
            throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
        }
        setg(buffer_.data(), buffer_.data(), buffer_.data());
    }

  protected:
    int_type underflow() override {
        const std::size_t got = read_some(buffer_.data(), buffer_.size());
        if (got == 0) return traits_type::eof();
        setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
        return traits_type::to_int_type(buffer_[0]);
    }

    std::streamsize xsgetn(char* out, std::streamsize count) override {
        const std::streamsize buffered = std::min<std::streamsize>(count, egptr() - gptr());
        if (buffered > 0) {
            std::memcpy(out, gptr(), static_cast<std::size_t>(buffered));
            gbump(static_cast<int>(buffered));  // at most the buffer's size
        }
        std::streamsize done = buffered;
        while (done < count) {
            const std::size_t got = read_some(out + done, static_cast<std::size_t>(count - done));
            if (got == 0) break;
            done += static_cast<std::streamsize>(got);
        }
        return done;
    }

  private:
    std::size_t read_some(char* out, std::size_t size) {
        // Linux moves at most about 2 GiB in one read.
        const std::size_t request = std::min(size, std::size_t{1} << 30);
        for (;;) {
            const ssize_t got = ::read(fd_, out, request);
            if (got >= 0) return static_cast<std::size_t>(got);
            if (errno != EINTR) {
                throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
            }
        }
    }

    int fd_;
    std::string shown_;
    std::vector<char> buffer_;
};

bool is_space(int c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// A token as it may appear in an error message: printable ASCII kept, the rest escaped, long
// tokens cut, so that arbitrary input still gives a one-line message.
std::string quoted(std::string_view token, bool truncated = false) {
    std::string text = "'";
    for (unsigned char c : token.substr(0, 24)) {
        if (c >= 0x20 && c < 0x7f && c != '\'') {
            text += static_cast<char>(c);
        } else {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
            text += escaped;
        }
    }
    if (truncated || token.size() > 24) text += "...";
    return text + "'";
}

class world_parser {
  public:
    // `input_size`: how many bytes the source holds from here on, where that is known (a regular
    // file, bytes in memory), so that the binary arrays are allocated once.
    // `file`: the same source where it is a file descriptor, so that large arrays of a regular
    // file can be read by several threads.
    world_parser(std::streambuf& source, std::optional<std::uint64_t> input_size,
                 descriptor_streambuf* file = nullptr, std::size_t parallel_from_cells = 0)
        : source_(source),
          input_size_(input_size),
          file_(file),
          parallel_from_cells_(parallel_from_cells) {}

    // The header line, the size line and the '-' before the flags: the world's shape, its
    // arrays still empty; binary() then says which format follows.
    world parse_head() {
        skip_whitespace();
        const token header = next_token("header");
        if (header.text.empty()) {
            fail("input is empty, expected the header " + std::string(world_text_header) + " or " +
                 std::string(world_binary_header));
        }
        if (header.text == world_text_header) {
            binary_ = false;
        } else if (header.text == world_binary_header) {
            binary_ = true;
        } else {
            fail("wrong header " + quoted(header.text) + ", expected " +
                 std::string(world_text_header) + " or " + std::string(world_binary_header));
        }

        world w;
        skip_whitespace();
        const position dimensions = here();
        const std::uint64_t width = read_dimension("width");
        const std::uint64_t height = read_dimension("height");
        w.alpha = read_alpha();
        try {
            (void)checked_cell_count(width, height);
        } catch (const std::length_error& e) {
            fail_at(dimensions, e.what());
        }
        w.width = static_cast<std::uint32_t>(width);
        w.height = static_cast<std::uint32_t>(height);
        expect_hyphen("the cell flags");
        return w;
    }

    bool binary() const { return binary_; }
    // The bytes taken from the source so far.
    std::uint64_t offset() const { return offset_; }

    world parse() {
        world w = parse_head();
        const std::size_t cells = w.cell_count();
        if (binary_) {
            read_binary_words(w.flags, cells, w.width, "cell flags");
        } else {
            read_text_flags(w, cells);
        }
        expect_hyphen("the temperatures");
        if (binary_) {
            read_binary_words(w.temperatures, cells, w.width, "temperatures");
        } else {
            read_text_temperatures(w, cells);
        }
        expect_end();
        return w;
    }

  private:
    struct token {
        std::string_view text;
    };

    int peek() { return source_.sgetc(); }

    int get() {
        const int c = source_.sbumpc();
        if (c == std::char_traits<char>::eof()) return c;
        ++offset_;
        if (c == '\n') ++line_;
        return c;
    }

    bool at_end() { return peek() == std::char_traits<char>::eof(); }

    void skip_whitespace() {
        const position start = here();
        for (std::uint64_t run = 0; is_space(peek()); ++run) {
            if (run == max_whitespace_run) {
                fail_at(start, "more than " + std::to_string(max_whitespace_run) +
                                   " whitespace characters in a row");
            }
            get();
        }
    }

    // The next whitespace-delimited token, empty at the end of the input. A token longer than
    // any valid one is an error once its first max_token_length + 1 characters are read; `what`
    // names it there ("world width").
    token next_token(const char* what) {
        const position start = here();
        std::size_t length = 0;
        for (int c = peek(); c != std::char_traits<char>::eof() && !is_space(c); c = peek()) {
            if (length == token_buffer_.size()) {
                fail_at(start, std::string(what) + " " +
                                   quoted(std::string_view(token_buffer_.data(), length), true) +
                                   " is longer than any valid one (more than " +
                                   std::to_string(max_token_length) + " characters)");
            }
            get();
            token_buffer_[length++] = static_cast<char>(c);
        }
        return {std::string_view(token_buffer_.data(), length)};
    }

    struct position {
        std::uint64_t line;
        std::uint64_t offset;
    };
    position here() const { return {line_, offset_}; }

    // Line numbers mean nothing once raw binary data has been read, so from then on errors give
    // the byte offset.
    [[noreturn]] void fail_at(position where, const std::string& problem) const {
        if (after_binary_payload_) fail_at_byte(where.offset, problem);
        throw world_format_error(world_format_error::position_kind::line, where.line, problem);
    }
    [[noreturn]] void fail(const std::string& problem) const { fail_at(here(), problem); }
    [[noreturn]] void fail_at_byte(std::uint64_t offset, const std::string& problem) const {
        throw world_format_error(world_format_error::position_kind::byte_offset, offset, problem);
    }

    std::uint64_t read_dimension(const char* what) {
        skip_whitespace();
        const position where = here();
        const std::string name = std::string("world ") + what;
        const token t = next_token(name.c_str());
        if (t.text.empty()) fail(std::string("input ends before the world's ") + what);
        std::uint64_t value = 0;
        const bool digits_only =
            std::all_of(t.text.begin(), t.text.end(), [](char c) { return c >= '0' && c <= '9'; });
        const auto [end, error] =
            std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
        if (!digits_only || error == std::errc::result_out_of_range) {
            if (digits_only) fail_at(where, name + " " + quoted(t.text) + " is absurdly large");
            fail_at(where, name + " " + quoted(t.text) + " is not a whole number");
        }
        (void)end;
        return value;
    }

    float read_alpha() {
        skip_whitespace();
        const position where = here();
        const token t = next_token("world alpha");
        if (t.text.empty()) fail("input ends before the world's alpha");
        float value = 0;
        const auto [end, error] =
            std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
        const bool whole = end == t.text.data() + t.text.size();
        if (error == std::errc::result_out_of_range && whole) {
            fail_at(where, "world alpha " + quoted(t.text) + " is out of float range");
        }
        if (error != std::errc{} || !whole || !std::isfinite(value)) {
            fail_at(where, "world alpha " + quoted(t.text) + " is not a finite number");
        }
        // Heat flows down its gradient only for alpha >= 0; make_world refuses a negative alpha
        // too, and so the engines never see one.
        if (value < 0) fail_at(where, "world alpha " + quoted(t.text) + " is negative");
        return value;
    }

    void expect_hyphen(const char* before_what) {
        skip_whitespace();
        if (at_end()) fail(std::string("input ends before the '-' that starts ") + before_what);
        if (peek() != '-') {
            const position where = here();
            const token t = next_token("token");
            fail_at(where, std::string("expected '-' before ") + before_what + ", found " +
                               quoted(t.text) + more_values_hint(t.text));
        }
        get();
    }

    void expect_end() {
        skip_whitespace();
        const position where = here();
        const token t = next_token("token");
        if (t.text.empty()) fail("input ends before the closing 'End'");
        if (t.text != "End") {
            fail_at(where, "expected 'End' after the temperatures, found " + quoted(t.text) +
                               more_values_hint(t.text));
        }
        skip_whitespace();
        if (!at_end()) {
            const position extra_at = here();
            const token extra = next_token("token after 'End'");
            fail_at(extra_at, "unexpected data after 'End': " + quoted(extra.text));
        }
    }

    static std::string more_values_hint(std::string_view found) {
        return found.find_first_of("0123456789") != std::string_view::npos
                   ? " (more values than width x height?)"
                   : "";
    }

    // Reads `count` raw 32-bit little-endian words (flags or temperatures of a world `width`
    // cells wide) into `words` a piece at a time, each checked (check_cells) while it is still
    // in the cache. The array is allocated once where the input's size is known, else it grows
    // with the data that arrives. A regular file that holds all of a large array is read by
    // several threads with pread instead (read_cells), which report the same first failure.
    template <class T>
    void read_binary_words(std::vector<T>& words, std::size_t count, std::uint32_t width,
                           const char* what) {
        payload_start_ = offset_;
        words.clear();
        std::size_t known = 0;
        if (input_size_ && *input_size_ > offset_) {
            known = static_cast<std::size_t>(
                std::min<std::uint64_t>(count, (*input_size_ - offset_) / sizeof(T)));
        }
        if (file_ != nullptr && known == count && count >= parallel_from_cells_) {
            reserve_huge(words, count);
            words.resize(count);
            const std::uint64_t file_start = file_->next_byte_offset();
            read_cells({.fd = file_->fd(),
                        .shown = file_->shown(),
                        .file_offset = file_start,
                        .input_offset = payload_start_,
                        .cells = count,
                        .width = width},
                       0, std::span<T>(words));
            file_->skip_to(file_start + count * sizeof(T));
            offset_ += count * sizeof(T);
            after_binary_payload_ = true;
            return;
        }
        reserve_huge(words, std::min(count, std::max(known, cells_per_chunk)));
        while (words.size() < count) {
            const std::size_t done = words.size();
            if (done == words.capacity()) reserve_huge(words, std::min(count, 2 * done));
            const std::size_t piece =
                std::min({count - done, cells_per_piece, words.capacity() - done});
            words.resize(done + piece);
            T* const first = words.data() + done;
            const std::streamsize want = static_cast<std::streamsize>(piece * sizeof(T));
            const std::streamsize got = source_.sgetn(reinterpret_cast<char*>(first), want);
            offset_ += static_cast<std::uint64_t>(got);
            if (got != want) {
                fail_at_byte(offset_, "input ends after " +
                                          std::to_string(done + static_cast<std::size_t>(got) / 4) +
                                          " of " + std::to_string(count) + " " + what);
            }
            if constexpr (std::endian::native == std::endian::big) {
                for (T& word : std::span<T>(first, piece)) {
                    std::uint32_t bits;
                    std::memcpy(&bits, &word, 4);
                    bits = __builtin_bswap32(bits);
                    std::memcpy(&word, &bits, 4);
                }
            }
            check_cells(std::span<const T>(first, piece), done, width, payload_start_);
        }
        after_binary_payload_ = true;
    }

    // The next value of a text section, or a precise complaint when the section is short.
    token next_text_value(std::size_t done, std::size_t count, const char* what,
                          const char* one_value) {
        skip_whitespace();
        const token t = next_token(one_value);
        if (t.text.empty()) {
            fail("input ends after " + std::to_string(done) + " of " + std::to_string(count) + " " +
                 what);
        }
        if (t.text == "-" || t.text == "End") {
            fail("found " + quoted(t.text) + " after " + std::to_string(done) + " of " +
                 std::to_string(count) + " " + what + " (fewer values than width x height)");
        }
        return t;
    }

    void read_text_flags(world& w, std::size_t cells) {
        w.flags.reserve(std::min(cells, cells_per_chunk));
        for (std::size_t i = 0; i < cells; ++i) {
            const token t = next_text_value(i, cells, "cell flags", "cell flag");
            std::uint32_t flag = 0;
            const auto [end, error] =
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), flag);
            const bool whole = error == std::errc{} && end == t.text.data() + t.text.size() &&
                               t.text.front() != '-';
            if (!whole) {
                fail("cell flag " + quoted(t.text) + at_cell(i, w.width) +
                     " is not a number (expected 0, 1 or 2)");
            }
            if (flag != cell_normal && flag != cell_fixed && flag != cell_insulator) {
                fail("unknown cell flag " + std::to_string(flag) + at_cell(i, w.width) +
                     " (expected 0, 1 or 2)");
            }
            w.flags.push_back(flag);
        }
    }

    void read_text_temperatures(world& w, std::size_t cells) {
        w.temperatures.reserve(std::min(cells, cells_per_chunk));
        for (std::size_t i = 0; i < cells; ++i) {
            const token t = next_text_value(i, cells, "temperatures", "temperature");
            float value = 0;
            const auto [end, error] =
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
            if (error == std::errc::result_out_of_range) {
                // from_chars leaves the value alone when out of range; a double says which way.
                double wide = 0;
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), wide);
                fail("temperature " + quoted(t.text) + at_cell(i, w.width) +
                     (std::fabs(wide) < 1 ? " underflows a float" : " is outside [0, 1]"));
            }
            if (error != std::errc{} || end != t.text.data() + t.text.size()) {
                fail("temperature " + quoted(t.text) + at_cell(i, w.width) + " is not a number");
            }
            if (const std::string problem = temperature_problem(value, i, w.width);
                !problem.empty())
                fail(problem);
            w.temperatures.push_back(value);
        }
    }

    std::streambuf& source_;
    std::optional<std::uint64_t> input_size_;
    descriptor_streambuf* file_ = nullptr;
    std::size_t parallel_from_cells_ = 0;
    std::uint64_t offset_ = 0;
    std::uint64_t line_ = 1;
    std::uint64_t payload_start_ = 0;
    bool binary_ = false;
    bool after_binary_payload_ = false;
    std::array<char, max_token_length> token_buffer_{};
};

}  // namespace

world read_world(std::istream& in) {
    std::streambuf* source = in.rdbuf();
    if (source == nullptr) throw std::invalid_argument("read_world: stream has no buffer");
    return world_parser(*source, std::nullopt).parse();
}

world read_world(std::string_view bytes) {
    memory_streambuf source(bytes);
    return world_parser(source, bytes.size()).parse();
}

world read_world(int fd, const std::string& shown, std::size_t parallel_from_cells) {
    descriptor_streambuf source(fd, shown);
    return world_parser(source, source.remaining_in_file(), &source, parallel_from_cells).parse();
}

std::optional<binary_world_layout> read_binary_layout(int fd, const std::string& shown) {
    if (lseek(fd, 0, SEEK_SET) != 0) return std::nullopt;
    descriptor_streambuf source(fd, shown);
    const std::optional<std::uint64_t> size = source.remaining_in_file();
    if (!size) return std::nullopt;
    world_parser parser(source, size);
    const world head = parser.parse_head();
    if (!parser.binary()) return std::nullopt;
    const std::uint64_t array_bytes = 4 * std::uint64_t{head.cell_count()};
    const binary_world_layout layout{.width = head.width,
                                     .height = head.height,
                                     .alpha = head.alpha,
                                     .flags_offset = parser.offset(),
                                     .temperatures_offset = parser.offset() + array_bytes + 1};
    // What write_world writes after the arrays, with whitespace around 'End' as the reader
    // takes it; a longer tail is anything but that.
    constexpr std::uint64_t longest_tail = 64;
    const std::uint64_t tail_offset = layout.temperatures_offset + array_bytes;
    if (tail_offset > *size || *size - tail_offset > longest_tail) return std::nullopt;
    char between = 0;
    std::string tail(*size - tail_offset, '\0');
    if (read_at(fd, shown, &between, 1, layout.temperatures_offset - 1) != 1 || between != '-' ||
        read_at(fd, shown, tail.data(), tail.size(), tail_offset) != tail.size())
        return std::nullopt;
    const auto first = std::find_if_not(tail.begin(), tail.end(), is_space);
    const auto last = std::find_if_not(tail.rbegin(), tail.rend(), is_space).base();
    if (first >= last || std::string_view(&*first, last - first) != "End") return std::nullopt;
    return layout;
}

}  // namespace kiln::heat
