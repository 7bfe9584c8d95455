// SPDX-License-Identifier: Apache-2.0
// The contracts between the host and generated kernels: kernel descriptions and their checked
// bindings, the scan family's scratch layouts, and the FFT's kernels, counters and program keys.
// Host only: nothing here needs a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <kiln/error.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "algo/key_changes.hpp"

namespace {

using kiln::detail::kernel_argument;
using kiln::detail::kernel_binding;
using kiln::detail::kernel_description;

kernel_description example() {
    kernel_description kernel("kiln_example");
    kernel.global<float>("out").global_const<float>("in").scalar<std::uint64_t>("n");
    return kernel;
}

/// A buffer argument of element type `type`, as make_argument makes one, without a device.
kernel_argument memory(std::string_view type) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::buffer;
    arg.element_type = type;
    return arg;
}

/// Runs `bind` and expects an invalid_argument_error whose message names the kernel, the slot
/// and `why`.
template <class Bind>
void expect_bind_error(Bind bind, const std::string& slot, const std::string& why) {
    try {
        bind();
        ADD_FAILURE() << "no error for slot " << slot;
    } catch (const kiln::invalid_argument_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("kiln_example"), std::string::npos) << message;
        EXPECT_NE(message.find("'" + slot + "'"), std::string::npos) << message;
        EXPECT_NE(message.find(why), std::string::npos) << message;
    }
}

TEST(kernel_description, declares_its_slots_in_order) {
    kiln::detail::source_builder b;
    b.begin_kernel("kiln_example");
    example().declare(b);
    b.begin_body();
    b.end_kernel();
    EXPECT_NE(b.str().find("kernel void kiln_example(\n    global float* out,\n    global const "
                           "float* in,\n    ulong n\n)"),
              std::string::npos)
        << b.str();
}

TEST(kernel_description, a_slot_declared_twice_is_refused) {
    kernel_description kernel("kiln_example");
    kernel.scalar<std::uint32_t>("n");
    EXPECT_THROW(kernel.scalar<std::uint64_t>("n"), kiln::invalid_argument_error);
}

TEST(kernel_binding, binds_by_slot_in_the_kernel_order) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", 7).argument("in", memory("float")).argument("out", memory(""));
    const std::vector<kernel_argument> bound = std::move(args).take();
    ASSERT_EQ(bound.size(), 3u);
    EXPECT_EQ(bound[0].what, kernel_argument::kind::buffer);
    EXPECT_EQ(bound[1].element_type, "float");
    EXPECT_EQ(bound[2].what, kernel_argument::kind::scalar);
    EXPECT_EQ(bound[2].size, 8u);
}

TEST(kernel_binding, a_scalar_of_the_wrong_type_is_refused) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    expect_bind_error([&] { args.scalar<std::uint32_t>("n", 7); }, "n", "got uint");
    expect_bind_error([&] { args.scalar<double>("n", 7); }, "n", "got double");
    // Type-erased scalars are checked by their size.
    expect_bind_error([&] { args.argument("n", kiln::detail::make_argument(std::int32_t{7})); },
                      "n", "8 bytes is declared, got 4");
}

TEST(kernel_binding, an_argument_of_the_wrong_kind_is_refused) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    expect_bind_error([&] { args.scalar<float>("out", 1.0f); }, "out", "not a scalar");
    expect_bind_error([&] { args.argument("n", memory("ulong")); }, "n", "not memory");
}

TEST(kernel_binding, a_buffer_of_the_wrong_element_type_is_refused) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    expect_bind_error([&] { args.argument("in", memory("double")); }, "in", "got one of double");
    // Unknown element types (raw bytes, reinterpreted buffers) are taken as they are.
    EXPECT_NO_THROW(args.argument("in", memory("")));
}

TEST(kernel_binding, a_read_only_buffer_is_refused_where_the_kernel_writes) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    kernel_argument read_only = memory("float");
    read_only.buffer_mode = kiln::access::in;
    expect_bind_error([&] { args.argument("out", read_only); }, "out", "read-only");
    EXPECT_NO_THROW(args.argument("in", read_only));
}

