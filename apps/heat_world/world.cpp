// SPDX-License-Identifier: Apache-2.0
// The heat world's invariants, the coursework's test world and the packed neighbour flags.
#include "world.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "parallel.hpp"

namespace kiln::heat {
namespace {

constexpr std::uint64_t bytes_per_stored_cell = sizeof(std::uint32_t) + sizeof(float);

std::uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

std::string gibibytes(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return text;
}

}  // namespace

std::size_t checked_cell_count(std::uint64_t width, std::uint64_t height) {
    constexpr std::uint64_t max_side = std::numeric_limits<std::uint32_t>::max();
    if (width == 0 || height == 0) {
        throw std::length_error("a world needs at least one cell, got " + std::to_string(width) +
                                " x " + std::to_string(height));
    }
    if (width > max_side || height > max_side) {
        throw std::length_error("world side " + std::to_string(std::max(width, height)) +
                                " is larger than the format's limit of " +
                                std::to_string(max_side));
    }
    // Both sides are below 2^32, so the product fits in 64 bits.
    const std::uint64_t cells = width * height;
    const std::uint64_t memory = physical_memory_bytes();
    if (cells > memory / bytes_per_stored_cell ||
        cells > std::numeric_limits<std::size_t>::max() / bytes_per_stored_cell) {
        throw std::length_error("a " + std::to_string(width) + " x " + std::to_string(height) +
                                " world needs " + gibibytes(cells * bytes_per_stored_cell) +
                                ", more than this machine's " + gibibytes(memory) + " of memory");
    }
    return static_cast<std::size_t>(cells);
}

void check_world(const world& w) {
    const std::size_t cells = checked_cell_count(w.width, w.height);
    if (w.flags.size() != cells || w.temperatures.size() != cells) {
        throw std::invalid_argument("world of " + std::to_string(w.width) + " x " +
                                    std::to_string(w.height) + " cells has " +
                                    std::to_string(w.flags.size()) + " flags and " +
                                    std::to_string(w.temperatures.size()) + " temperatures");
    }
    if (!std::isfinite(w.alpha)) throw std::invalid_argument("world's alpha is not finite");
    if (w.alpha < 0) throw std::invalid_argument("world's alpha is negative");
    for (std::size_t i = 0; i < cells; ++i) {
        const std::uint32_t flag = w.flags[i];
        if (flag != cell_normal && flag != cell_fixed && flag != cell_insulator) {
            throw std::invalid_argument("cell " + std::to_string(i) + " has unknown flag " +
                                        std::to_string(flag));
        }
        const float temperature = w.temperatures[i];
        if (!(temperature >= 0.0f && temperature <= 1.0f)) {
            throw std::invalid_argument("cell " + std::to_string(i) +
                                        " has a temperature outside [0, 1]");
        }
    }
}

world make_test_world(std::uint32_t n, float alpha) {
    // Row n-3 and rows 0..2 must exist; a smaller world would put the sink outside it.
    if (n < 3) throw std::invalid_argument("the test world needs n >= 3, got " + std::to_string(n));
    checked_cell_count(n, n);

    world w;
    w.width = n;
    w.height = n;
    w.alpha = alpha;
    w.flags.assign(std::size_t{n} * n, cell_normal);
    w.temperatures.assign(std::size_t{n} * n, 0.0f);
    auto set = [&](std::uint32_t x, std::uint32_t y, std::uint32_t flag) {
        w.flags[w.index(x, y)] = flag;
    };

    for (std::uint32_t i = 0; i < n; ++i) {
        set(i, 0, cell_insulator);
        set(i, n - 1, cell_insulator);
        set(0, i, cell_insulator);
        set(n - 1, i, cell_insulator);
    }
    // The original computed these with floating-point floor; integer division is the same for
    // every n below 2^32.
    const std::uint32_t low = n / 3;
    const std::uint32_t mid = n / 2;
    const std::uint32_t high = static_cast<std::uint32_t>(2 * std::uint64_t{n} / 3);
    for (std::uint32_t x = 0; x < high; ++x) set(x, low, cell_insulator);
    for (std::uint32_t x = low; x < n; ++x) set(x, high, cell_insulator);
    for (std::uint32_t y = low; y < mid; ++y) set(high, y, cell_insulator);
    for (std::uint32_t y = mid; y < high; ++y) set(low, y, cell_insulator);

    // The source and the sink are placed last, so they win over walls they overlap (for small n
    // the source row is the wall row `low`, and the sink can land on the source or the border).
    for (std::uint32_t x = 1; x + 1 < n; ++x) {
        set(x, 1, cell_fixed);
        w.temperatures[w.index(x, 1)] = 1.0f;
    }
    set(mid, n - 3, cell_fixed);
    w.temperatures[w.index(mid, n - 3)] = 0.0f;
    return w;
}

std::vector<std::uint32_t> pack_neighbour_flags(const world& w) {
    return pack_neighbour_flags(world_rows{w, 0, w.height});
}

template <class Word>
void pack_neighbour_flags_into(const world_rows& rows, std::span<Word> packed) {
    const std::size_t width = rows.source.width;
    if (packed.size() != rows.cell_count())
        throw std::invalid_argument("pack_neighbour_flags: " + std::to_string(packed.size()) +
                                    " words for " + std::to_string(rows.cell_count()) + " cells");
    const std::span<const std::uint32_t> flags = rows.flags();
    // Rows of a large world in bands, one per core: on one thread, packing a 16384^2 world took
    // longer than uploading it.
    in_bands(rows.rows,
             std::max<std::size_t>(1, (std::size_t{1} << 20) / std::max<std::size_t>(width, 1)),
             [&](std::size_t first_row, std::size_t end_row) {
                 for (std::size_t y = first_row; y < end_row; ++y) {
                     const std::uint32_t* row = flags.data() + y * width;
                     // Outside the rows blocks as an insulator does.
                     const std::uint32_t* above = y > 0 ? row - width : nullptr;
                     const std::uint32_t* below = y + 1 < rows.rows ? row + width : nullptr;
                     for (std::size_t x = 0; x < width; ++x) {
                         std::uint32_t word = row[x];
                         if (above == nullptr || (above[x] & cell_insulator) != 0)
                             word |= packed_up_blocked;
                         if (below == nullptr || (below[x] & cell_insulator) != 0)
                             word |= packed_down_blocked;
                         if (x == 0 || (row[x - 1] & cell_insulator) != 0)
                             word |= packed_left_blocked;
                         if (x + 1 == width || (row[x + 1] & cell_insulator) != 0)
                             word |= packed_right_blocked;
                         packed[y * width + x] = static_cast<Word>(word);
                     }
                 }
             });
}

template void pack_neighbour_flags_into(const world_rows&, std::span<std::uint32_t>);
template void pack_neighbour_flags_into(const world_rows&, std::span<std::uint8_t>);

std::vector<std::uint32_t> pack_neighbour_flags(const world_rows& rows) {
    std::vector<std::uint32_t> packed(rows.cell_count());
    pack_neighbour_flags_into(rows, std::span<std::uint32_t>(packed));
    return packed;
}

void advance_time(world& w, float dt, unsigned steps) {
    for (unsigned i = 0; i < steps; ++i) w.t += dt;
}

}  // namespace kiln::heat
