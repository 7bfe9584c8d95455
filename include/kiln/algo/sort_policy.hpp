// Tuning of the sorts per device: radix digit width, work-group shape and chunking, as data.
#pragma once

#include <cstddef>
#include <kiln/runtime/device.hpp>
#include <optional>

namespace kiln::detail {

struct sort_policy {
    unsigned radix_bits = 4;               ///< digit width of one radix pass
    unsigned work_group_size = 256;        ///< radix passes' work-group size
    unsigned items_per_work_item = 8;      ///< keys each work-item ranks per tile
    unsigned groups_per_compute_unit = 4;  ///< radix chunks (work-groups) per compute unit
    unsigned merge_work_group_size = 256;  ///< merge sort's work-group, and its first run length
};

/// The policy for sorting keys of `key_bytes` bytes on `dev`; sort.cpp says where the numbers
/// come from.
sort_policy sort_policy_for(const device& dev, std::size_t key_bytes);

/// Makes every device use `policy` while it lives: for tests (GPU shapes on a CPU device) and
/// benchmark sweeps. Not thread-safe against concurrent sorts.
class scoped_sort_policy {
  public:
    explicit scoped_sort_policy(const sort_policy& policy);
    ~scoped_sort_policy();
    scoped_sort_policy(const scoped_sort_policy&) = delete;
    scoped_sort_policy& operator=(const scoped_sort_policy&) = delete;

  private:
    std::optional<sort_policy> previous_;
};

}  // namespace kiln::detail