TEST(kernel_binding, a_slot_bound_twice_is_refused) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", 1);
    expect_bind_error([&] { args.scalar<std::uint64_t>("n", 2); }, "n", "bound twice");
}

TEST(kernel_binding, an_unknown_slot_is_refused) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    expect_bind_error([&] { args.scalar<std::uint64_t>("count", 1); }, "count", "no slot");
}

TEST(kernel_binding, a_slot_left_unbound_is_refused_when_taken) {
    const kernel_description kernel = example();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", 1).argument("out", memory("float"));
    expect_bind_error([&] { (void)std::move(args).take(); }, "in", "not bound");
}

TEST(kernel_binding, the_input_expression_is_bound_once_after_the_slots) {
    kernel_description kernel = example();
    kernel.then_input();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", 1).argument("out", memory("")).argument("in", memory(""));
    {
        kernel_binding unbound = args;
        expect_bind_error([&] { (void)std::move(unbound).take(); }, "input", "not bound");
    }
    args.input({kiln::detail::make_argument(std::int32_t{5})});
    expect_bind_error([&] { args.input({}); }, "input", "bound twice");
    const std::vector<kernel_argument> bound = std::move(args).take();
    ASSERT_EQ(bound.size(), 4u);
    EXPECT_EQ(bound[3].size, 4u);
    const kernel_description plain = example();
    kernel_binding no_input(plain);
    expect_bind_error([&] { no_input.input({}); }, "input", "takes no input");
}

TEST(kernel_description, declares_local_and_restrict_pointers) {
    kernel_description kernel("kiln_example");
    kernel.global_const<std::uint32_t>("rows").restricted().local("float2", "data");
    EXPECT_EQ(kernel.slots()[0].declaration(), "global const uint* restrict rows");
    EXPECT_EQ(kernel.slots()[1].declaration(), "local float2* data");
    kernel.scalar<std::uint64_t>("n");
    EXPECT_THROW(kernel.restricted(), kiln::invalid_argument_error) << "a scalar is no pointer";
}

TEST(kernel_binding, local_memory_binds_to_a_local_slot_only) {
    kernel_description kernel("kiln_example");
    kernel.local("float", "data").global<float>("out");
    kernel_binding args(kernel);
    expect_bind_error([&] { args.argument("data", memory("float")); }, "data",
                      "local memory is declared");
    expect_bind_error([&] { args.local("out", 64); }, "out", "a buffer is declared");
    args.local("data", 64).argument("out", memory("float"));
    const std::vector<kernel_argument> bound = std::move(args).take();
    EXPECT_EQ(bound[0].what, kernel_argument::kind::local);
    EXPECT_EQ(bound[0].size, 64u);
}

// An input read in place of the first parameter (the FFT's) is declared and bound there.
TEST(kernel_binding, the_input_expression_goes_where_it_is_described) {
    kernel_description kernel("kiln_example");
    kernel.then_input().global<float>("out").scalar<std::uint64_t>("n");
    kiln::detail::source_builder b;
    b.begin_kernel("kiln_example");
    kernel.declare(b, [&] { b.parameter("global const float* x"); });
    b.begin_body();
    b.end_kernel();
    EXPECT_NE(b.str().find("global const float* x,\n    global float* out,\n    ulong n\n"),
              std::string::npos)
        << b.str();
    kernel_binding args(kernel);
    args.scalar<std::uint64_t>("n", 3).argument("out", memory("float"));
    args.input({kiln::detail::make_argument(std::int32_t{5})});
    const std::vector<kernel_argument> bound = std::move(args).take();
    ASSERT_EQ(bound.size(), 3u);
    EXPECT_EQ(bound[0].size, 4u);
    EXPECT_EQ(bound[1].what, kernel_argument::kind::buffer);
    EXPECT_EQ(bound[2].size, 8u);
}

