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

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>
#include <streambuf>

namespace kiln::heat {

world_format_error::world_format_error(position_kind kind, std::uint64_t position,
                                       const std::string& problem)
    : std::runtime_error((kind == position_kind::line ? "line " : "byte offset ") +
                         std::to_string(position) + ": " + problem),
      kind_(kind),
      position_(position),
      problem_(problem) {}

namespace {

constexpr std::string_view text_header = "HPCEHeatWorldV0";
constexpr std::string_view binary_header = "HPCEHeatWorldV0Binary";

// Cells are read in chunks so that a header claiming a huge world costs memory only in
// proportion to the data that actually follows it.
constexpr std::size_t cells_per_chunk = std::size_t{1} << 20;

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);

// A streambuf over caller-owned bytes, so reading from a string_view copies nothing.
class memory_streambuf : public std::streambuf {
  public:
    explicit memory_streambuf(std::string_view bytes) {
        // The get area is only ever read; streambuf merely lacks a const interface.
        char* begin = const_cast<char*>(bytes.data());
        setg(begin, begin, begin + bytes.size());
    }
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

std::string at_cell(std::size_t index, std::uint32_t width) {
    return " at x=" + std::to_string(index % width) + ", y=" + std::to_string(index / width);
}

class world_parser {
  public:
    explicit world_parser(std::streambuf& source) : source_(source) {}

