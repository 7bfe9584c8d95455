// SPDX-License-Identifier: Apache-2.0
// The families' plans (kiln/detail/algo/*_tuning.hpp) on devices written by hand: what each device
// the tuning table knows gets, without a device. Runs once, not per device.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/algo/reduce_dimension_tuning.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/algo/sparse_format.hpp>
#include <kiln/detail/algo/stencil_tuning.hpp>
#include <kiln/error.hpp>
#include <kiln/expr/launch_plan.hpp>
#include <string>
#include <string_view>

namespace {

using kiln::backend_kind;
using kiln::device_properties;
using kiln::device_type;
namespace algorithm = kiln::detail::algorithm;
using kiln::detail::tile_access;

device_properties h100_cuda() {
    device_properties p;
    p.backend = backend_kind::cuda;
    p.type = device_type::gpu;
    p.name = "NVIDIA H100 80GB HBM3";
    p.vendor = "NVIDIA Corporation";
    p.platform = "CUDA";
    p.compute_units = 132;
    p.max_work_group_size = 1024;
    p.max_work_item_sizes = {1024, 1024, 64};
    p.local_memory_bytes = 48 * 1024;
    p.shared_memory_per_block_bytes = 227 * 1024;
    p.sub_group_size = 32;
    p.compute_capability_major = 9;
    // The extensions the CUDA backend's prelude implements.
    p.extensions = {"cl_khr_subgroups", "cl_khr_subgroup_ballot", "cl_khr_subgroup_shuffle",
                    "cl_khr_subgroup_shuffle_relative"};
    return p;
}

device_properties h100_opencl() {
    device_properties p;
    p.backend = backend_kind::opencl;
    p.type = device_type::gpu;
    p.name = "NVIDIA H100 80GB HBM3";
    p.vendor = "NVIDIA Corporation";
    p.platform = "NVIDIA CUDA";
    p.compute_units = 132;
    p.max_work_group_size = 1024;
    p.max_work_item_sizes = {1024, 1024, 64};
    p.local_memory_bytes = 48 * 1024;
    p.sub_group_size = 32;  // the warp size; no sub-group functions
    return p;
}

device_properties pocl_cpu(unsigned cores) {
    device_properties p;
    p.backend = backend_kind::opencl;
    p.type = device_type::cpu;
    p.name = "cpu-skylake-avx512-Intel(R) Xeon(R)";
    p.vendor = "GenuineIntel";
    p.platform = "Portable Computing Language";
    p.driver_version = "5.0+debian";
    p.compute_units = cores;
    p.max_work_group_size = 4096;
    p.max_work_item_sizes = {4096, 4096, 4096};
    p.local_memory_bytes = 512 * 1024;
    p.unified_memory = true;
    return p;
}

device_properties unknown_gpu() {
    device_properties p;
    p.backend = backend_kind::opencl;
    p.type = device_type::gpu;
    p.name = "Acme Graphics 9000";
    p.vendor = "Acme";
    p.platform = "Acme OpenCL";
    p.compute_units = 16;
    p.max_work_group_size = 256;
    p.max_work_item_sizes = {256, 256, 256};
    p.local_memory_bytes = 32 * 1024;
    return p;
}

TEST(algo_plan, h100_under_cuda) {
    const device_properties p = h100_cuda();
    const auto scan = kiln::detail::plan_scan(p, 4);
    EXPECT_EQ(scan.key(), "128x32 sg32 staged v3 sg32 ballot shuffles fence d1 unrolled single");
    EXPECT_EQ(kiln::detail::plan_scan(p, 8).items_per_work_item, 16u);
    EXPECT_EQ(kiln::detail::plan_reduce_by_key(p, 4).key(),
              "256x16 sg32 staged v3 sg32 ballot shuffles fence d1 wide runs kept values");
    EXPECT_EQ(kiln::detail::plan_compaction(p, 4, 1000, 0).key(),
              "256x32 sg32 staged v3 sg32 ballot shuffles fence d1 unrolled single u32");

    const auto radix = kiln::detail::plan_radix_sort(p, 4, false, 0, 1 << 20);
    EXPECT_EQ(radix.work_group_size, 384u);
    EXPECT_EQ(radix.items_per_work_item, 20u);
    EXPECT_EQ(radix.radix_bits, 8u);
    EXPECT_TRUE(radix.multi_split);
    EXPECT_EQ(radix.target.vocabulary, kiln::detail::vocabulary_target::cuda_prelude);
    EXPECT_TRUE(radix.ballots);
    EXPECT_TRUE(radix.single_pass);
    EXPECT_FALSE(radix.chunks);
    EXPECT_FALSE(kiln::detail::plan_radix_sort(p, 4, false, 0, std::size_t{1} << 30).single_pass)
        << "the status words hold 30-bit counts";
    // 8-byte keys take half the items, within CUDA's 48 KB of static local memory.
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 8, false, 0, 1000).items_per_work_item, 10u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 2, true, 0, 1000).items_per_work_item, 20u)
        << "16-bit keys take the 4-byte keys' tile under CUDA";

    EXPECT_EQ(kiln::detail::plan_merge_sort(p).work_group_size, 256u);
    EXPECT_EQ(kiln::detail::plan_stencil(p, 1).tile_size(), 128u * 8);
    EXPECT_EQ(kiln::detail::plan_stencil(p, 2).tile_size(), 256u * 8);
    EXPECT_EQ(kiln::detail::plan_stencil(p, 2).strip_rows, 128u);

    const auto fft = kiln::detail::plan_fft(p, false);
    EXPECT_EQ(fft.passes.local_elements, 16384u) << "a 16384-point line in dynamic shared memory";
    EXPECT_TRUE(fft.passes.register_passes);
    EXPECT_EQ(fft.passes.work_group_size, 256u);
    EXPECT_EQ(fft.passes.coalesced_lines, 4u);
    EXPECT_FALSE(fft.passes.radix_per_pass);
    EXPECT_EQ(fft.pipeline.chunk_bytes, 0u) << "the pipeline row is NVIDIA's OpenCL's";

    EXPECT_EQ(kiln::detail::plan_spmv(p).ell_max_width, 32u);
    const auto launch = kiln::detail::plan_elementwise_launch(p);
    EXPECT_EQ(launch.loop, kiln::detail::loop_style::strided);
    EXPECT_EQ(launch.work_group_size, 256u);
    EXPECT_EQ(launch.groups_per_compute_unit, 16u);
    EXPECT_EQ(launch.vector_bytes, 0u) << "strided loops have no vector form";
}

