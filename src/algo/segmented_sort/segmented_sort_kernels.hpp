// SPDX-License-Identifier: Apache-2.0
// What the segmented sort module's strategies share: the shape of a program (its key), the
// offsets program (the device-side check of the offsets, segment ids, positions, gathers), and
// the order of keys as kernel text.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/algo/segmented_sort.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/runtime/queue.hpp>
#include <string>
#include <vector>

#include "../sort/sort_kernels.hpp"
#include "segmented_sort_plan.hpp"

namespace kiln::detail {

/// Everything a segmented sort program's text depends on.
struct segmented_sort_shape {
    segmented_sort_strategy strategy = segmented_sort_strategy::group_tile;
    sort_key_info keys;
    std::string offset_type = "uint";
    std::size_t value_bytes = 0;  ///< 0: keys alone
    /// group_tile and lane_tile: the tile (a segment's keys, a power of 2), the group's
    /// work-items and the tiles (segments) each group sorts.
    std::size_t tile = 0, work_group_size = 1, segments_per_group = 1;
    /// cpu_chunks: the shortest segment sorted by digits (0: none).
    std::size_t digits_from = 0;

    /// "segmented_sort group_tile key 0/4/0 offsets uint values 4 t256 g32 s1 d0", for the
    /// program cache.
    std::string key() const;
    /// The keys' type as the kernels move them: ushort, uint or ulong.
    std::string key_bits() const { return radix_bits_type(keys.bytes); }
};
segmented_sort_shape segmented_sort_shape_of(const segmented_sort_input& input,
                                             const segmented_sort_plan& plan,
                                             const std::string& offset_type);

/// Defines kiln_segment_key_order(k): a key's bits as an unsigned number whose ascending order
/// is kiln::sort's (sort_kernels.hpp's ordered_bits).
void define_key_order(source_builder& b, const segmented_sort_shape& shape);

/// The offsets program's kernels, for offsets of `offset_type`:
///   check  (offsets, segments, n, report): report[0] |= 1 where offsets[0] != 0, 2 where they
///          fall somewhere, 4 where one passes n; report[1] = the longest segment (at most
///          2^32 - 1); report[2], report[3]: the last offset's low and high words
///   ids    (order, offsets, segments, n, ids): ids[j] = the segment of position order[j]
///   input_ids (offsets, segments, n, ids): ids[j] = the segment of position j, for n >= 1 in
///          groups of input_ids_per_work_item positions per work-item (input_ids_work_items)
///   iota   (order, n): order[j] = j
///   gather2/4/8 (src, dst, order, n): dst[j] = src[order[j]], elements of 2, 4 or 8 bytes
///   copy2/4/8   (src, dst, n)
struct segment_offsets_kernels {
    explicit segment_offsets_kernels(const std::string& offset_type);
    kernel_description check{"kiln_segments_check"}, ids{"kiln_segments_ids"},
        input_ids{"kiln_segments_input_ids"}, iota{"kiln_segments_iota"};
    std::vector<kernel_description> gathers, copies;  ///< by width: 2, 4, 8 bytes
    const kernel_description& gather(std::size_t bytes) const;
    const kernel_description& copy(std::size_t bytes) const;
    std::vector<kernel_description> all() const;
};

inline constexpr std::size_t input_ids_per_work_item = 16;
/// The work-items input_ids runs over n positions in groups of stride_work_group(dev).
std::size_t input_ids_work_items(const device& dev, std::size_t n);

/// The offsets program for `offset_type`, with its kernels' descriptions.
struct segment_offsets_program {
    segment_offsets_kernels kernels;
    const algorithm_program& built;
};
segment_offsets_program offsets_program(const device& dev, const std::string& offset_type);

/// Grid-stride launches of the offsets program over n items: work-items and group.
std::size_t stride_work_items(const device& dev, std::size_t n);
std::size_t stride_work_group(const device& dev);

/// The one kernel of a strategy that sorts tiles of segments in work-groups (group_tile,
/// lane_tile): keys, values where sorted by key, offsets, segments.
kernel_description segment_tiles_kernel(const std::string& name, const segmented_sort_shape& shape);
/// Builds (or finds) that program, from `write_source`, and runs its kernel once over every
/// segment, shape.segments_per_group to a group of shape.work_group_size; returns once done.
void run_segment_tiles(const queue& q, const segmented_sort_input& input,
                       const segmented_sort_shape& shape, const std::string& kernel_name,
                       const std::function<std::string()>& write_source);

/// Where a tile kernel's sorted items come from and go: item i (text over `i`, a work-item's
/// step u taking i = t + u * group) exists where `exists`, and moves from global index `from`
/// to `to`.
struct segment_item_moves {
    std::size_t steps = 1;  ///< items per work-item
    std::string exists, from, to;
};
/// Lines that move the values (and the keys, where `keys_too`) of every item from its source
/// to its place: every one is read into registers before any is written, since the segments
/// are sorted in place.
void write_moves_from_sources(source_builder& b, const segmented_sort_shape& shape, bool keys_too,
                              const segment_item_moves& moves);

/// The bytes of a temporary, as a sort operand (for radix_sort_part) of `element_bytes`.
sort_operand temporary_operand(const temporary_lease& lease, std::size_t element_bytes);

/// Each strategy, a file each, sorts the `elements` keys (and values) up to the last offset,
/// every segment on its own; returns once they are sorted.
void run_group_tile_segmented_sort(const queue& q, const segmented_sort_input& input,
                                   const segmented_sort_plan& plan, const std::string& offset_type);
void run_lane_tile_segmented_sort(const queue& q, const segmented_sort_input& input,
                                  const segmented_sort_plan& plan, const std::string& offset_type);
void run_radix_twice_segmented_sort(const queue& q, const segmented_sort_input& input,
                                    std::size_t elements, const std::string& offset_type);
void run_cpu_chunks_segmented_sort(const queue& q, const segmented_sort_input& input,
                                   const segmented_sort_plan& plan, const std::string& offset_type);

}  // namespace kiln::detail
