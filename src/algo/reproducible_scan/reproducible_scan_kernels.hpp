// SPDX-License-Identifier: Apache-2.0
// The reproducible scan's program (docs/reproducibility.md): the shape its text depends on, the
// scratch its kernels share, their slots and the writer. Three passes over tiles of
// group_size x items elements: each tile's exact state; one work-group's exclusive scan of those
// states, from the carry of the parts before; each tile's elements scanned from its prefix, every
// prefix rounded once. Exact states add to the same value in any grouping, so no pass's grouping
// shows in the bits.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/element_inputs.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail {

/// Everything the program's text depends on.
struct reproducible_scan_shape {
    /// Work-items per tile (a power of two), and the consecutive elements each walks (a
    /// multiple of 8); work-items of the tile prefixes' pass (a power of two).
    std::size_t group_size = 256, items = 8, prefix_group_size = 512;
    /// Work-items that sum a tile in the tile states' pass (a power of two, at most
    /// group_size): fewer than the scan's, each adding more elements, since a work-item's
    /// bins cost as much to start, flush and combine as 8 elements to add.
    std::size_t states_group_size = 32;
    /// The tile passes' group scans shuffle within sub-groups of this size where it is not 0
    /// (group_scan_sub_group_size), in `target`'s vocabulary; otherwise through local memory;
    /// likewise the states' pass with states_sub_group_size.
    std::size_t sub_group_size = 0, states_sub_group_size = 0;
    target_features target{};
    bool double_values = false, exclusive = false;
    /// The input's node type (scan_call_input::expression).
    std::string expression;

    std::size_t tile_size() const { return group_size * items; }
    /// The elements each work-item of the tile states' pass adds.
    std::size_t states_items() const { return tile_size() / states_group_size; }
    /// Local memory of the tile pass: the tile's values as doubles (a gap after each run), float
    /// outputs' prefixes beside them (doubles' take their values' place), and the group scan's
    /// states.
    std::size_t local_bytes() const;
    /// "reproducible scan float inclusive g256 i8 p512 s32 t32 u32 <target> <expression>", for
    /// the program cache.
    std::string key() const;
};

/// The shape for `dev`: tiles of 256 work-items of 8 elements (the tile pass's 43 KiB of local
/// memory for floats, 34 KiB for doubles, fit every GPU kiln meets; H200, 2^28 floats: 128
/// work-items of 32 elements took as long under CUDA and 1.5x as long under NVIDIA OpenCL), and 512
/// work-items for the tiles' prefixes; fewer where the device's groups or local memory are smaller.
/// The tile states' pass: 64 work-items a tile, a fourth of the bins' set-up, flush and
/// combination per element (H200, 2^28 floats, 2026-11-30: the scan 1.12x faster than with 256
/// under CUDA and NVIDIA OpenCL; 32 ran 1.08x faster still under CUDA, untested there yet).
/// CPUs: tiles of one work-item of 4096 elements (PoCL, 2 cores, 2^24 floats: 256 x 8 took 486 ms).
reproducible_scan_shape plan_reproducible_scan(const device_properties& dev, bool double_values,
                                               bool exclusive, const std::string& expression);

/// Tests only: while alive, this thread's reproducible scans plan tiles of `group_size`
/// work-items (a power of two) of `items` elements (a multiple of 8) on every device, still
/// shrunk to its limits, so that a CPU runs a GPU's tile kernels (256 x 8) and small tiles make
/// many tiles of small vectors.
class scoped_reproducible_scan_tiles {
  public:
    scoped_reproducible_scan_tiles(std::size_t group_size, std::size_t items);
    ~scoped_reproducible_scan_tiles();
    scoped_reproducible_scan_tiles(const scoped_reproducible_scan_tiles&) = delete;
    scoped_reproducible_scan_tiles& operator=(const scoped_reproducible_scan_tiles&) = delete;

  private:
    std::optional<std::pair<std::size_t, std::size_t>> previous_;
};

/// The scratch of one part: a state per tile (their exclusive prefixes after the second pass),
/// then the part's total, which the next part starts from.
struct reproducible_scan_scratch {
    std::size_t tiles = 0;
    static constexpr std::size_t state_bytes = sizeof(exact_sum_state);
    std::size_t total_offset() const { return tiles * state_bytes; }
    std::size_t bytes() const { return (tiles + 1) * state_bytes; }
};

/// Each tile's state:        (n, kiln_tile_states, input...)
inline constexpr const char* exact_tile_states_kernel = "kiln_exact_tile_states";
/// The tiles' prefixes:      (tiles, kiln_tile_states, kiln_carry, kiln_init, kiln_has_init)
inline constexpr const char* exact_tile_prefixes_kernel = "kiln_exact_tile_prefixes";
/// The elements' prefixes:  (n, out, kiln_tile_states, input...)
inline constexpr const char* exact_tile_scan_kernel = "kiln_exact_tile_scan";

std::vector<kernel_description> reproducible_scan_kernels(const reproducible_scan_shape& shape);
/// The program of the three kernels, the input's element `idx` (as the output's type) declared
/// by `declare` in each kernel that reads it.
std::string write_reproducible_scan_program(
    const reproducible_scan_shape& shape,
    const std::function<element_input(source_builder&)>& declare);

}  // namespace kiln::detail
