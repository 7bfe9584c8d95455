// The algorithms' tuning table, device matching, the forward-progress flag and test overrides.
#include <algorithm>
#include <array>
#include <cctype>
#include <kiln/algo/tuning.hpp>
#include <kiln/error.hpp>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {
namespace {

using enum algorithm;
constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};
// Through CUDA or NVIDIA's OpenCL alike: the platform or vendor name says NVIDIA.
constexpr device_class nvidia_gpus{std::nullopt, device_type::gpu, "nvidia", 0, 0};
constexpr device_class nvidia_cuda{backend_kind::cuda, device_type::gpu, "nvidia", 0, 0};
constexpr device_class nvidia_opencl{backend_kind::opencl, device_type::gpu, "nvidia", 0, 0};

constexpr algorithm_policy policy(std::size_t work_group_size, std::size_t items_per_work_item,
                                  std::size_t lookback_depth = 1) {
    return {.work_group_size = work_group_size,
            .items_per_work_item = items_per_work_item,
            .lookback_depth = lookback_depth};
}

/// Radix sort rows. Named fields: algorithm_policy grew a field between two others once, and
/// positional rows then set ptx_shuffles where they meant multi_split (the NVIDIA row ranked
/// in rounds from then on, unmeasured, instead of by the multi-split it was measured with).
constexpr algorithm_policy radix(std::size_t work_group_size, std::size_t items_per_work_item,
                                 unsigned radix_bits, bool multi_split) {
    return {.work_group_size = work_group_size,
            .items_per_work_item = items_per_work_item,
            .radix_bits = radix_bits,
            .multi_split = multi_split};
}

/// The scan by chunks of one work-item each (algorithm_policy::chunk_bytes).
constexpr algorithm_policy chunks(algorithm_policy p, std::size_t chunk_bytes) {
    p.chunk_bytes = chunk_bytes;
    return p;
}

/// Radix sort by key: values in a local array of their own, beside the keys.
constexpr algorithm_policy values_beside_keys(algorithm_policy p) {
    p.values_beside_keys = true;
    return p;
}

/// Full tiles of the scan family moved by `access` (a part's last tile stays guarded).
constexpr algorithm_policy full_tiles(algorithm_policy p, tile_access access) {
    p.full_tiles = access;
    return p;
}

/// reduce_by_key's runs in registers (see algorithm_policy::register_runs), which reads full
/// tiles through 16-byte loads.
constexpr algorithm_policy register_runs(algorithm_policy p) {
    p.register_runs = true;
    p.full_tiles = tile_access::wide;
    return p;
}

/// The earlier compaction kernels: each work-item writes its own kept elements.
constexpr algorithm_policy direct_writes(algorithm_policy p) {
    p.staged_writes = false;
    return p;
}

