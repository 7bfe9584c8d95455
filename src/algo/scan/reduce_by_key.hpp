// SPDX-License-Identifier: Apache-2.0
// reduce_by_key's scan over (runs begun, open run's value) pairs: its operation and what its
// programs' text depends on (reduce_by_key.cpp plans, builds and runs them).
#pragma once

#include <cstddef>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <string>

namespace kiln::detail {

/// reduce_by_key's scan operation over pairs of `value_type` values (`value_bytes`, 4 or 8,
/// each) combined by `combine`: (runs begun, the open run's value bits), the value restarting
/// where a run begins. `packed`: look-back states of one word (state_packing::pair_30_32_bits),
/// for 4-byte values while the run counts stay below 2^30.
scan_operation segment_pairs(const std::string& value_type, std::size_t value_bytes,
                             const value_combine& combine, bool packed);
/// The same for values of V combined by Op.
template <class V, class Op>
scan_operation segment_operation(bool packed) {
    return segment_pairs(opencl_type_name<V>(), sizeof(V), &operation_traits<Op, V>::combine,
                         packed);
}

/// Everything a reduce_by_key program's text depends on.
struct reduce_by_key_shape {
    /// The keys' and values' OpenCL C types (the key's bytes on the host follow its type).
    std::string key_type = "int";
    std::size_t key_bytes = 4;
    std::string value_type = "int";
    /// operation_traits::key()
    std::string operation;
    scan_policy policy{};
    /// One-word look-back states (segment_pairs).
    bool packed = false;
    /// The values' node's type name: the node's type decides its generated text.
    std::string expression;

    /// "reduce_by_key <key> <value> <operation> <policy> [p30] <expression>", for the program
    /// cache.
    std::string key() const;
};

}  // namespace kiln::detail
