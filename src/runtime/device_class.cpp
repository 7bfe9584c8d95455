// SPDX-License-Identifier: Apache-2.0
// Matching devices against the classes that tables of numbers are keyed by.
#include <algorithm>
#include <cctype>
#include <kiln/detail/device_class.hpp>
#include <string>

namespace kiln::detail {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::size_t sub_group_size_of(const device_properties& props) {
    const bool nvidia = lower(props.vendor).find("nvidia") != std::string::npos ||
                        props.backend == backend_kind::cuda;
    return nvidia && props.type == device_type::gpu ? 32 : 0;
}

bool matches(const device_class& c, const device_properties& props) {
    if (c.backend && *c.backend != props.backend) return false;
    if (c.type && *c.type != props.type) return false;
    if (!c.vendor.empty()) {
        const std::string wanted = lower(c.vendor);
        if (lower(props.vendor).find(wanted) == std::string::npos &&
            lower(props.platform).find(wanted) == std::string::npos)
            return false;
    }
    if (c.min_compute_capability > 0 &&
        (props.backend != backend_kind::cuda ||
         props.compute_capability_major * 10 + props.compute_capability_minor <
             c.min_compute_capability))
        return false;
    return c.sub_group_size == 0 || c.sub_group_size == sub_group_size_of(props);
}

}  // namespace kiln::detail