// clang-format off
constexpr std::array table{
    // --- scan (also the tile pass of reduce-then-scan) ---------------------------------------
    tuning_row{scan, nvidia_cuda,
               full_tiles(policy(128, 32, 2), tile_access::unrolled),
               "NVIDIA GPUs through CUDA (group scans by warp shuffles, look-back within a warp, "
               "2 tiles per lane, full tiles in unrolled loops): H100, 2026-11-23 (branch "
               "scan-ocl), bench/algo int32 scan of 2^28 beside CUB in the same run: 128x32 "
               "depth 2 unrolled 0.902 ms (0.96x CUB 0.870 ms) and 0.901 ms (0.97x), guarded "
               "(the row before) 0.965 ms (0.90x), 16-byte 0.975 ms. The generated look-back "
               "kernel alone (zeroing and kernel per call; CUB 0.869-0.883 ms in the same call): "
               "128x32 depth 2 unrolled "
               "0.906 ms (40 registers, ptxas -v), guarded 0.969 ms (40), 16-byte loads 0.971 ms "
               "(64 registers); depth 4 unrolled 0.951 ms; 256x16 unrolled 1.162 ms, 128x16 1.195 "
               "ms, 64x32 16-byte loads 0.981 ms. Earlier, H200, guarded (branch "
               "compaction-speed2; CUB 0.68-0.69 ms): 128x32 depth 2 0.801 ms (0.85x), depth 4 "
               "0.843 ms, depth 1 0.975-0.987 ms (77 registers against 40 at depth 2), 256x16 "
               "depth 2 1.041 ms, 128x24 depth 2 0.974 ms, local-memory group scans 0.896 ms"},
    tuning_row{scan, nvidia_gpus,
               full_tiles(policy(128, 32, 2), tile_access::wide),
               "NVIDIA's OpenCL (group scans and look-back by inline-PTX warp shuffles, full "
               "tiles through 16-byte loads and stores): H100, 2026-11-23 (branch scan-ocl), "
               "bench/algo int32 scan of 2^28 beside CUB in the same run: 128x32 depth 2 16-byte "
               "0.891 ms (0.97x CUB 0.867 ms) and 0.894 ms (0.98x), the row before (guarded, "
               "depth 4) 1.022 ms (0.85x), unrolled 1.151 ms (0.76x). The generated look-back "
               "kernel alone (zeroing and kernel per call; CUB 0.869-0.883 ms in the same call): "
               "128x32 depth 2 16-byte 0.896 ms (40 registers, "
               "-cl-nv-verbose), depth 4 0.952 ms (47); guarded depth 4 (the row before) 1.022 "
               "ms (48 registers), depth 2 1.033 ms (56); unrolled 4-byte loads 1.147 ms (92 "
               "registers: NVIDIA's compiler computed a 64-bit local address per item and kept "
               "them live; written as one address plus constant offsets, 40 registers and 0.909 "
               "ms); 16-byte at 256x16 0.973 ms, 128x16 0.992 ms, 64x32 0.980 ms, 128x24 "
               "1.174 ms (72 registers). Earlier, H200, guarded: 128x32 depth 4 0.863 ms, depth 1 "
               "0.941 ms; 512x16 and 256x24 exceed 48 KiB of local memory with 8-byte states"},
    tuning_row{scan, any_gpu, policy(256, 8),
               "any other GPU: half the NVIDIA tile, for devices with less local memory; "
               "not measured"},
    tuning_row{scan, any_cpu, chunks(policy(16, 64), 64 * 1024),
               "CPU devices: chunks of one work-item each, 64 KiB of values, which a core's L2 "
               "holds between the scan and its fix: within 5% of 256 KiB, 16 KiB twice as slow (PoCL, 2 "
               "cores, 2^24; docs/benchmarks.md, chunk kernels)"},
    tuning_row{scan, any_device, policy(64, 4),
               "anything else: small and safe, not measured"},
    // --- stream compaction (copy_if, unique) ---------------------------------------------------
    tuning_row{select, nvidia_cuda,
               full_tiles(policy(128, 32), tile_access::unrolled),
               "NVIDIA GPUs through CUDA, full tiles in unrolled loops: H100, bench/algo "
               "2026-11-23 (the lead's call), copy_if of 2^28 int32 keeping half beside CUB in "
               "the same run (0.677-0.683 ms): 128x32 depth 1 0.829 ms (0.82x), depth 2 0.856 "
               "ms, 512x16 depth 1 (the row before) 0.852-0.855 ms (0.80x), 256x16 depth 1 0.900 "
               "ms. Branch copy-if-speed the same day: 512x16 depth 1 unrolled 0.857 ms against "
               "guarded 0.887 ms; slower: loaded values held in registers until ranked (39 "
               "registers, 3 groups per SM, ptxas -v) 1.080-1.119 ms, kept values packed per "
               "ballot word as they load 0.919-0.943 ms, 1024x8 1.179 ms. Branch compaction-local "
               "(flags as ballot words): 512x16 guarded 0.890-0.906 ms, 256x16 0.945-0.949 ms, "
               "flags as bytes 0.942 ms, 256x24 1.227 ms (40 registers, ptxas -v). Tiles of 4096 "
               "hold at most 47.8 KB of local memory for 8-byte values with 64-bit counts and "
               "local-memory group scans (ptxas, sm_90)"},
    tuning_row{select, nvidia_gpus,
               full_tiles(policy(128, 32), tile_access::unrolled),
               "NVIDIA GPUs (here NVIDIA's OpenCL), full tiles in unrolled loops: H100, bench/algo "
               "2026-11-23 (the lead's call), copy_if of 2^28 int32 keeping half beside CUB in "
               "the same run (0.674-0.688 ms): 128x32 depth 1 0.820 ms (0.83x), depth 2 0.837 "
               "ms, 256x16 depth 1 0.918 ms, 256x16 guarded (the row before) 0.913 ms (0.74x); "
               "512-item groups refused (a limit of 256 for this kernel). Branch copy-if-speed "
               "the same day: loaded values held in registers, 0.877-0.904 ms at 256x16, 0.900 "
               "ms at 128x32; kept values packed per ballot word 0.950-0.953 ms at 256x16. Branch "
               "compaction-local: 256x16, flags as ballot words 0.903-0.922 ms, as bytes 0.936 "
               "ms, depth 2 0.940 ms. H200, 2026-11-22 (branch compaction-speed2, CUB 0.58-0.59 "
               "ms): 256x16 depth 1 0.986-1.009 ms CUDA, 0.928 ms OpenCL; depth 4 1.051 / 0.963 "
               "ms"},
    tuning_row{select, any_gpu, policy(256, 8),
               "as the generic GPU scan row; not measured"},
    tuning_row{select, any_cpu, chunks(direct_writes(policy(16, 64)), 64 * 1024),
               "as the CPU scan row (chunks); its tile shape, for tests, writes from each "
               "work-item: PoCL, 2 shared cores, bench/algo 2^20 (2026-11-22): direct 9.3 ms, "
               "staged in local memory 20.8 ms (PoCL loops over a group's items at each "
               "barrier)"},
    tuning_row{select, any_device, policy(64, 4),
               "anything else: small and safe, not measured"},
    // --- reduce_by_key -------------------------------------------------------------------------
    tuning_row{reduce_by_key, nvidia_cuda,
               register_runs(policy(256, 16, 2)),
               "NVIDIA GPUs through CUDA, runs in registers, values read again for the writes "
               "(32 registers, ptxas for sm_90; 57-69 when kept): H100, bench/algo 2026-11-23 "
               "(branch rbk-speed2), 2^26 int32 keys in runs of 8, CUB in the same run "
               "0.252-0.261 ms: 256x16 depth 2 0.350 ms (0.73x), depth 1 0.425 ms, 512x16 depth 1 "
               "0.399 ms, 256x8 depth 1 0.395 ms, 128x16 depth 1 0.437 ms, 256x32 depth 1 0.740 "
               "ms; values kept in registers (the row before) 256x16 depth 1 0.394 ms (0.65x), "
               "512x16 depth 1 0.350 ms (0.73x, but its split-tile fallback for 8-byte values "
               "would exceed 48 KiB of local memory). Before, values kept: (branch "
               "rbk-speed), 2^26 int32 keys in runs of 8, CUB in the same run 0.248-0.255 ms: "
               "256x16 depth 1 0.382 ms (0.66x), depth 2 0.426 ms; 512x16 depth 2 0.362 ms "
               "(0.69x) but inputs that fall back to the split tile (values not read by 16-byte "
               "loads, or keys of another width) would need 53 KB of local memory there for "
               "8-byte values, over the 48 KiB a group may have; 128x32 depth 2 0.435 ms, 512x8 depth 2 0.469 ms, 128x16 depth 2 "
               "0.465 ms, 256x8 depth 2 0.531 ms; the tile of head flags and values in local "
               "memory at 256x16 depth 2 (the row before) 0.412-0.414 ms (0.61-0.62x); runs in "
               "registers read element by element 0.469-0.716 ms, staged through local memory "
               "0.454-0.504 ms. Before, head flags as ballot words: H100, bench/algo "
               "2026-11-23 (branch compaction-local), 2^26 int32 keys in runs of 8, CUB in the "
               "same run 0.250-0.259 ms: 256x16 depth 2 0.419 ms (0.60x), flags as bytes "
               "0.422-0.424 ms; 128x16 depth 2 0.431-0.432 ms (0.58-0.59x), bytes 0.446 ms, "
               "depth 1 0.495 ms; 128x24 depth 2 0.461 ms; local-memory group scans 0.478 ms "
               "(128x16). Before, H200 (branch compaction-speed2, CUB 0.225-0.229 ms, the tile "
               "holding pairs): 128x16 depth 2 0.472 ms (0.48x), 256x16 depth 2 0.524 ms, 256x8 "
               "depth 1 0.558-0.579 ms, 128x12 depth 2 0.489 ms; 512x8 exceeds 48 KiB of local "
               "memory for 16-byte pairs"},
    tuning_row{reduce_by_key, nvidia_gpus,
               register_runs(policy(256, 16, 2)),
               "NVIDIA's OpenCL, runs in registers with inline-PTX shuffles, values read again "
               "for the writes: H100, bench/algo 2026-11-23 (branch rbk-speed2), 2^26 int32 keys "
               "in runs of 8, CUB in the same run 0.251-0.255 ms: 256x16 depth 2 0.354 ms "
               "(0.72x), depth 1 0.419 ms, 256x8 depth 1 0.357 ms, 128x16 depth 1 0.435 ms, "
               "128x32 / 256x32 depth 1 0.771 / 0.753 ms; values kept in registers (the row "
               "before) 256x8 depth 1 0.379 ms (0.67x), 256x16 depth 1 0.373 ms. Before, values "
               "kept: (branch rbk-speed), 2^26 int32 keys in runs of 8, CUB in the same run "
               "0.249-0.252 ms: 256x8 depth 1 0.355 ms (0.70x), depth 2 0.421 ms, 256x16 depth 2 "
               "0.411 ms, 128x32 depth 2 0.408 ms, 128x16 depth 2 0.431 ms; with local-memory "
               "group scans 256x16 0.417 ms, 128x16 0.481 ms; the tile of head flags and values "
               "in local memory with local-memory group scans at 256x16 (the row before) "
               "0.434-0.444 ms (0.57-0.58x). Before: "
               "NVIDIA's OpenCL, group scans and look-back through local memory (head flags as "
               "bytes): H100, bench/algo 2026-11-23 (branch compaction-local), 2^26 int32 keys "
               "in runs of 8, CUB in the same run 0.253-0.260 ms: 256x16 0.437 ms (0.58x) "
               "against 0.458 ms (0.55x) with inline-PTX shuffles at depth 2 in the same run. "
               "With the shuffles, other runs: 256x16 depth 2, flags as bytes 0.458 ms (0.466 "
               "ms in the lead's run), depth 1 0.459 ms, as ballot words 0.554 ms; 256x8 depth 1 "
               "(the row before) 0.553-0.562 ms (0.45-0.46x), bytes 0.560 ms. Before, H200 "
               "(branch compaction-speed2, CUB 0.22-0.23 ms, the tile holding pairs): 256x8 "
               "depth 1 0.437-0.447 ms (0.51-0.52x), 128x16 depth 2 0.464 ms. NVIDIA's OpenCL "
               "allows this kernel 256 work-items"},
    tuning_row{reduce_by_key, any_gpu, policy(256, 4),
               "any other GPU; not measured"},
    tuning_row{reduce_by_key, any_cpu, chunks(policy(16, 64), 64 * 1024),
               "as the CPU scan row (chunks; the tile shape, kept for tests, as it was)"},
    tuning_row{reduce_by_key, any_device, policy(64, 4),
               "anything else: small and safe, not measured"},
    // --- radix sort (items for 4-byte keys alone; sort.cpp scales them for wider elements) ---
    tuning_row{radix_sort, nvidia_cuda, radix(384, 20, 8, true),
               "NVIDIA GPUs through CUDA: 8-bit digits, tiles ranked by a warp multi-split "
               "(__ballot_sync), keys then values through one local array. H100, "
               "bench/algo/sort_bench 28, 2026-11-23 (branch sort-speed3), CUB in the same run. "
               "384x20: uint32 keys / uint32 pairs / float / uint64 7.70 / 10.31 / 8.32 / 19.03 "
               "ms (0.83x / 0.85x / 0.69x / 0.89x CUB); 256x20 (same run) 7.63 / 10.80 / 8.54 / "
               "21.84 ms (0.84x / 0.81x / 0.67x / 0.77x; 79 registers, 3 groups per SM). First "
               "sweep, uint32 keys / pairs (CUB 6.42 / 8.81 ms): 384x16 7.91 / 10.61 ms, 512x12 "
               "8.21 / 11.07 ms, 256x24 9.27 / 12.31 ms (95 registers, 2 groups per SM). "
               "Before (branch sort-speed2, 256x24): 8.69 / 12.63 / 9.04 / 20.88 ms"},
    tuning_row{radix_sort, nvidia_gpus, values_beside_keys(radix(256, 20, 8, true)),
               "NVIDIA's OpenCL: as CUDA, ballots through inline PTX, and values beside the keys "
               "in local memory. H100, sort_bench 28, 2026-11-23 (branch sort-pairs-ocl2), CUB "
               "in the same run: uint32 keys / pairs / float / uint64 7.28 / 10.92 / 8.05 / "
               "21.36 ms (0.88x / 0.82x / 0.71x / 0.79x); pairs in the sweep's run 10.86 ms "
               "(0.81x) against 12.71 ms (0.69x) with the values after the keys, 11.82 ms at "
               "256x16 beside. Loading the values before the ranking: 15.42 ms; after the keys "
               "with loads issued before the look-back: 11.39 ms. 256x24 keys 8.18 ms (branch "
               "sort-speed3); 384-item groups are refused (CL_KERNEL_WORK_GROUP_SIZE 256)"},
    tuning_row{radix_sort, any_gpu, radix(256, 8, 8, false),
               "any other GPU: ranking in 4-bit rounds (no known sub-group ballots), about 32 KB "
               "of local memory per group; not measured"},
    tuning_row{radix_sort, any_cpu, chunks(radix(64, 8, 8, false), 64 * 1024),
               "CPU devices (PoCL): chunks of at least 64 KiB, 8-bit digits; uint32 2^24 14.95x "
               "std::sort on 2 cores, 52.9x on 16, 11-bit digits 2.5x slower (benchmarks.md, "
               "Sorting, CPU devices, 2026-11-23). Tile shape, for tests: 64 x 8 keeps the "
               "per-(digit, item) counters (4 KB) in L1"},
    tuning_row{radix_sort, any_device, radix(64, 4, 4, false),
               "anything else: small and safe, not measured"},
    // --- merge sort (comparator sorts): work-group size = first run length ---------------------
    tuning_row{merge_sort, any_gpu, policy(256, 1),
               "GPUs: 256-key runs sorted by rank in local memory, then merges; not tuned"},
    tuning_row{merge_sort, any_device, policy(64, 1),
               "CPU devices and anything else: the run sort costs G^2 comparisons per run, so "
               "keep G small; not tuned"},
    // --- stencils (include/kiln/stencil.hpp): outputs per work-item; 2-D tiles are 32 columns
    // wide and work_group_size / 32 * items rows high -------------------------------------------
    tuning_row{stencil_1d, nvidia_gpus, policy(128, 8),
               "NVIDIA GPUs: H100, bench/algo/stencil_bench --sweep on CUDA, 2026-11-22, "
               "5-point over 2^26 floats, % of copy bandwidth: 128x8 96.7, 256x8 96.1, 64x4 95.6, "
               "128x4 95.5, 256x4 93.1, 512x4 89.7, 256x2 75.8, 512x2 71.6, 256x1 46.6; NVIDIA's "
               "OpenCL allows these kernels at most 256 work-items (not swept there)"},
    tuning_row{stencil_1d, any_gpu, policy(256, 4),
               "any other GPU: as NVIDIA; not measured"},
    tuning_row{stencil_1d, any_cpu, policy(0, 0),
               "CPU devices (PoCL): no tiles (0), the per-element kernel, which PoCL vectorises "
               "across work-items; the tile is one more copy through the cache. bench/algo/"
               "stencil_bench, PoCL on the 2-core build machine (load ~11), 2026-11-22, 5-point "
               "over 2^22 floats: per element 23.9 ms, tiled 256x4 39.3-42.0 ms, 64x4 46.8 ms, "
               "512x4 78.4 ms"},
    tuning_row{stencil_1d, any_device, policy(64, 4),
               "anything else: small and safe, not measured"},
    tuning_row{stencil_2d, nvidia_gpus, policy(256, 4),
               "NVIDIA GPUs: H100, bench/algo/stencil_bench --sweep on CUDA, 2026-11-22, 5-point "
               "Laplacian over 4096^2 floats, % of copy bandwidth: 256x4 65.4, 128x4 64.7, 64x16 "
               "64.4, 512x4 62.3, 256x8 62.1, 128x8 61.2, 64x4 55.4, 256x2 49.5, 256x1 33.1"},
    tuning_row{stencil_2d, any_gpu, policy(256, 4),
               "any other GPU: as NVIDIA; not measured"},
    tuning_row{stencil_2d, any_cpu, policy(256, 4),
               "CPU devices (PoCL): bench/algo/stencil_bench --sweep, 2-core build machine "
               "(load ~11), 2026-11-22, 5-point Laplacian over 1024^2 floats: 256x4 16.3 ms, "
               "256x2 21.3, 64x4 21.8, 256x8 24.3, 64x16 25.2; noisy"},
    tuning_row{stencil_2d, any_device, policy(64, 4),
               "anything else: small and safe, not measured"},
    // --- FFT passes: at most G work-items and G x I complex floats of local memory per group ---
    tuning_row{fft, nvidia_cuda, policy(256, 64),
               "NVIDIA GPUs on CUDA: passes take their local memory as dynamic shared memory, so "
               "16384 complex floats (139 KiB with the padding, of the H100's 227 KiB) hold one "
               "16384-point line or four strided 4096-point lines: 2^24 and 4096^2 in two "
               "passes, 1024 x 16384 in one, groups of up to 512 items; short lines as on "
               "OpenCL. H100, fft_bench, 2026-11-22 (2^24, 4096^2, 1024x16384, 256^3, 10^6, "
               "1000003 in ms, cuFFT 0.280 0.242 0.117 0.315 0.027 0.117): 256x64 0.327 0.253 "
               "0.146 0.292 0.023 0.125; 256x16 (the OpenCL row) 0.330 0.301 0.198 0.292 0.023 "
               "0.127. The long passes run at 1600-1830 GB/s, the short ones at 2340-2850. The "
               "16384-point line as the register pass in one round (2026-11-23, branch "
               "fft-cuda-batch, cuFFT 0.118-0.119): 1024x16384 0.123-0.124 ms, 2190-2210 GB/s"},
    tuning_row{fft, nvidia_gpus, policy(256, 16),
               "NVIDIA GPUs on OpenCL: 4096 complex floats (32 KiB of the 48 KiB a work-group may "
               "have) hold a 4096-point line; 256 items do one radix-16 butterfly each per "
               "stage. H100, fft_bench, 2026-11-22 (2^24, 4096^2, 1024x16384, 256^3, 10^6, "
               "1000003 in ms, cuFFT 0.277 0.243 0.119 0.314 0.026 0.117): 256x16 0.326 0.296 "
               "0.198 0.298 0.026 0.140. An earlier version of the kernels (a table look-up per "
               "twiddle) on CUDA: 256x16 0.343 0.337 0.220 0.297 0.026 0.140, 256x32 0.343 0.338 "
               "0.221 0.298 0.026 0.144. 2026-11-23 (branch fft-batch2, cuFFT 0.279 0.242 0.119 "
               "0.315 0.026 0.116): 128x32 0.330 0.304 0.174 0.312 0.035 0.138; 64x64 0.372 "
               "0.314 0.234 0.340 0.033 0.142; 512x8 batch 0.154, and NVIDIA refuses its "
               "500-item pass of 1000 (256 at most)"},
    tuning_row{fft, any_gpu, policy(256, 8),
               "any other GPU: half the NVIDIA tile (16 KiB), for devices with less local "
               "memory; not measured"},
    tuning_row{fft, any_cpu, policy(64, 16),
               "CPU devices (PoCL) run passes of one radix without local memory, 64 lines (one "
               "per work-item) per group; the 1024-element budget (8 KiB, within L1) serves "
               "only the GPU kernels that tests force on CPUs; not measured"},
    tuning_row{fft, any_device, policy(64, 16),
               "anything else: small and safe, not measured"},
};
// clang-format on

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::mutex override_mutex;
std::array<std::optional<algorithm_policy>, 8> policy_overrides;
std::optional<bool> progress_override;
std::optional<fft_pipeline_policy> pipeline_override;

