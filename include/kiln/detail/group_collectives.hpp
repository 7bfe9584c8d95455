// Work-group reduce and scan, written into kernels through the source builder.
//
// Every algorithm that combines the values of a work-group (reductions, scans, look-back
// tiles, compaction) asks for the code here instead of writing its own loops. The combine
// operation arrives as a function from two operand texts to the combined text, so reducers,
// kiln::reducers and KILN_FUNCTIONs all fit; it must be associative, not commutative: operands
// always meet in element order.
//
// Today's path goes through local memory on every device. The interface takes the sub-group
// size so that a sub-group path (shuffles within a sub-group, local memory only between
// sub-groups) can be plugged in where the device has sub-group operations, without changing
// the algorithms that call it.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/source_builder.hpp>
#include <string>
#include <string_view>

namespace kiln::detail {

/// Text of `combine(a, b)`, a before b.
using combine_text = std::function<std::string(const std::string& a, const std::string& b)>;

class group_collectives {
  public:
    /// sub_group_size 0: the local-memory path.
    explicit group_collectives(source_builder& builder, std::size_t sub_group_size = 0)
        : builder_(builder), sub_group_size_(sub_group_size) {}

    /// Tree reduction of scratch[0, size), each work-item `lid` having stored its value at
    /// scratch[lid]; `size` (a power of two) is the group size. Afterwards, for every work-item,
    /// scratch[0] holds the combination of all the values in order.
    void reduce_in_place(std::string_view scratch, std::string_view lid, std::string_view size,
                         const combine_text& combine);

    /// Inclusive scan across the group: `value` (a variable of every work-item `lid`) becomes
    /// the combination of the values of work-items 0..lid, in order. Needs no identity: a
    /// work-item only ever combines values of lower ones into its own, so values past the end
    /// of a partial tile never reach the valid work-items. `scratch` is a local array of at least
    /// 2 * `group_size` (a compile-time constant) elements, used as two halves in turn, so that
    /// each step needs one barrier. Returns the text of the offset at which the results lie:
    /// afterwards scratch[offset + i] holds work-item i's result, visible to the whole group.
    std::string inclusive_scan(std::string_view scratch, std::string_view lid,
                               std::string_view group_size, std::string_view value,
                               const combine_text& combine);

    std::size_t sub_group_size() const noexcept { return sub_group_size_; }

  private:
    source_builder& builder_;
    std::size_t sub_group_size_;
};

}  // namespace kiln::detail
