// SPDX-License-Identifier: Apache-2.0
// Kernel generators shared by the scan family: the tile scan (load, per-item and group scan,
// store), decoupled look-back, and the three passes of reduce-then-scan.
//
// Every kernel of the family works on tiles of policy.tile_size() elements, one work-group per
// tile, and needs no identity element: work-items without elements (the end of the last tile)
// never feed their values to work-items with elements, and prefixes travel as (have, value)
// pairs. So any associative operation works, commutative or not. Their scratch is laid out by
// scan_scratch_layout.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/scan_inputs.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::detail {

/// The operation a scan combines values with, as text for the value type.
struct scan_operation {
    std::string value_type;  ///< OpenCL C type of the values
    std::size_t value_bytes = 0;
    /// `combine(a, b)` as text, defining any helper it needs in the builder.
    std::function<std::string(source_builder&, const std::string&, const std::string&)> combine;
    /// Components of a vector value type (uint2, ulong2...), else 1.
    unsigned components = 1;
    state_packing packing = state_packing::separate;
    /// Whether `combine` also applies lane by lane to OpenCL vectors of value_type, and the
    /// operation commutes (sum, min, max), so that lanes may be combined in any order.
    bool lanewise = false;
};

/// What a part of a scan-family run starts from, its type erased: a scalar of the scan's value
/// type (`value`, whose size is the value's bytes), and whether there is one (has_carry).
struct scan_carry {
    kernel_argument value;
    bool given = false;
};
/// `carry` as a scan_carry: its value, or T's zero where there is none.
template <device_value T>
scan_carry make_scan_carry(const std::optional<T>& carry) {
    return {make_argument(carry.value_or(T{})), carry.has_value()};
}

/// The scan program's kernels, those of its policy's schedule only:
///   kiln_scan_lookback  single pass
///   kiln_scan_reduce    tile aggregates
///   kiln_scan_spine     exclusive prefixes of the tiles
///   kiln_scan_downsweep the scan with prefixes
/// Each takes (n, [out], kiln_temp, has_carry, carry, input...) as scan_kernel_description
/// declares them, but the spine, which takes no out and no input. `carry` (when has_carry)
/// comes before the first element: the init of an exclusive scan, or the total of the parts
/// before this one on another device.
namespace scan_kernel {
inline constexpr const char* lookback = "kiln_scan_lookback";
inline constexpr const char* reduce = "kiln_scan_reduce";
inline constexpr const char* spine = "kiln_scan_spine";
inline constexpr const char* downsweep = "kiln_scan_downsweep";
}  // namespace scan_kernel

/// A scan-family kernel's parameters (the chunk kernels' too, scan_chunks.hpp): n, then `out`
/// where `with_out` (scattering programs, whose input writes through its own parameters, take
/// none), then the scratch `kiln_temp`, `has_carry` and `carry` of op's value type, then the
/// input expression's where `with_input`.
kernel_description scan_kernel_description(const char* name, const scan_operation& op,
                                           bool with_out, bool with_input);
/// The tile kernels `schedule` runs, in launch order (single_pass: the look-back; multi_pass:
/// reduce, spine, downsweep).
std::vector<const char*> scan_kernel_names(scan_schedule schedule);
/// The tile kernels of a program for `op` under `schedule` (`scatter`: a scattering program).
std::vector<kernel_description> scan_kernels(const scan_operation& op, bool scatter,
                                             scan_schedule schedule);
/// A scan's tile program: `out` gets the scan of the input's values.
std::string scan_program_source(const scan_operation& op, const declare_input<scan_input>& input,
                                const scan_policy& policy, bool exclusive);
/// Stream compaction's tile program: a scan of `count` (compaction_input::keep per element)
/// whose tiles stage their kept elements and write them at once (scan_policy::staged_writes)
/// or run the input's scatter code per element.
std::string compaction_tile_program_source(const scan_operation& count,
                                           const declare_input<compaction_input>& input,
                                           const scan_policy& policy);
/// reduce_by_key's tile program: a scan of `pairs` (segment_operation) whose input writes the
/// runs (reduce_by_key_input::scatter).
std::string reduce_by_key_tile_program_source(const scan_operation& pairs,
                                              const declare_input<reduce_by_key_input>& input,
                                              const scan_policy& policy);

/// An OpenCL C `ulong` expression built with C++ operators, so that one template computes a
/// number on the host and writes the same computation into a kernel.
struct ulong_text {
    std::string text;
    ulong_text(std::string expression) : text(std::move(expression)) {}
    ulong_text(std::size_t value) : text(std::to_string(value) + "UL") {}
    friend ulong_text operator+(const ulong_text& a, const ulong_text& b) {
        return {"(" + a.text + " + " + b.text + ")"};
    }
    friend ulong_text operator*(const ulong_text& a, const ulong_text& b) {
        return {"(" + a.text + " * " + b.text + ")"};
    }
    friend ulong_text operator/(const ulong_text& a, const ulong_text& b) {
        return {"(" + a.text + " / " + b.text + ")"};
    }
};

/// The tile kernels' device scratch (one temporary-pool lease) for `tiles` tiles of values of
/// `value_bytes`:
///     [0, 64)        ticket counter (uint): tiles take ids in the order they start
///     [64, 128)      total: the combination of the whole part (and carry), for the host
///     [128, +s)      look-back state per tile: flag and value, or the flag alone (8 bytes);
///                    s = 8 * tiles rounded up to 16 bytes
///     [.., +s)       look-back state per window of tiles (single_pass_lookback.cpp), as many
///                    as tiles at most
///     [.., +w*tiles) tile aggregates, in slots of w = 8 bytes (16 for 16-byte values)
///     [.., +w*tiles) tile prefixes (reduce-then-scan's exclusive ones)
///     [.., +w*tiles) window aggregates
///     [.., +w*tiles) window prefixes
/// Only the first zeroed_bytes() need zeroing, for the look-back path. The offsets are computed
/// over Number: std::size_t for the host's allocation, ulong_text for the kernels' pointers
/// (`tiles` then names the kernel's variable), so both read the one layout.
template <class Number = std::size_t>
struct scan_scratch_layout {
    Number tiles;
    std::size_t value_bytes;

    static constexpr std::size_t ticket_offset() { return 0; }
    static constexpr std::size_t total_offset() { return 64; }
    static constexpr std::size_t states_offset() { return 128; }
    /// A tile's aggregate or prefix slot.
    std::size_t slot_bytes() const { return value_bytes <= 8 ? 8 : 16; }
    /// One state region: a word per tile, rounded up to 16 bytes.
    Number state_bytes() const {
        return (tiles + std::size_t{1}) / std::size_t{2} * std::size_t{16};
    }
    Number window_states_offset() const { return Number(states_offset()) + state_bytes(); }
    /// The ticket, the total and the states: what the look-back path zeroes first.
    Number zeroed_bytes() const { return window_states_offset() + state_bytes(); }
    Number aggregates_offset() const { return zeroed_bytes(); }
    Number prefixes_offset() const { return aggregates_offset() + tiles * slot_bytes(); }
    Number window_aggregates_offset() const { return prefixes_offset() + tiles * slot_bytes(); }
    Number window_prefixes_offset() const {
        return window_aggregates_offset() + tiles * slot_bytes();
    }
    Number bytes() const { return window_prefixes_offset() + tiles * slot_bytes(); }
};

}  // namespace kiln::detail
#pragma GCC visibility pop