struct fft_pipeline_row {
    device_class devices;
    fft_pipeline_policy policy;
    std::string_view provenance;
};

// clang-format off
constexpr std::array fft_pipeline_table{
    fft_pipeline_row{nvidia_opencl, {1u << 20, 16, 4, true, true},
                     "NVIDIA GPUs on OpenCL, whose 48 KiB per group split 16384-point lines "
                     "into two passes of 128 (the register pass's 512 work-items refused there, "
                     "docs/fft.md). H100, fft_bench KILN_FFT_PIPELINE sweeps, 1024 x 16384, "
                     "chunk KiB x slots x lag, s streaming, f per-array waits. 2026-11-23 (cuFFT "
                     "0.117 ms, two separate passes 0.197): 1024x16x4sf 0.154 ms, 2048x12x4sf "
                     "0.152, 2048x8x3sf 0.152, 1024x24x6sf 0.153, 512x32x8sf 0.153, 1024x16x2sf "
                     "0.157, 1024x16x4f 0.160, 1024x16x4s 0.161, 512x24x4sf 0.162, 1024x12x4sf "
                     "0.164, 512x16x4sf 0.198. An earlier sweep with a fill of the counters "
                     "before each launch: 1024x16x4sf 0.156, 2048x12x6sf 0.160, 2048x8x1f "
                     "0.166, 4096x8x1 0.178, 4096x8x4 0.199, 8192x4x2sf 0.184. Cache hints on "
                     "the ring, 2026-11-23 (branch fft-batch2, cuFFT 0.117): 1024x16x4sf 0.153, "
                     "with an evict_last policy on its accesses 0.156, its lines discarded from "
                     "L2 once read 0.159, both 0.160, so neither is an option"},
};
// clang-format on
bool local_memory_group_scans = false;

}  // namespace