TEST(algo_plan, h100_under_nvidia_opencl) {
    const device_properties p = h100_opencl();
    // Group scans shuffle through inline PTX (no sub-group functions there).
    EXPECT_EQ(kiln::detail::plan_scan(p, 4).key(),
              "128x32 sg32 staged v2 sg32 ballot shuffles fence d1 wide single");
    const auto by_key = kiln::detail::plan_reduce_by_key(p, 4);
    EXPECT_EQ(by_key.work_group_size, 256u);
    EXPECT_EQ(by_key.items_per_work_item, 16u);
    EXPECT_EQ(by_key.lookback_depth, 1u);
    EXPECT_TRUE(by_key.register_runs);
    EXPECT_EQ(by_key.kept_run_items, kiln::detail::run_items::values)
        << "values kept from their loads to their writes, as under CUDA";
    EXPECT_EQ(by_key.target.vocabulary, kiln::detail::vocabulary_target::inline_ptx);
    EXPECT_EQ(by_key.sub_group_size, 32u);
    // Its runs staged, keys then values, through one padded tile of 4096 ints (17,408 bytes)
    // beside the group scan's 512 pairs (4,096): within 32 KB too; in 16 KB each work-item writes
    // its own.
    EXPECT_TRUE(by_key.staged_writes);
    EXPECT_TRUE(kiln::detail::plan_reduce_by_key(p, 8).staged_writes);
    device_properties smaller = p;
    smaller.local_memory_bytes = 32 * 1024;
    EXPECT_TRUE(kiln::detail::plan_reduce_by_key(smaller, 4).staged_writes);
    smaller.local_memory_bytes = 16 * 1024;
    EXPECT_FALSE(kiln::detail::plan_reduce_by_key(smaller, 4).staged_writes);
    EXPECT_EQ(kiln::detail::plan_compaction(p, 8, 1000, 0).key(),
              "256x16 sg32 staged v2 sg32 ballot shuffles fence d1 unrolled single u32");

    // Groups of 384 (past the 256 work-items the driver reports: a kernel's required size is its
    // limit there), registers held through the program's PTX.
    const auto pairs = kiln::detail::plan_radix_sort(p, 4, false, 4, 1 << 20);
    EXPECT_EQ(pairs.work_group_size, 384u);
    EXPECT_EQ(pairs.items_per_work_item, 19u);
    EXPECT_TRUE(pairs.multi_split);
    EXPECT_EQ(pairs.target.vocabulary, kiln::detail::vocabulary_target::inline_ptx);
    EXPECT_TRUE(pairs.ballots);
    EXPECT_FALSE(pairs.values_beside_keys)
        << "values follow the keys: two arrays of 384 x 19 words would pass 48 KB";
    EXPECT_TRUE(pairs.single_pass);
    EXPECT_EQ(pairs.register_limit, 80u);
    const auto keys = kiln::detail::plan_radix_sort(p, 4, true, 0, 1 << 20);
    EXPECT_EQ(keys.items_per_work_item, 19u);
    EXPECT_EQ(keys.register_limit, 56u);
    // 16-bit keys take the 4-byte keys' tile; 8-byte keys half of it, rounded to the nearest.
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 2, true, 0, 1 << 20).items_per_work_item, 19u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 2, true, 4, 1 << 20).items_per_work_item, 19u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 8, true, 0, 1 << 20).items_per_work_item, 10u);

    const auto fft = kiln::detail::plan_fft(p, false);
    EXPECT_EQ(fft.passes.local_elements, 4096u);
    EXPECT_FALSE(fft.passes.register_passes) << "16384-point lines measured faster in two passes";
    EXPECT_EQ(fft.pipeline.chunk_bytes, std::size_t{1} << 20);
    EXPECT_EQ(fft.pipeline.slots, 16u);
    EXPECT_EQ(fft.pipeline.lag, 4u);
    EXPECT_TRUE(fft.pipeline.streaming);
    EXPECT_TRUE(fft.pipeline.fine);
    EXPECT_TRUE(fft.pipeline.target.device_fence)
        << "kiln_fence_acq_rel is PTX's there: OpenCL C's does not order across groups";
}