kiln::detail::scan_operation operation(const std::string& type, std::size_t bytes) {
    return {type, bytes, {}, 1, kiln::detail::state_packing::separate};
}

std::vector<std::string> declarations(const kernel_description& kernel) {
    std::vector<std::string> declared;
    for (const auto& slot : kernel.slots()) declared.push_back(slot.declaration());
    return declared;
}

// The scan family's kernels keep the parameters the host has always passed, in that order.
TEST(scan_kernel_description, keeps_the_family_parameters_in_order) {
    const auto op = operation("float", 4);
    using list = std::vector<std::string>;
    using kiln::detail::scan_schedule;
    for (const scan_schedule schedule : {scan_schedule::single_pass, scan_schedule::multi_pass})
        for (const auto& kernel : kiln::detail::scan_kernels(op, false, schedule)) {
            SCOPED_TRACE(kernel.name());
            if (kernel.name() == kiln::detail::scan_kernel::spine) {
                EXPECT_EQ(declarations(kernel), (list{"ulong n", "global uchar* kiln_temp",
                                                      "int has_carry", "float carry"}));
                EXPECT_FALSE(kernel.takes_input());
                continue;
            }
            EXPECT_EQ(declarations(kernel),
                      (list{"ulong n", "global float* out", "global uchar* kiln_temp",
                            "int has_carry", "float carry"}));
            EXPECT_TRUE(kernel.takes_input());
        }
    for (const scan_schedule schedule : {scan_schedule::single_pass, scan_schedule::multi_pass})
        for (const auto& kernel : kiln::detail::chunk_scan_kernels(op, true, schedule)) {
            SCOPED_TRACE(kernel.name());
            EXPECT_EQ(declarations(kernel),
                      (list{"ulong n", "global uchar* kiln_temp", "int has_carry", "float carry"}));
            EXPECT_TRUE(kernel.takes_input());
        }
}

// A program holds the kernels of its schedule, none of the other's: one where the single pass
// runs, the passes that never wait elsewhere (two chunk kernels, three tile kernels).
TEST(scan_kernel_description, a_program_holds_its_schedules_kernels_only) {
    namespace detail = kiln::detail;
    const auto op = operation("float", 4);
    const auto names = [](const std::vector<kiln::detail::kernel_description>& kernels) {
        std::vector<std::string> named;
        for (const auto& kernel : kernels) named.push_back(kernel.name());
        return named;
    };
    using list = std::vector<std::string>;
    EXPECT_EQ(names(detail::scan_kernels(op, false, detail::scan_schedule::single_pass)),
              (list{detail::scan_kernel::lookback}));
    EXPECT_EQ(names(detail::scan_kernels(op, false, detail::scan_schedule::multi_pass)),
              (list{detail::scan_kernel::reduce, detail::scan_kernel::spine,
                    detail::scan_kernel::downsweep}));
    EXPECT_EQ(names(detail::chunk_scan_kernels(op, false, detail::scan_schedule::single_pass)),
              (list{detail::chunk_scan_kernel::chained}));
    EXPECT_EQ(names(detail::chunk_scan_kernels(op, false, detail::scan_schedule::multi_pass)),
              (list{detail::chunk_scan_kernel::local, detail::chunk_scan_kernel::fix}));
}