std::string_view to_string(algorithm a) noexcept {
    switch (a) {
        case scan:
            return "scan";
        case select:
            return "select";
        case reduce_by_key:
            return "reduce_by_key";
        case radix_sort:
            return "radix_sort";
        case merge_sort:
            return "merge_sort";
        case stencil_1d:
            return "stencil_1d";
        case stencil_2d:
            return "stencil_2d";
        case fft:
            return "fft";
    }
    return "?";
}

std::span<const tuning_row> tuning_table() {
    return table;
}

std::size_t sub_group_size_of(const device& dev) {
    const auto& props = dev.properties();
    const bool nvidia = lower(props.vendor).find("nvidia") != std::string::npos ||
                        props.backend == backend_kind::cuda;
    return nvidia && dev.is_gpu() ? 32 : 0;
}

bool matches(const device_class& c, const device& dev) {
    const auto& props = dev.properties();
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
    return c.sub_group_size == 0 || c.sub_group_size == sub_group_size_of(dev);
}

const tuning_row* tuning_row_for(algorithm a, const device& dev) {
    {
        std::lock_guard lock(override_mutex);
        if (policy_overrides[static_cast<std::size_t>(a)]) return nullptr;
    }
    for (const auto& row : table)
        if (row.for_algorithm == a && matches(row.devices, dev)) return &row;
    return nullptr;
}

