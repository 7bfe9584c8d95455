// SPDX-License-Identifier: Apache-2.0
// Devices: enumeration across backends, summaries, filters and the default choice.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <kiln/runtime/device.hpp>
#include <sstream>

#include "backend/backend.hpp"
#include "runtime/backends.hpp"
#include "runtime/device_identity.hpp"
#include "runtime/device_label.hpp"
#include "runtime/json_text.hpp"

namespace kiln {

std::string_view to_string(backend_kind kind) noexcept {
    return kind == backend_kind::cuda ? "cuda" : "opencl";
}

std::string_view to_string(device_type type) noexcept {
    switch (type) {
        case device_type::cpu:
            return "cpu";
        case device_type::gpu:
            return "gpu";
        case device_type::accelerator:
            return "accelerator";
        case device_type::other:
            return "other";
    }
    return "other";
}

bool device_properties::has_extension(std::string_view name) const noexcept {
    return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

double device_properties::peak_memory_bandwidth_gb_per_s() const noexcept {
    // Double data rate: two transfers per memory clock over the whole bus.
    return 2.0 * memory_clock_mhz * 1e6 * (memory_bus_width_bits / 8.0) / 1e9;
}

device::device(std::shared_ptr<detail::device_impl> impl) noexcept : impl_(std::move(impl)) {}

detail::device_impl& device::impl() const {
    if (!impl_) throw invalid_argument_error("kiln::device", "this device object is empty");
    return *impl_;
}

const device_properties& device::properties() const {
    return impl().properties();
}

std::size_t device::index() const {
    const auto& all = devices();
    auto found = std::find(all.begin(), all.end(), *this);
    return static_cast<std::size_t>(found - all.begin());
}

std::string detail::device_label(const device& dev) {
    const std::size_t index = dev.index();
    return (index < devices().size() ? "device " + std::to_string(index)
                                     : std::string("a wrapped device")) +
           " (" + dev.name() + ", " + std::string(to_string(dev.backend())) + ")";
}

std::string detail::device_label_of(const void* identity) {
    for (const device& dev : devices())
        if (dev.identity() == identity) return device_label(dev);
    return "another device";
}

namespace {

// One table drives both the text summary and the JSON, so the two never disagree.
struct property_row {
    const char* label;
    const char* json_key;
    std::function<std::string(const device_properties&)> text;
    bool numeric;
    bool cuda_only;
};

std::string bytes_text(std::uint64_t bytes) {
    return std::to_string(bytes);
}

const std::vector<property_row>& property_table() {
    using p = const device_properties&;
    static const std::vector<property_row> rows = {
        {"backend", "backend", [](p d) { return std::string(to_string(d.backend)); }, false, false},
        {"type", "type", [](p d) { return std::string(to_string(d.type)); }, false, false},
        {"vendor", "vendor", [](p d) { return d.vendor; }, false, false},
        {"platform", "platform", [](p d) { return d.platform; }, false, false},
        {"API version", "api_version", [](p d) { return d.api_version; }, false, false},
        {"driver version", "driver_version", [](p d) { return d.driver_version; }, false, false},
        {"compiler", "compiler", [](p d) { return d.compiler; }, false, false},
        {"address bits", "address_bits", [](p d) { return std::to_string(d.address_bits); }, true,
         false},
        {"global memory (bytes)", "global_memory_bytes",
         [](p d) { return bytes_text(d.global_memory_bytes); }, true, false},
        {"local memory (bytes)", "local_memory_bytes",
         [](p d) { return bytes_text(d.local_memory_bytes); }, true, false},
        {"constant memory (bytes)", "constant_memory_bytes",
         [](p d) { return bytes_text(d.constant_memory_bytes); }, true, false},
        {"max allocation (bytes)", "max_allocation_bytes",
         [](p d) { return bytes_text(d.max_allocation_bytes); }, true, false},
        {"compute units", "compute_units", [](p d) { return std::to_string(d.compute_units); },
         true, false},
        {"clock (MHz)", "clock_mhz", [](p d) { return std::to_string(d.clock_mhz); }, true, false},
        {"max work-group size", "max_work_group_size",
         [](p d) { return std::to_string(d.max_work_group_size); }, true, false},
        {"max work-item sizes", "max_work_item_sizes",
         [](p d) {
             return "[" + std::to_string(d.max_work_item_sizes[0]) + ", " +
                    std::to_string(d.max_work_item_sizes[1]) + ", " +
                    std::to_string(d.max_work_item_sizes[2]) + "]";
         },
         true, false},
        {"memory base alignment (bytes)", "memory_base_alignment_bytes",
         [](p d) { return std::to_string(d.memory_base_alignment_bytes); }, true, false},
        {"double precision", "double_precision",
         [](p d) { return std::string(d.double_precision ? "true" : "false"); }, true, false},
        {"unified memory", "unified_memory",
         [](p d) { return std::string(d.unified_memory ? "true" : "false"); }, true, false},
        {"sub-group size", "sub_group_size", [](p d) { return std::to_string(d.sub_group_size); },
         true, false},
        {"work-group collectives", "work_group_collectives",
         [](p d) { return std::string(d.work_group_collectives ? "true" : "false"); }, true, false},
        {"compute capability", "compute_capability",
         [](p d) {
             return std::to_string(d.compute_capability_major) + "." +
                    std::to_string(d.compute_capability_minor);
         },
         false, true},
        {"L2 cache (bytes)", "l2_cache_bytes", [](p d) { return bytes_text(d.l2_cache_bytes); },
         true, true},
        {"shared memory per block (bytes)", "shared_memory_per_block_bytes",
         [](p d) { return bytes_text(d.shared_memory_per_block_bytes); }, true, true},
        {"shared memory per SM (bytes)", "shared_memory_per_multiprocessor_bytes",
         [](p d) { return bytes_text(d.shared_memory_per_multiprocessor_bytes); }, true, true},
        {"memory bus width (bits)", "memory_bus_width_bits",
         [](p d) { return std::to_string(d.memory_bus_width_bits); }, true, true},
        {"memory clock (MHz)", "memory_clock_mhz",
         [](p d) { return std::to_string(d.memory_clock_mhz); }, true, true},
        {"peak memory bandwidth (GB/s)", "peak_memory_bandwidth_gb_per_s",
         [](p d) {
             char text[32];
             std::snprintf(text, sizeof text, "%.1f", d.peak_memory_bandwidth_gb_per_s());
             return std::string(text);
         },
         true, true},
    };
    return rows;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
    return lower(haystack).find(lower(needle)) != std::string::npos;
}

}  // namespace

std::string device::summary() const {
    const auto& props = properties();
    std::ostringstream out;
    out << props.name << "\n";
    for (const auto& row : property_table()) {
        if (row.cuda_only && props.backend != backend_kind::cuda) continue;
        out << "  " << row.label << ": " << row.text(props) << "\n";
    }
    out << "  extensions:";
    for (const auto& ext : props.extensions) out << " " << ext;
    out << "\n";
    return out.str();
}

std::string device::to_json() const {
    const auto& props = properties();
    std::ostringstream out;
    out << "{\"index\": " << index() << ", \"name\": " << detail::json_string(props.name);
    for (const auto& row : property_table()) {
        if (row.cuda_only && props.backend != backend_kind::cuda) continue;
        out << ", \"" << row.json_key << "\": ";
        if (row.numeric)
            out << row.text(props);
        else
            out << detail::json_string(row.text(props));
    }
    out << ", \"extensions\": [";
    for (std::size_t i = 0; i < props.extensions.size(); ++i)
        out << (i ? ", " : "") << detail::json_string(props.extensions[i]);
    out << "]}";
    return out.str();
}

// --- filters ------------------------------------------------------------------------------

filter::filter(std::function<bool(const device&)> predicate) {
    transform_ = [predicate = std::move(predicate)](list devices) {
        std::erase_if(devices, [&](const device& d) { return !predicate(d); });
        return devices;
    };
}

filter filter::from_list_transform(std::function<list(list)> transform) {
    filter f;
    f.transform_ = std::move(transform);
    return f;
}

filter operator&&(filter a, filter b) {
    return filter::from_list_transform([a = std::move(a), b = std::move(b)](filter::list devices) {
        return b(a(std::move(devices)));
    });
}

namespace {
bool contains_device(const filter::list& devices, const device& d) {
    return std::find(devices.begin(), devices.end(), d) != devices.end();
}
}  // namespace

filter operator||(filter a, filter b) {
    return filter::from_list_transform([a = std::move(a), b = std::move(b)](filter::list devices) {
        auto kept_a = a(devices);
        auto kept_b = b(devices);
        std::erase_if(devices, [&](const device& d) {
            return !contains_device(kept_a, d) && !contains_device(kept_b, d);
        });
        return devices;
    });
}

filter operator!(filter a) {
    return filter::from_list_transform([a = std::move(a)](filter::list devices) {
        auto kept = a(devices);
        std::erase_if(devices, [&](const device& d) { return contains_device(kept, d); });
        return devices;
    });
}

namespace filters {

filter all() {
    return filter([](const device&) { return true; });
}
filter gpu() {
    return filter([](const device& d) { return d.type() == device_type::gpu; });
}
filter cpu() {
    return filter([](const device& d) { return d.type() == device_type::cpu; });
}
filter accelerator() {
    return filter([](const device& d) { return d.type() == device_type::accelerator; });
}
filter backend(backend_kind kind) {
    return filter([kind](const device& d) { return d.backend() == kind; });
}
filter named(std::string_view text) {
    return filter([text = std::string(text)](const device& d) {
        const auto& p = d.properties();
        return contains_ignoring_case(p.name, text) || contains_ignoring_case(p.vendor, text) ||
               contains_ignoring_case(p.platform, text);
    });
}
filter vendor(std::string_view text) {
    return filter([text = std::string(text)](const device& d) {
        return contains_ignoring_case(d.properties().vendor, text);
    });
}
filter platform(std::string_view text) {
    return filter([text = std::string(text)](const device& d) {
        return contains_ignoring_case(d.properties().platform, text);
    });
}
filter double_precision() {
    return filter([](const device& d) { return d.properties().double_precision; });
}
filter min_global_memory(std::uint64_t bytes) {
    return filter([bytes](const device& d) { return d.properties().global_memory_bytes >= bytes; });
}
filter extension(std::string_view name) {
    return filter(
        [name = std::string(name)](const device& d) { return d.properties().has_extension(name); });
}
filter first(std::size_t count) {
    return filter::from_list_transform([count](filter::list devices) {
        if (devices.size() > count) devices.resize(count);
        return devices;
    });
}
filter any(std::function<bool(const device&)> predicate) {
    return filter(std::move(predicate));
}

filter from_spec(std::string_view spec) {
    // One filter applying the terms in turn. Chaining them with && instead copied the growing
    // chain at every term, quadratic in the number of terms (30000 terms took 75 s), and nested
    // one call per term when applied.
    std::vector<filter> terms;
    std::size_t start = 0;
    while (start <= spec.size()) {
        std::size_t end = spec.find(',', start);
        if (end == std::string_view::npos) end = spec.size();
        std::string term = lower(spec.substr(start, end - start));
        start = end + 1;
        // Trim only: device names contain spaces ("GeForce RTX 4090") that must still match.
        auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
        term.erase(std::find_if_not(term.rbegin(), term.rend(), is_space).base(), term.end());
        term.erase(term.begin(), std::find_if_not(term.begin(), term.end(), is_space));
        if (term.empty()) continue;
        std::size_t index = 0;
        auto [ptr, ec] = std::from_chars(term.data(), term.data() + term.size(), index);
        if (ec == std::errc() && ptr == term.data() + term.size()) {
            terms.push_back(filter([index](const device& d) { return d.index() == index; }));
        } else if (term == "gpu") {
            terms.push_back(gpu());
        } else if (term == "cpu") {
            terms.push_back(cpu());
        } else if (term == "accelerator") {
            terms.push_back(accelerator());
        } else if (term == "cuda") {
            terms.push_back(backend(backend_kind::cuda));
        } else if (term == "opencl") {
            terms.push_back(backend(backend_kind::opencl));
        } else {
            terms.push_back(named(term));
        }
    }
    if (terms.empty())
        throw invalid_argument_error("kiln::filters::from_spec", "empty device specification");
    return filter::from_list_transform([terms = std::move(terms)](filter::list devices) {
        for (const filter& term : terms) devices = term(std::move(devices));
        return devices;
    });
}

}  // namespace filters

// --- enumeration and the default -----------------------------------------------------------

const std::vector<device>& devices() {
    static const std::vector<device> all = [] {
        std::vector<device> list;
        for (const auto& b : detail::all_backends())
            for (auto& impl : b->devices()) list.emplace_back(std::move(impl));
        return list;
    }();
    return all;
}

std::vector<device> devices(const filter& f) {
    return f(devices());
}

device select_device(std::string_view spec) {
    auto matching = devices(filters::from_spec(spec));
    if (matching.empty()) {
        std::string known;
        for (const auto& d : devices())
            known += "\n  " + std::to_string(d.index()) + ": " + d.name() + " (" +
                     std::string(to_string(d.backend())) + ", " + std::string(to_string(d.type())) +
                     ")";
        throw invalid_argument_error("kiln::select_device",
                                     "no device matches \"" + std::string(spec) + "\"; devices:" +
                                         (known.empty() ? std::string(" none") : known));
    }
    return matching.front();
}

namespace {

// A GPU's strength for choosing the default: parallel throughput, roughly units times clock.
// Between two views of the same NVIDIA GPU the CUDA backend wins: it launches faster and
// exposes more of the hardware than NVIDIA's OpenCL.
std::pair<double, bool> default_rank(const device& d) {
    const auto& p = d.properties();
    return {static_cast<double>(p.compute_units) * std::max(1u, p.clock_mhz),
            p.backend == backend_kind::cuda};
}

}  // namespace

device default_device() {
    if (const char* spec = std::getenv("KILN_DEVICE"); spec != nullptr && *spec != '\0')
        return select_device(spec);
    const auto& all = devices();
    if (all.empty())
        throw error("kiln::default_device", 0, "KILN_NO_DEVICE",
                    "no OpenCL or CUDA device found (is an OpenCL driver such as pocl-opencl-icd "
                    "installed?)");
    auto gpus = devices(filters::gpu());
    if (!gpus.empty())
        return *std::max_element(gpus.begin(), gpus.end(), [](const device& a, const device& b) {
            return default_rank(a) < default_rank(b);
        });
    auto cpus = devices(filters::cpu());
    return cpus.empty() ? all.front() : cpus.front();
}

}  // namespace kiln

std::string kiln::detail::device_identity(const device_properties& p) {
    return std::string(to_string(p.backend)) + "|" + p.platform + "|" + p.name + "|" + p.vendor +
           "|" + p.driver_version + "|" + std::to_string(p.compute_units);
}