// A program's text defines the kernels its descriptions name and no kernel of the other
// schedule, for tiles and chunks alike.
TEST(scan_kernel_description, a_program_writes_its_schedules_kernels_only) {
    namespace detail = kiln::detail;
    const auto op = detail::make_scan_operation<float, kiln::reducers::sum>();
    const detail::declare_input<detail::scan_input> input = [](detail::source_builder& b) {
        b.parameter("global const float* in");
        return detail::scan_input{.element = {.value = "in[idx]"}};
    };
    const std::vector<std::string> every_kernel = {
        detail::scan_kernel::lookback,      detail::scan_kernel::reduce,
        detail::scan_kernel::spine,         detail::scan_kernel::downsweep,
        detail::chunk_scan_kernel::chained, detail::chunk_scan_kernel::local,
        detail::chunk_scan_kernel::fix};
    for (const std::size_t chunk_bytes : {std::size_t{0}, std::size_t{1024}}) {
        for (const auto schedule :
             {detail::scan_schedule::single_pass, detail::scan_schedule::multi_pass}) {
            detail::scan_policy policy{64, 4};
            policy.chunk_bytes = chunk_bytes;
            policy.schedule = schedule;
            SCOPED_TRACE(policy.key());
            const std::string source = detail::scan_family_program_source(op, input, policy, false);
            std::vector<std::string> described;
            for (const auto& kernel : detail::scan_family_kernels(op, policy))
                described.push_back(kernel.name());
            for (const std::string& name : every_kernel) {
                const bool written = source.find(" " + name + "(") != std::string::npos;
                const bool wanted =
                    std::find(described.begin(), described.end(), name) != described.end();
                EXPECT_EQ(written, wanted) << name;
            }
        }
    }
}

/// Checks one layout's regions: in order, apart, aligned for their contents, the zeroed prefix
/// covering the ticket, the total and the states and nothing after them.
template <class Layout>
void expect_regions(const std::vector<std::pair<std::size_t, std::size_t>>& regions,
                    const Layout& layout, std::size_t zeroed_end) {
    for (std::size_t i = 0; i + 1 < regions.size(); ++i)
        EXPECT_LE(regions[i].first + regions[i].second, regions[i + 1].first) << "region " << i;
    // The allocation holds the last region, rounded up to at most 16 bytes more.
    const std::size_t end = regions.back().first + regions.back().second;
    EXPECT_LE(end, layout.bytes());
    EXPECT_LT(layout.bytes() - end, 16u);
    EXPECT_EQ(layout.zeroed_bytes(), zeroed_end);
}

TEST(scan_scratch_layout, regions_are_apart_aligned_and_zeroed_where_read_first) {
    for (const std::size_t tiles : {1, 2, 3, 4, 1000, 1001}) {
        for (const std::size_t value_bytes : {4, 8, 16}) {
            SCOPED_TRACE(std::to_string(tiles) + " tiles of " + std::to_string(value_bytes));
            const kiln::detail::scan_scratch_layout<> layout{tiles, value_bytes};
            const std::size_t slot = layout.slot_bytes();
            EXPECT_GE(slot, value_bytes);
            EXPECT_EQ(layout.ticket_offset(), 0u);
            EXPECT_EQ(layout.total_offset() % 16, 0u);
            EXPECT_EQ(layout.states_offset() % 16, 0u);
            EXPECT_EQ(layout.window_states_offset() % 16, 0u);
            EXPECT_EQ(layout.aggregates_offset() % 16, 0u);
            EXPECT_EQ(layout.prefixes_offset() % slot, 0u);
            EXPECT_EQ(layout.window_aggregates_offset() % slot, 0u);
            EXPECT_EQ(layout.window_prefixes_offset() % slot, 0u);
            expect_regions({{layout.ticket_offset(), 4},
                            {layout.total_offset(), value_bytes},
                            {layout.states_offset(), 8 * tiles},
                            {layout.window_states_offset(), 8 * tiles},
                            {layout.aggregates_offset(), slot * tiles},
                            {layout.prefixes_offset(), slot * tiles},
                            {layout.window_aggregates_offset(), slot * tiles},
                            {layout.window_prefixes_offset(), slot * tiles}},
                           layout, layout.aggregates_offset());
            // The total fits before the states, the ticket before the total.
            EXPECT_LE(layout.total_offset() + value_bytes, layout.states_offset());
        }
    }
}

