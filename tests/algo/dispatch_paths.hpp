// Runs a test body through every way kiln may dispatch a scan-based algorithm on a device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <kiln/algorithm.hpp>

namespace kiln::test {

/// Runs `body` once per dispatch path: decoupled look-back (safe on PoCL too: its groups run on
/// threads of their own or one after another, and tickets are taken in start order) and
/// reduce-then-scan; where group scans shuffle within sub-groups (CUDA's warp shuffles, inline
/// PTX on NVIDIA's OpenCL), once more with the local-memory group scans.
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

/// For stream compaction: every dispatch path with the tiles' kept elements staged in local
/// memory (32-bit counts where they fit), then with each work-item writing its own (64-bit
/// counts), whichever the device's rows choose.
template <class Body>
void on_every_compaction_path(const kiln::device& dev, Body&& body) {
    using kiln::detail::algorithm;
    for (const bool staged : {true, false}) {
        SCOPED_TRACE(staged ? "staged writes" : "direct writes");
        auto select = kiln::detail::policy_for(algorithm::select, dev);
        select.staged_writes = staged;
        const kiln::detail::scoped_algorithm_policy select_policy(algorithm::select, select);
        on_every_dispatch_path(dev, body);
    }
}

/// For reduce_by_key: every dispatch path with each way its tiles may keep their elements: in
/// local memory, in registers (full tiles read by elements, then by 16-byte loads), whichever
/// the device's rows choose.
template <class Body>
void on_every_run_tile(const kiln::device& dev, Body&& body) {
    using kiln::detail::algorithm;
    for (const int way : {0, 1, 2}) {
        SCOPED_TRACE(way == 0   ? "runs in local memory"
                     : way == 1 ? "runs in registers"
                                : "runs in registers, full tiles by 16-byte loads");
        auto policy = kiln::detail::policy_for(algorithm::reduce_by_key, dev);
        policy.register_runs = way > 0;
        // PoCL builds unrolled loops over 64 registers slowly; no CPU row keeps runs there.
        if (way > 0)
            policy.items_per_work_item = std::min<std::size_t>(policy.items_per_work_item, 16);
        if (way == 2)
            policy.full_tiles = kiln::detail::tile_access::wide;
        else if (way == 1)
            policy.full_tiles = kiln::detail::tile_access::unrolled;
        const kiln::detail::scoped_algorithm_policy by_key(algorithm::reduce_by_key, policy);
        on_every_dispatch_path(dev, body);
    }
}

}  // namespace kiln::test
