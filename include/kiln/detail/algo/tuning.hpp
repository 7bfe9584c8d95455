// SPDX-License-Identifier: Apache-2.0
// Tuning of the algorithm kernels as data: one generic table, keyed by the family that declares
// its rows, its tuning type and its plan in its own folder (src/algo/<family>/).
//
// A family's key is a tag type in namespace algorithm (scan_tuning.hpp's algorithm::scan_rows):
// `using tuning` names its numbers' type (families may share one: scan, select and reduce_by_key
// take scan_policy), `name` its name in messages, and `rows()` its rows, defined beside its
// kernels. A row's numbers become compile-time constants of the generated kernels (work-group
// size through reqd_work_group_size, items per work-item, radix bits, local tile sizes), so they
// are part of every algorithm program's cache key. Rows are read from the top: the first whose
// device class matches wins, from specific (a backend, vendor and compute capability) to generic
// (any GPU, any CPU, anything), which is the fallback chain, and every row says in one line where
// its numbers were measured (docs/benchmarks.md, by section). The family's plan turns a row and a
// device's properties into its algorithm's shape.
#pragma once
#pragma GCC visibility push(default)

#include <any>
#include <concepts>
#include <cstddef>
#include <kiln/detail/device_class.hpp>
#include <kiln/detail/scoped_override.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/device.hpp>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>

namespace kiln::detail {

/// A row of a family's table: its numbers, the devices they apply to, and where they were
/// measured or why they were chosen.
template <class Tuning>
struct tuning_row {
    device_class devices;
    Tuning tuning;
    std::string_view provenance;
};

/// A family's key in the tuning table.
template <class Family>
concept tuning_family = requires {
    typename Family::tuning;
    { Family::name } -> std::convertible_to<std::string_view>;
    { Family::rows() } -> std::same_as<std::span<const tuning_row<typename Family::tuning>>>;
};

/// The mutex under which the test overrides are set and read.
std::mutex& tuning_override_mutex();
/// The tuning scoped_algorithm_policy forces for the family whose tag is `family`, empty where
/// none lives; stable for the program's life. Read and written under tuning_override_mutex.
std::any& forced_tuning_slot(std::type_index family);

/// A family's rows and its test override.
template <tuning_family Family>
struct tuning_table {
    using tuning = typename Family::tuning;

    /// The first row matching a device of `props`, or nullptr.
    static const tuning_row<tuning>* first_row(const device_properties& props) {
        for (const tuning_row<tuning>& row : Family::rows())
            if (matches(row.devices, props)) return &row;
        return nullptr;
    }
    /// `forced` where set, else the first matching row's numbers: what every plan starts from.
    /// Throws invalid_argument_error where no row matches.
    static tuning tuning_for(const device_properties& props, const std::optional<tuning>& forced) {
        if (forced) return *forced;
        if (const tuning_row<tuning>* row = first_row(props)) return row->tuning;
        throw invalid_argument_error(
            "kiln::detail::tuning_table",
            "no tuning row for " + std::string(Family::name) + " on " + props.name);
    }
    /// The tuning a scoped_algorithm_policy forces now, if one lives.
    static std::optional<tuning> forced() {
        std::any& slot = forced_tuning_slot(typeid(Family));
        std::lock_guard lock(tuning_override_mutex());
        return slot.has_value() ? std::optional<tuning>(std::any_cast<tuning>(slot)) : std::nullopt;
    }
};

/// What every scoped test override derives from, so that a benchmark can hold several families'
/// overrides in one container.
class scoped_tuning_override {
  public:
    virtual ~scoped_tuning_override() = default;
};

/// Test-only: while alive, every device uses `policy` for `Family`'s algorithm. Restores the
/// previous state when destroyed. Not thread-safe with algorithms running on other threads.
/// Spelled `scoped_algorithm_policy(algorithm::scan, policy)`, or with the tuning alone where a
/// family's header gives the deduction (`scoped_algorithm_policy(radix_sort_tuning{...})`).
template <tuning_family Family>
class scoped_algorithm_policy : public scoped_tuning_override {
  public:
    using tuning = typename Family::tuning;
    explicit scoped_algorithm_policy(tuning policy)
        : override_(forced_tuning_slot(typeid(Family)), std::any(policy), tuning_override_mutex()) {
    }
    scoped_algorithm_policy(Family, tuning policy) : scoped_algorithm_policy(policy) {}

  private:
    scoped_override<std::any> override_;
};

/// The test overrides every plan may read, as plain data (scoped_forward_progress,
/// scoped_local_memory_group_scans). Plans read them from their arguments, never from global
/// state, so that a test of a plan leaves them empty or writes them by hand.
struct shared_overrides {
    std::optional<bool> groups_make_progress;
    bool local_memory_group_scans = false;
};
/// The shared overrides in scope now.
shared_overrides shared_overrides_in_force();

/// A family's plan's overrides: its forced tuning (scoped_algorithm_policy) beside the shared
/// ones.
template <tuning_family Family>
struct tuning_overrides : shared_overrides {
    std::optional<typename Family::tuning> tuning;
};
/// `Family`'s overrides in scope now.
template <tuning_family Family>
tuning_overrides<Family> overrides_in_force() {
    return {shared_overrides_in_force(), tuning_table<Family>::forced()};
}

/// Whether work-groups that took lower ticket-ordered ids (a global atomic counter, read at the
/// start of each group) always make progress while later groups wait for them: what a
/// single-pass scan with decoupled look-back needs. From the device's quirks; overridable in
/// tests.
bool groups_make_progress(const device& dev);
/// Whether the scan's chained chunk kernel (scan_chunks.hpp) may run on `dev`: chunks that took
/// earlier tickets keep running while later ones wait, as on GPUs that promise forward progress
/// and on CPU devices, whose work-groups run start to end on threads of their own or one after
/// another (scoped_forward_progress overrides this too), and a global fence orders a chunk's
/// published values before its flag.
bool chunk_groups_make_progress(const device& dev);
/// Whether mem_fence(CLK_GLOBAL_MEM_FENCE) orders a work-item's global writes for every
/// work-group of the device, as look-back states kept apart from their flag need. From the
/// device's quirks.
bool global_fence_orders_device(const device& dev);

/// What the generated code may use on a device of `props`: its target features, with no
/// sub-group size under the local_memory_group_scans override.
target_features plan_target(const device_properties& props, const shared_overrides& overrides);
/// The sub-group size group scans of `work_group_size` work-items may shuffle within on
/// `target` (its sub_group_size, where it divides the group and shuffles exist), else 0.
std::size_t group_scan_sub_group_size(const target_features& target, std::size_t work_group_size);
/// The sub-group size algorithms' group scans may shuffle within on `dev` for groups of
/// `work_group_size` under the overrides in force, 0 where they go through local memory.
std::size_t group_scan_sub_group_size(const device& dev, std::size_t work_group_size);

/// Test-only: while alive, policies' targets have no sub-group size, so group scans and the radix
/// multi-split take their local-memory paths on every device, and tests run both paths where a
/// device has sub-groups.
class scoped_local_memory_group_scans {
  public:
    scoped_local_memory_group_scans();

  private:
    scoped_override<bool> override_;
};

/// Test-only: while alive, groups_make_progress answers `value` for every device, e.g. to run
/// the look-back path on a device where it is safe but not promised. Restores when destroyed.
class scoped_forward_progress {
  public:
    explicit scoped_forward_progress(bool value);

  private:
    scoped_override<std::optional<bool>> override_;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