TEST(scan_scratch_layout, kernels_compute_the_host_offsets) {
    const kiln::detail::scan_scratch_layout<kiln::detail::ulong_text> text{std::string("tiles"),
                                                                           16};
    EXPECT_EQ(text.window_states_offset().text, "(128UL + (((tiles + 1UL) / 2UL) * 16UL))");
    EXPECT_EQ(text.aggregates_offset().text,
              "((128UL + (((tiles + 1UL) / 2UL) * 16UL)) + (((tiles + 1UL) / 2UL) * 16UL))");
    EXPECT_EQ(text.window_prefixes_offset().text, "(((" + text.aggregates_offset().text +
                                                      " + (tiles * 16UL)) + (tiles * 16UL)) + "
                                                      "(tiles * 16UL))");
    const kiln::detail::scan_scratch_layout<> host{5, 16};
    EXPECT_EQ(host.window_states_offset(), 128u + 3 * 16);
    EXPECT_EQ(host.aggregates_offset(), 128u + 2 * 3 * 16);
    EXPECT_EQ(host.prefixes_offset(), 128u + 2 * 3 * 16 + 5 * 16);
    EXPECT_EQ(host.window_prefixes_offset(), 128u + 2 * 3 * 16 + 3 * 5 * 16);
}

TEST(chunk_scan_scratch_layout, regions_are_apart_aligned_and_zeroed_where_read_first) {
    for (const std::size_t chunks : {1, 2, 3, 5, 1000}) {
        for (const std::size_t value_bytes : {4, 8, 16}) {
            SCOPED_TRACE(std::to_string(chunks) + " chunks of " + std::to_string(value_bytes));
            const kiln::detail::chunk_scan_scratch_layout<> layout{chunks, value_bytes};
            EXPECT_EQ(layout.totals_offset() % 16, 0u);
            EXPECT_EQ(layout.prefixes_offset() % 16, 0u);
            expect_regions({{layout.ticket_offset(), 4},
                            {layout.total_offset(), value_bytes},
                            {layout.flags_offset(), 4 * chunks},
                            {layout.totals_offset(), value_bytes * chunks},
                            {layout.prefixes_offset(), value_bytes * chunks}},
                           layout, layout.totals_offset());
            EXPECT_EQ(layout.total_offset(), kiln::detail::scan_scratch_layout<>::total_offset());
        }
    }
}

// A scan program's shape changes its cache key with every field (the policy's own fields are
// each checked by algo_tuning.policy_key_changes_with_every_field).
TEST(scan_program_shape, key_changes_with_every_field) {
    using kiln::detail::scan_program_shape;
    // A new field fails here first: add it to key() and to the changes below.
    static_assert(sizeof(scan_program_shape) ==
                  3 * sizeof(std::string) + sizeof(kiln::detail::scan_policy) + 8);
    kiln::test::expect_every_change_changes_the_key(
        std::vector<std::function<void(scan_program_shape&)>>{
            [](scan_program_shape& s) { s.value_type = "float"; },
            [](scan_program_shape& s) { s.operation = "max"; },
            [](scan_program_shape& s) { s.exclusive = true; },
            [](scan_program_shape& s) { s.policy.work_group_size = 64; },
            [](scan_program_shape& s) { s.input = "N4kiln6detail8terminalE"; },
        });
}

// The FFT's kernels keep the parameters the host has always passed, in that order.
TEST(fft_kernel_description, keeps_the_step_pass_and_pipeline_parameters_in_order) {
    using list = std::vector<std::string>;
    const list steps{"global const float2* in",
                     "global float2* out",
                     "global const float2* table",
                     "uint count",
                     "uint a",
                     "uint b",
                     "uint c",
                     "uint d",
                     "uint e",
                     "float scale"};
    EXPECT_EQ(
        declarations(kiln::detail::fft_step_description("kiln_fft_half", false, false, false)),
        steps);
    const kernel_description wide =
        kiln::detail::fft_step_description("kiln_fft_half", true, true, true);
    EXPECT_TRUE(wide.takes_input());
    EXPECT_EQ(wide.input_position(), 0u);
    EXPECT_EQ(declarations(wide).front(), "global double2* out");
    EXPECT_EQ(declarations(wide).back(), "double scale");
    EXPECT_EQ(declarations(wide)[3], "ulong a");

    kiln::detail::fft_pass_kernel pass{16, {16}, 4, 64};
    EXPECT_EQ(declarations(kiln::detail::fft_pass_description(pass, false, false, false)), steps)
        << "one radix stage: no exchanges through local memory";
    pass.radices = {4, 4};
    list with_local = steps;
    with_local.push_back("local float2* data");
    EXPECT_EQ(declarations(kiln::detail::fft_pass_description(pass, false, false, false)),
              with_local);
    EXPECT_NE(kiln::detail::fft_pass_local_bytes(pass, false), 0u);

    const kiln::detail::fft_pipeline_kernel pipeline{pass, pass};
    list piped = with_local;
    for (const char* p : {"global float2* ring", "global uint* control", "uint b2", "uint c2",
                          "uint e2", "float scale2", "uint chunks"})
        piped.push_back(p);
    EXPECT_EQ(declarations(kiln::detail::fft_pipeline_description(pipeline, false, false, false)),
              piped);
}

