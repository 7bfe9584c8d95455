// SPDX-License-Identifier: Apache-2.0
// Internals of kiln's stencils: halos of split vectors and the local-memory tiled kernels.
//
// A 1-D stencil reads `before` elements before each element and `after` past it. Each part of a
// vector (one per device) reads its own elements and, where it borders another part, a halo
// fetched from that part before the launch; at the vector's ends it clamps instead. Kernels see
// one part through kiln_stencil_load (define_stencil_load) and never index past it.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <vector>

namespace kiln {

/// The element types stencils take (1-D and 2-D alike).
template <class T>
concept stencil_value = std::same_as<T, float> || std::same_as<T, double>;

}  // namespace kiln

namespace kiln::detail {

/// How far a 1-D stencil reads: `before` elements before an element, `after` past it.
struct stencil_reach {
    std::size_t before = 0, after = 0;
};

/// What one part of a vector reads from outside itself, on the part's device. At the vector's
/// first (last) element the kernels clamp, and `before` (`after`) is the part's own buffer,
/// never read.
template <class T>
struct part_halo {
    kiln::buffer<T> before, after;
    bool at_start = true, at_end = true;
};

/// Elements [first, last) of a vector, wherever its parts live.
template <class T>
std::vector<T> read_elements(const kiln::vector<T>& x, std::size_t first, std::size_t last) {
    std::vector<T> out(last - first);
    for (std::size_t k = 0; k < x.part_count(); ++k) {
        const part_extent& p = x.layout()[k];
        const std::size_t lo = std::max(first, p.begin), hi = std::min(last, p.begin + p.size);
        if (lo < hi)
            x.part(k).read(p.queue, lo - p.begin, std::span<T>(out.data() + (lo - first), hi - lo));
    }
    return out;
}

/// Fetches the halo of part `k` of x from the neighbouring parts (only the elements the stencil
/// reaches, clamped at the vector's ends), through the host between devices.
template <class T>
part_halo<T> exchange_stencil_halo(const kiln::vector<T>& x, std::size_t k, stencil_reach reach) {
    const part_extent& p = x.layout()[k];
    const std::size_t n = x.size(), end = p.begin + p.size;
    part_halo<T> halo{x.part(k), x.part(k), p.begin == 0, end == n};
    if (!halo.at_start && reach.before > 0) {
        const std::size_t lo = p.begin > reach.before ? p.begin - reach.before : 0;
        const std::vector<T> read = read_elements(x, lo, p.begin);
        std::vector<T> values(reach.before);
        for (std::size_t j = 0; j < reach.before; ++j)  // position p.begin - before + j, or 0
            values[j] =
                read[p.begin + j >= reach.before + lo ? p.begin + j - reach.before - lo : 0];
        halo.before = kiln::buffer<T>(p.queue, values);
    }
    if (!halo.at_end && reach.after > 0) {
        const std::size_t hi = std::min(n, end + reach.after);
        const std::vector<T> read = read_elements(x, end, hi);
        std::vector<T> values(reach.after);
        for (std::size_t j = 0; j < reach.after; ++j)  // position end + j, or n - 1
            values[j] = read[std::min(j, hi - end - 1)];
        halo.after = kiln::buffer<T>(p.queue, values);
    }
    return halo;
}

/// Defines `T kiln_stencil_load_T(xs, before, before_count, after, j, m, at_start, at_end)`:
/// element j (possibly outside [0, m)) of a part of m elements, and returns its name.
std::string define_stencil_load(source_builder& b, const std::string& type);

/// What a tiled 1-D kernel computes per output: with coefficients (`body` empty), the sum of
/// c[k] * x[k - center]; otherwise `body`, an OpenCL C expression of x[-center .. after].
struct tiled_1d_shape {
    std::string type;
    std::size_t width = 1, center = 0;
    std::string body;
    /// One group per tile of tuning.tile_size() outputs.
    stencil_tuning tuning;
    /// The program cache's key: every field above.
    std::string key() const;
};
/// Kernel kiln_stencil_1d(m, xs, before, after, at_start, at_end, y, c), its tile read with its
/// halo into local memory.
kernel_description tiled_stencil_1d_kernel(const tiled_1d_shape& shape,
                                           const char* name = "kiln_stencil_1d");
std::string tiled_stencil_1d_source(const tiled_1d_shape& shape);
/// The program of the 1-D kernel on `dev`. Where the device allows the kernel fewer work-items
/// than the tuning's group (NVIDIA's OpenCL: 256 for these kernels), the group halves, and each
/// work-item takes twice the outputs, keeping the tile; shape.tuning becomes what was built.
const algorithm_program& tiled_stencil_program(const device& dev, tiled_1d_shape& shape);
void launch_tiled_stencil_1d(const algorithm_program& built, const queue& q, std::size_t m,
                             const tiled_1d_shape& shape, kernel_binding&& args);

/// A 2-D stencil of kernel_rows x kernel_columns coefficients centred at (center_row,
/// center_column), over a rows x columns row-major grid clamped at its borders.
struct tiled_2d_shape {
    std::string type;
    std::size_t kernel_rows = 1, kernel_columns = 1, center_row = 0, center_column = 0;
    /// One group per tile of stencil_2d_tile_columns columns and tuning.work_group_size /
    /// stencil_2d_tile_columns * tuning.items_per_work_item rows.
    stencil_tuning tuning;
    /// The program cache's key: every field above.
    std::string key() const;
};
/// Tiles are this many columns wide: a warp's worth of neighbouring words per tile row.
inline constexpr std::size_t stencil_2d_tile_columns = 32;
/// Kernel kiln_stencil_2d(rows, columns, x, y, c).
kernel_description tiled_stencil_2d_kernel(const tiled_2d_shape& shape,
                                           const char* name = "kiln_stencil_2d");
std::string tiled_stencil_2d_source(const tiled_2d_shape& shape);
/// The program of the 2-D kernel on `dev`, its group halved as for 1-D (down to one tile row).
const algorithm_program& tiled_stencil_program(const device& dev, tiled_2d_shape& shape);
void launch_tiled_stencil_2d(const algorithm_program& built, const queue& q, std::size_t rows,
                             std::size_t columns, const tiled_2d_shape& shape,
                             kernel_binding&& args);
/// The 2-D tuning for `dev`, its group size rounded to whole tile rows.
stencil_tuning stencil_2d_tuning(const device& dev);

}  // namespace kiln::detail
#pragma GCC visibility pop