    world parse() {
        skip_whitespace();
        const token header = next_token();
        if (header.text.empty()) {
            fail("input is empty, expected the header " + std::string(text_header) + " or " +
                 std::string(binary_header));
        }
        if (header.text == text_header) {
            binary_ = false;
        } else if (header.text == binary_header) {
            binary_ = true;
        } else {
            fail("wrong header " + quoted(header.text, header.truncated) + ", expected " +
                 std::string(text_header) + " or " + std::string(binary_header));
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
        bool truncated = false;
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
        while (is_space(peek())) get();
    }

    // The next whitespace-delimited token, empty at the end of the input. Tokens longer than
    // any valid one are consumed whole but kept only in part, for the error message.
    token next_token() {
        token result;
        std::size_t length = 0;
        for (int c = peek(); c != std::char_traits<char>::eof() && !is_space(c); c = peek()) {
            get();
            if (length < token_buffer_.size()) {
                token_buffer_[length++] = static_cast<char>(c);
            } else {
                result.truncated = true;
            }
        }
        result.text = std::string_view(token_buffer_.data(), length);
        return result;
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
        const token t = next_token();
        if (t.text.empty()) fail(std::string("input ends before the world's ") + what);
        std::uint64_t value = 0;
        const bool digits_only =
            std::all_of(t.text.begin(), t.text.end(), [](char c) { return c >= '0' && c <= '9'; });
        const auto [end, error] =
            std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
        if (!digits_only || t.truncated || error == std::errc::result_out_of_range) {
            if (digits_only) {
                fail_at(where, std::string("world ") + what + " " + quoted(t.text, t.truncated) +
                                   " is absurdly large");
            }
            fail_at(where, std::string("world ") + what + " " + quoted(t.text, t.truncated) +
                               " is not a whole number");
        }
        (void)end;
        return value;
    }

    float read_alpha() {
        skip_whitespace();
        const position where = here();
        const token t = next_token();
        if (t.text.empty()) fail("input ends before the world's alpha");
        float value = 0;
        const auto [end, error] =
            std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
        const bool whole = end == t.text.data() + t.text.size() && !t.truncated;
        if (error == std::errc::result_out_of_range && whole) {
            fail_at(where, "world alpha " + quoted(t.text) + " is out of float range");
        }
        if (error != std::errc{} || !whole || !std::isfinite(value)) {
            fail_at(where,
                    "world alpha " + quoted(t.text, t.truncated) + " is not a finite number");
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
            const token t = next_token();
            fail_at(where, std::string("expected '-' before ") + before_what + ", found " +
                               quoted(t.text, t.truncated) + more_values_hint(t.text));
        }
        get();
    }

    void expect_end() {
        skip_whitespace();
        const position where = here();
        const token t = next_token();
        if (t.text.empty()) fail("input ends before the closing 'End'");
        if (t.text != "End") {
            fail_at(where, "expected 'End' after the temperatures, found " +
                               quoted(t.text, t.truncated) + more_values_hint(t.text));
        }
        skip_whitespace();
        if (!at_end()) {
            const position extra_at = here();
            const token extra = next_token();
            fail_at(extra_at,
                    "unexpected data after 'End': " + quoted(extra.text, extra.truncated));
        }
    }

    static std::string more_values_hint(std::string_view found) {
        return found.find_first_of("0123456789") != std::string_view::npos
                   ? " (more values than width x height?)"
                   : "";
    }

    // Reads `count` raw 32-bit little-endian words into `words`, a chunk at a time.
    template <class T>
    void read_binary_words(std::vector<T>& words, std::size_t count, const char* what) {
        const std::uint64_t start = offset_;
        words.clear();
        words.reserve(std::min(count, cells_per_chunk));
        while (words.size() < count) {
            const std::size_t done = words.size();
            const std::size_t chunk = std::min(count - done, std::max(done, cells_per_chunk));
            words.resize(done + chunk);
            const std::streamsize want = static_cast<std::streamsize>(chunk * sizeof(T));
            const std::streamsize got =
                source_.sgetn(reinterpret_cast<char*>(words.data() + done), want);
            offset_ += static_cast<std::uint64_t>(got);
            if (got != want) {
                fail_at_byte(offset_, "input ends after " +
                                          std::to_string(done + static_cast<std::size_t>(got) / 4) +
                                          " of " + std::to_string(count) + " " + what);
            }
        }
        if constexpr (std::endian::native == std::endian::big) {
            for (T& word : words) {
                std::uint32_t bits;
                std::memcpy(&bits, &word, 4);
                bits = __builtin_bswap32(bits);
                std::memcpy(&word, &bits, 4);
            }
        }
        payload_start_ = start;
        after_binary_payload_ = true;
    }

    void read_binary_flags(world& w, std::size_t cells) {
        read_binary_words(w.flags, cells, "cell flags");
        for (std::size_t i = 0; i < cells; ++i) {
            const std::uint32_t flag = w.flags[i];
            if (flag != cell_normal && flag != cell_fixed && flag != cell_insulator) {
                fail_at_byte(payload_start_ + 4 * i, "unknown cell flag " + std::to_string(flag) +
                                                         at_cell(i, w.width) +
                                                         " (expected 0, 1 or 2)");
            }
        }
    }

    void read_binary_temperatures(world& w, std::size_t cells) {
        read_binary_words(w.temperatures, cells, "temperatures");
        for (std::size_t i = 0; i < cells; ++i) {
            check_temperature(w.temperatures[i], i, w.width, [&](const std::string& problem) {
                fail_at_byte(payload_start_ + 4 * i, problem);
            });
        }
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
    token next_text_value(std::size_t done, std::size_t count, const char* what) {
        skip_whitespace();
        const token t = next_token();
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
            const token t = next_text_value(i, cells, "cell flags");
            std::uint32_t flag = 0;
            const auto [end, error] =
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), flag);
            const bool whole = error == std::errc{} && end == t.text.data() + t.text.size() &&
                               !t.truncated && t.text.front() != '-';
            if (!whole) {
                fail("cell flag " + quoted(t.text, t.truncated) + at_cell(i, w.width) +
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
            const token t = next_text_value(i, cells, "temperatures");
            float value = 0;
            const auto [end, error] =
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
            if (error == std::errc::result_out_of_range) {
                // from_chars leaves the value alone when out of range; a double says which way.
                double wide = 0;
                std::from_chars(t.text.data(), t.text.data() + t.text.size(), wide);
                fail("temperature " + quoted(t.text, t.truncated) + at_cell(i, w.width) +
                     (std::fabs(wide) < 1 ? " underflows a float" : " is outside [0, 1]"));
            }
            if (error != std::errc{} || end != t.text.data() + t.text.size() || t.truncated) {
                fail("temperature " + quoted(t.text, t.truncated) + at_cell(i, w.width) +
                     " is not a number");
            }
            check_temperature(value, i, w.width,
                              [&](const std::string& problem) { fail(problem); });
            w.temperatures.push_back(value);
        }
    }

    std::streambuf& source_;
    std::uint64_t offset_ = 0;
    std::uint64_t line_ = 1;
    std::uint64_t payload_start_ = 0;
    bool binary_ = false;
    bool after_binary_payload_ = false;
    std::array<char, 64> token_buffer_{};
};

// Collects output in a large buffer so that a text world costs a few big writes, not one
// stream operation per cell.
class output_buffer {
  public:
    explicit output_buffer(std::ostream& out) : out_(out) { buffer_.reserve(capacity); }
    ~output_buffer() = default;