// The host sizes the pipeline's counters from the layout the kernel's pointers are written from.
TEST(fft_pipeline_control, counts_the_counters_the_kernel_points_into) {
    kiln::detail::fft_pipeline_kernel k;
    k.second.length = 16;
    const kiln::detail::fft_pipeline_control<> coarse{4096, 5};
    EXPECT_EQ(coarse.first_pass_counters(k), 5u) << "tiles done per chunk";
    EXPECT_EQ(coarse.counters(k), 2u + 5 + 5);
    k.fine = true;
    EXPECT_EQ(coarse.first_pass_counters(k), 4096u / 16) << "lines done per array";
    EXPECT_EQ(coarse.counters(k), 2u + 256 + 5);
}

// Every field a pass or a pipeline kernel is written from changes its share of the program
// cache's key: a field missing from key() would reuse a stale program.
TEST(fft_pass_kernel, key_changes_with_every_field) {
    using kiln::detail::fft_pass_kernel;
    // A new field fails here first: add it to fft_pass_kernel::name() and to the changes below.
    static_assert(sizeof(fft_pass_kernel) == 64);
    kiln::test::expect_every_change_changes_the_key<fft_pass_kernel>({
        [](fft_pass_kernel& k) { k.length = 16; },
        [](fft_pass_kernel& k) { k.radices = {16}; },
        [](fft_pass_kernel& k) { k.lines_per_group = 4; },
        [](fft_pass_kernel& k) { k.work_group_size = 64; },
        [](fft_pass_kernel& k) { k.inverse = true; },
        [](fft_pass_kernel& k) { k.twiddled = true; },
        [](fft_pass_kernel& k) { k.load_lines_fastest = true; },
        [](fft_pass_kernel& k) { k.store_lines_fastest = true; },
        [](fft_pass_kernel& k) { k.direct = true; },
        [](fft_pass_kernel& k) { k.exchange_rounds = 2; },
    });
}

TEST(fft_pipeline_kernel, key_changes_with_every_field) {
    using kiln::detail::fft_pipeline_kernel;
    // A new field fails here first: add it to fft_pipeline_kernel::key() and to the changes
    // below.
    static_assert(sizeof(fft_pipeline_kernel) ==
                  2 * 64 + 3 * 8 + sizeof(kiln::detail::target_features) + 8);
    kiln::test::expect_every_change_changes_the_key<fft_pipeline_kernel>({
        [](fft_pipeline_kernel& k) { k.first.length = 16; },
        [](fft_pipeline_kernel& k) { k.second.length = 16; },
        [](fft_pipeline_kernel& k) { k.chunk_lines = 8; },
        [](fft_pipeline_kernel& k) { k.slots = 4; },
        [](fft_pipeline_kernel& k) { k.lag = 2; },
        [](fft_pipeline_kernel& k) {
            k.target.vocabulary = kiln::detail::vocabulary_target::inline_ptx;
        },
        [](fft_pipeline_kernel& k) { k.target.ballot = true; },
        [](fft_pipeline_kernel& k) { k.target.shuffles = true; },
        [](fft_pipeline_kernel& k) { k.target.device_fence = true; },
        [](fft_pipeline_kernel& k) { k.target.sub_group_size = 32; },
        [](fft_pipeline_kernel& k) { k.streaming = true; },
        [](fft_pipeline_kernel& k) { k.fine = true; },
    });
}