TEST(algo_plan, pocl_cpu_with_2_and_16_cores_plans_alike) {
    for (const unsigned cores : {2u, 16u}) {
        SCOPED_TRACE(cores);
        const device_properties p = pocl_cpu(cores);
        const auto scan = kiln::detail::plan_scan(p, 4);
        EXPECT_EQ(scan.key(), "16x64 sg0 staged v0 sg0 fence d1 chunks262144 lanes8 single");
        EXPECT_EQ(kiln::detail::plan_reduce_by_key(p, 8).key(),
                  "16x32 sg0 staged v0 sg0 fence d1 chunks262144 lanes16");
        EXPECT_EQ(kiln::detail::plan_compaction(p, 4, 1000, 0).key(),
                  "16x64 sg0 direct v0 sg0 fence d1 chunks262144 vectors single u32");

        const auto radix = kiln::detail::plan_radix_sort(p, 4, true, 0, 1000);
        EXPECT_TRUE(radix.chunks);
        EXPECT_EQ(radix.chunk_bytes, 64u * 1024);
        EXPECT_EQ(radix.radix_bits, 8u) << "chunks rank nothing: PoCL's quirk does not apply";
        EXPECT_FALSE(radix.single_pass);
        EXPECT_FALSE(radix.floats_sorted_on_host) << "the chunk strategy is trusted";

        EXPECT_EQ(kiln::detail::plan_merge_sort(p).work_group_size, 64u);
        EXPECT_EQ(kiln::detail::plan_stencil(p, 1).chunk_bytes, 16u * 1024) << "runs";
        EXPECT_EQ(kiln::detail::plan_stencil(p, 2).chunk_bytes, 16u * 1024) << "runs";
        const auto fft = kiln::detail::plan_fft(p, true);
        EXPECT_TRUE(fft.passes.radix_per_pass);
        EXPECT_EQ(fft.passes.coalesced_lines, 1u);
        EXPECT_EQ(fft.pipeline.chunk_bytes, 0u);
        EXPECT_EQ(kiln::detail::plan_spmv(p).chunks_per_compute_unit, 16u) << "csr_chunked";
        EXPECT_EQ(kiln::detail::plan_spmv(p).slice_rows, 32u) << "sliced_ell";
        const auto launch = kiln::detail::plan_elementwise_launch(p);
        EXPECT_EQ(launch.loop, kiln::detail::loop_style::chunked);
        EXPECT_EQ(launch.work_group_size, 1u);
        EXPECT_EQ(launch.vector_bytes, 64u) << "16 floats per step";
    }
}

