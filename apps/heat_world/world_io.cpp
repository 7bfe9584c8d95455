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
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <istream>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <streambuf>
#include <system_error>
#include <thread>
#include <vector>

#include "huge_pages.hpp"

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

    // The file's offset: where the bytes after those buffered come from.
    std::uint64_t file_offset() const {
        const off_t offset = lseek(fd_, 0, SEEK_CUR);
        if (offset < 0) {
            throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
        }
        return static_cast<std::uint64_t>(offset);
    }

    // Takes up to `size` buffered bytes into `out`; returns how many.
    std::size_t take_buffered(char* out, std::size_t size) {
        const std::size_t buffered = std::min<std::size_t>(size, egptr() - gptr());
        if (buffered > 0) std::memcpy(out, gptr(), buffered);
        gbump(static_cast<int>(buffered));  // at most the buffer's size
        return buffered;
    }

    // Reads `size` bytes at the file's `offset` into `out` without moving the file's offset (safe
    // from several threads); fewer only where the file ends.
    std::size_t read_at(char* out, std::size_t size, std::uint64_t offset) const {
        std::size_t done = 0;
        while (done < size) {
            const std::size_t request = std::min(size - done, std::size_t{1} << 30);
            const ssize_t got =
                ::pread(fd_, out + done, request, static_cast<off_t>(offset + done));
            if (got == 0) break;
            if (got < 0) {
                if (errno == EINTR) continue;
                throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
            }
            done += static_cast<std::size_t>(got);
        }
        return done;
    }

    // Moves the file's offset past bytes read with read_at.
    void skip_to(std::uint64_t offset) {
        if (lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
            throw std::runtime_error("reading " + shown_ + " failed: " + std::strerror(errno));
        }
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

// Gives `words` room for `count` words in new memory marked for huge pages (huge_pages.hpp)
// before any of it is touched, the words already read moved there.
template <class T>
void reserve_huge(std::vector<T>& words, std::size_t count) {
    std::vector<T> room;
    room.reserve(count);
    advise_huge_pages(room.data(), room.capacity() * sizeof(T));
    room.insert(room.end(), words.begin(), words.end());
    words.swap(room);
}

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

std::string at_cell(std::size_t index, std::uint32_t width) {
    return " at x=" + std::to_string(index % width) + ", y=" + std::to_string(index / width);
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

    world parse() {
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
        std::size_t cells = 0;
        try {
            cells = checked_cell_count(width, height);
        } catch (const std::length_error& e) {
            fail_at(dimensions, e.what());
        }
        w.width = static_cast<std::uint32_t>(width);
        w.height = static_cast<std::uint32_t>(height);

        expect_hyphen("the cell flags");
        if (binary_) {
            read_binary_flags(w, cells);
        } else {
            read_text_flags(w, cells);
        }
        expect_hyphen("the temperatures");
        if (binary_) {
            read_binary_temperatures(w, cells);
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

    // Reads `count` raw 32-bit little-endian words into `words` a piece at a time, and has
    // `check(first, piece)` look at each piece while it is still in the cache. The array is
    // allocated once where the input's size is known, else it grows with the data that arrives.
    template <class T, class Check>
    void read_binary_words(std::vector<T>& words, std::size_t count, const char* what,
                           Check&& check) {
        payload_start_ = offset_;
        words.clear();
        std::size_t known = 0;
        if (input_size_ && *input_size_ > offset_) {
            known = static_cast<std::size_t>(
                std::min<std::uint64_t>(count, (*input_size_ - offset_) / sizeof(T)));
        }
        if (file_ != nullptr && known == count && count >= parallel_from_cells_) {
            read_binary_words_in_parallel(words, count, what, check);
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
            check(done, std::span<const T>(first, piece));
        }
        after_binary_payload_ = true;
    }

    // read_binary_words for a regular file that holds all `count` words: the buffered bytes
    // first, then the rest in chunks that the threads take in turn, each read with pread and
    // checked a piece at a time. The first failure in the file's order is reported, as the serial
    // reader would report it.
    template <class T, class Check>
    void read_binary_words_in_parallel(std::vector<T>& words, std::size_t count, const char* what,
                                       Check& check) {
        reserve_huge(words, count);
        words.resize(count);
        char* const bytes = reinterpret_cast<char*>(words.data());
        const std::size_t total = count * sizeof(T);
        const std::size_t buffered = file_->take_buffered(bytes, total);
        const std::uint64_t file_start = file_->file_offset();
        // Threads take chunks in the file's order, so when one fails every earlier chunk has been
        // taken and is finished: the failure at the smallest index is the first in the file.
        constexpr std::size_t cells_per_take = 16 * cells_per_piece;
        std::atomic<std::size_t> next_take{0};
        std::mutex failure_lock;
        std::atomic<std::size_t> failed_at{count};
        std::exception_ptr failure;
        const auto read_chunks = [&] {
            for (;;) {
                const std::size_t take = next_take.fetch_add(cells_per_take);
                // Chunks after a failure need not be read; those before it must be.
                if (take >= count || take > failed_at) return;
                std::size_t first = take;
                try {
                    for (const std::size_t end = std::min(count, take + cells_per_take);
                         first < end; first += cells_per_piece) {
                        const std::size_t piece = std::min(cells_per_piece, end - first);
                        read_piece<T>(bytes, buffered, file_start, first, piece, count, what);
                        check(first, std::span<const T>(words.data() + first, piece));
                    }
                } catch (...) {
                    const std::lock_guard lock(failure_lock);
                    if (first < failed_at) {
                        failed_at = first;
                        failure = std::current_exception();
                    }
                    return;
                }
            }
        };
        {
            std::vector<std::jthread> helpers;
            const std::size_t wanted = std::min<std::size_t>(
                std::max(1u, std::thread::hardware_concurrency()), count / cells_per_take);
            try {
                while (helpers.size() + 1 < wanted) helpers.emplace_back(read_chunks);
            } catch (const std::system_error&) {
                // Fewer threads than cores (a thread limit): those that started read it all.
            }
            read_chunks();
        }
        if (failure) std::rethrow_exception(failure);
        file_->skip_to(file_start + (total - buffered));
        offset_ += total;
        after_binary_payload_ = true;
    }

    // Reads words [first, first + piece) of an array of `count` at `bytes` (its first `buffered`
    // bytes already there) from the file, whose array bytes past the buffered ones start at
    // `file_start`; swaps them to the host's order.
    template <class T>
    void read_piece(char* bytes, std::size_t buffered, std::uint64_t file_start, std::size_t first,
                    std::size_t piece, std::size_t count, const char* what) const {
        const std::size_t from = std::max(first * sizeof(T), buffered);
        const std::size_t to = (first + piece) * sizeof(T);
        if (to > from) {
            const std::size_t got =
                file_->read_at(bytes + from, to - from, file_start + (from - buffered));
            if (got != to - from) {
                fail_at_byte(payload_start_ + from + got,
                             "input ends after " + std::to_string((from + got) / sizeof(T)) +
                                 " of " + std::to_string(count) + " " + what);
            }
        }
        if constexpr (std::endian::native == std::endian::big) {
            for (T& word : std::span<T>(reinterpret_cast<T*>(bytes) + first, piece)) {
                std::uint32_t word_bits;
                std::memcpy(&word_bits, &word, 4);
                word_bits = __builtin_bswap32(word_bits);
                std::memcpy(&word, &word_bits, 4);
            }
        }
    }

    void read_binary_flags(world& w, std::size_t cells) {
        read_binary_words(w.flags, cells, "cell flags",
                          [&](std::size_t first, std::span<const std::uint32_t> flags) {
                              // One pass the compiler vectorises; the search only on failure.
                              std::uint32_t largest = 0;
                              for (const std::uint32_t flag : flags)
                                  largest = std::max(largest, flag);
                              if (largest <= cell_insulator) return;
                              for (std::size_t i = 0; i < flags.size(); ++i) {
                                  if (flags[i] > cell_insulator) {
                                      fail_at_byte(payload_start_ + 4 * (first + i),
                                                   "unknown cell flag " + std::to_string(flags[i]) +
                                                       at_cell(first + i, w.width) +
                                                       " (expected 0, 1 or 2)");
                                  }
                              }
                          });
    }

    void read_binary_temperatures(world& w, std::size_t cells) {
        read_binary_words(w.temperatures, cells, "temperatures",
                          [&](std::size_t first, std::span<const float> temperatures) {
                              // One pass the compiler vectorises (NaN fails both comparisons); the
                              // search only on failure.
                              bool all_in_range = true;
                              for (const float value : temperatures)
                                  all_in_range &= (value >= 0.0f) & (value <= 1.0f);
                              if (all_in_range) return;
                              for (std::size_t i = 0; i < temperatures.size(); ++i) {
                                  check_temperature(
                                      temperatures[i], first + i, w.width,
                                      [&](const std::string& problem) {
                                          fail_at_byte(payload_start_ + 4 * (first + i), problem);
                                      });
                              }
                          });
    }

    template <class Fail>
    static void check_temperature(float value, std::size_t index, std::uint32_t width,
                                  Fail&& fail_with) {
        if (std::isnan(value)) fail_with("temperature" + at_cell(index, width) + " is NaN");
        if (!(value >= 0.0f && value <= 1.0f)) {
            char text[64];
            std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
            fail_with("temperature " + std::string(text) + at_cell(index, width) +
                      " is outside [0, 1]");
        }
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
            check_temperature(value, i, w.width,
                              [&](const std::string& problem) { fail(problem); });
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

}  // namespace kiln::heat
