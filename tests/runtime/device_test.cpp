// SPDX-License-Identifier: Apache-2.0
// Devices: enumeration, properties, summary() / to_json(), filters, KILN_DEVICE and the default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "runtime/device_identity.hpp"
#include "support/device_param.hpp"
#include "test_helpers.hpp"

namespace {

using kiln::test::scoped_env;

std::vector<kiln::device> keep_if(bool (*predicate)(const kiln::device&)) {
    std::vector<kiln::device> kept;
    for (const auto& d : kiln::devices())
        if (predicate(d)) kept.push_back(d);
    return kept;
}

std::string upper(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
}

// --- the whole list ------------------------------------------------------------------------

TEST(device_list, is_stable_and_indexed_by_position) {
    const auto& all = kiln::devices();
    ASSERT_FALSE(all.empty()) << "no OpenCL or CUDA device: install pocl-opencl-icd";
    EXPECT_EQ(&all, &kiln::devices()) << "the list is built once";
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(all[i].index(), i);
        EXPECT_TRUE(all[i]);
        for (std::size_t j = 0; j < all.size(); ++j) EXPECT_EQ(all[i] == all[j], i == j);
    }
    EXPECT_FALSE(kiln::device()) << "a default-constructed device is empty";
    EXPECT_THROW((void)kiln::device().properties(), kiln::invalid_argument_error);
}

TEST(device_list, type_filters_partition_by_type) {
    EXPECT_EQ(kiln::devices(kiln::filters::gpu()),
              keep_if([](const kiln::device& d) { return d.is_gpu(); }));
    EXPECT_EQ(kiln::devices(kiln::filters::cpu()),
              keep_if([](const kiln::device& d) { return d.is_cpu(); }));
    EXPECT_EQ(kiln::devices(kiln::filters::accelerator()), keep_if([](const kiln::device& d) {
                  return d.type() == kiln::device_type::accelerator;
              }));
    EXPECT_EQ(kiln::devices(kiln::filters::double_precision()),
              keep_if([](const kiln::device& d) { return d.properties().double_precision; }));
    EXPECT_EQ(
        kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl)),
        keep_if([](const kiln::device& d) { return d.backend() == kiln::backend_kind::opencl; }));
    EXPECT_EQ(kiln::devices(kiln::filters::all()), kiln::devices());
}

TEST(device_list, combinators_follow_boolean_logic_and_keep_the_original_order) {
    using namespace kiln::filters;
    const auto& every = kiln::devices();
    EXPECT_EQ(kiln::devices(!gpu()), keep_if([](const kiln::device& d) { return !d.is_gpu(); }));
    EXPECT_EQ(kiln::devices(gpu() || cpu()),
              keep_if([](const kiln::device& d) { return d.is_gpu() || d.is_cpu(); }));
    EXPECT_EQ(kiln::devices(cpu() && double_precision()), keep_if([](const kiln::device& d) {
                  return d.is_cpu() && d.properties().double_precision;
              }));
    EXPECT_TRUE(kiln::devices(gpu() && cpu()).empty());
    EXPECT_TRUE(kiln::devices(!all()).empty());
    EXPECT_EQ(kiln::devices(!!cpu()), kiln::devices(cpu()));

    // first(n) selects from what is left, so "the first CPU" differs from "first, if a CPU".
    EXPECT_EQ(kiln::devices(first(1)), std::vector<kiln::device>(every.begin(), every.begin() + 1));
    EXPECT_EQ(kiln::devices(first(0)).size(), 0u);
    EXPECT_EQ(kiln::devices(first(every.size() + 5)), every);
    auto cpus = kiln::devices(cpu());
    EXPECT_EQ(kiln::devices(cpu() && first(1)).size(), std::min<std::size_t>(cpus.size(), 1));
    if (!cpus.empty()) {
        EXPECT_EQ(kiln::devices(cpu() && first(1)).front(), cpus.front());
    }

    // || keeps devices in the list's order, not in the order the operands found them.
    auto last = every.back();
    auto either = kiln::devices(any([&](const kiln::device& d) { return d == last; }) || first(1));
    ASSERT_FALSE(either.empty());
    EXPECT_EQ(either.front(), every.front());
    EXPECT_EQ(either.back(), last);
}