std::string algorithm_policy::key() const {
    return std::to_string(work_group_size) + "x" + std::to_string(items_per_work_item) + " r" +
           std::to_string(radix_bits) + " sg" + std::to_string(sub_group_size) +
           (staged_writes ? " staged" : " direct") + " " + target.key() +
           (multi_split ? " multi-split" : "") + " d" + std::to_string(lookback_depth) +
           (full_tiles == tile_access::unrolled ? " unrolled"
            : full_tiles == tile_access::wide   ? " wide"
                                                : "") +
           (ballot_flags ? "" : " bytes") + (values_beside_keys ? " beside" : "") +
           (register_runs ? " runs" : "") +
           (chunk_bytes ? " chunks" + std::to_string(chunk_bytes) : "");
}

namespace {

target_features policy_target(const device& dev) {
    target_features target = target_features_for(dev);
    std::lock_guard lock(override_mutex);
    if (local_memory_group_scans) target.sub_group_size = 0;
    return target;
}

}  // namespace

std::size_t group_scan_sub_group_size(const device& dev, std::size_t work_group_size) {
    const target_features target = policy_target(dev);
    const std::size_t size = target.shuffles ? target.sub_group_size : 0;
    return size > 0 && work_group_size % size == 0 ? size : 0;
}

algorithm_policy policy_for(algorithm a, const device& dev) {
    std::optional<algorithm_policy> chosen;
    {
        std::lock_guard lock(override_mutex);
        chosen = policy_overrides[static_cast<std::size_t>(a)];
    }
    if (!chosen)
        if (const tuning_row* row = tuning_row_for(a, dev)) chosen = row->policy;
    if (chosen) {
        chosen->target = policy_target(dev);
        // Under inline PTX only the scan family's group scans shuffle; the sorts there were
        // measured ranking with ballots and scanning through local memory.
        const bool scan_family = a == scan || a == select || a == reduce_by_key;
        const bool shuffles =
            chosen->sub_group_scans &&
            (scan_family || chosen->target.vocabulary != vocabulary_target::inline_ptx);
        chosen->sub_group_size =
            shuffles ? group_scan_sub_group_size(dev, chosen->work_group_size) : 0;
        return *chosen;
    }
    throw invalid_argument_error(
        "kiln::detail::policy_for",
        "no tuning row for " + std::string(to_string(a)) + " on " + dev.name());
}

