// SPDX-License-Identifier: Apache-2.0
// Work-group reduce and scan, written into kernels through the source builder.
//
// Every algorithm that combines the values of a work-group (reductions, scans, look-back
// tiles, compaction) asks for the code here instead of writing its own loops. The combine
// operation arrives as a function from two operand texts to the combined text, so reducers,
// kiln::reducers and KILN_FUNCTIONs all fit; it must be associative, not commutative: operands
// always meet in element order.
//
// Two paths: with a sub-group size (targets whose sub-groups have a size fixed when the kernel
// is written and shuffles, target_features), scans shuffle within sub-groups through the device
// vocabulary (src/codegen/device_vocabulary.hpp) and meet in local memory only between them;
// otherwise everything goes through local memory.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/source_builder.hpp>
#include <kiln/detail/target_features.hpp>
#include <string>
#include <string_view>

namespace kiln::detail {

/// Text of `combine(a, b)`, a before b.
using combine_text = std::function<std::string(const std::string& a, const std::string& b)>;

class group_collectives {
  public:
    /// sub_group_size 0: the local-memory path; otherwise the size of every sub-group, which
    /// must divide the group size. `target`: whose vocabulary the sub-group path calls.
    explicit group_collectives(source_builder& builder, std::size_t sub_group_size = 0,
                               target_features target = {})
        : builder_(builder), sub_group_size_(sub_group_size), target_(target) {}

    /// Tree reduction of scratch[0, size), each work-item `lid` having stored its value at
    /// scratch[lid]; `size` (a power of two) is the group size. Afterwards, for every work-item,
    /// scratch[0] holds the combination of all the values in order.
    void reduce_in_place(std::string_view scratch, std::string_view lid, std::string_view size,
                         const combine_text& combine);

    /// Inclusive scan across the group: `value` (a variable of every work-item `lid`) becomes
    /// the combination of the values of work-items 0..lid, in order. Needs no identity: a
    /// work-item only ever combines values of lower ones into its own, so values past the end
    /// of a partial tile never reach the valid work-items. `scratch` is a local array of at least
    /// 2 * `group_size` (a compile-time constant) elements. Local-memory path: Hillis-Steele,
    /// the halves used in turn so that each step needs one barrier. Sub-group path: shuffles,
    /// then two barriers (sub-group totals, results). `type` is the value's OpenCL C type and
    /// `components` its vector width (shuffled one component at a time: warp shuffles know
    /// only scalars). Returns the text of the offset at which the results lie: afterwards
    /// scratch[offset + i] holds work-item i's result, visible to the whole group.
    std::string inclusive_scan(std::string_view scratch, std::string_view lid,
                               std::string_view group_size, std::string_view value,
                               const combine_text& combine, std::string_view type,
                               unsigned components = 1);

    /// Sub-group path only (every lane of the sub-group must run these). Declares `target`, of
    /// `type` (a scalar or a vector of `components` of them), as `value` from the lane `delta`
    /// above, or the lane's own value where there is none.
    void shuffle_down(const std::string& type, const std::string& target, const std::string& value,
                      const std::string& delta, unsigned components = 1);
    /// Text of the mask of the sub-group's lanes whose `predicate` holds (bit i: lane i).
    std::string ballot(const std::string& predicate);

    std::size_t sub_group_size() const noexcept { return sub_group_size_; }

  private:
    std::string sub_group_scan(const std::string& scratch, const std::string& lid,
                               const std::string& group_size, const std::string& value,
                               const combine_text& combine, const std::string& type,
                               unsigned components);

    /// Declares `target` as `value` shuffled `delta` lanes up (from below) or down, a vector of
    /// `components` one component at a time (warp shuffles know only scalars).
    void declare_shuffled(bool up, const std::string& type, const std::string& target,
                          const std::string& value, const std::string& delta, unsigned components);

    /// Text of the value `delta` lanes below (`up`) or above for a scalar `type`.
    std::string shuffle(bool up, const std::string& type, const std::string& value,
                        const std::string& delta);

    source_builder& builder_;
    std::size_t sub_group_size_;
    target_features target_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
