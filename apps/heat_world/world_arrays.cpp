// SPDX-License-Identifier: Apache-2.0
// The checks of a world's arrays, and their rows read and written at computed offsets of a
// binary world file by several threads (world_arrays.hpp).
#include "world_arrays.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "parallel.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace kiln::heat {
namespace {

// The binary checks read flags as "at most cell_insulator".
static_assert(cell_normal == 0 && cell_fixed == 1 && cell_insulator == 2);
static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);

// Threads take chunks of this many cells in the file's order; each chunk is read and checked a
// piece at a time, while the piece is still in the cache.
constexpr std::size_t cells_per_chunk = std::size_t{1} << 20;
constexpr std::size_t cells_per_piece = std::size_t{1} << 16;

// Runs `work(first, count)` over [0, total) in chunks of `chunk` that up to one thread per usable
// core take in turn, this thread among them. Chunks are taken in order, so when one fails every
// earlier chunk has been taken and runs to its end; later ones are skipped. Rethrows the failure
// of the first chunk that failed: the first in the file's order, as one thread would meet it.
void in_chunks(std::size_t total, std::size_t chunk,
               const std::function<void(std::size_t first, std::size_t count)>& work) {
    std::atomic<std::size_t> next_chunk{0};
    std::atomic<std::size_t> failed_at{total};
    std::mutex failure_lock;
    std::exception_ptr failure;
    const auto take_chunks = [&] {
        for (;;) {
            const std::size_t first = next_chunk.fetch_add(chunk);
            if (first >= total || first > failed_at) return;
            try {
                work(first, std::min(chunk, total - first));
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
        const std::size_t wanted =
            std::min<std::size_t>(usable_cores(), (total + chunk - 1) / chunk);
        try {
            while (helpers.size() + 1 < wanted) helpers.emplace_back(take_chunks);
        } catch (const std::system_error&) {
            // Fewer threads than cores (a thread limit): those that started do it all.
        }
        take_chunks();
    }
    if (failure) std::rethrow_exception(failure);
}

template <class T>
void swap_to_little_endian(T* words, std::size_t count) {
    for (T& word : std::span<T>(words, count)) {
        std::uint32_t bits;
        std::memcpy(&bits, &word, 4);
        bits = __builtin_bswap32(bits);
        std::memcpy(&word, &bits, 4);
    }
}

template <class T>
constexpr const char* array_name() {
    static_assert(std::is_same_v<T, std::uint32_t> || std::is_same_v<T, float>);
    return std::is_same_v<T, float> ? "temperatures" : "cell flags";
}

// Writes all `size` bytes at `offset` of `fd`; throws std::system_error with the errno.
void write_at(int fd, const char* bytes, std::size_t size, std::uint64_t offset,
              const kiln::programs::file_system_calls& calls) {
    std::size_t done = 0;
    while (done < size) {
        const std::size_t request = std::min(size - done, std::size_t{1} << 30);
        const ssize_t wrote =
            calls.pwrite(fd, bytes + done, request, static_cast<off_t>(offset + done));
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote < 0) throw std::system_error(errno, std::generic_category());
        if (wrote == 0) throw std::system_error(EIO, std::generic_category());  // no progress
        done += static_cast<std::size_t>(wrote);
    }
}

// Writes `words` at `offset` of `fd` a piece (256 KiB) at a time: a 2 GiB array written by one
// thread took 0.46 s in 256 KiB writes and 2.2 to 6 s in writes of 1 to 4 MiB (2-core VM, Linux
// 6.18, ext4, 2026-11-29; the page cache then takes larger folios, which are probably slower to
// find).
template <class T>
void write_words(int fd, std::span<const T> words, std::uint64_t offset,
                 const kiln::programs::file_system_calls& calls) {
    in_chunks(words.size(), cells_per_chunk, [&](std::size_t chunk_first, std::size_t count) {
        std::vector<T> swapped;
        for (std::size_t done = 0; done < count; done += cells_per_piece) {
            const std::size_t first = chunk_first + done;
            const std::size_t piece = std::min(cells_per_piece, count - done);
            const T* cells = words.data() + first;
            if constexpr (std::endian::native == std::endian::big) {
                swapped.assign(cells, cells + piece);
                swap_to_little_endian(swapped.data(), piece);
                cells = swapped.data();
            }
            write_at(fd, reinterpret_cast<const char*>(cells), piece * sizeof(T),
                     offset + first * sizeof(T), calls);
        }
    });
}

template <class T>
void read_checked_cells(const array_in_file& array, std::size_t first, std::span<T> out) {
    in_chunks(out.size(), cells_per_chunk, [&](std::size_t chunk_first, std::size_t count) {
        for (std::size_t done = 0; done < count; done += cells_per_piece) {
            const std::size_t piece = std::min(cells_per_piece, count - done);
            const std::size_t cell = first + chunk_first + done;
            T* const words = out.data() + chunk_first + done;
            const std::size_t bytes = piece * sizeof(T);
            const std::size_t got = read_at(array.fd, array.shown, reinterpret_cast<char*>(words),
                                            bytes, array.file_offset + cell * sizeof(T));
            if (got != bytes) {
                throw world_format_error(world_format_error::position_kind::byte_offset,
                                         array.input_offset + cell * sizeof(T) + got,
                                         "input ends after " +
                                             std::to_string(cell + got / sizeof(T)) + " of " +
                                             std::to_string(array.cells) + " " + array_name<T>());
            }
            if constexpr (std::endian::native == std::endian::big) {
                swap_to_little_endian(words, piece);
            }
            check_cells(std::span<const T>(words, piece), cell, array.width, array.input_offset);
        }
    });
}

}  // namespace

