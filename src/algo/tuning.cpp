// SPDX-License-Identifier: Apache-2.0
// The tuning table's test overrides (each family's forced tuning, by its tag's type), the shared
// overrides and the forward-progress facts every family's plan may read.
#include <kiln/detail/algo/tuning.hpp>
#include <map>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

std::map<std::type_index, std::any> forced_tunings;
std::optional<bool> progress_override;
bool local_memory_group_scans = false;

}  // namespace

std::mutex& tuning_override_mutex() {
    static std::mutex mutex;
    return mutex;
}

std::any& forced_tuning_slot(std::type_index family) {
    std::lock_guard lock(tuning_override_mutex());
    // std::map: a slot stays where it is while others are added.
    return forced_tunings[family];
}

shared_overrides shared_overrides_in_force() {
    std::lock_guard lock(tuning_override_mutex());
    return {.groups_make_progress = progress_override,
            .local_memory_group_scans = local_memory_group_scans};
}

target_features plan_target(const device_properties& props, const shared_overrides& overrides) {
    target_features target = target_features_for(props);
    if (overrides.local_memory_group_scans) target.sub_group_size = 0;
    return target;
}

std::size_t group_scan_sub_group_size(const target_features& target, std::size_t work_group_size) {
    const std::size_t size = target.shuffles ? target.sub_group_size : 0;
    return size > 0 && work_group_size % size == 0 ? size : 0;
}

std::size_t group_scan_sub_group_size(const device& dev, std::size_t work_group_size) {
    return group_scan_sub_group_size(plan_target(dev.properties(), shared_overrides_in_force()),
                                     work_group_size);
}

bool groups_make_progress(const device& dev) {
    return shared_overrides_in_force().groups_make_progress.value_or(
        device_quirks_for(dev.properties()).groups_make_progress);
}

bool chunk_groups_make_progress(const device& dev) {
    const device_quirks quirks = device_quirks_for(dev.properties());
    const bool progress = shared_overrides_in_force().groups_make_progress.value_or(
        quirks.groups_make_progress || quirks.groups_run_on_threads);
    return progress && quirks.global_fence_orders_device;
}

bool global_fence_orders_device(const device& dev) {
    // Not overridable: a test that forces look-back must not run it where it is wrong.
    return device_quirks_for(dev.properties()).global_fence_orders_device;
}

scoped_local_memory_group_scans::scoped_local_memory_group_scans()
    : override_(local_memory_group_scans, true, tuning_override_mutex()) {}

scoped_forward_progress::scoped_forward_progress(bool value)
    : override_(progress_override, value, tuning_override_mutex()) {}

}  // namespace kiln::detail
