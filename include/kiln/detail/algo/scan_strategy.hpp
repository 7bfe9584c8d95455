// SPDX-License-Identifier: Apache-2.0
// The scan family's strategies behind one interface: tile kernels (scan_kernels.hpp, the GPU
// shape) or chunk kernels (scan_chunks.hpp, the CPU shape), as scan_policy::chunk_bytes
// says, each program holding the kernels of its policy's schedule. Scan, stream compaction and
// reduce_by_key build and size their programs through these, and run them through
// run_scan_family (src/algo/scan/scan_passes.cpp).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

/// What a scan's program is written from, and so its program-cache key.
struct scan_program_shape {
    std::string value_type;  ///< OpenCL C type of the values
    std::string operation;   ///< operation_traits::key()
    bool exclusive = false;
    scan_policy policy{};
    /// The input node's type name: the node's type decides its generated text.
    std::string input;

    /// Every field, as text.
    std::string key() const;
};

/// The kernels of a scan-family program for `op` under `policy` (`scatter`: a scattering
/// program, reduce_by_key's among them).
std::vector<kernel_description> scan_family_kernels(const scan_operation& op,
                                                    const scan_policy& policy,
                                                    bool scatter = false);
/// A scan's program under `policy`.
std::string scan_family_program_source(const scan_operation& op,
                                       const declare_input<scan_input>& input,
                                       const scan_policy& policy, bool exclusive);
/// Stream compaction's program under `policy`, a scan of `count` (a scattering program).
std::string compaction_program_source(const scan_operation& count,
                                      const declare_input<compaction_input>& input,
                                      const scan_policy& policy);
/// reduce_by_key's program under `policy`: the chunk kernels with its own loops
/// (reduce_by_key_chunk_program_source; by vectors where the policy has chunk_lanes and
/// `combine` is an `integer_sum`), or the tile kernels with the input's scatter code.
std::string reduce_by_key_program_source(const scan_operation& pairs, const value_combine& combine,
                                         bool integer_sum,
                                         const declare_input<reduce_by_key_input>& input,
                                         const scan_policy& policy);
/// Bytes of scratch it needs for a part of `n` elements of `value_bytes` each.
std::size_t scan_family_scratch_bytes(const scan_policy& policy, std::size_t n,
                                      std::size_t value_bytes);

/// A binding of a scan-family kernel with the slots every one of them shares
/// (scan_kernel_description): n, the scratch and the carry.
kernel_binding scan_binding(const algorithm_program& program, const char* kernel, std::size_t n,
                            const temporary_lease& scratch, const scan_carry& carry);

/// The kernel named, with its arguments bound, as the caller of run_scan_passes binds them.
using bound_scan_kernel = std::function<bound_kernel(const char* kernel)>;
/// Runs the passes of policy.schedule over one part of `n` elements of `value_bytes` on `q`: the
/// chunk kernels (chunk_scan_kernel_names) where policy.chunk_bytes, else the tile kernels
/// (scan_kernel_names). Returns the last pass's event; the scratch lease is kept until then.
event run_scan_passes(const queue& q, const scan_policy& policy, std::size_t n,
                      std::size_t value_bytes, temporary_lease& scratch,
                      const bound_scan_kernel& bound);

/// Runs a scan-family program's passes over one part under `policy` (run_scan_passes). Every
/// kernel gets the slots they all share (scan_binding), and those that read the input what
/// `bind_rest` binds: `out` where they have it, and the input.
event run_scan_family(const algorithm_program& program, const queue& q, const scan_policy& policy,
                      std::size_t n, const scan_carry& carry, temporary_lease& scratch,
                      const std::function<void(kernel_binding&)>& bind_rest);

/// The total a scan program left in its scratch (blocking read after `done`): `bytes` of it
/// into `total`.
void read_scan_total(const queue& q, const temporary_lease& scratch, const event& done, void* total,
                     std::size_t bytes);
/// The same as a T.
template <device_value T>
T scan_total(const queue& q, const temporary_lease& scratch, const event& done) {
    T total{};
    read_scan_total(q, scratch, done, &total, sizeof(T));
    return total;
}

}  // namespace kiln::detail
#pragma GCC visibility pop