TEST(device_list, from_spec_rejects_an_empty_specification) {
    EXPECT_THROW((void)kiln::filters::from_spec(""), kiln::invalid_argument_error);
    EXPECT_THROW((void)kiln::filters::from_spec(" , ,"), kiln::invalid_argument_error);
}

TEST(device_list, default_is_the_strongest_gpu_else_a_cpu) {
    scoped_env no_override("KILN_DEVICE", std::nullopt);
    auto chosen = kiln::default_device();
    auto gpus = kiln::devices(kiln::filters::gpu());
    if (!gpus.empty()) {
        EXPECT_TRUE(chosen.is_gpu());
        for (const auto& g : gpus)
            EXPECT_GE(std::uint64_t(chosen.properties().compute_units) *
                          std::max(1u, chosen.properties().clock_mhz),
                      std::uint64_t(g.properties().compute_units) *
                          std::max(1u, g.properties().clock_mhz));
    } else {
        EXPECT_TRUE(chosen.is_cpu());
        EXPECT_EQ(chosen, kiln::devices(kiln::filters::cpu()).front());
    }
    scoped_env empty_override("KILN_DEVICE", "");
    EXPECT_EQ(kiln::default_device(), chosen) << "an empty KILN_DEVICE means no override";
}

TEST(device_list, kiln_device_selects_by_type) {
    for (const char* type : {"gpu", "cpu", "accelerator"}) {
        scoped_env spec("KILN_DEVICE", type);
        auto matching = kiln::devices(kiln::filters::from_spec(type));
        if (matching.empty()) {
            EXPECT_THROW((void)kiln::default_device(), kiln::invalid_argument_error) << type;
        } else {
            auto chosen = kiln::default_device();
            EXPECT_EQ(std::string(kiln::to_string(chosen.type())), type);
            EXPECT_EQ(chosen, matching.front());
        }
    }
}

TEST(device_list, kiln_device_that_matches_nothing_is_a_clear_error) {
    scoped_env spec("KILN_DEVICE", "no-such-device-anywhere");
    try {
        (void)kiln::default_device();
        FAIL() << "expected kiln::invalid_argument_error";
    } catch (const kiln::invalid_argument_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("no-such-device-anywhere"), std::string::npos) << message;
        // The message lists what exists, so the user can correct the spec.
        for (const auto& d : kiln::devices())
            EXPECT_NE(message.find(d.name()), std::string::npos) << message;
    }
    scoped_env out_of_range("KILN_DEVICE", std::to_string(kiln::devices().size()));
    EXPECT_THROW((void)kiln::default_device(), kiln::invalid_argument_error);
}

// What kiln keeps on disk per device is keyed by its identity: a figure that moves between runs
// (PoCL's global memory size follows the memory free at start-up) must not change it, or every
// run leaves another entry for the same device.
TEST(device_identity, names_the_model_and_ignores_figures_that_move) {
    kiln::device_properties p;
    p.platform = "Portable Computing Language";
    p.name = "cpu-haswell-AMD EPYC";
    p.vendor = "AuthenticAMD";
    p.driver_version = "3.1";
    p.compute_units = 2;
    p.global_memory_bytes = 5003437056;
    const std::string identity = kiln::detail::device_identity(p);
    kiln::device_properties later = p;
    later.global_memory_bytes = 21837852672;
    later.max_allocation_bytes = 1u << 30;
    later.clock_mhz = 3000;
    EXPECT_EQ(kiln::detail::device_identity(later), identity);

    const auto differs = [&](auto change) {
        kiln::device_properties other = p;
        change(other);
        return kiln::detail::device_identity(other) != identity;
    };
    EXPECT_TRUE(differs([](auto& o) { o.backend = kiln::backend_kind::cuda; }));
    EXPECT_TRUE(differs([](auto& o) { o.platform = "NVIDIA CUDA"; }));
    EXPECT_TRUE(differs([](auto& o) { o.name = "cpu-skylake"; }));
    EXPECT_TRUE(differs([](auto& o) { o.vendor = "GenuineIntel"; }));
    EXPECT_TRUE(differs([](auto& o) { o.driver_version = "5.0"; }));
    EXPECT_TRUE(differs([](auto& o) { o.compute_units = 16; }));
}

