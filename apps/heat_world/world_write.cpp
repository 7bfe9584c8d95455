// SPDX-License-Identifier: Apache-2.0
// The byte-exact writers of world_io.hpp (the formats' details are in world_io.cpp).
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>

#include "huge_pages.hpp"
#include "world_io.hpp"

namespace kiln::heat {
namespace {

using byte_sink = std::function<void(const char* data, std::size_t size)>;

// Collects output in a large buffer so that a text world costs a few big writes, not one
// stream operation per cell; the binary arrays go to the sink whole.
class output_buffer {
  public:
    explicit output_buffer(const byte_sink& sink) : sink_(sink) { buffer_.reserve(capacity); }

    void append(std::string_view text) {
        if (buffer_.size() + text.size() > capacity) flush();
        buffer_.append(text);
    }

    // Room for one formatted value; valid until the next call.
    char* reserve_tail(std::size_t max_length) {
        if (buffer_.size() + max_length > capacity) flush();
        const std::size_t tail_start = buffer_.size();
        buffer_.resize(tail_start + max_length);
        return buffer_.data() + tail_start;
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
        if (size > 0) sink_(data, size);
    }

    const byte_sink& sink_;
    std::string buffer_;
};

std::string size_line(std::uint32_t width, std::uint32_t height, float alpha) {
    char alpha_text[64];
    std::snprintf(alpha_text, sizeof alpha_text, "%g", static_cast<double>(alpha));
    return std::to_string(width) + " " + std::to_string(height) + " " + alpha_text + "\n";
}

void write_world_to(const byte_sink& sink, const world& w, world_format format) {
    if (w.flags.size() != w.cell_count() || w.temperatures.size() != w.cell_count()) {
        throw std::invalid_argument("write_world: the world's arrays do not match its size");
    }
    output_buffer buffer(sink);
    if (format == world_format::binary) {
        buffer.append(binary_world_head(w.width, w.height, w.alpha));
        buffer.append_words(w.flags);
        buffer.append("-");
        buffer.append_words(w.temperatures);
        buffer.append("End\n");
        buffer.flush();
        return;
    }

    // std::to_chars with a precision formats exactly as printf does ("as if by printf in the C
    // locale"), and is several times faster; the tests compare the two on many values.
    buffer.append(world_text_header);
    buffer.append("\n");
    buffer.append(size_line(w.width, w.height, w.alpha));
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

// The output's size: exact for binary; for text, exact unless some temperature is -0 (one more
// character each).
std::size_t expected_size(const world& w, world_format format) {
    const std::size_t cells = w.cell_count();
    const std::string_view header =
        format == world_format::binary ? world_binary_header : world_text_header;
    const std::size_t head = header.size() + 1 + size_line(w.width, w.height, w.alpha).size();
    if (format == world_format::binary) return head + 2 + 8 * cells + 4;
    // " f" per flag, " 0.12345678" per temperature, a newline per row of each, two "-\n", "End\n".
    return head + 13 * cells + 2 * std::size_t{w.height} + 8;
}

}  // namespace

void write_world(std::ostream& out, const world& w, world_format format) {
    write_world_to(
        [&out](const char* data, std::size_t size) {
            out.write(data, static_cast<std::streamsize>(size));
            if (!out) throw std::runtime_error("writing the world failed");
        },
        w, format);
}

std::string binary_world_head(std::uint32_t width, std::uint32_t height, float alpha) {
    return std::string(world_binary_header) + "\n" + size_line(width, height, alpha) + "-";
}

std::string world_to_string(const world& w, world_format format) {
    std::string bytes;
    bytes.reserve(expected_size(w, format));
    advise_huge_pages(bytes.data(), bytes.capacity());
    write_world_to([&bytes](const char* data, std::size_t size) { bytes.append(data, size); }, w,
                   format);
    return bytes;
}

}  // namespace kiln::heat