bool groups_make_progress(const device& dev) {
    {
        std::lock_guard lock(override_mutex);
        if (progress_override) return *progress_override;
    }
    return device_quirks_for(dev.properties()).groups_make_progress;
}

fft_pipeline_policy fft_pipeline_policy_for(const device& dev) {
    // Groups wait for earlier groups' signals: they must make progress, and a fence must order
    // the data before the signal.
    const target_features target = target_features_for(dev);
    if (!groups_make_progress(dev) || !target.device_fence) return {};
    fft_pipeline_policy chosen;
    {
        std::lock_guard lock(override_mutex);
        if (pipeline_override) chosen = *pipeline_override;
    }
    if (!chosen.chunk_bytes)
        for (const fft_pipeline_row& row : fft_pipeline_table)
            if (matches(row.devices, dev) && !pipeline_override) {
                chosen = row.policy;
                break;
            }
    chosen.target = target;
    return chosen;
}

scoped_fft_pipeline_policy::scoped_fft_pipeline_policy(fft_pipeline_policy policy)
    : override_(pipeline_override, policy, override_mutex) {}

bool chunk_groups_make_progress(const device& dev) {
    const device_quirks quirks = device_quirks_for(dev.properties());
    bool progress = quirks.groups_make_progress || quirks.groups_run_on_threads;
    {
        std::lock_guard lock(override_mutex);
        if (progress_override) progress = *progress_override;
    }
    return progress && quirks.global_fence_orders_device;
}

bool global_fence_orders_device(const device& dev) {
    // Not overridable: a test that forces look-back must not run it where it is wrong.
    return device_quirks_for(dev.properties()).global_fence_orders_device;
}

scoped_algorithm_policy::scoped_algorithm_policy(algorithm a, algorithm_policy policy)
    : override_(policy_overrides[static_cast<std::size_t>(a)], policy, override_mutex) {}

scoped_local_memory_group_scans::scoped_local_memory_group_scans()
    : override_(local_memory_group_scans, true, override_mutex) {}

scoped_forward_progress::scoped_forward_progress(bool value)
    : override_(progress_override, value, override_mutex) {}

}  // namespace kiln::detail