TEST(fft_program_key, key_changes_with_every_field) {
    using kiln::detail::fft_program_key;
    // A new field fails here first: add it to fft_program_key::key() and to the changes below.
    static_assert(sizeof(fft_program_key) == 8 + 2 * sizeof(std::string));
    kiln::test::expect_every_change_changes_the_key<fft_program_key>({
        [](fft_program_key& k) { k.double_precision = true; },
        [](fft_program_key& k) { k.wide_index = true; },
        [](fft_program_key& k) { k.kernel = kiln::detail::fft_chirp_in_kernel; },
        [](fft_program_key& k) { k.input = "an expression"; },
    });
}

// A plan is shared while one lives: whatever it is made from must change the plan cache's key.
TEST(fft_plan_key, key_changes_with_every_field) {
    using kiln::detail::fft_plan_key;
    // A new field fails here first: add it to fft_plan_key::key() and to the changes below.
    static_assert(sizeof(kiln::detail::fft_shape) == 40);
    static_assert(sizeof(kiln::detail::fft_pass_limits) == 56);
    static_assert(sizeof(kiln::detail::fft_pipeline_policy) == 40);
    static_assert(sizeof(kiln::detail::fft_policy) == 104);
    static_assert(sizeof(fft_plan_key) == 168);
    kiln::test::expect_every_change_changes_the_key<fft_plan_key>({
        [](fft_plan_key& k) { k.shape.sizes = {2}; },
        [](fft_plan_key& k) { k.shape.batch = 2; },
        [](fft_plan_key& k) { k.shape.inverse = true; },
        [](fft_plan_key& k) { k.shape.double_precision = true; },
        [](fft_plan_key& k) { k.policy.passes.local_bytes = 1; },
        [](fft_plan_key& k) { k.policy.passes.local_elements = 1; },
        [](fft_plan_key& k) { k.policy.passes.group_elements = 1; },
        [](fft_plan_key& k) { k.policy.passes.work_group_size = 1; },
        [](fft_plan_key& k) { k.policy.passes.max_work_group_size = 1; },
        [](fft_plan_key& k) { k.policy.passes.coalesced_lines = 1; },
        [](fft_plan_key& k) { k.policy.passes.double_precision = true; },
        [](fft_plan_key& k) { k.policy.passes.radix_per_pass = true; },
        [](fft_plan_key& k) { k.policy.passes.register_passes = false; },
        [](fft_plan_key& k) { k.policy.pipeline.chunk_bytes = 1; },
        [](fft_plan_key& k) { k.policy.pipeline.slots = 2; },
        [](fft_plan_key& k) { k.policy.pipeline.lag = 2; },
        [](fft_plan_key& k) { k.policy.pipeline.streaming = true; },
        [](fft_plan_key& k) { k.policy.pipeline.fine = true; },
        [](fft_plan_key& k) {
            k.policy.pipeline.target.vocabulary = kiln::detail::vocabulary_target::inline_ptx;
        },
        [](fft_plan_key& k) { k.policy.pipeline.target.ballot = true; },
        [](fft_plan_key& k) { k.policy.pipeline.target.shuffles = true; },
        [](fft_plan_key& k) { k.policy.pipeline.target.device_fence = true; },
        [](fft_plan_key& k) { k.policy.pipeline.target.sub_group_size = 32; },
        [](fft_plan_key& k) { k.policy.step_work_group_size = 128; },
        [](fft_plan_key& k) { k.wide_indices = true; },
        [](fft_plan_key& k) { k.length_kernels = true; },
        [](fft_plan_key& k) { k.register_pass_limit = 256; },
        [](fft_plan_key& k) { k.strategy = kiln::detail::fft_strategy::kernels; },
    });
}

}  // namespace
