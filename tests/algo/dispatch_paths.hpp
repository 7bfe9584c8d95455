// SPDX-License-Identifier: Apache-2.0
// Runs a test body through every way kiln may dispatch a scan-based algorithm on a device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <kiln/algorithm.hpp>

namespace kiln::test {

/// Runs `body` once per dispatch path: decoupled look-back (safe on PoCL too: its groups run on
/// threads of their own or one after another, and tickets are taken in start order) and
/// reduce-then-scan (chunk kernels: chained, and in two passes); where group scans shuffle within
/// sub-groups (CUDA's warp shuffles, inline PTX on NVIDIA's OpenCL), once more with the
/// local-memory group scans.
template <class Body>
void on_every_dispatch_path(const kiln::device& dev, Body&& body) {
    for (const bool lookback : {true, false}) {
        SCOPED_TRACE(lookback ? "decoupled look-back" : "reduce-then-scan");
        const kiln::detail::scoped_forward_progress path(lookback);
        body();
        const auto scan_policy = kiln::detail::policy_for(kiln::detail::algorithm::scan, dev);
        if (scan_policy.sub_group_size == 0) continue;
        SCOPED_TRACE("local-memory group scans");
        const kiln::detail::scoped_local_memory_group_scans local_memory;
        body();
    }
}

/// Which dispatch paths each form of an algorithm's kernels runs on: every one, or one, the forms
/// taking turns (look-back, reduce-then-scan, look-back, ...), so that tiles and chunks each still
/// run on both. The second is for tests of what is read (an expression's form, a value's width,
/// NaN keys) rather than of how the paths chain their counts: each path compiles programs of
/// its own.
enum class dispatch_paths { every, one_per_form };

/// Runs `body` on the dispatch paths that `paths` gives the `form`-th form.
template <class Body>
void on_dispatch_paths(const kiln::device& dev, dispatch_paths paths, std::size_t form,
                       Body&& body) {
    if (paths == dispatch_paths::every) return on_every_dispatch_path(dev, body);
    const bool lookback = form % 2 == 0;
    SCOPED_TRACE(lookback ? "decoupled look-back" : "reduce-then-scan");
    const kiln::detail::scoped_forward_progress path(lookback);
    body();
}

/// The chunk kernels' size in the tests (scan_chunks.hpp): 1 KiB, so that the tests' sizes span
/// many chunks.
inline constexpr std::size_t test_chunk_bytes = 1024;

/// `family`'s policy on `dev` with its strategy set: the row's tile shape (chunk_bytes 0: the
/// CPU rows keep theirs beside their chunks) or chunks of test_chunk_bytes.
template <kiln::detail::scan_family_member Family>
kiln::detail::scan_policy strategy_policy(Family family, const kiln::device& dev, bool chunks) {
    auto policy = kiln::detail::policy_for(family, dev);
    policy.chunk_bytes = chunks ? test_chunk_bytes : 0;
    return policy;
}

/// Vectors of the scan's chunk loops in the tests (scan_policy::chunk_lanes).
inline constexpr std::size_t test_chunk_lanes = 8;

/// For scans: every dispatch path with tiles, then with chunks walked element by element, then
/// by vectors (scan_chunk_lanes.cpp, where the operation allows), whichever the device's row
/// chooses.
template <class Body>
void on_every_scan_strategy(const kiln::device& dev, Body&& body) {
    namespace algorithm = kiln::detail::algorithm;
    {
        SCOPED_TRACE("tiles");
        const kiln::detail::scoped_algorithm_policy tiles(
            algorithm::scan, strategy_policy(algorithm::scan, dev, false));
        on_every_dispatch_path(dev, body);
    }
    for (const std::size_t lanes : {std::size_t{0}, test_chunk_lanes}) {
        SCOPED_TRACE(lanes ? "chunks by vectors" : "chunks element by element");
        auto policy = strategy_policy(algorithm::scan, dev, true);
        policy.chunk_lanes = lanes;
        const kiln::detail::scoped_algorithm_policy chunks(algorithm::scan, policy);
        on_every_dispatch_path(dev, body);
    }
}

/// How stream compaction's chunk kernels write their kept elements (scan_policy's
/// chunk_cursor_writes and chunk_vector_writes).
enum class chunk_writes { behind_a_branch, cursor, vectors };

/// For stream compaction: every dispatch path with the tiles' kept elements staged in local
/// memory (32-bit counts where they fit), then with each work-item writing its own (64-bit
/// counts), then with chunks writing behind a branch, at a cursor (compaction_chunks.cpp) and by
/// vectors (compaction_vector_chunks.cpp), whichever the device's rows choose.
template <class Body>
void on_every_compaction_path(const kiln::device& dev, Body&& body,
                              dispatch_paths paths = dispatch_paths::every) {
    namespace algorithm = kiln::detail::algorithm;
    std::size_t form = 0;
    for (const bool staged : {true, false}) {
        SCOPED_TRACE(staged ? "tiles, staged writes" : "tiles, direct writes");
        auto select = strategy_policy(algorithm::select, dev, false);
        select.staged_writes = staged;
        const kiln::detail::scoped_algorithm_policy select_policy(algorithm::select, select);
        on_dispatch_paths(dev, paths, form++, body);
    }
    for (const chunk_writes writes :
         {chunk_writes::behind_a_branch, chunk_writes::cursor, chunk_writes::vectors}) {
        SCOPED_TRACE(writes == chunk_writes::vectors  ? "chunks, vector writes"
                     : writes == chunk_writes::cursor ? "chunks, cursor writes"
                                                      : "chunks, writes behind a branch");
        auto select = strategy_policy(algorithm::select, dev, true);
        select.chunk_cursor_writes = writes == chunk_writes::cursor;
        select.chunk_vector_writes = writes == chunk_writes::vectors;
        const kiln::detail::scoped_algorithm_policy select_policy(algorithm::select, select);
        on_dispatch_paths(dev, paths, form++, body);
    }
}

/// Vectors of reduce_by_key's chunk loops in the tests (scan_policy::chunk_lanes), as the CPU
/// row's.
inline constexpr std::size_t test_run_lanes = 16;

/// For reduce_by_key's chunks: every dispatch path with chunks walked element by element, then
/// by vectors (reduce_by_key_lane_chunks.cpp, for integer sums).
/// (`first_form` numbers the forms for dispatch_paths::one_per_form.)
template <class Body>
void on_every_run_chunk_form(const kiln::device& dev, Body&& body,
                             dispatch_paths paths = dispatch_paths::every,
                             std::size_t first_form = 0) {
    namespace algorithm = kiln::detail::algorithm;
    std::size_t form = first_form;
    for (const std::size_t lanes : {std::size_t{0}, test_run_lanes}) {
        SCOPED_TRACE(lanes ? "chunks by vectors" : "chunks element by element");
        auto policy = strategy_policy(algorithm::reduce_by_key, dev, true);
        policy.chunk_lanes = lanes;
        const kiln::detail::scoped_algorithm_policy chunks(algorithm::reduce_by_key, policy);
        on_dispatch_paths(dev, paths, form++, body);
    }
}

/// How reduce_by_key's tiles keep their runs: in local memory, in registers written by each
/// work-item, or in registers staged in local memory where a tile has many (staged_writes);
/// in registers, each item read again for the writes, or kept from the loads (kept_run_items).
struct run_tile_form {
    const char* description;
    bool register_runs, staged_writes;
    kiln::detail::run_items kept;
};
inline constexpr run_tile_form run_tile_forms[] = {
    {"runs in local memory", false, false, kiln::detail::run_items::none},
    {"runs in registers, direct writes", true, false, kiln::detail::run_items::none},
    {"runs in registers, staged writes", true, true, kiln::detail::run_items::none},
    {"runs in registers, values kept, direct writes", true, false, kiln::detail::run_items::values},
    // CUDA's row.
    {"runs in registers, values kept, staged writes", true, true, kiln::detail::run_items::values},
    {"runs in registers, values and keys kept, staged writes", true, true,
     kiln::detail::run_items::values_and_keys},
};

/// For reduce_by_key: every dispatch path with each of run_tile_forms (full tiles by 16-byte
/// loads where runs are in registers and keys and values allow), then with both forms of
/// chunks, whichever the device's rows choose.
template <class Body>
void on_every_run_tile(const kiln::device& dev, Body&& body,
                       dispatch_paths paths = dispatch_paths::every) {
    namespace algorithm = kiln::detail::algorithm;
    std::size_t form_number = 0;
    for (const run_tile_form& form : run_tile_forms) {
        SCOPED_TRACE(form.description);
        auto policy = strategy_policy(algorithm::reduce_by_key, dev, false);
        policy.register_runs = form.register_runs;
        policy.staged_writes = form.staged_writes;
        policy.kept_run_items = form.kept;
        if (policy.register_runs) {
            policy.full_tiles = kiln::detail::tile_access::wide;
            // PoCL builds unrolled loops over 64 registers slowly; no CPU row keeps runs there.
            policy.items_per_work_item = std::min<std::size_t>(policy.items_per_work_item, 16);
        }
        const kiln::detail::scoped_algorithm_policy by_key(algorithm::reduce_by_key, policy);
        on_dispatch_paths(dev, paths, form_number++, body);
    }
    on_every_run_chunk_form(dev, body, paths, form_number);
}

}  // namespace kiln::test