TEST(algo_plan, an_unknown_gpu_gets_the_generic_rows) {
    const device_properties p = unknown_gpu();
    EXPECT_EQ(kiln::detail::plan_scan(p, 4).key(), "256x8 sg0 staged v0 sg0 d1");
    EXPECT_EQ(kiln::detail::plan_reduce_by_key(p, 4).tile_size(), 256u * 4);
    const auto radix = kiln::detail::plan_radix_sort(p, 4, false, 4, 1000);
    EXPECT_EQ(radix.work_group_size, 256u);
    EXPECT_EQ(radix.items_per_work_item, 4u) << "rounds hold keys and values: 8 bytes an item";
    EXPECT_FALSE(radix.multi_split);
    EXPECT_FALSE(radix.single_pass) << "forward progress is not promised";
    const auto fft = kiln::detail::plan_fft(p, false);
    EXPECT_EQ(fft.passes.local_elements, 2048u);
    EXPECT_EQ(fft.passes.max_work_group_size, 256u);
    EXPECT_EQ(fft.pipeline.chunk_bytes, 0u);
    EXPECT_EQ(kiln::detail::plan_spmv(p).max_lanes, 32u);
    EXPECT_EQ(kiln::detail::plan_spmv(p).chunks_per_compute_unit, 0u) << "no csr_chunked";
    EXPECT_EQ(kiln::detail::plan_spmv(p).slice_rows, 0u) << "no sliced_ell";
}

// The plan chooses the whole strategy: a single pass where groups that started earlier make
// progress and the look-back states need no fence the device lacks (one-word states, or the
// device's fence), else the passes that never wait; chunks publish values apart from their
// flags, so they need the fence too. A test's progress override moves it; the fence never.
TEST(algo_plan, the_scan_schedule_follows_progress_and_state_packing) {
    using kiln::detail::plan_scan;
    using kiln::detail::scan_schedule;
    constexpr auto single = scan_schedule::single_pass, multi = scan_schedule::multi_pass;
    EXPECT_EQ(plan_scan(h100_cuda(), 4).schedule, single);
    EXPECT_EQ(plan_scan(h100_cuda(), 8).schedule, single) << "CUDA's fence orders the device";
    EXPECT_EQ(plan_scan(h100_opencl(), 4).schedule, single) << "one word: no fence needed";
    EXPECT_EQ(plan_scan(h100_opencl(), 8).schedule, multi) << "OpenCL C's fence is not enough";
    EXPECT_EQ(plan_scan(unknown_gpu(), 4).schedule, multi) << "progress is not promised";
    EXPECT_EQ(plan_scan(pocl_cpu(2), 8).schedule, single) << "groups run on threads";
    EXPECT_EQ(kiln::detail::plan_compaction(h100_opencl(), 8, 1000, 0).policy.schedule, single)
        << "counts share a word with their flag";

    kiln::detail::tuning_overrides<algorithm::scan_rows> stalled;
    stalled.groups_make_progress = false;
    EXPECT_EQ(plan_scan(h100_cuda(), 4, stalled).schedule, multi);
    EXPECT_EQ(plan_scan(pocl_cpu(2), 4, stalled).schedule, multi);
    kiln::detail::tuning_overrides<algorithm::scan_rows> promised;
    promised.groups_make_progress = true;
    EXPECT_EQ(plan_scan(unknown_gpu(), 4, promised).schedule, single);
    EXPECT_EQ(plan_scan(unknown_gpu(), 8, promised).schedule, multi) << "no fence to order them";

    // Tiles on a CPU device (a test's policy without chunks): groups running on threads are not
    // promised to make progress while others wait.
    kiln::detail::scan_policy tiles = plan_scan(pocl_cpu(2), 4);
    tiles.chunk_bytes = 0;
    EXPECT_EQ(kiln::detail::plan_schedule(pocl_cpu(2), {}, tiles,
                                          kiln::detail::state_packing::low_32_bits),
              multi);
}