    void append(std::string_view text) {
        if (buffer_.size() + text.size() > capacity) flush();
        buffer_.append(text);
    }

    // Room for one formatted value; valid until the next call.
    char* reserve_tail(std::size_t max_length) {
        if (buffer_.size() + max_length > capacity) flush();
        tail_start_ = buffer_.size();
        buffer_.resize(tail_start_ + max_length);
        return buffer_.data() + tail_start_;
    }
    void commit_tail(const char* end) {
        buffer_.resize(static_cast<std::size_t>(end - buffer_.data()));
    }

    template <class T>
    void append_words(const std::vector<T>& words) {
        flush();
        if constexpr (std::endian::native == std::endian::little) {
            write(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(T));
        } else {
            for (const T& word : words) {
                std::uint32_t bits;
                std::memcpy(&bits, &word, 4);
                bits = __builtin_bswap32(bits);
                char* slot = reserve_tail(4);
                std::memcpy(slot, &bits, 4);
                commit_tail(slot + 4);
            }
        }
    }

    void flush() {
        write(buffer_.data(), buffer_.size());
        buffer_.clear();
    }

  private:
    static constexpr std::size_t capacity = std::size_t{1} << 20;

    void write(const char* data, std::size_t size) {
        if (size == 0) return;
        out_.write(data, static_cast<std::streamsize>(size));
        if (!out_) throw std::runtime_error("writing the world failed");
    }

    std::ostream& out_;
    std::string buffer_;
    std::size_t tail_start_ = 0;
};

}  // namespace

world read_world(std::istream& in) {
    std::streambuf* source = in.rdbuf();
    if (source == nullptr) throw std::invalid_argument("read_world: stream has no buffer");
    return world_parser(*source).parse();
}

world read_world(std::string_view bytes) {
    memory_streambuf source(bytes);
    return world_parser(source).parse();
}

void write_world(std::ostream& out, const world& w, world_format format) {
    if (w.flags.size() != w.cell_count() || w.temperatures.size() != w.cell_count()) {
        throw std::invalid_argument("write_world: the world's arrays do not match its size");
    }
    output_buffer buffer(out);
    buffer.append(format == world_format::binary ? binary_header : text_header);
    buffer.append("\n");

    char alpha[64];
    std::snprintf(alpha, sizeof alpha, "%g", static_cast<double>(w.alpha));
    buffer.append(std::to_string(w.width) + " " + std::to_string(w.height) + " " + alpha + "\n");

    if (format == world_format::binary) {
        buffer.append("-");
        buffer.append_words(w.flags);
        buffer.append("-");
        buffer.append_words(w.temperatures);
        buffer.append("End\n");
        buffer.flush();
        return;
    }

    // std::to_chars with a precision formats exactly as printf does ("as if by printf in the C
    // locale"), and is several times faster; the tests compare the two on many values.
    buffer.append("-\n");
    for (std::uint32_t y = 0; y < w.height; ++y) {
        for (std::uint32_t x = 0; x < w.width; ++x) {
            char* slot = buffer.reserve_tail(16);
            *slot = ' ';
            const auto result = std::to_chars(slot + 1, slot + 16, w.flags[w.index(x, y)]);
            buffer.commit_tail(result.ptr);
        }
        buffer.append("\n");
    }
    buffer.append("-\n");
    for (std::uint32_t y = 0; y < w.height; ++y) {
        for (std::uint32_t x = 0; x < w.width; ++x) {
            constexpr std::size_t room =
                64;  // enough for any float in fixed notation with 8 decimals
            char* slot = buffer.reserve_tail(room);
            *slot = ' ';
            const auto result = std::to_chars(slot + 1, slot + room, w.temperatures[w.index(x, y)],
                                              std::chars_format::fixed, 8);
            buffer.commit_tail(result.ptr);
        }
        buffer.append("\n");
    }
    buffer.append("End\n");
    buffer.flush();
}

std::string world_to_string(const world& w, world_format format) {
    std::ostringstream out;
    write_world(out, w, format);
    return std::move(out).str();
}

}  // namespace kiln::heat
