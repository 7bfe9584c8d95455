// SPDX-License-Identifier: Apache-2.0
// The algorithm layer's base: temporary pool, program cache, tuning table, group collectives,
// look-back state.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <kiln/algorithm.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/detail/group_collectives.hpp>
#include <kiln/runtime/cache.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/lookback_state.hpp"
#include "algo/tiles/tile_load.hpp"
#include "algo/tuning_key.hpp"
#include "support/device_param.hpp"

namespace {

namespace algorithm = kiln::detail::algorithm;
using kiln::detail::temporary_pool;

class algo_base_test : public kiln::test::device_queue_test {};

TEST_P(algo_base_test, temporary_pool_reuses_blocks_and_shrinks) {
    temporary_pool::trim(device());
    const kiln::detail::memory_impl* first = nullptr;
    {
        auto lease = temporary_pool::acquire(q, 1000);
        EXPECT_EQ(lease.size(), 4096u);  // rounded up to a power of two, at least 4 KiB
        first = lease.bytes().storage().memory();
    }
    EXPECT_EQ(temporary_pool::idle_bytes(device()), 4096u);
    {
        auto again = temporary_pool::acquire(q, 3000);
        EXPECT_EQ(again.bytes().storage().memory(), first) << "the idle block is reused";
        EXPECT_EQ(temporary_pool::idle_bytes(device()), 0u);
        auto second = temporary_pool::acquire(q, 3000);
        EXPECT_NE(second.bytes().storage().memory(), first) << "a block on lease is not shared";
    }
    EXPECT_EQ(temporary_pool::idle_bytes(device()), 8192u);

    // A large block returns to the pool; a small request frees it instead of pinning it.
    { auto large = temporary_pool::acquire(q, std::size_t{32} << 20); }
    EXPECT_EQ(temporary_pool::idle_bytes(device()), 8192u + (std::size_t{32} << 20));
    {
        auto a = temporary_pool::acquire(q, 4096), b = temporary_pool::acquire(q, 4096);
        auto small = temporary_pool::acquire(q, 64 << 10);
        EXPECT_EQ(small.size(), std::size_t{64} << 10);
        EXPECT_EQ(temporary_pool::idle_bytes(device()), 0u) << "the 32 MiB block was freed";
    }
    temporary_pool::trim(device());
    EXPECT_EQ(temporary_pool::idle_bytes(device()), 0u);
}

TEST_P(algo_base_test, temporary_lease_zeroes_its_bytes) {
    auto lease = temporary_pool::acquire(q, 256);
    const std::vector<std::byte> ones(lease.size(), std::byte{0xff});
    lease.bytes().write(q, ones);
    lease.zero(q, 100).wait();
    const auto back = lease.bytes().read(q);
    for (std::size_t i = 0; i < back.size(); ++i)
        ASSERT_EQ(back[i], i < 100 ? std::byte{0} : std::byte{0xff}) << "byte " << i;
}

/// A kernel of the group collectives and look-back helpers, with its tuning as constants;
/// sub_group_size 0 takes the local-memory group scan.
std::string collectives_source(std::size_t group_size, std::size_t sub_group_size,
                               const kiln::detail::target_features& target = {}) {
    kiln::detail::source_builder b;
    b.constant("GROUP", group_size);
    b.begin_kernel("group_scan", group_size);
    b.global_parameter<std::uint32_t>("out");
    b.global_parameter<std::uint64_t>("flags");
    b.begin_body();
    b.local_array("uint", "scratch", "2 * GROUP");
    b.line("const uint lid = " + b.local_id() + ";");
    // Affine maps x -> a * x + b (mod 2^16), packed as a << 16 | b, composed in order: an
    // associative operation that is not commutative, so the order of operands shows.
    b.define("compose",
             "uint compose(uint f, uint g) {\n"
             "    const uint a = ((f >> 16) * (g >> 16)) & 0xffff;\n"
             "    const uint b = ((g >> 16) * (f & 0xffff) + (g & 0xffff)) & 0xffff;\n"
             "    return a << 16 | b;\n}\n");
    b.line("uint v = (lid + 2) << 16 | (lid + 1);");
    const std::string at = kiln::detail::group_collectives(b, sub_group_size, target)
                               .inclusive_scan(
                                   "scratch", "lid", "GROUP", "v",
                                   [](const std::string& x, const std::string& y) {
                                       return "compose(" + x + ", " + y + ")";
                                   },
                                   "uint");
    b.line("out[lid] = v;");
    b.line("ulong seen = 0;");
    b.open("if (lid == 0)");
    b.release_store("ulong", "&flags[0]", "((ulong)1 << 32) | scratch[" + at + " + GROUP - 1]");
    b.acquire_load("ulong", "&flags[0]", "seen");
    b.line("flags[1] = seen;");
    b.close();
    b.end_kernel();
    return b.str();
}

/// Both group-scan paths where the device's target has sub-groups (CUDA; NVIDIA's OpenCL
/// through inline PTX), the local-memory one elsewhere.
TEST_P(algo_base_test, group_scan_program_is_generated_once_per_key) {
    constexpr std::size_t group = 64;
    const kiln::detail::target_features target = kiln::detail::target_features_for(device());
    std::vector<std::size_t> sub_groups = {0};
    if (const std::size_t size = kiln::detail::group_scan_sub_group_size(device(), group))
        sub_groups.push_back(size);
    for (const std::size_t sub_group : sub_groups) {
        SCOPED_TRACE("sub-group size " + std::to_string(sub_group) + " " + target.key());
        const std::string key =
            "test.group_scan.64.sg" + std::to_string(sub_group) + " " + target.key();
        const std::size_t before = kiln::detail::algorithm_programs_generated();
        const auto& program = kiln::detail::algorithm_program_for(
            device(), key, {"group_scan"},
            [&] { return collectives_source(group, sub_group, target); });
        const auto& again = kiln::detail::algorithm_program_for(
            device(), key, {"group_scan"},
            []() -> std::string { throw std::logic_error("generated twice"); });
        EXPECT_EQ(&program, &again);
        EXPECT_EQ(kiln::detail::algorithm_programs_generated(), before + 1);

        kiln::buffer<std::uint32_t> out(q, group);
        kiln::buffer<std::uint64_t> flags(q, 2);
        program.kernel("group_scan")(out, flags).launch(q, group, group).wait();
        const auto got = out.read(q);
        const auto compose = [](std::uint32_t f, std::uint32_t g) {
            const std::uint32_t a = ((f >> 16) * (g >> 16)) & 0xffff;
            const std::uint32_t b = ((g >> 16) * (f & 0xffff) + (g & 0xffff)) & 0xffff;
            return a << 16 | b;
        };
        std::uint32_t expected = 0;
        for (std::uint32_t i = 0; i < group; ++i) {
            const std::uint32_t own = (i + 2) << 16 | (i + 1);
            expected = i == 0 ? own : compose(expected, own);
            ASSERT_EQ(got[i], expected) << "work-item " << i;
        }
        EXPECT_EQ(flags.read(q)[1], (std::uint64_t{1} << 32) | expected);
    }
}

// The inline-PTX shuffles run only on NVIDIA's OpenCL (the test above there); here, on any
// machine, their text: full-warp shfl.sync, 64-bit values in two halves, no OpenCL C sub-group
// function (which NVIDIA's OpenCL lacks).
TEST(algo_group_collectives, ptx_shuffles_spell_shfl_sync_for_every_width) {
    kiln::detail::source_builder b;
    b.begin_kernel("k", 64);
    b.begin_body();
    b.local_array("ulong2", "scratch", "128");
    b.line("ulong2 v = (ulong2)(1, 2);");
    kiln::detail::group_collectives(
        b, 32,
        kiln::detail::target_features{.vocabulary = kiln::detail::vocabulary_target::inline_ptx,
                                      .ballot = true,
                                      .shuffles = true,
                                      .device_fence = true,
                                      .sub_group_size = 32})
        .inclusive_scan(
            "scratch", "lid", "64", "v",
            [](const std::string& x, const std::string& y) { return x + " + " + y; }, "ulong2", 2);
    b.end_kernel();
    const std::string source = b.str();
    EXPECT_NE(source.find("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;"), std::string::npos);
    EXPECT_NE(source.find("kiln_below.y = as_ulong(kiln_shuffle_up_64(as_ulong(v.y), kiln_d))"),
              std::string::npos)
        << source;
    EXPECT_EQ(source.find("sub_group_shuffle_up"), std::string::npos);
}

// The look-back within a warp runs only on GPUs (the scan, compaction and reduce_by_key tests
// there); here its text under NVIDIA's OpenCL: full-warp shfl.sync.down, pairs shuffled per
// component, windows of 32 lanes x depth tiles, no local-memory window and no OpenCL C sub-group
// function.
TEST(algo_group_collectives, ptx_lookback_reads_a_window_per_warp) {
    kiln::detail::scan_policy policy{128, 8};
    policy.sub_group_size = 32;
    policy.target =
        kiln::detail::target_features{.vocabulary = kiln::detail::vocabulary_target::inline_ptx,
                                      .ballot = true,
                                      .shuffles = true,
                                      .device_fence = true,
                                      .sub_group_size = 32};
    policy.lookback_depth = 2;
    policy.schedule = kiln::detail::scan_schedule::single_pass;
    const kiln::detail::scan_operation pairs{
        "uint2", 8,
        [](kiln::detail::source_builder&, const std::string& a, const std::string& b) {
            return "(" + a + " + " + b + ")";
        },
        2, kiln::detail::state_packing::pair_30_32_bits};
    const std::string source = kiln::detail::scan_program_source(
        pairs,
        [](kiln::detail::source_builder& b) {
            b.parameter("global const uint2* in");
            return kiln::detail::scan_input{.element = {.value = "in[idx]"}};
        },
        policy, false);
    EXPECT_NE(source.find("shfl.sync.down.b32 %0, %1, %2, 31, 0xffffffff;"), std::string::npos);
    EXPECT_NE(source.find("kiln_later.y = as_uint(kiln_shuffle_down(as_uint(lane_value.y), "
                          "kiln_d))"),
              std::string::npos)
        << source;
    EXPECT_NE(source.find("#define KILN_DEPTH 2"), std::string::npos);
    EXPECT_NE(source.find("#define KILN_ORDER_WINDOW 64"), std::string::npos);
    EXPECT_EQ(source.find("kiln_window_have"), std::string::npos);
    for (const char* opencl_c : {"sub_group_ballot", "sub_group_shuffle", "sub_group_barrier"})
        EXPECT_EQ(source.find(opencl_c), std::string::npos) << opencl_c;
}

// The radix sort's single pass keeps a digit count and its flag in one 32-bit word (flag 1:
// aggregate, 2: inclusive prefix, in the top two bits): each word is published by one volatile
// store and read by one volatile load per try, with no fence (radix_onesweep.cpp).
// The tile parts take a frame, no family's program: warp-striped loads as the radix multi-split
// reads its keys, and striped ones with a family's code around each item (the scan family's
// ballots).
TEST(algo_tiles, loads_need_only_a_frame) {
    kiln::detail::source_builder b;
    kiln::detail::tile_loader load(kiln::detail::tile_frame{b});
    load.warp_striped("uint", "key", "tile_keys", 2, 32);
    load.striped(true, {"const int x = in[idx];"}, [&] { b.line("kiln_tile[k] = x;"); },
                 {.before = [&] { b.line("uint before_guard = 0;"); },
                  .after = [&] { b.line("after_guard(k);"); }});
    const std::string text = b.str();
    EXPECT_NE(text.find("const uint key0 = 0 < left ? tile_keys[0] : 0;"), std::string::npos)
        << text;
    EXPECT_NE(text.find("const uint key1 = 32 < left ? tile_keys[32] : 0;"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("key2"), std::string::npos) << text;
    // Each item: its index, the code before the bounds check, the element, the code after it.
    const std::size_t k = text.find("const uint k = j * WG + lid;"),
                      before = text.find("uint before_guard = 0;"), guard = text.find("k < valid"),
                      element = text.find("kiln_tile[k] = x;"),
                      after = text.find("after_guard(k);");
    ASSERT_NE(after, std::string::npos) << text;
    EXPECT_TRUE(k < before && before < guard && guard < element && element < after) << text;
    EXPECT_EQ(text.find("#pragma unroll"), std::string::npos)
        << "the frame's loops are not unrolled";
}

TEST(algo_lookback_state, counts_in_30_bits_are_single_words) {
    using kiln::detail::lookback_state;
    kiln::detail::source_builder b;
    b.begin_kernel("k", 64);
    b.begin_body();
    const lookback_state own = lookback_state::for_counts("mine");
    own.publish(b, "d", "c", 1);
    own.publish(b, "d", "c + e", 2);
    own.publish_prefix_if(b, "tile == 0", "d", "c");
    const auto tile_digit = [](const std::string& j) { return "(ulong)(" + j + ") * 16u + d"; };
    lookback_state::for_counts("words").walk_back(
        b, {"uint", "j", "tile", tile_digit},
        [&](const std::string& count) { b.line("sum += " + count + ";"); });
    b.end_kernel();
    const std::string source = b.str();
    const std::string expected =
        "    *(volatile global uint*)&mine[d] = 0x40000000u | (c);\n"
        "    *(volatile global uint*)&mine[d] = 0x80000000u | (c + e);\n"
        "    *(volatile global uint*)&mine[d] = (tile == 0 ? 0x80000000u : 0x40000000u) | (c);\n"
        "    for (uint j = tile; j > 0;) {\n"
        "        const uint word = *(volatile global uint*)&words[(ulong)(j - 1) * 16u + d];\n"
        "        if (word != 0) {\n"
        "            sum += word & 0x3fffffffu;\n"
        "            j = (word & 0x80000000u) ? 0 : j - 1;\n"
        "        }\n"
        "    }\n";
    EXPECT_NE(source.find(expected), std::string::npos) << source;
    EXPECT_EQ(source.find("mem_fence"), std::string::npos) << source;
}

TEST_P(algo_base_test, every_device_has_a_policy_with_provenance) {
    const auto expect_power_of_two_groups = [](const auto& policy) {
        EXPECT_GT(policy.tile_size(), 0u);
        EXPECT_EQ(policy.work_group_size & (policy.work_group_size - 1), 0u) << "a power of two";
    };
    const auto expect_row = [&](auto family) {
        using family_type = decltype(family);
        const auto* row = kiln::detail::tuning_table<family_type>::first_row(device().properties());
        ASSERT_NE(row, nullptr) << family.name;
        EXPECT_FALSE(row->provenance.empty());
        if constexpr (std::is_same_v<typename family_type::tuning, kiln::detail::scan_policy>)
            expect_power_of_two_groups(kiln::detail::policy_for(family, device()));
        else
            expect_power_of_two_groups(row->tuning);
    };
    expect_row(algorithm::scan);
    expect_row(algorithm::select);
    expect_row(algorithm::reduce_by_key);
    expect_row(algorithm::fft);
}

// Every policy field that reaches generated code must change the program cache's key, or a
// program built for one policy would serve another.
TEST(algo_tuning, policy_key_changes_with_every_field) {
    using kiln::detail::scan_policy;
    // A new field fails here first: add it to scan_policy::key() and to the changes below.
    static_assert(sizeof(scan_policy) == 80);
    const std::vector<std::function<void(scan_policy&)>> changes = {
        [](scan_policy& p) { p.work_group_size = 128; },
        [](scan_policy& p) { p.items_per_work_item = 4; },
        [](scan_policy& p) { p.sub_group_size = 32; },
        [](scan_policy& p) { p.staged_writes = false; },
        [](scan_policy& p) { p.target.vocabulary = kiln::detail::vocabulary_target::inline_ptx; },
        [](scan_policy& p) { p.target.sub_group_size = 32; },
        [](scan_policy& p) { p.target.ballot = true; },
        [](scan_policy& p) { p.target.shuffles = true; },
        [](scan_policy& p) { p.target.device_fence = true; },
        [](scan_policy& p) { p.lookback_depth = 2; },
        [](scan_policy& p) { p.chunk_bytes = 65536; },
        [](scan_policy& p) { p.chunk_lanes = 8; },
        [](scan_policy& p) { p.chunk_cursor_writes = true; },
        [](scan_policy& p) { p.chunk_vector_writes = true; },
        [](scan_policy& p) { p.full_tiles = kiln::detail::tile_access::unrolled; },
        [](scan_policy& p) { p.full_tiles = kiln::detail::tile_access::wide; },
        [](scan_policy& p) { p.ballot_flags = false; },
        [](scan_policy& p) { p.register_runs = true; },
        [](scan_policy& p) { p.kept_run_items = kiln::detail::run_items::values; },
        [](scan_policy& p) { p.kept_run_items = kiln::detail::run_items::values_and_keys; },
        [](scan_policy& p) { p.schedule = kiln::detail::scan_schedule::single_pass; },
        // sub_group_scans reaches the code only through sub_group_size, which
        // policy_for derives from it: not a key field of its own.
    };
    kiln::test::expect_every_change_changes_the_key(changes);
}

/// A tuning of every kind of field a key has: a word of three numbers, a prefixed pair, a single
/// number that may be 0, and a flag.
struct keyed_tuning {
    std::size_t rows = 4, columns = 8, depth = 2, threads_x = 1, threads_y = 2, stages = 3;
    bool fast = false;
};
constexpr kiln::detail::tuning_key_number<keyed_tuning> keyed_numbers[] = {
    {"", {&keyed_tuning::rows, &keyed_tuning::columns, &keyed_tuning::depth}},
    {"t", {&keyed_tuning::threads_x, &keyed_tuning::threads_y}},
    {"s", {&keyed_tuning::stages}, true}};
constexpr kiln::detail::tuning_key_flag<keyed_tuning> keyed_flags[] = {
    {"fast", &keyed_tuning::fast}};
constexpr kiln::detail::tuning_key_format<keyed_tuning> keyed_format{keyed_numbers, keyed_flags};

TEST(algo_tuning_key, writes_and_reads_back_every_kind_of_word) {
    using kiln::detail::read_tuning_key;
    using kiln::detail::write_tuning_key;
    keyed_tuning tuning;
    EXPECT_EQ(write_tuning_key("plain", tuning, keyed_format), "plain 4x8x2 t1x2 s3");
    EXPECT_EQ(write_tuning_key({}, tuning, keyed_format), "4x8x2 t1x2 s3");
    tuning.fast = true;
    EXPECT_EQ(write_tuning_key({}, tuning, keyed_format), "4x8x2 t1x2 s3 fast");
    // Any order, blanks of any width; fields left out keep theirs, a flag left out is false.
    keyed_tuning read;
    ASSERT_TRUE(read_tuning_key("  s0\tt16x32  128x64x1 ", read, keyed_format));
    EXPECT_EQ(write_tuning_key({}, read, keyed_format), "128x64x1 t16x32 s0");
    read.fast = true;
    ASSERT_TRUE(read_tuning_key("", read, keyed_format));
    EXPECT_FALSE(read.fast);
    ASSERT_TRUE(read_tuning_key("fast t3x5", read, keyed_format));
    EXPECT_EQ(write_tuning_key({}, read, keyed_format), "128x64x1 t3x5 s0 fast");
    for (const char* bad : {"t4", "t4x4x4", "128x64", "t0x4", "s", "sx", "s4x", "q4", "slow",
                            "t-1x2", "s99999999999999999999999"}) {
        keyed_tuning untouched;
        EXPECT_FALSE(read_tuning_key(bad, untouched, keyed_format)) << bad;
    }
    const auto [name, rest] = kiln::detail::split_tuning_key("  plain 4x8x2 fast");
    EXPECT_EQ(name, "plain");
    EXPECT_EQ(kiln::detail::tuning_key_words(rest),
              (std::vector<std::string_view>{"4x8x2", "fast"}));
}

TEST(algo_tuning, nvidia_radix_row_ranks_by_multi_split) {
    // The NVIDIA rows are measured with the multi-split (docs/benchmarks.md): once a positional
    // row set another flag instead, and NVIDIA GPUs ranked in rounds, unmeasured.
    const auto rows = algorithm::radix_sort_rows::rows();
    const auto nvidia = std::find_if(
        rows.begin(), rows.end(), [](const auto& row) { return row.devices.vendor == "nvidia"; });
    ASSERT_NE(nvidia, rows.end());
    EXPECT_TRUE(nvidia->tuning.multi_split);
    EXPECT_EQ(nvidia->tuning.radix_bits, 8u);
}

TEST(algo_tuning, overrides_belong_to_their_algorithm) {
    // An override takes its algorithm's tuning type (another's does not compile) and forces that
    // algorithm alone, also where several share the type.
    using kiln::detail::scoped_algorithm_policy;
    using kiln::detail::stencil_tuning;
    using kiln::detail::tuning_table;
    static_assert(!std::is_constructible_v<scoped_algorithm_policy<algorithm::merge_sort_rows>,
                                           kiln::detail::scan_policy>);
    static_assert(!std::is_constructible_v<scoped_algorithm_policy<algorithm::scan_rows>,
                                           algorithm::scan_rows, stencil_tuning>);
    const scoped_algorithm_policy rows(algorithm::stencil_2d, stencil_tuning{64, 2});
    ASSERT_TRUE(tuning_table<algorithm::stencil_2d_rows>::forced());
    EXPECT_EQ(tuning_table<algorithm::stencil_2d_rows>::forced()->items_per_work_item, 2u);
    EXPECT_FALSE(tuning_table<algorithm::stencil_1d_rows>::forced());
    EXPECT_FALSE(kiln::detail::overrides_in_force<algorithm::scan_rows>().tuning);
}

// What a new family declares, and all it declares: a tag with its tuning type, its name and its
// rows. The table, the override and the plan's overrides come from the template, with no line
// elsewhere.
struct example_tuning {
    std::size_t work_group_size = 0;
};
struct example_rows {
    using tuning = example_tuning;
    static constexpr std::string_view name = "example";
    static std::span<const kiln::detail::tuning_row<example_tuning>> rows() {
        static constexpr std::array table{
            kiln::detail::tuning_row<example_tuning>{kiln::detail::any_gpu, {128}, "a GPU row"},
            kiln::detail::tuning_row<example_tuning>{kiln::detail::any_cpu, {16}, "a CPU row"},
        };
        return table;
    }
};

TEST(algo_tuning, a_family_needs_only_its_tag) {
    using table = kiln::detail::tuning_table<example_rows>;
    kiln::device_properties gpu;
    gpu.type = kiln::device_type::gpu;
    kiln::device_properties other;
    other.type = kiln::device_type::accelerator;
    EXPECT_EQ(table::tuning_for(gpu, std::nullopt).work_group_size, 128u);
    EXPECT_EQ(table::tuning_for(gpu, example_tuning{32}).work_group_size, 32u);
    EXPECT_THROW(table::tuning_for(other, std::nullopt), kiln::invalid_argument_error)
        << "no row matches";
    EXPECT_FALSE(kiln::detail::overrides_in_force<example_rows>().tuning);
    {
        const kiln::detail::scoped_algorithm_policy<example_rows> forced(example_tuning{8});
        ASSERT_TRUE(kiln::detail::overrides_in_force<example_rows>().tuning);
        EXPECT_EQ(kiln::detail::overrides_in_force<example_rows>().tuning->work_group_size, 8u);
        EXPECT_FALSE(kiln::detail::overrides_in_force<algorithm::scan_rows>().tuning);
    }
    EXPECT_FALSE(table::forced());
}

TEST_P(algo_base_test, rows_may_keep_group_scans_in_local_memory) {
    // NVIDIA's OpenCL reduce_by_key row asks for it (measured faster there): no sub-group, no
    // inline PTX, whatever the device offers.
    kiln::detail::scan_policy policy{256, 16};
    policy.sub_group_scans = false;
    const kiln::detail::scoped_algorithm_policy local(algorithm::reduce_by_key, policy);
    const auto chosen = kiln::detail::policy_for(algorithm::reduce_by_key, device());
    EXPECT_EQ(chosen.sub_group_size, 0u);
    EXPECT_EQ(chosen.target, kiln::detail::target_features_for(device()));
}

TEST_P(algo_base_test, scoped_overrides_restore_what_was_there) {
    const auto original = kiln::detail::policy_for(algorithm::scan, device());
    const bool progress = kiln::detail::groups_make_progress(device());
    {
        const kiln::detail::scoped_algorithm_policy small(algorithm::scan,
                                                          kiln::detail::scan_policy{32, 2});
        EXPECT_EQ(kiln::detail::policy_for(algorithm::scan, device()).tile_size(), 64u);
        const kiln::detail::scoped_forward_progress flipped(!progress);
        EXPECT_EQ(kiln::detail::groups_make_progress(device()), !progress);
    }
    EXPECT_EQ(kiln::detail::policy_for(algorithm::scan, device()).tile_size(),
              original.tile_size());
    EXPECT_EQ(kiln::detail::groups_make_progress(device()), progress);
}

TEST_P(algo_base_test, forward_progress_follows_the_vendor) {
    const auto& props = device().properties();
    const bool nvidia_gpu = device().is_gpu() && (props.backend == kiln::backend_kind::cuda ||
                                                  props.vendor.find("NVIDIA") != std::string::npos);
    EXPECT_EQ(kiln::detail::groups_make_progress(device()), nvidia_gpu) << props.vendor;
}

TEST_P(algo_base_test, program_cache_forgets_the_least_recently_used) {
    kiln::program_cache::clear_memory();
    kiln::program_cache::set_memory_capacity(2);
    const auto source = [](int k) {
        return "kernel void k" + std::to_string(k) +
               "(global int* x) { x[0] = " + std::to_string(k) + "; }\n";
    };
    kiln::program(device(), source(1));
    kiln::program(device(), source(2));
    kiln::program(device(), source(1));  // 1 is now the most recently used
    kiln::program(device(), source(3));  // evicts 2
    EXPECT_EQ(kiln::program_cache::memory_size(), 2u);
    EXPECT_EQ(kiln::program(device(), source(1)).origin(), kiln::program_origin::memory_cache);
    EXPECT_NE(kiln::program(device(), source(2)).origin(), kiln::program_origin::memory_cache);
    kiln::program_cache::set_memory_capacity(kiln::program_cache::default_memory_capacity);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(algo_base_test);

}  // namespace