// --- every device ------------------------------------------------------------------------

class device_props : public kiln::test::device_test {};

TEST_P(device_props, are_plausible) {
    const auto& p = device().properties();
    EXPECT_FALSE(p.name.empty());
    EXPECT_FALSE(p.vendor.empty());
    EXPECT_FALSE(p.platform.empty());
    EXPECT_FALSE(p.api_version.empty());
    EXPECT_FALSE(p.driver_version.empty());
    EXPECT_TRUE(p.address_bits == 32 || p.address_bits == 64) << p.address_bits;
    EXPECT_GT(p.global_memory_bytes, 0u);
    EXPECT_GT(p.local_memory_bytes, 0u);
    EXPECT_GT(p.max_allocation_bytes, 0u);
    EXPECT_LE(p.max_allocation_bytes, p.global_memory_bytes);
    EXPECT_GT(p.compute_units, 0u);
    EXPECT_GT(p.max_work_group_size, 0u);
    for (auto size : p.max_work_item_sizes) EXPECT_GT(size, 0u);
    EXPECT_GT(p.memory_base_alignment_bytes, 0u);
    EXPECT_EQ(kiln::device_sizeof_size_t(device()), p.address_bits / 8);
    if (p.backend == kiln::backend_kind::opencl && p.has_extension("cl_khr_fp64")) {
        EXPECT_TRUE(p.double_precision);
    }
}

TEST_P(device_props, summary_shows_everything_portable_code_needs) {
    const auto& p = device().properties();
    const std::string summary = device().summary();
    auto has = [&](const std::string& text) {
        EXPECT_NE(summary.find(text), std::string::npos) << "missing \"" << text << "\" in\n"
                                                         << summary;
    };
    has(p.name);
    has("type: " + std::string(kiln::to_string(p.type)));
    has("vendor: " + p.vendor);
    has("API version: " + p.api_version);
    has("driver version: " + p.driver_version);
    has("address bits: " + std::to_string(p.address_bits));
    has("global memory (bytes): " + std::to_string(p.global_memory_bytes));
    has("local memory (bytes): " + std::to_string(p.local_memory_bytes));
    has("constant memory (bytes): " + std::to_string(p.constant_memory_bytes));
    has("max allocation (bytes): " + std::to_string(p.max_allocation_bytes));
    has("compute units: " + std::to_string(p.compute_units));
    has("clock (MHz): " + std::to_string(p.clock_mhz));
    has("max work-group size: " + std::to_string(p.max_work_group_size));
    has("max work-item sizes: [" + std::to_string(p.max_work_item_sizes[0]) + ", " +
        std::to_string(p.max_work_item_sizes[1]) + ", " + std::to_string(p.max_work_item_sizes[2]) +
        "]");
    has("memory base alignment (bytes): " + std::to_string(p.memory_base_alignment_bytes));
    for (const auto& ext : p.extensions) has(" " + ext);
}

TEST_P(device_props, to_json_is_one_object_with_every_property) {
    const auto& p = device().properties();
    const std::string json = device().to_json();
    ASSERT_FALSE(json.empty());
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '}');
    EXPECT_EQ(json.find('\n'), std::string::npos) << "one line, for scripts";
    EXPECT_EQ(std::count(json.begin(), json.end(), '{'), std::count(json.begin(), json.end(), '}'));
    EXPECT_EQ(std::count(json.begin(), json.end(), '['), std::count(json.begin(), json.end(), ']'));
    auto has = [&](const std::string& text) {
        EXPECT_NE(json.find(text), std::string::npos) << "missing " << text << " in\n" << json;
    };
    has("\"index\": " + std::to_string(device().index()));
    has("\"backend\": \"" + std::string(kiln::to_string(p.backend)) + "\"");
    has("\"type\": \"" + std::string(kiln::to_string(p.type)) + "\"");
    has("\"address_bits\": " + std::to_string(p.address_bits));
    has("\"global_memory_bytes\": " + std::to_string(p.global_memory_bytes));
    has("\"max_allocation_bytes\": " + std::to_string(p.max_allocation_bytes));
    has("\"compute_units\": " + std::to_string(p.compute_units));
    has("\"max_work_group_size\": " + std::to_string(p.max_work_group_size));
    has(std::string("\"double_precision\": ") + (p.double_precision ? "true" : "false"));
    if (!p.extensions.empty()) has("\"extensions\": [\"" + p.extensions.front() + "\"");
}