std::size_t read_at(int fd, const std::string& shown, char* out, std::size_t size,
                    std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        // Linux moves at most about 2 GiB in one call.
        const std::size_t request = std::min(size - done, std::size_t{1} << 30);
        const ssize_t got = ::pread(fd, out + done, request, static_cast<off_t>(offset + done));
        if (got == 0) break;
        if (got < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error("reading " + shown + " failed: " + std::strerror(errno));
        }
        done += static_cast<std::size_t>(got);
    }
    return done;
}

std::string at_cell(std::size_t index, std::uint32_t width) {
    return " at x=" + std::to_string(index % width) + ", y=" + std::to_string(index / width);
}

std::string temperature_problem(float value, std::size_t index, std::uint32_t width) {
    if (std::isnan(value)) return "temperature" + at_cell(index, width) + " is NaN";
    if (value >= 0.0f && value <= 1.0f) return {};
    char text[64];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
    return "temperature " + std::string(text) + at_cell(index, width) + " is outside [0, 1]";
}

void check_cells(std::span<const std::uint32_t> flags, std::size_t first, std::uint32_t width,
                 std::uint64_t array_offset) {
    std::uint32_t largest = 0;
    for (const std::uint32_t flag : flags) largest = std::max(largest, flag);
    if (largest <= cell_insulator) return;
    for (std::size_t i = 0; i < flags.size(); ++i) {
        if (flags[i] > cell_insulator) {
            throw world_format_error(world_format_error::position_kind::byte_offset,
                                     array_offset + 4 * (first + i),
                                     "unknown cell flag " + std::to_string(flags[i]) +
                                         at_cell(first + i, width) + " (expected 0, 1 or 2)");
        }
    }
}

void check_cells(std::span<const float> temperatures, std::size_t first, std::uint32_t width,
                 std::uint64_t array_offset) {
    // NaN fails both comparisons.
    bool all_in_range = true;
    for (const float value : temperatures) all_in_range &= (value >= 0.0f) & (value <= 1.0f);
    if (all_in_range) return;
    for (std::size_t i = 0; i < temperatures.size(); ++i) {
        const std::string problem = temperature_problem(temperatures[i], first + i, width);
        if (!problem.empty()) {
            throw world_format_error(world_format_error::position_kind::byte_offset,
                                     array_offset + 4 * (first + i), problem);
        }
    }
}

binary_world_layout written_layout(std::uint32_t width, std::uint32_t height, float alpha) {
    binary_world_layout layout{.width = width, .height = height, .alpha = alpha};
    layout.flags_offset = binary_world_head(width, height, alpha).size();
    layout.temperatures_offset = layout.flags_offset + 4 * std::uint64_t{layout.cells()} + 1;
    return layout;
}

std::uint64_t written_size(const binary_world_layout& layout) {
    return layout.temperatures_offset + 4 * std::uint64_t{layout.cells()} + 4;  // "End\n"
}

void read_cells(const array_in_file& array, std::size_t first, std::span<std::uint32_t> out) {
    read_checked_cells(array, first, out);
}
void read_cells(const array_in_file& array, std::size_t first, std::span<float> out) {
    read_checked_cells(array, first, out);
}

int write_binary_frame(int fd, const binary_world_layout& layout,
                       const kiln::programs::file_system_calls& calls) {
    const std::string head = binary_world_head(layout.width, layout.height, layout.alpha);
    try {
        write_at(fd, head.data(), head.size(), 0, calls);
        write_at(fd, "-", 1, layout.temperatures_offset - 1, calls);
        write_at(fd, "End\n", 4, written_size(layout) - 4, calls);
    } catch (const std::system_error& e) {
        return e.code().value();
    }
    return 0;
}

int write_cells(int fd, const binary_world_layout& layout, std::size_t first,
                std::span<const std::uint32_t> flags, std::span<const float> temperatures,
                const kiln::programs::file_system_calls& calls) {
    if (flags.size() != temperatures.size()) {
        throw std::invalid_argument("write_cells: as many flags as temperatures are needed");
    }
    try {
        write_words(fd, flags, layout.flags_offset + 4 * std::uint64_t{first}, calls);
        write_words(fd, temperatures, layout.temperatures_offset + 4 * std::uint64_t{first}, calls);
    } catch (const std::system_error& e) {
        return e.code().value();
    }
    return 0;
}

}  // namespace kiln::heat