TEST(algo_plan, overrides_are_arguments) {
    const device_properties p = h100_opencl();
    kiln::detail::tuning_overrides<algorithm::scan_rows> local;
    local.local_memory_group_scans = true;
    const auto scan = kiln::detail::plan_scan(p, 4, local);
    EXPECT_EQ(scan.sub_group_size, 0u);
    EXPECT_EQ(scan.target.sub_group_size, 0u);

    kiln::detail::tuning_overrides<algorithm::radix_sort_rows> forced;
    forced.tuning =
        kiln::detail::radix_sort_tuning{.work_group_size = 64, .items_per_work_item = 4};
    forced.groups_make_progress = false;
    const auto radix = kiln::detail::plan_radix_sort(p, 4, false, 0, 1000, forced);
    EXPECT_EQ(radix.work_group_size, 64u);
    EXPECT_FALSE(radix.single_pass);
    kiln::detail::fft_overrides no_progress;
    no_progress.groups_make_progress = false;
    EXPECT_EQ(kiln::detail::plan_fft(p, false, no_progress).pipeline.chunk_bytes, 0u);
}

TEST(algo_plan, radix_tiles_stay_within_local_memory) {
    // The NVIDIA row ranked in rounds (multi_split off) with values: 384 x 10 pairs would
    // declare 64,192 bytes of local memory (16 counters per work-item, the padded keys and
    // values), past CUDA's 48 KB of static shared memory; 5 items fit (48,352 bytes).
    const device_properties p = h100_cuda();
    kiln::detail::tuning_overrides<algorithm::radix_sort_rows> rounds;
    rounds.tuning = kiln::detail::radix_sort_tuning{
        .work_group_size = 384, .items_per_work_item = 20, .radix_bits = 8, .multi_split = false};
    const auto pairs = kiln::detail::plan_radix_sort(p, 4, false, 4, 1 << 20, rounds);
    EXPECT_FALSE(pairs.multi_split);
    EXPECT_EQ(pairs.items_per_work_item, 5u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 4, false, 0, 1 << 20, rounds).items_per_work_item,
              10u)
        << "keys alone: 20 would take 64,192 bytes too";
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 2, true, 0, 1 << 20, rounds).items_per_work_item,
              20u)
        << "16-bit keys in rounds: their tile holds ushorts";
    // No tile fits: 1024 work-items' round counters alone take 67,584 bytes.
    auto too_wide = rounds;
    too_wide.tuning->work_group_size = 1024;
    EXPECT_THROW(kiln::detail::plan_radix_sort(p, 4, false, 0, 1 << 20, too_wide),
                 kiln::invalid_argument_error);
    // A smaller device's local memory bounds the tile too: 256 x 4 pairs in 32 KB (31,488
    // bytes), and no tile of 384 work-items (32,512 bytes before the first item).
    device_properties smaller = h100_opencl();
    smaller.local_memory_bytes = 32 * 1024;
    EXPECT_THROW(kiln::detail::plan_radix_sort(smaller, 4, false, 4, 1 << 20, rounds),
                 kiln::invalid_argument_error);
    rounds.tuning->work_group_size = 256;
    EXPECT_EQ(
        kiln::detail::plan_radix_sort(smaller, 4, false, 4, 1 << 20, rounds).items_per_work_item,
        4u);
    // The multi-split's rows are unchanged: 384 x 20 keys, and uint64 keys at 384 x 10.
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 4, false, 4, 1 << 20).items_per_work_item, 20u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 8, false, 8, 1 << 20).items_per_work_item, 10u);
}