TEST_P(device_props, filters_keep_or_drop_this_device_by_its_properties) {
    using namespace kiln::filters;
    const auto& p = device().properties();
    auto keeps = [&](const kiln::filter& f) {
        auto kept = f({device()});
        return kept.size() == 1 && kept.front() == device();
    };
    EXPECT_EQ(keeps(gpu()), device().is_gpu());
    EXPECT_EQ(keeps(cpu()), device().is_cpu());
    EXPECT_EQ(keeps(accelerator()), p.type == kiln::device_type::accelerator);
    EXPECT_EQ(keeps(!gpu()), !device().is_gpu());
    EXPECT_EQ(keeps(double_precision()), p.double_precision);
    EXPECT_TRUE(keeps(backend(p.backend)));

    // Substrings match without regard to case.
    EXPECT_TRUE(keeps(vendor(upper(p.vendor.substr(0, 3)))));
    EXPECT_TRUE(keeps(platform(p.platform.substr(p.platform.size() / 2))));
    EXPECT_TRUE(keeps(named(upper(p.name))));
    EXPECT_TRUE(keeps(named(p.platform)));
    EXPECT_FALSE(keeps(vendor("no such vendor")));
    EXPECT_FALSE(keeps(platform("no such platform")));
    EXPECT_FALSE(keeps(named("no such device")));

    EXPECT_TRUE(keeps(min_global_memory(p.global_memory_bytes)));
    EXPECT_FALSE(keeps(min_global_memory(p.global_memory_bytes + 1)));
    if (!p.extensions.empty()) {
        EXPECT_TRUE(keeps(extension(p.extensions.back())));
    }
    EXPECT_FALSE(keeps(extension("cl_kiln_no_such_extension")));
    EXPECT_FALSE(keeps(extension(p.extensions.empty() ? "x" : p.extensions.front().substr(1))))
        << "extensions match whole names, not substrings";

    EXPECT_TRUE(keeps(any([](const kiln::device& d) { return d.properties().compute_units > 0; })));
    EXPECT_FALSE(keeps(any([](const kiln::device&) { return false; })));
    EXPECT_TRUE(keeps(backend(p.backend) && named(p.name) && !vendor("no such vendor")));
    EXPECT_TRUE(keeps(vendor("no such vendor") || min_global_memory(1)));
    EXPECT_FALSE(keeps(vendor("no such vendor") || min_global_memory(p.global_memory_bytes + 1)));
}

TEST_P(device_props, select_device_understands_index_name_and_type_terms) {
    const auto index = std::to_string(device().index());
    EXPECT_EQ(kiln::select_device(index), device());
    EXPECT_EQ(kiln::select_device(" " + index + " "), device());
    EXPECT_EQ(kiln::select_device(std::string(kiln::to_string(device().backend())) + "," + index),
              device());
    EXPECT_EQ(kiln::select_device(std::string(kiln::to_string(device().type())) + ", " + index),
              device());
    // Names are matched whole, spaces included, whatever the case.
    EXPECT_EQ(kiln::select_device(upper(device().name())).name(), device().name());
    EXPECT_EQ(kiln::select_device(" " + device().name() + "\t").name(), device().name());
    EXPECT_THROW((void)kiln::select_device(index + ",no-such-device"),
                 kiln::invalid_argument_error);

    scoped_env spec("KILN_DEVICE", index);
    EXPECT_EQ(kiln::default_device(), device());
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(device_props);

}  // namespace