TEST(algo_plan, radix_histogram_copies_and_match_any) {
    const device_properties p = h100_cuda();
    // The rows' histogram: one copy per 32 of its 256 work-items, as far as 8192 counters go.
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 4, true, 0, 1 << 20).histogram.copies, 8u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 2, true, 0, 1 << 20).histogram.copies, 8u);
    EXPECT_EQ(kiln::detail::plan_radix_sort(p, 8, false, 0, 1 << 20).histogram.copies, 4u);
    EXPECT_FALSE(kiln::detail::plan_radix_sort(p, 4, true, 0, 1 << 20).match_any);

    kiln::detail::tuning_overrides<algorithm::radix_sort_rows> forced;
    forced.tuning = kiln::detail::radix_sort_tuning{
        .work_group_size = 384,
        .items_per_work_item = 20,
        .multi_split = true,
        .histogram = {.copies = 32, .digit_major = true, .aggregated = true},
        .match_any = true};
    const auto cuda = kiln::detail::plan_radix_sort(p, 4, true, 0, 1 << 20, forced);
    EXPECT_EQ(cuda.histogram.copies, 8u) << "32 copies of 1024 counters would take 128 KB";
    EXPECT_TRUE(cuda.histogram.digit_major);
    EXPECT_TRUE(cuda.histogram.aggregated);
    EXPECT_TRUE(cuda.match_any);
    EXPECT_TRUE(kiln::detail::plan_radix_sort(h100_opencl(), 4, true, 0, 1 << 20, forced).match_any)
        << "through inline PTX";
    device_properties pascal = p;
    pascal.compute_capability_major = 6;
    EXPECT_FALSE(kiln::detail::plan_radix_sort(pascal, 4, true, 0, 1 << 20, forced).match_any)
        << "match.any needs compute capability 7.0";
    EXPECT_FALSE(
        kiln::detail::plan_radix_sort(unknown_gpu(), 4, true, 0, 1 << 20, forced).match_any);
    forced.tuning->work_group_size = 48;
    EXPECT_FALSE(kiln::detail::plan_radix_sort(p, 4, true, 0, 1 << 20, forced).histogram.aggregated)
        << "peers are 32 consecutive work-items";
}

// One line each, naming the docs/benchmarks.md section by its heading, or saying why it holds
// unmeasured.
TEST(algo_plan, every_row_has_a_one_line_provenance) {
    constexpr std::array<std::string_view, 6> sections{"## Scan family", "## Sorting",
                                                       "## FFT",         "## Sparse matrices",
                                                       "## Stencils",    "## Vector expressions"};
    const auto expect_cited = [&](auto family) {
        for (const auto& row : decltype(family)::rows()) {
            const std::string_view text = row.provenance;
            SCOPED_TRACE(std::string(family.name) + ": " + std::string(text));
            EXPECT_LE(text.size(), 160u);
            const bool unmeasured =
                text.starts_with("not measured") || text.starts_with("not tuned");
            const bool cited =
                std::any_of(sections.begin(), sections.end(), [&](std::string_view heading) {
                    return text.ends_with("docs/benchmarks.md, " + std::string(heading));
                });
            EXPECT_TRUE(unmeasured || cited);
        }
    };
    expect_cited(algorithm::scan);
    expect_cited(algorithm::select);
    expect_cited(algorithm::reduce_by_key);
    expect_cited(algorithm::radix_sort);
    expect_cited(algorithm::merge_sort);
    expect_cited(algorithm::stencil_1d);
    expect_cited(algorithm::stencil_2d);
    expect_cited(algorithm::fft);
    expect_cited(algorithm::reduce_dimension);
}

}  // namespace
